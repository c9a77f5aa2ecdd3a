//! `datafusion_tsfile._internal`: the compiled half of the `datafusion-tsfile` Python
//! package. The Python half (`python/datafusion_tsfile/`) wraps these functions with the
//! documented signatures, converts time bounds and turns streams into pyarrow objects.
//!
//! * [`read`]: `read_tsfile` / `read_tsfile_batches`;
//! * [`provider`]: `TsFileTable` and `TsFileTableFactory` for datafusion-python;
//! * [`export`]: `metadata` and `export_parquet`; [`sql`]: `sql`, on the package's own engine;
//! * [`write`]: `write_tsfile` (Arrow data into a TsFile);
//! * [`arrow_export`]: Arrow PyCapsule exports; [`errors`]: the exception mapping;
//!   [`runtime`]: the tokio runtime the calls run on; [`session`]: the sessions they run in
//!   and their object stores (`storage_options`).

use std::collections::HashMap;
use std::path::PathBuf;

use pyo3::prelude::*;

use crate::session::{scrubbed, storage, StorageArg};

pub mod arrow_export;
pub mod errors;
pub mod export;
pub mod provider;
pub mod read;
pub mod runtime;
pub mod session;
pub mod sql;
pub mod write;

/// Table options as Python keyword arguments (`table="weather"`, `time_unit="us"`).
pub type Options<'py> = Option<HashMap<String, Bound<'py, PyAny>>>;

/// Read a table; `streaming` = batches one by one (bounded memory), else all at once.
#[pyfunction]
#[pyo3(signature = (paths, options=None, columns=None, start=None, end=None, devices=None, streaming=false, storage_options=None))]
#[pyo3(name = "read")]
#[allow(clippy::too_many_arguments)]
fn read_table(
    py: Python<'_>,
    paths: Vec<String>,
    options: Options<'_>,
    columns: Option<Vec<String>>,
    start: Option<read::TimeArg>,
    end: Option<read::TimeArg>,
    devices: Option<Vec<read::DeviceArg>>,
    streaming: bool,
    storage_options: StorageArg,
) -> PyResult<arrow_export::BatchStream> {
    let selection = read::Selection { columns, start, end, devices };
    let storage = storage(storage_options);
    let read = if streaming {
        read::read_streaming(py, paths, options, &storage, selection)
    } else {
        read::read_all(py, paths, options, &storage, selection)
    };
    read.map_err(|e| scrubbed(py, e, &storage))
}

#[pyfunction]
#[pyo3(signature = (paths, storage_options=None, columns=None))]
fn metadata(
    py: Python<'_>,
    paths: Vec<String>,
    storage_options: StorageArg,
    columns: Option<Vec<String>>,
) -> PyResult<arrow_export::BatchStream> {
    let storage = storage(storage_options);
    export::metadata(py, paths, &storage, columns.as_deref()).map_err(|e| scrubbed(py, e, &storage))
}

#[pyfunction]
#[pyo3(signature = (paths, out, options=None, compression="snappy", row_group_rows=1 << 20, progress=None, storage_options=None))]
#[allow(clippy::too_many_arguments)]
fn export_parquet(
    py: Python<'_>,
    paths: Vec<String>,
    out: PathBuf,
    options: Options<'_>,
    compression: &str,
    row_group_rows: usize,
    progress: Option<Py<PyAny>>,
    storage_options: StorageArg,
) -> PyResult<u64> {
    let storage = storage(storage_options);
    export::export_parquet(py, paths, out, options, &storage, compression, row_group_rows, progress)
        .map_err(|e| scrubbed(py, e, &storage))
}

#[pyfunction]
#[pyo3(signature = (query, tables=None, storage_options=None), name = "sql")]
fn run_sql(
    py: Python<'_>,
    query: &str,
    tables: Option<Vec<(String, sql::TableArg)>>,
    storage_options: StorageArg,
) -> PyResult<arrow_export::BatchStream> {
    let storage = storage(storage_options);
    sql::sql(py, query, tables.unwrap_or_default(), &storage).map_err(|e| scrubbed(py, e, &storage))
}

#[pyfunction]
#[pyo3(signature = (data, path, options=None), name = "write_tsfile")]
fn write_tsfile(data: &Bound<'_, PyAny>, path: PathBuf, options: Option<Vec<(String, String)>>) -> PyResult<u64> {
    write::write_tsfile(data, path, options.unwrap_or_default())
}

/// The module: functions and classes the Python package re-exports.
#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_table, m)?)?;
    m.add_function(wrap_pyfunction!(metadata, m)?)?;
    m.add_function(wrap_pyfunction!(export_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(run_sql, m)?)?;
    m.add_function(wrap_pyfunction!(write_tsfile, m)?)?;
    m.add_class::<provider::PyTsFileTable>()?;
    m.add_class::<provider::PyTsFileTableFactory>()?;
    m.add_class::<arrow_export::BatchStream>()?;
    m.add_class::<arrow_export::ExportedBatch>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
