//! `metadata` (the `tsfile_metadata` rows of files) and `export_parquet` (TsFile tables to
//! one Parquet file, with progress reported to a Python callable).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::error::DataFusionError;
use datafusion::parquet::basic::{Compression, GzipLevel, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;
use datafusion_tsfile::datafusion::{count_rows, write_parquet};
use pyo3::prelude::*;

use crate::arrow_export::{BatchStream, OrderedBatches};
use crate::errors;
use crate::provider::{check_local_path, open_table, read_options};
use crate::runtime;
use crate::session::own_session;
use datafusion_tsfile::stores::StorageOptions;

/// The `tsfile_metadata` rows of each of `paths` (one row per device and column).
pub fn metadata(
    py: Python<'_>,
    paths: Vec<String>,
    storage: &StorageOptions,
    columns: Option<&[String]>,
) -> PyResult<BatchStream> {
    for path in &paths {
        check_local_path(path)?;
    }
    // Only the columns asked for: leaving out encoding and compression skips the chunk headers.
    let select = match columns {
        None => "*".to_string(),
        Some(cols) => {
            let schema = datafusion_tsfile::datafusion::metadata_schema();
            for c in cols {
                if schema.index_of(c).is_err() {
                    let have: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                    return Err(errors::invalid(format!("no metadata column '{c}' (the columns: {})", have.join(", "))));
                }
            }
            cols.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")
        }
    };
    let ctx = own_session(storage)?;
    let batches = runtime::block_on(py, async move {
        let mut all = Vec::new();
        let mut schema = None;
        for path in &paths {
            let sql = format!("SELECT {select} FROM tsfile_metadata('{}')", path.replace('\'', "''"));
            let df = ctx.sql(&sql).await?;
            schema.get_or_insert_with(|| Arc::new(df.schema().as_arrow().clone()));
            all.extend(df.collect().await?);
        }
        let schema = schema.ok_or_else(|| DataFusionError::Plan("metadata needs at least one path".into()))?;
        Ok::<_, DataFusionError>(OrderedBatches::ready(schema, all))
    })?
    .map_err(errors::from_datafusion)?;
    Ok(BatchStream::new(batches))
}

/// A Parquet codec by name: snappy, zstd, zstd(LEVEL), gzip, gzip(LEVEL), lz4_raw or none.
fn compression(name: &str) -> PyResult<Compression> {
    let lower = name.trim().to_ascii_lowercase();
    let level = |prefix: &str| -> Option<Option<u32>> {
        let rest = lower.strip_prefix(prefix)?;
        if rest.is_empty() {
            return Some(None);
        }
        rest.strip_prefix('(')?.strip_suffix(')')?.trim().parse().ok().map(Some)
    };
    let bad = || {
        errors::invalid(format!("compression '{name}': expected snappy, zstd, zstd(LEVEL), gzip, gzip(LEVEL), lz4_raw or none"))
    };
    Ok(match lower.as_str() {
        "snappy" => Compression::SNAPPY,
        "lz4_raw" | "lz4" => Compression::LZ4_RAW,
        "none" | "uncompressed" => Compression::UNCOMPRESSED,
        _ => {
            if let Some(l) = level("zstd") {
                let l = ZstdLevel::try_new(l.map_or(3, |v| v as i32)).map_err(|_| bad())?;
                Compression::ZSTD(l)
            } else if let Some(l) = level("gzip") {
                Compression::GZIP(GzipLevel::try_new(l.unwrap_or(6)).map_err(|_| bad())?)
            } else {
                return Err(bad());
            }
        }
    })
}

/// Export the table of `paths` to the Parquet file `out`; `progress(rows, total_rows, bytes)`
/// is called at most ten times a second and once at the end. Returns the rows written.
#[allow(clippy::too_many_arguments)]
pub fn export_parquet(
    py: Python<'_>,
    paths: Vec<String>,
    out: PathBuf,
    options: crate::Options<'_>,
    storage: &StorageOptions,
    codec: &str,
    row_group_rows: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<u64> {
    let props = WriterProperties::builder()
        .set_compression(compression(codec)?)
        .set_max_row_group_row_count(Some(row_group_rows.max(1)))
        .build();
    let ctx = own_session(storage)?;
    let table = open_table(py, &ctx, &paths, read_options(options)?)?;
    let rows = runtime::block_on(py, async move {
        let name = "__tsfile_export";
        ctx.register_table(name, Arc::new(table))?;
        let total = count_rows(&ctx, name).await?;
        let df = ctx.table(name).await?;
        let mut last = Instant::now();
        let report = |rows: u64, total: Option<u64>, bytes: u64| -> Result<(), DataFusionError> {
            let Some(callback) = &progress else { return Ok(()) };
            Python::attach(|py| {
                py.check_signals()?;
                callback.call1(py, (rows, total, bytes)).map(|_| ())
            })
            .map_err(|e| DataFusionError::External(Box::new(e)))
        };
        let mut last_report = (0u64, 0u64);
        let rows = write_parquet(df, &out, props, total, |p| {
            last_report = (p.rows, p.bytes);
            if last.elapsed() >= Duration::from_millis(100) {
                last = Instant::now();
                report(p.rows, p.total_rows, p.bytes)?;
            }
            Ok(())
        })
        .await?;
        report(rows, total, last_report.1)?;
        Ok::<u64, DataFusionError>(rows)
    })?;
    rows.map_err(|e| match python_error(&e) {
        Some(err) => err,
        None => errors::from_datafusion(e),
    })
}

/// The Python exception a progress callback raised (or a signal, `KeyboardInterrupt`), if
/// that is what stopped the export: it is raised again as it was.
fn python_error(e: &DataFusionError) -> Option<PyErr> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(py_err) = err.downcast_ref::<PyErr>() {
            return Some(Python::attach(|py| py_err.clone_ref(py)));
        }
        next = match err.downcast_ref::<DataFusionError>() {
            Some(DataFusionError::External(inner)) => Some(inner.as_ref()),
            Some(DataFusionError::Context(_, inner)) => Some(inner.as_ref()),
            _ => err.source(),
        };
    }
    None
}
