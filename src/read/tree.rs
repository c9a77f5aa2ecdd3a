//! Rows of a tree-model device: its non-aligned series merged on the union of their
//! timestamps, with a null where a series has no point at that time.
//!
//! The merge is a k-way walk over the series' ascending timestamps.

use crate::error::Result;
use crate::format::{ByteSource, FileReader, TimeseriesMetadata};
use crate::read::column::{ColumnBuilder, ColumnValues};
use crate::read::nonaligned::read_series;
use crate::read::ReadOptions;

/// Rows of a device: timestamps and one column per series (in the order given).
#[derive(Debug)]
pub struct DeviceRows {
    /// Union of the series' timestamps, ascending.
    pub times: Vec<i64>,
    /// One column per series, `times.len()` rows each.
    pub columns: Vec<ColumnBuilder>,
}

/// Read `series` of one device and merge them into rows.
pub fn read_device_rows<S: ByteSource>(file: &FileReader<S>, series: &[TimeseriesMetadata], opts: &ReadOptions) -> Result<DeviceRows> {
    let mut inputs: Vec<(Vec<i64>, ColumnValues)> = Vec::with_capacity(series.len());
    let mut columns = Vec::with_capacity(series.len());
    for s in series {
        let (times, mut values) = read_series(file, s, opts)?;
        columns.push(ColumnBuilder::new(s.data_type)?);
        inputs.push((times, values.take().0));
    }
    let mut pos = vec![0usize; inputs.len()];
    let mut times = Vec::new();
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
