//! Typed column buffers that pages are decoded into.
//!
//! A [`ColumnBuilder`] holds the values of one column in Arrow layout (a `Vec` per primitive
//! type, a boolean bit buffer, or offsets + bytes for strings) plus an optional validity
//! bitmap. Pages append to it: densely when every row is present, or through a scratch
//! buffer that is spread into place when an aligned value page has nulls.

use arrow_buffer::{BooleanBufferBuilder, NullBufferBuilder};

use crate::encoding::{self, BinaryValues, DecodeOptions};
use crate::error::{Result, TsFileError};
use crate::format::{Encoding, PhysicalType, TsDataType};

/// Values of one column, in the physical representation of its type.
#[derive(Debug)]
pub enum ColumnValues {
    /// BOOLEAN.
    Boolean(BooleanBufferBuilder),
    /// INT32 and DATE.
    Int32(Vec<i32>),
    /// INT64 and TIMESTAMP.
    Int64(Vec<i64>),
    /// FLOAT.
    Float(Vec<f32>),
    /// DOUBLE.
    Double(Vec<f64>),
    /// TEXT, STRING, BLOB, OBJECT.
    Binary(BinaryValues),
}

impl ColumnValues {
    fn new(p: PhysicalType) -> Self {
        match p {
            PhysicalType::Boolean => ColumnValues::Boolean(BooleanBufferBuilder::new(0)),
            PhysicalType::Int32 => ColumnValues::Int32(Vec::new()),
            PhysicalType::Int64 => ColumnValues::Int64(Vec::new()),
            PhysicalType::Float => ColumnValues::Float(Vec::new()),
            PhysicalType::Double => ColumnValues::Double(Vec::new()),
            PhysicalType::Binary => ColumnValues::Binary(BinaryValues::new()),
        }
    }

