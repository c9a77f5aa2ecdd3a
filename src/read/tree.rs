//! Rows of a tree-model device: its non-aligned series merged on the union of their
//! timestamps, with a null where a series has no point at that time.
//!
//! The merge is a k-way walk over the series' ascending timestamps.

use crate::error::Result;
use crate::format::{ByteSource, FileReader, TimeseriesMetadata};
use crate::read::column::{ColumnBuilder, ColumnValues};
use crate::read::nonaligned::read_series_in;
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
pub fn read_device_rows<S: ByteSource>(file: &FileReader<S>, series: &[TimeseriesMetadata], opts: &ReadOptions) -> Result<DeviceRows> {
    read_device_rows_in(file, series, opts, &DecodeBudget::for_options(opts))
}

/// [`read_device_rows`], charging the decoded bytes to `budget` (one read or query).
pub fn read_device_rows_in<S: ByteSource>(
    file: &FileReader<S>,
    series: &[TimeseriesMetadata],
    opts: &ReadOptions,
    budget: &DecodeBudget,
) -> Result<DeviceRows> {
    let mut inputs: Vec<(Vec<i64>, ColumnValues)> = Vec::with_capacity(series.len());
    let mut columns = Vec::with_capacity(series.len());
    for s in series {
        let (times, mut values) = read_series_in(file, s, opts, budget)?;
        columns.push(ColumnBuilder::new(s.data_type)?);
        inputs.push((times, values.take().0));
    }
    // The merged rows can be far more than the decoded values (every series gets a null at
    // every other series' timestamps): count them and charge the result before building it.
    let rows = union_len(&inputs);
    let merged = columns.iter().fold(rows.saturating_mul(8), |acc, c| acc.saturating_add(c.min_bytes_for(rows)));
    budget.check(merged as u64)?;
    budget.charge(merged as u64)?;
    let mut pos = vec![0usize; inputs.len()];
    let mut times = Vec::with_capacity(rows);
    loop {
        let next = inputs.iter().zip(&pos).filter_map(|((t, _), &p)| t.get(p).copied()).min();
        let Some(t) = next else { break };
        times.push(t);
        for ((input, p), col) in inputs.iter().zip(pos.iter_mut()).zip(columns.iter_mut()) {
            if input.0.get(*p) == Some(&t) {
                col.push_value_from(&input.1, *p)?;
                *p += 1;
            } else {
                col.append_nulls(1)?;
            }
        }
    }
    Ok(DeviceRows { times, columns })
}

/// Number of distinct timestamps over the inputs (each ascending).
fn union_len(inputs: &[(Vec<i64>, ColumnValues)]) -> usize {
    let mut pos = vec![0usize; inputs.len()];
    let mut n = 0usize;
    while let Some(t) = inputs.iter().zip(&pos).filter_map(|((t, _), &p)| t.get(p).copied()).min() {
        n += 1;
        for (input, p) in inputs.iter().zip(pos.iter_mut()) {
            if input.0.get(*p) == Some(&t) {
                *p += 1;
            }
        }
    }
    n
}
