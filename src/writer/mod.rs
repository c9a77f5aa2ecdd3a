//! The Arrow-facing streaming writer: `RecordBatch`es in, a table-model TsFile out.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use arrow_array::{RecordBatch, StringArray, Float64Array, TimestampMillisecondArray};
//! # use arrow_schema::{DataType, Field, Schema, TimeUnit};
//! use datafusion_tsfile::writer::{LocalTsFileWriter, TsFileWriterOptions};
//! # fn main() -> datafusion_tsfile::Result<()> {
//! # let schema = Arc::new(Schema::new(vec![
//! #     Field::new("time", DataType::Timestamp(TimeUnit::Millisecond, None), false),
//! #     Field::new("device", DataType::Utf8, false),
//! #     Field::new("temperature", DataType::Float64, true),
//! # ]));
//! # let batch = RecordBatch::try_new(schema.clone(), vec![
//! #     Arc::new(TimestampMillisecondArray::from(vec![1, 2])),
//! #     Arc::new(StringArray::from(vec!["d1", "d2"])),
//! #     Arc::new(Float64Array::from(vec![20.5, 21.0])),
//! # ]).unwrap();
//! let options = TsFileWriterOptions::from_pairs([("tags", "device"), ("table", "weather")])?;
//! let mut w = LocalTsFileWriter::create("weather.tsfile", batch.schema(), &options)?;
//! w.write(&batch)?;
//! w.finish()?; // only now does weather.tsfile appear
//! # Ok(()) }
//! ```
//!
//! * [`options`]: [`TsFileWriterOptions`] and their `key = value` form;
//! * [`schema`]: Arrow schema → table (time, TAG, ATTRIBUTE and FIELD columns, types);
//! * [`append`]: Arrow arrays → per-device column buffers;
//! * [`local`]: [`LocalTsFileWriter`], a file that appears complete or not at all.
//!
//! # Memory
//!
//! Rows are buffered per device (DeviceID = table name + TAG values). When the buffered rows
//! take more than [`TsFileWriterOptions::memory_limit`] bytes (64 MiB by default; counted as
//! 8 bytes per timestamp, one per null flag and the values' own bytes), every buffered
//! device is written as one chunk group, in DeviceID order, and the buffers are freed. Peak
//! memory is therefore about twice the limit (vectors grow by doubling) plus one chunk
//! group's encoded bytes, plus per written chunk its offset and statistics (about 100 bytes)
//! until the footer is written.
//!
//! # Order and duplicates
//!
//! Rows may arrive in any order within the buffered rows; each chunk group is sorted by time.
//! A device's rows in a later flush must all be later than its rows already written (sort the
//! input by tags and time, or raise the memory limit); a `(device, time)` pair that occurs
//! twice, a null time or a value that cannot be stored is an error, and the output must then
//! be discarded ([`LocalTsFileWriter`] and the DataFusion sink do so).

pub mod append;
pub mod local;
pub mod options;
pub mod schema;

use std::collections::HashMap;
use std::io::Write;
use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};

use crate::error::{Result, TsFileError};
use crate::format::{DeviceId, TsDataType};
use crate::write::{DeviceBuffer, FileWriter};

pub use local::LocalTsFileWriter;
pub use options::{TsFileWriterOptions, DEFAULT_MEMORY_LIMIT};
pub use schema::WritePlan;

use append::{append_column, timestamps, BatchColumn};

/// Writes `RecordBatch`es of one schema as a table-model TsFile to `W`.
#[derive(Debug)]
pub struct TsFileWriter<W: Write> {
    inner: FileWriter<W>,
    plan: WritePlan,
    schema: SchemaRef,
    memory_limit: usize,
    /// Device key (see [`device_key`]) → index into `buffers`.
    index: HashMap<String, usize>,
    buffers: Vec<(DeviceId, DeviceBuffer)>,
    buffered_bytes: usize,
    field_types: Vec<TsDataType>,
    key: String,
    rows: u64,
}

/// The string values of a TAG column of a batch (one per row).
fn tag_values(array: &dyn Array) -> Result<Vec<Option<&str>>> {
    fn strings(a: &dyn Array) -> Result<Vec<Option<&str>>> {
        Ok(match a.data_type() {
            DataType::Utf8 => a.as_string::<i32>().iter().collect(),
            DataType::LargeUtf8 => a.as_string::<i64>().iter().collect(),
            DataType::Utf8View => a.as_string_view().iter().collect(),
            other => return Err(TsFileError::InvalidArgument(format!("TAG values of type {other}: expected strings"))),
        })
    }
    match array.as_any_dictionary_opt() {
        Some(d) => {
            let values = strings(d.values().as_ref())?;
            Ok(append::dictionary_keys(array).into_iter().map(|k| k.and_then(|k| values.get(k).copied().flatten())).collect())
        }
        None => strings(array),
    }
}

/// A map key of TAG values: per value a 0 byte (null) or a 1 byte, its length and its bytes.
fn device_key(key: &mut String, tags: &[Option<&str>]) {
    use std::fmt::Write as _;
    key.clear();
    for t in tags {
        match t {
            None => key.push('\0'),
            Some(s) => {
                let _ = write!(key, "\u{1}{}:", s.len());
                key.push_str(s);
            }
        }
    }
}

