//! `TsFileTable` and `TsFileTableFactory` for datafusion-python: the library's table provider
//! and `STORED AS TSFILE` factory exported through `datafusion-ffi`.
//!
//! datafusion-python asks for them with `__datafusion_table_provider__(session)` and
//! `__datafusion_table_provider_factory__(session)`; `session` is either a session context
//! (which hands out its logical extension codec) or that codec's capsule itself. The host
//! polls `scan` and `create` on its own tokio runtime, so both are wrapped to enter ours
//! ([`InRuntime`]); execution enters it through the runtime handle given to the FFI structs.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::{Result, Statistics};
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use datafusion_ffi::table_provider_factory::FFI_TableProviderFactory;
use datafusion_tsfile::datafusion::{
    push_scan_filters, register_tsfile_format, TsFileReadOptions, TsFileTable, TsFileTableFactory,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use crate::errors;
use crate::runtime::{self, InRuntime};

const PROVIDER_CAPSULE: &CStr = c"datafusion_table_provider";
const FACTORY_CAPSULE: &CStr = c"datafusion_table_provider_factory";
const CODEC_CAPSULE: &CStr = c"datafusion_logical_extension_codec";
const CODEC_GETTER: &str = "__datafusion_logical_extension_codec__";

/// The host session's logical extension codec, from a session context or a bare capsule.
fn host_codec(session: &Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    let capsule = if session.hasattr(CODEC_GETTER)? { session.getattr(CODEC_GETTER)?.call0()? } else { session.clone() };
    let capsule = capsule.cast_into::<PyCapsule>().map_err(|_| {
        PyValueError::new_err(format!("expected a datafusion SessionContext or a '{}' capsule", CODEC_CAPSULE.to_string_lossy()))
    })?;
    let pointer = capsule.pointer_checked(Some(CODEC_CAPSULE))?;
    // SAFETY: a capsule of this name holds an `FFI_LogicalExtensionCodec` (datafusion-ffi's
    // protocol), alive as long as the capsule, which we hold while cloning it.
    let codec = unsafe { pointer.cast::<FFI_LogicalExtensionCodec>().as_ref() };
    Ok(codec.clone())
}

/// A table provider whose `scan` runs on this module's runtime, whoever polls it.
#[derive(Debug)]
struct RuntimeProvider {
    inner: Arc<dyn TableProvider>,
    handle: tokio::runtime::Handle,
}

#[async_trait]
impl TableProvider for RuntimeProvider {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = InRuntime::new(self.handle.clone(), self.inner.scan(state, projection, filters, limit)).await?;
        // The host optimizes its plan around this scan, not inside it: push the filters now.
        push_scan_filters(plan, filters, state)
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }
}

/// The `STORED AS TSFILE` factory, creating tables on this module's runtime.
#[derive(Debug)]
struct RuntimeFactory {
    inner: TsFileTableFactory,
    handle: tokio::runtime::Handle,
}

#[async_trait]
impl TableProviderFactory for RuntimeFactory {
    async fn create(&self, state: &dyn Session, cmd: &CreateExternalTable) -> Result<Arc<dyn TableProvider>> {
        let table = InRuntime::new(self.handle.clone(), self.inner.create(state, cmd)).await?;
        Ok(Arc::new(RuntimeProvider { inner: table, handle: self.handle.clone() }))
    }
}

/// A session of this module's own, with the TsFile format registered: where tables are
/// opened (schema inference) and where `read_tsfile` and `export_parquet` run.
pub fn own_session() -> PyResult<SessionContext> {
    let ctx = SessionContext::new();
    register_tsfile_format(&ctx).map_err(errors::from_datafusion)?;
    Ok(ctx)
}

/// Options from Python keyword arguments: each value as its string (`True` → `true`).
pub fn read_options(options: Option<HashMap<String, Bound<'_, PyAny>>>) -> PyResult<TsFileReadOptions> {
    let mut text = HashMap::new();
    for (key, value) in options.unwrap_or_default() {
        let value = if let Ok(b) = value.extract::<bool>() { b.to_string() } else { value.str()?.to_string() };
        text.insert(key, value);
    }
    TsFileReadOptions::default().apply(&text).map_err(errors::from_tsfile)
}

