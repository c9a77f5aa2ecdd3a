//! `write_tsfile`: Arrow data from Python (anything with `__arrow_c_stream__`: a pyarrow
//! `Table`, `RecordBatchReader` or `RecordBatch`, a polars `DataFrame`; the Python half turns
//! pandas frames into pyarrow tables first) into a local TsFile, through the library's
//! `LocalTsFileWriter` (the file appears only when complete).

use std::ffi::CStr;
use std::path::PathBuf;

use arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow::record_batch::RecordBatchReader;
use datafusion_tsfile::{LocalTsFileWriter, TsFileWriterOptions};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use crate::errors;

const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

/// The Arrow C stream of a Python object that exports one.
pub fn import_stream(data: &Bound<'_, PyAny>) -> PyResult<ArrowArrayStreamReader> {
    if !data.hasattr("__arrow_c_stream__")? {
        return Err(errors::invalid(format!(
            "expected Arrow data (an object with __arrow_c_stream__, such as a pyarrow Table or RecordBatchReader), got {}",
            data.get_type().name()?
        )));
    }
    let capsule = data.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast_into::<PyCapsule>().map_err(|_| errors::invalid("__arrow_c_stream__ did not return a capsule"))?;
    let pointer = capsule.pointer_checked(Some(STREAM_CAPSULE))?;
    // SAFETY: a capsule named "arrow_array_stream" holds an `FFI_ArrowArrayStream` (the Arrow
    // PyCapsule interface). `from_raw` moves the stream out and leaves a released one behind,
    // which the capsule's destructor then ignores, as the interface prescribes.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.cast::<FFI_ArrowArrayStream>().as_ptr()) };
    ArrowArrayStreamReader::try_new(stream).map_err(|e| errors::invalid(format!("not a valid Arrow stream: {e}")))
}

/// Write `data` to the TsFile `path` with write options `options`; returns the rows written.
pub fn write_tsfile(data: &Bound<'_, PyAny>, path: PathBuf, options: Vec<(String, String)>) -> PyResult<u64> {
    let options =
        TsFileWriterOptions::from_pairs(options.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(errors::from_tsfile)?;
    let reader = import_stream(data)?;
    let mut writer = LocalTsFileWriter::create(&path, reader.schema(), &options).map_err(errors::from_tsfile)?;
    for batch in reader {
        let batch = batch.map_err(|e| errors::invalid(format!("reading the input: {e}")))?;
        writer.write(&batch).map_err(errors::from_tsfile)?;
    }
    writer.finish().map_err(errors::from_tsfile)
}
