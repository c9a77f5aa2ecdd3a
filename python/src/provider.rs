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
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use datafusion_ffi::table_provider_factory::FFI_TableProviderFactory;
use datafusion_tsfile::datafusion::{push_scan_filters, TsFileReadOptions, TsFileTable, TsFileTableFactory};
use datafusion_tsfile::stores::StorageOptions;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use crate::errors;
use crate::runtime::{self, InRuntime};
use crate::session::{own_session, scrubbed, storage, with_runtime, StorageArg, WithRuntime};

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

/// A table provider whose `scan` runs on this module's runtime, whoever polls it; with
/// `stores`, its plan reads through that runtime environment's object stores
/// ([`WithRuntime`]: the host's know nothing of the table's `storage_options`).
#[derive(Debug)]
struct RuntimeProvider {
    inner: Arc<dyn TableProvider>,
    handle: tokio::runtime::Handle,
    stores: Option<Arc<RuntimeEnv>>,
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
        // With stores of its own, the table lists and opens its files through them.
        let own = self.stores.as_ref().map(|runtime| with_runtime(state, Arc::clone(runtime)));
        let scan_state: &dyn Session = match &own {
            Some(own) => own,
            None => state,
        };
        let plan = InRuntime::new(self.handle.clone(), self.inner.scan(scan_state, projection, filters, limit)).await?;
        // The host optimizes its plan around this scan, not inside it: push the filters now.
        let plan = push_scan_filters(plan, filters, state)?;
        Ok(match &self.stores {
            Some(runtime) => Arc::new(WithRuntime::new(plan, Arc::clone(runtime))),
            None => plan,
        })
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
    /// The object stores of the factory's `storage_options`, for URL locations.
    stores: Arc<RuntimeEnv>,
}

#[async_trait]
impl TableProviderFactory for RuntimeFactory {
    async fn create(&self, state: &dyn Session, cmd: &CreateExternalTable) -> Result<Arc<dyn TableProvider>> {
        // A URL location is listed, opened and read through the factory's stores.
        let stores = cmd.locations.iter().any(|l| l.contains("://")).then(|| Arc::clone(&self.stores));
        let own = stores.as_ref().map(|runtime| with_runtime(state, Arc::clone(runtime)));
        let create_state: &dyn Session = match &own {
            Some(own) => own,
            None => state,
        };
        let table = InRuntime::new(self.handle.clone(), self.inner.create(create_state, cmd)).await?;
        Ok(Arc::new(RuntimeProvider { inner: table, handle: self.handle.clone(), stores }))
    }
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

/// Open `paths` as one TsFile table in `ctx` (reading the footers to infer the schema;
/// remote locations through `ctx`'s object stores).
pub fn open_table(py: Python<'_>, ctx: &SessionContext, paths: &[String], options: TsFileReadOptions) -> PyResult<TsFileTable> {
    for path in paths {
        check_local_path(path)?;
    }
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

/// A TsFile table (files, a directory or a glob; local or remote) for
/// `SessionContext.register_table`.
#[pyclass(name = "TsFileTable", module = "datafusion_tsfile._internal", frozen)]
pub struct PyTsFileTable {
    table: Arc<TsFileTable>,
    /// The runtime of the session it was opened in (its object stores), when a path is a URL.
    stores: Option<Arc<RuntimeEnv>>,
    storage: StorageOptions,
}

impl PyTsFileTable {
    /// The library's table.
    pub fn table(&self) -> Arc<TsFileTable> {
        Arc::clone(&self.table)
    }

    /// The storage options it was opened with.
    pub fn storage(&self) -> &StorageOptions {
        &self.storage
    }
}

#[pymethods]
impl PyTsFileTable {
    #[new]
    #[pyo3(signature = (paths, options=None, storage_options=None))]
    fn new(
        py: Python<'_>,
        paths: Vec<String>,
        options: Option<HashMap<String, Bound<'_, PyAny>>>,
        storage_options: StorageArg,
    ) -> PyResult<Self> {
        let storage = storage(storage_options);
        let open = || -> PyResult<Self> {
            let options = read_options(options)?;
            let ctx = own_session(&storage)?;
            let table = Arc::new(open_table(py, &ctx, &paths, options)?);
            let stores = paths.iter().any(|p| p.contains("://")).then(|| ctx.runtime_env());
            Ok(PyTsFileTable { table, stores, storage: storage.clone() })
        };
        open().map_err(|e| scrubbed(py, e, &storage))
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
        let provider = RuntimeProvider { inner: self.table.clone(), handle: handle.clone(), stores: self.stores.clone() };
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
pub struct PyTsFileTableFactory {
    stores: Arc<RuntimeEnv>,
}

#[pymethods]
impl PyTsFileTableFactory {
    #[new]
    #[pyo3(signature = (storage_options=None))]
    fn new(py: Python<'_>, storage_options: StorageArg) -> PyResult<Self> {
        let storage = storage(storage_options);
        let ctx = own_session(&storage).map_err(|e| scrubbed(py, e, &storage))?;
        Ok(PyTsFileTableFactory { stores: ctx.runtime_env() })
    }

    fn __datafusion_table_provider_factory__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = host_codec(&session)?;
        let handle = runtime::handle()?;
        let factory =
            RuntimeFactory { inner: TsFileTableFactory::default(), handle: handle.clone(), stores: Arc::clone(&self.stores) };
        let ffi = FFI_TableProviderFactory::new_with_ffi_codec(Arc::new(factory), Some(handle), codec);
        PyCapsule::new_with_value(py, ffi, FACTORY_CAPSULE)
    }
}