/// Open `paths` as one TsFile table (reading the footers to infer the schema).
pub fn open_table(py: Python<'_>, paths: &[String], options: TsFileReadOptions) -> PyResult<TsFileTable> {
    for path in paths {
        check_local_path(path)?;
    }
    let ctx = own_session()?;
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let state = ctx.state();
    runtime::block_on(py, TsFileTable::try_new(&state, &refs, options))?.map_err(errors::from_datafusion)
}

/// A local path without glob characters must exist: say so plainly (a listing of a missing
/// path would only find "no files").
pub fn check_local_path(path: &str) -> PyResult<()> {
    let is_url = path.contains("://");
    let is_glob = path.contains(['*', '?', '[']);
    if !is_url && !is_glob && !std::path::Path::new(path).exists() {
        return Err(errors::exception(errors::Kind::NotFound, format!("no such file or directory: {path}")));
    }
    Ok(())
}

/// A TsFile table (files, a directory or a glob) for `SessionContext.register_table`.
#[pyclass(name = "TsFileTable", module = "datafusion_tsfile._internal", frozen)]
pub struct PyTsFileTable {
    table: Arc<TsFileTable>,
}

impl PyTsFileTable {
    /// The library's table.
    pub fn table(&self) -> Arc<TsFileTable> {
        Arc::clone(&self.table)
    }
}

#[pymethods]
impl PyTsFileTable {
    #[new]
    #[pyo3(signature = (paths, options=None))]
    fn new(py: Python<'_>, paths: Vec<String>, options: Option<HashMap<String, Bound<'_, PyAny>>>) -> PyResult<Self> {
        let options = read_options(options)?;
        Ok(PyTsFileTable { table: Arc::new(open_table(py, &paths, options)?) })
    }

    /// The table's Arrow schema, as a capsule of the Arrow C data interface.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        crate::arrow_export::schema_capsule(py, &self.table.schema())
    }

    /// The paths the table was opened from.
    #[getter]
    fn paths(&self) -> Vec<String> {
        self.table.paths().to_vec()
    }

    /// The table's options as `key=value` pairs (keys are never included).
    #[getter]
    fn options(&self) -> Vec<(String, String)> {
        self.table.options().to_pairs()
    }

    fn __datafusion_table_provider__<'py>(&self, py: Python<'py>, session: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = host_codec(&session)?;
        let handle = runtime::handle()?;
        let provider = RuntimeProvider { inner: self.table.clone(), handle: handle.clone() };
        let ffi = FFI_TableProvider::new_with_ffi_codec(Arc::new(provider), true, Some(handle), codec);
        PyCapsule::new_with_value(py, ffi, PROVIDER_CAPSULE)
    }

    fn __repr__(&self) -> String {
        format!("TsFileTable({:?})", self.table.paths())
    }
}

/// The `CREATE EXTERNAL TABLE … STORED AS TSFILE` factory, for
/// `SessionContext.register_table_factory("TSFILE", TsFileTableFactory())`.
#[pyclass(name = "TsFileTableFactory", module = "datafusion_tsfile._internal", frozen)]
pub struct PyTsFileTableFactory;

#[pymethods]
impl PyTsFileTableFactory {
    #[new]
    fn new() -> Self {
        PyTsFileTableFactory
    }

    fn __datafusion_table_provider_factory__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = host_codec(&session)?;
        let handle = runtime::handle()?;
        let factory = RuntimeFactory { inner: TsFileTableFactory::default(), handle: handle.clone() };
        let ffi = FFI_TableProviderFactory::new_with_ffi_codec(Arc::new(factory), Some(handle), codec);
        PyCapsule::new_with_value(py, ffi, FACTORY_CAPSULE)
    }
}