    /// Number of values held.
    pub fn len(&self) -> usize {
        match self {
            ColumnValues::Boolean(b) => b.len(),
            ColumnValues::Int32(v) => v.len(),
            ColumnValues::Int64(v) => v.len(),
            ColumnValues::Float(v) => v.len(),
            ColumnValues::Double(v) => v.len(),
            ColumnValues::Binary(v) => v.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the values occupy in Arrow layout (booleans as bits, strings as offsets + data).
    pub fn byte_size(&self) -> usize {
        match self {
            ColumnValues::Boolean(b) => b.len().div_ceil(8),
            ColumnValues::Int32(v) => v.len() * 4,
            ColumnValues::Int64(v) => v.len() * 8,
            ColumnValues::Float(v) => v.len() * 4,
            ColumnValues::Double(v) => v.len() * 8,
            ColumnValues::Binary(v) => v.offsets.len() * 4 + v.data.len(),
        }
    }

    fn clear(&mut self) {
        match self {
            ColumnValues::Boolean(b) => *b = BooleanBufferBuilder::new(0),
            ColumnValues::Int32(v) => v.clear(),
            ColumnValues::Int64(v) => v.clear(),
            ColumnValues::Float(v) => v.clear(),
            ColumnValues::Double(v) => v.clear(),
            ColumnValues::Binary(v) => *v = BinaryValues::new(),
        }
    }

    /// Decode `count` values of `encoding` from `data`, appending.
    fn decode(&mut self, encoding: Encoding, data_type: TsDataType, data: &[u8], count: usize, opts: &DecodeOptions) -> Result<()> {
        match self {
            ColumnValues::Boolean(b) => encoding::decode_bool(encoding, data, count, b, opts),
            ColumnValues::Int32(v) => encoding::decode_i32(encoding, data, count, v, opts),
            ColumnValues::Int64(v) => encoding::decode_i64(encoding, data, count, v, opts),
            ColumnValues::Float(v) => encoding::decode_f32(encoding, data, count, v, opts),
            ColumnValues::Double(v) => encoding::decode_f64(encoding, data, count, v, opts),
            ColumnValues::Binary(v) => encoding::decode_binary(encoding, data_type, data, count, v, opts),
        }
    }

    /// Append `n` placeholder values (for null slots).
    fn append_defaults(&mut self, n: usize) -> Result<()> {
        match self {
            ColumnValues::Boolean(b) => b.append_n(n, false),
            ColumnValues::Int32(v) => v.resize(v.len() + n, 0),
            ColumnValues::Int64(v) => v.resize(v.len() + n, 0),
            ColumnValues::Float(v) => v.resize(v.len() + n, 0.0),
            ColumnValues::Double(v) => v.resize(v.len() + n, 0.0),
            ColumnValues::Binary(v) => {
                for _ in 0..n {
                    v.push(&[])?;
                }
            }
        }
        Ok(())
    }

    /// Append `src[range]` (same variant) to `self`.
    fn append_range(&mut self, src: &ColumnValues, range: std::ops::Range<usize>) -> Result<()> {
        match (self, src) {
            (ColumnValues::Boolean(d), ColumnValues::Boolean(s)) => {
                for i in range {
                    d.append(s.get_bit(i));
                }
            }
            (ColumnValues::Int32(d), ColumnValues::Int32(s)) => d.extend_from_slice(s.get(range).unwrap_or(&[])),
            (ColumnValues::Int64(d), ColumnValues::Int64(s)) => d.extend_from_slice(s.get(range).unwrap_or(&[])),
            (ColumnValues::Float(d), ColumnValues::Float(s)) => d.extend_from_slice(s.get(range).unwrap_or(&[])),
            (ColumnValues::Double(d), ColumnValues::Double(s)) => d.extend_from_slice(s.get(range).unwrap_or(&[])),
            (ColumnValues::Binary(d), ColumnValues::Binary(s)) => {
                for i in range {
                    d.push(s.get(i).unwrap_or(&[]))?;
                }
            }
            _ => return Err(TsFileError::corrupt("column", None, "internal: mismatched column types")),
        }
        Ok(())
    }

    /// Append one value `src[i]`.
    #[inline]
    fn append_one(&mut self, src: &ColumnValues, i: usize) -> Result<()> {
        self.append_range(src, i..i + 1)
    }
}

/// One column being assembled: values plus validity.
#[derive(Debug)]
pub struct ColumnBuilder {
    data_type: TsDataType,
    values: ColumnValues,
    validity: NullBufferBuilder,
    scratch: Option<Box<ColumnValues>>,
}

impl ColumnBuilder {
    /// An empty builder for values of `data_type`.
    pub fn new(data_type: TsDataType) -> Result<Self> {
        let p = data_type
            .physical()
            .ok_or_else(|| TsFileError::unsupported(format!("values of type {data_type}")))?;
        Ok(ColumnBuilder { data_type, values: ColumnValues::new(p), validity: NullBufferBuilder::new(0), scratch: None })
    }

    /// The column's TsFile type.
    pub fn data_type(&self) -> TsDataType {
        self.data_type
    }

    /// Number of rows (values and nulls).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no rows are held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held: values in Arrow layout plus one validity bit per row. The read layer
    /// charges the growth of this figure against the [`crate::read::DecodeBudget`].
    pub fn byte_size(&self) -> usize {
        self.values.byte_size() + self.values.len().div_ceil(8)
    }

    /// Bytes that `rows` more rows take at least (fixed-width part only; string bytes come
    /// on top): the amount checked against the budget before a page is decoded.
    pub fn min_bytes_for(&self, rows: usize) -> usize {
        let bits = match self.data_type.physical() {
            Some(PhysicalType::Boolean) => 1,
            Some(PhysicalType::Int32 | PhysicalType::Float | PhysicalType::Binary) => 32,
            _ => 64,
        };
        rows.saturating_mul(bits + 1).div_ceil(8)
    }

    fn scratch(&mut self) -> ColumnValues {
        match self.scratch.take() {
            Some(mut s) => {
                s.clear();
                *s
            }
            None => ColumnValues::new(self.data_type.physical().unwrap_or(PhysicalType::Int64)),
        }
    }

    /// Decode `count` present values and append them as non-null rows.
    pub fn append_dense(&mut self, encoding: Encoding, data: &[u8], count: usize, opts: &DecodeOptions) -> Result<()> {
        let before = self.values.len();
        self.values.decode(encoding, self.data_type, data, count, opts)?;
        let added = self.values.len() - before;
        if added != count {
            return Err(TsFileError::corrupt("value stream", None, format!("decoded {added} values, expected {count}")));
        }
        self.validity.append_n_non_nulls(count);
        Ok(())
    }

    /// Decode the present values of an aligned page whose presence bitmap is `bitmap`
    /// (MSB first, bit set = present) over `rows` rows, keeping only rows in `keep`.
    pub fn append_with_bitmap(
        &mut self,
        encoding: Encoding,
        data: &[u8],
        bitmap: &[u8],
        rows: usize,
        keep: std::ops::Range<usize>,
        opts: &DecodeOptions,
    ) -> Result<()> {
        let present = count_present(bitmap, rows);
        if present == rows {
            // No nulls: the rows in `keep` are values `keep` of the stream.
            return self.append_range(encoding, data, rows, keep, opts);
        }
        let mut scratch = self.scratch();
        let r = (|| {
            scratch.decode(encoding, self.data_type, data, present, opts)?;
            if scratch.len() != present {
                return Err(TsFileError::corrupt(
                    "value stream",
                    None,
                    format!("decoded {} values, the bitmap marks {present} present", scratch.len()),
                ));
            }
            let mut src = 0usize;
            for row in 0..rows {
                let is_present = bit_msb(bitmap, row);
                if keep.contains(&row) {
                    if is_present {
                        self.values.append_one(&scratch, src)?;
                        self.validity.append_non_null();
                    } else {
                        self.values.append_defaults(1)?;
                        self.validity.append_null();
                    }
                }
                if is_present {
                    src += 1;
                }
            }
            Ok(())
        })();
        self.scratch = Some(Box::new(scratch));
        r
    }

    /// Decode `count` values of a page and append only the rows in `keep`.
    pub fn append_range(&mut self, encoding: Encoding, data: &[u8], count: usize, keep: std::ops::Range<usize>, opts: &DecodeOptions) -> Result<()> {
        if keep == (0..count) {
            return self.append_dense(encoding, data, count, opts);
        }
        let mut scratch = self.scratch();
        let r = (|| {
            scratch.decode(encoding, self.data_type, data, count, opts)?;
            if scratch.len() != count {
                return Err(TsFileError::corrupt("value stream", None, format!("decoded {} values, expected {count}", scratch.len())));
            }
            let n = keep.len();
            self.values.append_range(&scratch, keep)?;
            self.validity.append_n_non_nulls(n);
            Ok(())
        })();
        self.scratch = Some(Box::new(scratch));
        r
    }

    /// Append value `i` of `src` (same physical type) as a non-null row.
    pub fn push_value_from(&mut self, src: &ColumnValues, i: usize) -> Result<()> {
        self.values.append_one(src, i)?;
        self.validity.append_non_null();
        Ok(())
    }

    /// Append values `range` of `src` (same physical type) as non-null rows.
    pub fn push_values_from(&mut self, src: &ColumnValues, range: std::ops::Range<usize>) -> Result<()> {
        if range.end > src.len() || range.start > range.end {
            return Err(TsFileError::corrupt("column", None, "internal: value range outside the decoded page"));
        }
        let n = range.len();
        self.values.append_range(src, range)?;
        self.validity.append_n_non_nulls(n);
        Ok(())
    }

    /// Move every row of `other` (same type) to the end of this builder, nulls included.
    pub fn append_builder(&mut self, other: &mut ColumnBuilder) -> Result<()> {
        let (values, nulls) = other.take();
        let n = values.len();
        self.values.append_range(&values, 0..n)?;
        match nulls {
            Some(nulls) => self.validity.append_buffer(&nulls),
            None => self.validity.append_n_non_nulls(n),
        }
        Ok(())
    }

    /// Append `n` null rows.
    pub fn append_nulls(&mut self, n: usize) -> Result<()> {
        self.values.append_defaults(n)?;
        self.validity.append_n_nulls(n);
        Ok(())
    }

    /// Take the values and validity, leaving the builder empty.
    pub fn take(&mut self) -> (ColumnValues, Option<arrow_buffer::NullBuffer>) {
        let p = self.data_type.physical().unwrap_or(PhysicalType::Int64);
        let values = std::mem::replace(&mut self.values, ColumnValues::new(p));
        let nulls = self.validity.finish();
        (values, nulls)
    }
}

/// Bit `i` of an MSB-first bitmap.
#[inline]
pub fn bit_msb(bitmap: &[u8], i: usize) -> bool {
    bitmap.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0)
}

/// Number of set bits among the first `rows` bits of an MSB-first bitmap.
pub fn count_present(bitmap: &[u8], rows: usize) -> usize {
    let full = rows / 8;
    let mut n: usize = bitmap.iter().take(full).map(|b| b.count_ones() as usize).sum();
    let rem = rows % 8;
    if rem > 0 {
        if let Some(b) = bitmap.get(full) {
            let mask = !(0xffu8 >> rem);
            n += (b & mask).count_ones() as usize;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_count_present_partial_byte() {
        assert_eq!(count_present(&[0b1010_0000], 3), 2);
        assert_eq!(count_present(&[0xff, 0b1000_0001], 9), 9);
        assert_eq!(count_present(&[0xff, 0b1000_0001], 16), 10);
        assert_eq!(count_present(&[], 0), 0);
        assert!(bit_msb(&[0x80], 0));
        assert!(!bit_msb(&[0x80], 1));
        assert!(!bit_msb(&[], 5));
    }
}
