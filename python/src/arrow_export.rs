//! Arrow data handed to Python through the Arrow PyCapsule interface (`__arrow_c_schema__`,
//! `__arrow_c_array__`, `__arrow_c_stream__`): pyarrow, polars and pandas take these
//! without copying, and none of them is a build dependency.

use std::collections::VecDeque;
use std::ffi::CStr;
use std::sync::Mutex;

use arrow::array::{RecordBatch, RecordBatchReader, StructArray};
use arrow::error::ArrowError;
use arrow::ffi::{to_ffi, FFI_ArrowSchema};
use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_schema::{Schema, SchemaRef};
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::errors;

const SCHEMA_CAPSULE: &CStr = c"arrow_schema";
const ARRAY_CAPSULE: &CStr = c"arrow_array";
const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

/// `schema` as an `arrow_schema` capsule.
pub fn schema_capsule<'py>(py: Python<'py>, schema: &Schema) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema).map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyCapsule::new_with_value(py, ffi, SCHEMA_CAPSULE)
}

/// One record batch, exported once through `__arrow_c_array__` (`pyarrow.record_batch(b)`).
#[pyclass(name = "ExportedBatch", module = "datafusion_tsfile._internal")]
pub struct ExportedBatch {
    batch: Option<RecordBatch>,
}

#[pymethods]
impl ExportedBatch {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let batch = self.batch.take().ok_or_else(|| PyValueError::new_err("this batch was already exported"))?;
        let array: StructArray = batch.into();
        let (array, schema) = to_ffi(&array.into()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((PyCapsule::new_with_value(py, schema, SCHEMA_CAPSULE)?, PyCapsule::new_with_value(py, array, ARRAY_CAPSULE)?))
    }
}

/// Batches in order: those already in memory, or those of a stream polled on the module's
/// runtime (`datafusion_tsfile::datafusion::execute_in_order`: partitions run concurrently,
/// each a couple of batches ahead). Dropping it stops the stream's work.
pub struct OrderedBatches {
    schema: SchemaRef,
    ready: VecDeque<RecordBatch>,
    stream: Option<(SendableRecordBatchStream, tokio::runtime::Handle)>,
}

impl OrderedBatches {
    /// Batches already collected.
    pub fn ready(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        OrderedBatches { schema, ready: batches.into(), stream: None }
    }

    /// The batches of `stream`, polled on `handle`'s runtime.
    pub fn streaming(stream: SendableRecordBatchStream, handle: tokio::runtime::Handle) -> Self {
        OrderedBatches { schema: stream.schema(), ready: VecDeque::new(), stream: Some((stream, handle)) }
    }

    /// The next batch, `None` at the end.
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch, DataFusionError>> {
        if let Some(b) = self.ready.pop_front() {
            return Some(Ok(b));
        }
        let (stream, handle) = self.stream.as_mut()?;
        let next = handle.block_on(stream.next());
        if next.is_none() {
            self.stream = None;
        }
        next
    }

    /// The schema of every batch.
    pub fn schema_ref(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Iterator for OrderedBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for OrderedBatches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// A stream of record batches read by a query: iterated batch by batch from Python
/// (errors raised as `datafusion_tsfile.errors` exceptions), or handed whole to another
/// Arrow library through `__arrow_c_stream__`. Either way, once.
#[pyclass(name = "BatchStream", module = "datafusion_tsfile._internal")]
pub struct BatchStream {
    /// Taken by `__arrow_c_stream__`, dropped at the end or on an error. A stream polled
    /// from two Python threads at once takes turns.
    batches: Mutex<Option<OrderedBatches>>,
    schema: SchemaRef,
}

impl BatchStream {
    /// Wrap `batches`.
    pub fn new(batches: OrderedBatches) -> Self {
        let schema = batches.schema_ref();
        BatchStream { batches: Mutex::new(Some(batches)), schema }
    }
}

#[pymethods]
impl BatchStream {
    /// The schema of the stream's batches, as an `arrow_schema` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The next batch (`None` at the end), as an object with `__arrow_c_array__`.
    fn next_batch(&self, py: Python<'_>) -> PyResult<Option<ExportedBatch>> {
        let next = py.detach(|| {
            let mut guard = self.batches.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let next = guard.as_mut().and_then(OrderedBatches::next_batch);
            if !matches!(next, Some(Ok(_))) {
                *guard = None;
            }
            next
        });
        match next {
            None => Ok(None),
            Some(Ok(batch)) => Ok(Some(ExportedBatch { batch: Some(batch) })),
            Some(Err(e)) => Err(errors::from_datafusion(e)),
        }
    }

    /// The rest of the stream as an `arrow_array_stream` capsule.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let taken = self.batches.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        let batches = taken.ok_or_else(|| PyValueError::new_err("this stream was already consumed"))?;
        let ffi = FFI_ArrowArrayStream::new(Box::new(batches));
        PyCapsule::new_with_value(py, ffi, STREAM_CAPSULE)
    }
}
