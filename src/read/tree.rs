//! Rows of a tree-model device: its non-aligned series merged on the union of their
//! timestamps, with a null where a series has no point at that time.
//!
//! The merge is the streaming k-way walk of [`crate::read::merge`], collected into one set
//! of columns.

use crate::error::Result;
use crate::format::{ByteSource, FileReader, TimeseriesMetadata};
use crate::read::column::ColumnBuilder;
use crate::read::merge::{MergeInput, SeriesMerger};
use crate::read::{DecodeBudget, ReadOptions};

/// Rows of a device: timestamps and one column per series (in the order given).
#[derive(Debug)]
pub struct DeviceRows {
    /// Union of the series' timestamps, ascending.
    pub times: Vec<i64>,
    /// One column per series, `times.len()` rows each.
    pub columns: Vec<ColumnBuilder>,
}

/// Read `series` of one device and merge them into rows, with one budget of
/// `opts.max_decoded_bytes` for the whole device.
pub fn read_device_rows<S: ByteSource>(
    file: &FileReader<S>,
    series: &[TimeseriesMetadata],
    opts: &ReadOptions,
) -> Result<DeviceRows> {
    read_device_rows_in(file, series, opts, &DecodeBudget::for_options(opts))
}

/// Rows merged per step of [`read_device_rows_in`]; each step's output is charged to the
/// budget before the next, so a device whose merged rows outgrow the budget stops early.
const MERGE_STEP_ROWS: usize = 64 * 1024;

/// [`read_device_rows`], charging the decoded bytes to `budget` (one read or query). The
/// series are merged by the streaming [`SeriesMerger`], a page per series at a time.
pub fn read_device_rows_in<S: ByteSource>(
    file: &FileReader<S>,
    series: &[TimeseriesMetadata],
    opts: &ReadOptions,
    budget: &DecodeBudget,
) -> Result<DeviceRows> {
    let inputs = series.iter().map(|s| MergeInput { series: s.clone(), chunks: s.chunks.clone(), values: true }).collect();
    let mut merger = SeriesMerger::new(inputs)?;
    let mut times = Vec::new();
    let mut columns = series.iter().map(|s| ColumnBuilder::new(s.data_type)).collect::<Result<Vec<_>>>()?;
    while let Some(mut step) = merger.next_rows(file, MERGE_STEP_ROWS, opts, None, budget)? {
        // The merged rows can be far more than the decoded values (every series gets a null
        // at every other series' timestamps): charge them as they are kept.
        let rows = step.times.len();
        let merged = step.columns.iter().fold(rows.saturating_mul(8), |acc, c| acc.saturating_add(c.min_bytes_for(rows)));
        budget.charge(merged as u64)?;
        times.extend_from_slice(&step.times);
        for (out, col) in columns.iter_mut().zip(step.columns.iter_mut()) {
            out.append_builder(col)?;
        }
    }
    Ok(DeviceRows { times, columns })
}