impl<W: Write> TsFileWriter<W> {
    /// A writer of batches of `schema`; `options.table` must be set.
    pub fn try_new(out: W, schema: SchemaRef, options: &TsFileWriterOptions) -> Result<Self> {
        let table =
            options.table.clone().ok_or_else(|| TsFileError::InvalidArgument("no table name: set the option table".into()))?;
        let plan = schema::plan(&schema, options)?;
        let mut format = options.format;
        format.time = schema::time_options(options);
        let inner = FileWriter::try_new(out, &table, &plan.columns, format)?;
        let field_types = inner.field_types();
        Ok(TsFileWriter {
            inner,
            plan,
            schema,
            memory_limit: options.memory_limit.max(1),
            index: HashMap::new(),
            buffers: Vec::new(),
            buffered_bytes: 0,
            field_types,
            key: String::new(),
            rows: 0,
        })
    }

    /// The input schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The table plan (time, TAG and FIELD columns).
    pub fn plan(&self) -> &WritePlan {
        &self.plan
    }

    /// Rows accepted so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes of buffered rows (see the module doc).
    pub fn buffered_bytes(&self) -> usize {
        self.buffered_bytes
    }

    /// Bytes written to the output so far.
    pub fn bytes_written(&self) -> u64 {
        self.inner.position()
    }

    /// The output, e.g. to drain an in-memory buffer after a flush.
    pub fn output_mut(&mut self) -> &mut W {
        self.inner.output_mut()
    }

    /// Buffer the rows of `batch`; flushes when the memory limit is passed.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_columns() != self.schema.fields().len() {
            return Err(TsFileError::InvalidArgument(format!(
                "batch of {} columns for a writer of {}",
                batch.num_columns(),
                self.schema.fields().len()
            )));
        }
        for (i, (a, f)) in batch.columns().iter().zip(self.schema.fields()).enumerate() {
            if a.data_type() != f.data_type() {
                return Err(TsFileError::InvalidArgument(format!(
                    "column {i} ('{}') is {} in this batch, {} in the writer's schema",
                    f.name(),
                    a.data_type(),
                    f.data_type()
                )));
            }
        }
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let time_array = batch.column(self.plan.time);
        let times = timestamps(time_array.as_ref())?;
        if times.null_count() > 0 {
            let row = (0..n).find(|&i| times.is_null(i)).unwrap_or(0);
            return Err(TsFileError::InvalidArgument(format!(
                "null time in column '{}' at row {row} of a batch",
                self.schema.field(self.plan.time).name()
            )));
        }
        let tag_columns: Vec<Vec<Option<&str>>> =
            self.plan.tags.iter().map(|&t| tag_values(batch.column(t).as_ref())).collect::<Result<_>>()?;
        let fields: Vec<BatchColumn<'_>> =
            self.plan.fields.iter().map(|(i, _)| BatchColumn::new(batch.column(*i).as_ref())).collect();
        let times = times.values();
        let mut tags: Vec<Option<&str>> = vec![None; tag_columns.len()];
        let same = |a: usize, b: usize| tag_columns.iter().all(|c| c.get(a) == c.get(b));
        let mut start = 0;
        for row in 1..=n {
            if row < n && same(row, start) {
                continue;
            }
            for (slot, c) in tags.iter_mut().zip(&tag_columns) {
                *slot = c.get(start).copied().flatten();
            }
            self.append_run(&tags, times, &fields, start..row)?;
            start = row;
        }
        self.rows += n as u64;
        if self.buffered_bytes > self.memory_limit {
            self.flush()?;
        }
        Ok(())
    }

    fn append_run(&mut self, tags: &[Option<&str>], times: &[i64], fields: &[BatchColumn<'_>], rows: Range<usize>) -> Result<()> {
        device_key(&mut self.key, tags);
        let slot = match self.index.get(self.key.as_str()) {
            Some(&i) => i,
            None => {
                let id = self.inner.device_id(tags);
                self.buffers.push((id, DeviceBuffer::new(&self.field_types)?));
                let i = self.buffers.len() - 1;
                self.index.insert(self.key.clone(), i);
                i
            }
        };
        let Some((_, buf)) = self.buffers.get_mut(slot) else { return Ok(()) };
        let before = buf.data_bytes();
        buf.times.extend_from_slice(times.get(rows.clone()).unwrap_or_default());
        for ((col, out), (i, _)) in fields.iter().zip(buf.columns.iter_mut()).zip(&self.plan.fields) {
            append_column(col, rows.clone(), out).map_err(|e| e.context(format!("column '{}'", self.schema.field(*i).name())))?;
        }
        self.buffered_bytes = self.buffered_bytes + buf.data_bytes() - before;
        Ok(())
    }

    /// Write every buffered device as a chunk group (in DeviceID order) and free the buffers.
    pub fn flush(&mut self) -> Result<()> {
        let mut buffers = std::mem::take(&mut self.buffers);
        self.index.clear();
        self.buffered_bytes = 0;
        buffers.sort_by(|a, b| a.0.cmp(&b.0));
        for (id, mut buf) in buffers {
            self.inner.write_chunk_group(&id, &mut buf)?;
        }
        Ok(())
    }

    /// Flush, write the footer and return the output.
    pub fn finish(mut self) -> Result<W> {
        self.flush()?;
        self.inner.finish()
    }
}
