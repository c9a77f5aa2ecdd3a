//! The sessions the package's calls run in, and where their object stores come from.
//!
//! Every call (`read_tsfile`, `metadata`, `sql`, `export_parquet`, a `TsFileTable`) takes
//! `storage_options`: `object_store` configuration keys (`aws_access_key_id`, `aws_endpoint`,
//! `google_service_account`, …) with the environment as the fallback. [`own_session`] gives
//! the call a session whose object-store registry builds the store of an `s3://`, `gs://` or
//! `http(s)://` location on first use from those options
//! ([`TsFileStoreRegistry`]).
//!
//! A `TsFileTable` handed to datafusion-python is scanned in the host's session, whose
//! runtime (behind the FFI boundary, a default one) knows none of those stores: its scan is
//! wrapped in [`WithRuntime`], which runs the plan with the table's own runtime.
//!
//! Option values never reach an error message: [`scrubbed`] replaces them in the text of an
//! exception before it is raised.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::Result;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_tsfile::datafusion::{register_tsfile_format, TsFileStoreRegistry};
use datafusion_tsfile::stores::StorageOptions;
use pyo3::prelude::*;

use crate::errors;

/// `storage_options` as Python gives them (the wrapper turns every value into a string).
pub type StorageArg = Option<HashMap<String, String>>;

/// The options of `arg` (none: the environment alone).
pub fn storage(arg: StorageArg) -> StorageOptions {
    StorageOptions::from_pairs(arg.unwrap_or_default())
}

/// A session of this module's own, with the TsFile format registered and object stores
/// built from `storage` on first use: where tables are opened (schema inference) and where
/// `read_tsfile`, `sql` and `export_parquet` run.
pub fn own_session(storage: &StorageOptions) -> PyResult<SessionContext> {
    let runtime = RuntimeEnvBuilder::new()
        .with_object_store_registry(Arc::new(TsFileStoreRegistry::new(storage.clone())))
        .build_arc()
        .map_err(errors::from_datafusion)?;
    let ctx = SessionContext::new_with_config_rt(SessionConfig::new(), runtime);
    register_tsfile_format(&ctx).map_err(errors::from_datafusion)?;
    Ok(ctx)
}

/// `state` (a host's session, across the FFI boundary) with `runtime`'s object stores: its
/// configuration, options and extensions kept, so a scan lists and reads the table's files
/// through the stores it was opened with.
pub fn with_runtime(state: &dyn Session, runtime: Arc<RuntimeEnv>) -> SessionState {
    SessionStateBuilder::new().with_config(state.config().clone()).with_runtime_env(runtime).with_default_features().build()
}

/// `err` with every option value of `storage` that could be a credential replaced by `***`
/// in its message (same exception type).
pub fn scrubbed(py: Python<'_>, err: PyErr, storage: &StorageOptions) -> PyErr {
    if storage.is_empty() {
        return err;
    }
    let message = err.value(py).to_string();
    let clean = storage.scrub(&message);
    if clean == message {
        return err;
    }
    PyErr::from_type(err.get_type(py), clean)
}

/// A plan executed with a given runtime instead of the caller's (module doc): the task
/// context keeps the caller's session id, configuration and functions.
pub struct WithRuntime {
    inner: Arc<dyn ExecutionPlan>,
    runtime: Arc<RuntimeEnv>,
}

impl WithRuntime {
    /// `inner`, run with `runtime`.
    pub fn new(inner: Arc<dyn ExecutionPlan>, runtime: Arc<RuntimeEnv>) -> Self {
        WithRuntime { inner, runtime }
    }
}

impl fmt::Debug for WithRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithRuntime").field("inner", &self.inner.name()).finish()
    }
}

impl DisplayAs for WithRuntime {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TsFileStores")
    }
}

impl ExecutionPlan for WithRuntime {
    fn name(&self) -> &str {
        "TsFileStores"
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.inner]
    }

    fn with_new_children(self: Arc<Self>, mut children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        match (children.pop(), children.is_empty()) {
            (Some(inner), true) => Ok(Arc::new(WithRuntime { inner, runtime: Arc::clone(&self.runtime) })),
            _ => datafusion::common::internal_err!("TsFileStores takes one child"),
        }
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let own = TaskContext::new(
            context.task_id(),
            context.session_id(),
            context.session_config().clone(),
            context.scalar_functions().clone(),
            context.higher_order_functions().clone(),
            context.aggregate_functions().clone(),
            context.window_functions().clone(),
            Arc::clone(&self.runtime),
        );
        self.inner.execute(partition, Arc::new(own))
    }
}
