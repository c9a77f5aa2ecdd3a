//! [`write_tsfile`]: a DataFrame's rows into one local TsFile, with progress (the core of
//! `tsfile convert`, Parquet/CSV → TsFile).
//!
//! The plan's partitions are read concurrently and written in partition order
//! ([`execute_in_order`]), so rows of a file scan arrive in file order; the file is written to
//! a temporary name and renamed when complete ([`LocalTsFileWriter`]).

use std::path::Path;

use datafusion::common::Result;
use datafusion::dataframe::DataFrame;
use futures::StreamExt;

use crate::datafusion::errors::df_err;
use crate::datafusion::ordered::execute_in_order;
use crate::writer::{LocalTsFileWriter, TsFileWriterOptions};

/// Progress of [`write_tsfile`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteProgress {
    /// Rows accepted so far.
    pub rows: u64,
    /// Bytes written to the file so far (rows still buffered are not counted).
    pub bytes: u64,
}

/// Write the rows of `df` to the TsFile `path` with `options` (the table defaults to the
/// file stem); `progress` is called after every batch. Returns the rows written.
pub async fn write_tsfile(
    df: DataFrame,
    path: impl AsRef<Path>,
    options: &TsFileWriterOptions,
    mut progress: impl FnMut(WriteProgress) -> Result<()>,
) -> Result<u64> {
    let task = df.task_ctx();
    let plan = df.create_physical_plan().await?;
    let mut writer = LocalTsFileWriter::create(path, plan.schema(), options).map_err(df_err)?;
    let mut stream = execute_in_order(plan, std::sync::Arc::new(task), 4)?;
    while let Some(batch) = stream.next().await {
        writer.write(&batch?).map_err(df_err)?;
        if let Some(w) = writer.writer() {
            progress(WriteProgress { rows: w.rows(), bytes: w.bytes_written() })?;
        }
    }
    writer.finish().map_err(df_err)
}
