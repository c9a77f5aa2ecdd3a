//! Rows of one device awaiting a flush: the time column and one buffer per field.
//!
//! A [`ColumnBuffer`] keeps presence per row and only the non-null values, densely, in their
//! TsFile physical type ([`ValueBuffer`]); strings and blobs are one byte buffer with offsets.
//! [`DeviceBuffer::sort_by_time`] puts rows in time order (stable) and rejects duplicate
//! timestamps, so a flushed chunk group is always strictly increasing in time.

use crate::error::{Result, TsFileError};
use crate::format::{PhysicalType, TsDataType};

/// The non-null values of a column, in its physical type.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueBuffer {
    /// BOOLEAN.
    Boolean(Vec<bool>),
    /// INT32 and DATE (`YYYYMMDD`).
    Int32(Vec<i32>),
    /// INT64 and TIMESTAMP.
    Int64(Vec<i64>),
    /// FLOAT.
    Float(Vec<f32>),
    /// DOUBLE.
    Double(Vec<f64>),
    /// TEXT, STRING, BLOB: value `i` is `data[offsets[i]..offsets[i + 1]]`.
    Binary {
        /// `len + 1` offsets into `data`, starting at 0.
        offsets: Vec<usize>,
        /// The bytes of every value.
        data: Vec<u8>,
    },
}

