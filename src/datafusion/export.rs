//! Rows of a query into one Parquet file, device by device and streaming, with progress reports: the core of the
//! `tsfile export` command and of the Python package's `export_parquet`.
//!
//! The rows go from the query's stream straight into a Parquet writer (one row group in
//! memory at a time) that writes `<out>.partial`; the file is renamed to `out` once complete,
//! so an interrupted or failed export never leaves a truncated file under the final name.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, Int64Array};
use datafusion::common::{DataFusionError, Result};
use datafusion::dataframe::DataFrame;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::file::properties::WriterProperties;
use datafusion::prelude::SessionContext;
use futures::StreamExt;

use crate::datafusion::execute_in_order;

/// How far an export has come, reported after every batch written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportProgress {
    /// Rows written so far.
    pub rows: u64,
    /// Rows the export will write, when known in advance (see [`count_rows`]).
    pub total_rows: Option<u64>,
    /// Bytes of Parquet produced so far (written, plus the row group being built).
    pub bytes: u64,
}

/// Write the rows of `df` to the Parquet file `out` with `props`, calling `progress` after
/// each batch; an error returned by `progress` stops the export (e.g. a user interrupt).
/// Returns the number of rows written. On any error the partial file is removed.
pub async fn write_parquet(
    df: DataFrame,
    out: &Path,
    props: WriterProperties,
    total_rows: Option<u64>,
    mut progress: impl FnMut(&ExportProgress) -> Result<()>,
) -> Result<u64> {
    // Device after device (each device's rows together, in time order): what a reader of
    // the Parquet file expects, and what keeps its row groups' statistics narrow.
    let task = Arc::new(df.task_ctx());
    let plan = df.create_physical_plan().await?;
    let mut stream = execute_in_order(plan, task, 2)?;
    let partial = partial_path(out);
    let file =
        File::create(&partial).map_err(|e| DataFusionError::Execution(format!("cannot create {}: {e}", partial.display())))?;
    let written = async {
        let mut writer = ArrowWriter::try_new(file, stream.schema(), Some(props))?;
        let mut rows = 0u64;
        let mut bytes = 0u64;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            rows += batch.num_rows() as u64;
            writer.write(&batch)?;
            // The row group in progress is an estimate that can shrink as it is encoded:
            // report a count that never goes back.
            bytes = bytes.max((writer.bytes_written() + writer.in_progress_size()) as u64);
            progress(&ExportProgress { rows, total_rows, bytes })?;
        }
        writer.close()?;
        Ok::<u64, DataFusionError>(rows)
    }
    .await;
    match written {
        Ok(rows) => {
            std::fs::rename(&partial, out).map_err(|e| {
                DataFusionError::Execution(format!("cannot move {} to {}: {e}", partial.display(), out.display()))
            })?;
            Ok(rows)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

/// `count(*)` of table `table` of `ctx` (a TsFile table answers it from statistics, reading
/// no data); `None` if the count is not a non-negative integer.
pub async fn count_rows(ctx: &SessionContext, table: &str) -> Result<Option<u64>> {
    let batches = ctx.sql(&format!("SELECT count(*) FROM {table}")).await?.collect().await?;
    let n = batches
        .first()
        .and_then(|b| b.column(0).as_any().downcast_ref::<Int64Array>().filter(|a| !a.is_empty()).map(|a| a.value(0)));
    Ok(n.and_then(|n| u64::try_from(n).ok()))
}

/// Where the export of `out` is written until it is complete: `<out>.partial`.
pub fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    out.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_names() {
        assert_eq!(partial_path(Path::new("/x/out.parquet")), PathBuf::from("/x/out.parquet.partial"));
        assert_eq!(partial_path(Path::new("out.parquet")), PathBuf::from("out.parquet.partial"));
    }
}
