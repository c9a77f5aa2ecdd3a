//! The module's tokio runtime, and the two ways Python-facing code runs async work on it.
//!
//! * [`block_on`]: Python calls into us (`read_tsfile`, `export_parquet`, …): the work runs on
//!   our runtime while the GIL is released, so other Python threads go on.
//! * [`InRuntime`]: a future polled by someone else's executor (datafusion-python drives a
//!   table provider's `scan` on its own runtime, a different tokio instance from ours, where
//!   I/O would fail with "no reactor running"): each poll enters our runtime first.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use pyo3::exceptions::PyRuntimeError;
use pyo3::{PyResult, Python};
use tokio::runtime::{Handle, Runtime};

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The runtime every call of this module shares (one worker per core, started on first use).
pub fn handle() -> PyResult<Handle> {
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("datafusion-tsfile")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    });
    match runtime {
        Ok(rt) => Ok(rt.handle().clone()),
        Err(e) => Err(PyRuntimeError::new_err(format!("cannot start the datafusion-tsfile runtime: {e}"))),
    }
}

/// Run `fut` to completion on the module's runtime with the GIL released.
pub fn block_on<F>(py: Python<'_>, fut: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let handle = handle()?;
    Ok(py.detach(|| handle.block_on(fut)))
}

/// A future that enters the module's runtime each time it is polled.
pub struct InRuntime<F> {
    handle: Handle,
    inner: Pin<Box<F>>,
}

impl<F: Future> InRuntime<F> {
    /// Wrap `inner` so it runs its I/O on the runtime of `handle`.
    pub fn new(handle: Handle, inner: F) -> Self {
        InRuntime { handle, inner: Box::pin(inner) }
    }
}

impl<F: Future> Future for InRuntime<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _entered = self.handle.enter();
        self.inner.as_mut().poll(cx)
    }
}