/// A window of a [`ValueBuffer`]'s values.
#[derive(Debug, Clone, Copy)]
pub enum ValueSlice<'a> {
    /// BOOLEAN.
    Boolean(&'a [bool]),
    /// INT32 and DATE.
    Int32(&'a [i32]),
    /// INT64 and TIMESTAMP.
    Int64(&'a [i64]),
    /// FLOAT.
    Float(&'a [f32]),
    /// DOUBLE.
    Double(&'a [f64]),
    /// Binary values: `offsets` has one more entry than values (absolute into `data`).
    Binary {
        /// Offsets of the values and the end of the last one.
        offsets: &'a [usize],
        /// The backing bytes.
        data: &'a [u8],
    },
}

impl ValueSlice<'_> {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            ValueSlice::Boolean(v) => v.len(),
            ValueSlice::Int32(v) => v.len(),
            ValueSlice::Int64(v) => v.len(),
            ValueSlice::Float(v) => v.len(),
            ValueSlice::Double(v) => v.len(),
            ValueSlice::Binary { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Binary value `i` (empty when out of range or not binary).
    pub fn binary(&self, i: usize) -> &[u8] {
        match self {
            ValueSlice::Binary { offsets, data } => {
                let (Some(&a), Some(&b)) = (offsets.get(i), offsets.get(i + 1)) else { return &[] };
                data.get(a..b).unwrap_or_default()
            }
            _ => &[],
        }
    }
}

impl ValueBuffer {
    /// An empty buffer for values of `data_type`.
    pub fn new(data_type: TsDataType) -> Result<ValueBuffer> {
        Ok(match data_type.physical() {
            Some(PhysicalType::Boolean) => ValueBuffer::Boolean(Vec::new()),
            Some(PhysicalType::Int32) => ValueBuffer::Int32(Vec::new()),
            Some(PhysicalType::Int64) => ValueBuffer::Int64(Vec::new()),
            Some(PhysicalType::Float) => ValueBuffer::Float(Vec::new()),
            Some(PhysicalType::Double) => ValueBuffer::Double(Vec::new()),
            Some(PhysicalType::Binary) => ValueBuffer::Binary { offsets: vec![0], data: Vec::new() },
            None => return Err(TsFileError::unsupported(format!("writing {data_type} columns"))),
        })
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.slice_all().len()
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values `range` of the buffer (clamped to what it holds).
    pub fn slice(&self, start: usize, end: usize) -> ValueSlice<'_> {
        fn win<T>(v: &[T], a: usize, b: usize) -> &[T] {
            let b = b.min(v.len());
            v.get(a.min(b)..b).unwrap_or_default()
        }
        match self {
            ValueBuffer::Boolean(v) => ValueSlice::Boolean(win(v, start, end)),
            ValueBuffer::Int32(v) => ValueSlice::Int32(win(v, start, end)),
            ValueBuffer::Int64(v) => ValueSlice::Int64(win(v, start, end)),
            ValueBuffer::Float(v) => ValueSlice::Float(win(v, start, end)),
            ValueBuffer::Double(v) => ValueSlice::Double(win(v, start, end)),
            ValueBuffer::Binary { offsets, data } => {
                ValueSlice::Binary { offsets: win(offsets, start, end.saturating_add(1)), data: data.as_slice() }
            }
        }
    }

    /// All values.
    pub fn slice_all(&self) -> ValueSlice<'_> {
        self.slice(0, usize::MAX - 1)
    }

    /// Bytes of the values held (and of the offsets of binary values).
    pub fn value_bytes(&self) -> usize {
        match self {
            ValueBuffer::Boolean(v) => v.len(),
            ValueBuffer::Int32(v) => v.len() * 4,
            ValueBuffer::Int64(v) => v.len() * 8,
            ValueBuffer::Float(v) => v.len() * 4,
            ValueBuffer::Double(v) => v.len() * 8,
            ValueBuffer::Binary { offsets, data } => offsets.len() * 8 + data.len(),
        }
    }

    /// Drop every value, keeping the allocations.
    pub fn clear(&mut self) {
        match self {
            ValueBuffer::Boolean(v) => v.clear(),
            ValueBuffer::Int32(v) => v.clear(),
            ValueBuffer::Int64(v) => v.clear(),
            ValueBuffer::Float(v) => v.clear(),
            ValueBuffer::Double(v) => v.clear(),
            ValueBuffer::Binary { offsets, data } => {
                offsets.clear();
                offsets.push(0);
                data.clear();
            }
        }
    }

    /// Append value `i` of `other` (same variant; otherwise nothing).
    fn push_from(&mut self, other: &ValueBuffer, i: usize) {
        match (self, other) {
            (ValueBuffer::Boolean(a), ValueBuffer::Boolean(b)) => a.extend(b.get(i)),
            (ValueBuffer::Int32(a), ValueBuffer::Int32(b)) => a.extend(b.get(i)),
            (ValueBuffer::Int64(a), ValueBuffer::Int64(b)) => a.extend(b.get(i)),
            (ValueBuffer::Float(a), ValueBuffer::Float(b)) => a.extend(b.get(i)),
            (ValueBuffer::Double(a), ValueBuffer::Double(b)) => a.extend(b.get(i)),
            (ValueBuffer::Binary { offsets, data }, ValueBuffer::Binary { .. }) => {
                data.extend_from_slice(other.slice_all().binary(i));
                offsets.push(data.len());
            }
            _ => {}
        }
    }
}

/// One field column of a device: presence per row and the non-null values.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnBuffer {
    /// One flag per row: the row has a value.
    pub present: Vec<bool>,
    /// The values of the present rows, in row order.
    pub values: ValueBuffer,
}

impl ColumnBuffer {
    /// An empty column of `data_type`.
    pub fn new(data_type: TsDataType) -> Result<ColumnBuffer> {
        Ok(ColumnBuffer { present: Vec::new(), values: ValueBuffer::new(data_type)? })
    }
}

/// The buffered rows of one device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceBuffer {
    /// Timestamps, one per row.
    pub times: Vec<i64>,
    /// One buffer per field of the table, in the writer's field order.
    pub columns: Vec<ColumnBuffer>,
}

impl DeviceBuffer {
    /// An empty buffer with a column per field type.
    pub fn new(field_types: &[TsDataType]) -> Result<DeviceBuffer> {
        Ok(DeviceBuffer { times: Vec::new(), columns: field_types.iter().map(|t| ColumnBuffer::new(*t)).collect::<Result<_>>()? })
    }

    /// Rows buffered.
    pub fn rows(&self) -> usize {
        self.times.len()
    }

    /// Bytes of the rows held: timestamps, presence flags and values (the allocations may be
    /// up to twice as large while they grow).
    pub fn data_bytes(&self) -> usize {
        self.times.len() * 8 + self.columns.iter().map(|c| c.present.len() + c.values.value_bytes()).sum::<usize>()
    }

    /// Check that every column has one presence flag per row and one value per present row.
    pub fn check(&self) -> Result<()> {
        for (i, c) in self.columns.iter().enumerate() {
            let present = c.present.iter().filter(|p| **p).count();
            if c.present.len() != self.times.len() || present != c.values.len() {
                return Err(TsFileError::InvalidArgument(format!(
                    "column {i}: {} presence flags and {} values for {} rows ({present} present)",
                    c.present.len(),
                    c.values.len(),
                    self.times.len()
                )));
            }
        }
        Ok(())
    }

    /// Order the rows by time (stable); an error names the first timestamp that occurs twice.
    pub fn sort_by_time(&mut self) -> Result<()> {
        if self.times.windows(2).all(|w| matches!(w, [a, b] if a < b)) {
            return Ok(());
        }
        let mut order: Vec<usize> = (0..self.times.len()).collect();
        order.sort_by_key(|&i| self.times.get(i).copied().unwrap_or(i64::MAX));
        let times: Vec<i64> = order.iter().filter_map(|&i| self.times.get(i).copied()).collect();
        if let Some(w) = times.windows(2).find(|w| matches!(w, [a, b] if a == b)) {
            return Err(TsFileError::InvalidArgument(format!(
                "duplicate timestamp {} for one device: each (device, time) pair may occur once",
                w.first().copied().unwrap_or_default()
            )));
        }
        for c in &mut self.columns {
            // Value index of each row (or none when the row is null).
            let mut at = Vec::with_capacity(c.present.len());
            let mut next = 0usize;
            for &p in &c.present {
                at.push(p.then_some(next));
                next += usize::from(p);
            }
            let mut values = c.values.clone();
            values.clear();
            let mut present = Vec::with_capacity(c.present.len());
            for &row in &order {
                let slot = at.get(row).copied().flatten();
                present.push(slot.is_some());
                if let Some(i) = slot {
                    values.push_from(&c.values, i);
                }
            }
            c.present = present;
            c.values = values;
        }
        self.times = times;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_sort_by_time_moves_values_with_their_rows() {
        let mut d = DeviceBuffer::new(&[TsDataType::Int32, TsDataType::String]).unwrap();
        d.times = vec![30, 10, 20];
        d.columns[0].present = vec![true, false, true];
        d.columns[0].values = ValueBuffer::Int32(vec![3, 2]);
        d.columns[1].present = vec![false, true, true];
        d.columns[1].values = ValueBuffer::Binary { offsets: vec![0, 1, 3], data: b"abb".to_vec() };
        d.check().unwrap();
        d.sort_by_time().unwrap();
        assert_eq!(d.times, [10, 20, 30]);
        assert_eq!(d.columns[0].present, [false, true, true]);
        assert_eq!(d.columns[0].values, ValueBuffer::Int32(vec![2, 3]));
        assert_eq!(d.columns[1].present, [true, true, false]);
        assert_eq!(d.columns[1].values, ValueBuffer::Binary { offsets: vec![0, 1, 3], data: b"abb".to_vec() });
        d.check().unwrap();
        d.times = vec![5, 1, 5];
        d.columns[0].present = vec![false; 3];
        d.columns[0].values = ValueBuffer::Int32(vec![]);
        d.columns[1].present = vec![false; 3];
        d.columns[1].values.clear();
        let e = d.sort_by_time().unwrap_err().to_string();
        assert!(e.contains("duplicate timestamp 5"), "{e}");
    }
}
