//! Typed column buffers that pages are decoded into.
//!
//! A [`ColumnBuilder`] holds the values of one column in Arrow layout (a `Vec` per primitive
//! type, a boolean bit buffer, or offsets + bytes for strings) plus an optional validity
//! bitmap. Pages append to it: densely when every row is present, or through a scratch
//! buffer that is spread into place when an aligned value page has nulls.

use arrow_buffer::{BooleanBufferBuilder, NullBufferBuilder};

use std::sync::Arc;

use crate::encoding::{self, BinaryValues, DecodeOptions};
use crate::read::check::{decode_f32_checked, decode_f64_checked, decode_i64_checked, PageCheck, ValueCheck};
use crate::error::{Result, TsFileError};
use crate::format::{Encoding, PhysicalType, Statistics, TsDataType, WriterEvidence};

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

    /// Decode `count` values of `encoding` from `data`, appending; `check` (the page's
    /// statistics and the file's writer evidence) decides the writer's semantics where they
    /// matter ([`crate::read::check`]).
    fn decode(
        &mut self,
        encoding: Encoding,
        data_type: TsDataType,
        data: &[u8],
        count: usize,
        opts: &DecodeOptions,
        check: PageCheck<'_>,
    ) -> Result<()> {
        match self {
            ColumnValues::Boolean(b) => encoding::decode_bool(encoding, data, count, b, opts),
            ColumnValues::Int32(v) => encoding::decode_i32(encoding, data, count, v, opts),
            ColumnValues::Int64(v) => decode_i64_checked(encoding, data, count, v, opts, check),
            ColumnValues::Float(v) => decode_f32_checked(encoding, data, count, v, opts, check),
            ColumnValues::Double(v) => decode_f64_checked(encoding, data, count, v, opts, check),
            ColumnValues::Binary(v) => encoding::decode_binary(encoding, data_type, data, count, v, opts),
        }
    }

    /// Decode values `window` of a page's `count` values, appending: only that part where the
    /// encoding can skip values (TS_2DIFF integers by block, PLAIN), stop early (GORILLA,
    /// TS_2DIFF integers, PLAIN) or both, else all `count`. Returns the indices of the values
    /// appended, which cover `window`; the stream past the window is not read (nor, when a
    /// skipped window reaches the last value, checked for trailing bytes).
    #[allow(clippy::too_many_arguments)]
    fn decode_window(
        &mut self,
        encoding: Encoding,
        data_type: TsDataType,
        data: &[u8],
        count: usize,
        window: std::ops::Range<usize>,
        opts: &DecodeOptions,
        check: PageCheck<'_>,
    ) -> Result<std::ops::Range<usize>> {
        use crate::encoding::{gorilla, plain, ts2diff};
        let n = window.end;
        // A window reaching the end of a stream that can only stop early is the whole stream
        // (decoded with its end checks).
        let skips = matches!(encoding, Encoding::Ts2Diff | Encoding::Plain);
        if n >= count && (window.start == 0 || !skips) {
            self.decode(encoding, data_type, data, count, opts, check)?;
            return Ok(0..count);
        }
        let bits = match self {
            ColumnValues::Boolean(_) => 1,
            ColumnValues::Int32(_) | ColumnValues::Float(_) | ColumnValues::Binary(_) => 32,
            ColumnValues::Int64(_) | ColumnValues::Double(_) => 64,
        };
        encoding::check_count(count, bits, opts, data_type.name())?;
        let n = n.min(count);
        let start = window.start.min(n);
        let first = match (encoding, &mut *self) {
            (Encoding::Gorilla, ColumnValues::Int32(v)) => gorilla::decode_i32_prefix(data, count, n, v).map(|_| 0)?,
            (Encoding::Gorilla, ColumnValues::Int64(v)) => gorilla::decode_i64_prefix(data, count, n, v).map(|_| 0)?,
            (Encoding::Gorilla, ColumnValues::Float(v)) => gorilla::decode_f32_prefix(data, count, n, v).map(|_| 0)?,
            (Encoding::Gorilla, ColumnValues::Double(v)) => gorilla::decode_f64_prefix(data, count, n, v).map(|_| 0)?,
            (Encoding::Ts2Diff, ColumnValues::Int32(v)) => ts2diff::decode_i32_window(data, count, start, n, v)?,
            (Encoding::Ts2Diff, ColumnValues::Int64(v)) => ts2diff::decode_i64_window(data, count, start, n, v)?,
            (Encoding::Plain, ColumnValues::Boolean(b)) => {
                plain::decode_bool(plain::fixed_window(data, count, start..n, 1, "PLAIN BOOLEAN stream")?, n - start, b)?;
                start
            }
            (Encoding::Plain, ColumnValues::Int64(v)) => {
                plain::decode_i64(plain::fixed_window(data, count, start..n, 8, "PLAIN INT64 stream")?, n - start, v)?;
                start
            }
            (Encoding::Plain, ColumnValues::Float(v)) => {
                plain::decode_f32(plain::fixed_window(data, count, start..n, 4, "PLAIN FLOAT stream")?, n - start, v)?;
                start
            }
            (Encoding::Plain, ColumnValues::Double(v)) => {
                plain::decode_f64(plain::fixed_window(data, count, start..n, 8, "PLAIN DOUBLE stream")?, n - start, v)?;
                start
            }
            (Encoding::Plain, ColumnValues::Binary(v)) => {
                let before = v.len();
                plain::decode_binary_window(data, count, start..n, v)?;
                encoding::check_longest_since(v, before, opts, data_type)?;
                start
            }
            (_, this) => {
                this.decode(encoding, data_type, data, count, opts, check)?;
                return Ok(0..count);
            }
        };
        Ok(first..n)
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
    /// Statistics of the page being appended, when the caller set them.
    check: Option<ValueCheck>,
    /// The writer evidence of the file the pages come from, when the caller set it.
    writer: Option<Arc<WriterEvidence>>,
}

impl ColumnBuilder {
    /// An empty builder for values of `data_type`.
    pub fn new(data_type: TsDataType) -> Result<Self> {
        let p = data_type.physical().ok_or_else(|| TsFileError::unsupported(format!("values of type {data_type}")))?;
        Ok(ColumnBuilder {
            data_type,
            values: ColumnValues::new(p),
            validity: NullBufferBuilder::new(0),
            scratch: None,
            check: None,
            writer: None,
        })
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

    /// The statistics of the next pages appended (the page's own, or its chunk's for a
    /// single-page chunk): where the Java and C++ writers' semantics differ, they and the
    /// file's writer evidence ([`ColumnBuilder::set_writer_evidence`]) decide the reading
    /// ([`crate::read::check`]).
    pub fn set_page_statistics(&mut self, stats: Option<&Statistics>) {
        self.check = stats.and_then(ValueCheck::from_statistics);
    }

    /// [`ColumnBuilder::set_page_statistics`] with the check already derived.
    pub fn set_page_check(&mut self, check: Option<ValueCheck>) {
        self.check = check;
    }

    /// The writer evidence of the file the next pages come from
    /// (`FileReader::writer_evidence`): where the writers' semantics differ, pages are read
    /// the file's writer's way, and deciding pages are recorded in it.
    pub fn set_writer_evidence(&mut self, evidence: &Arc<WriterEvidence>) {
        if !self.writer.as_ref().is_some_and(|w| Arc::ptr_eq(w, evidence)) {
            self.writer = Some(evidence.clone());
        }
    }

    fn page_check(&self) -> PageCheck<'_> {
        PageCheck { values: self.check, writer: self.writer.as_deref() }
    }

    /// Decode `count` present values and append them as non-null rows.
    pub fn append_dense(&mut self, encoding: Encoding, data: &[u8], count: usize, opts: &DecodeOptions) -> Result<()> {
        let before = self.values.len();
        let check = PageCheck { values: self.check, writer: self.writer.as_deref() };
        self.values.decode(encoding, self.data_type, data, count, opts, check)?;
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
            // Only the values of the kept rows are needed (and what the encoding must decode
            // to reach them).
            let keep = keep.start.min(rows)..keep.end.min(rows);
            let first_value = count_present(bitmap, keep.start);
            let end_value = if keep.end < rows { count_present(bitmap, keep.end) } else { present };
            let held = scratch.decode_window(
                encoding,
                self.data_type,
                data,
                present,
                first_value..end_value,
                opts,
                self.page_check(),
            )?;
            if scratch.len() != held.len() || held.start > first_value || held.end < end_value {
                return Err(TsFileError::corrupt(
                    "value stream",
                    None,
                    format!("decoded {} values, the bitmap marks {present} present", scratch.len()),
                ));
            }
            let mut src = first_value - held.start;
            for row in keep {
                if bit_msb(bitmap, row) {
                    self.values.append_one(&scratch, src)?;
                    self.validity.append_non_null();
                    src += 1;
                } else {
                    self.values.append_defaults(1)?;
                    self.validity.append_null();
                }
            }
            Ok(())
        })();
        self.scratch = Some(Box::new(scratch));
        r
    }

    /// Decode `count` values of a page and append only the rows in `keep`.
    pub fn append_range(
        &mut self,
        encoding: Encoding,
        data: &[u8],
        count: usize,
        keep: std::ops::Range<usize>,
        opts: &DecodeOptions,
    ) -> Result<()> {
        if keep == (0..count) {
            return self.append_dense(encoding, data, count, opts);
        }
        let mut scratch = self.scratch();
        let r = (|| {
            // Only the kept rows (and what the encoding must decode to reach them).
            let held = scratch.decode_window(encoding, self.data_type, data, count, keep.clone(), opts, self.page_check())?;
            if scratch.len() != held.len() || held.start > keep.start || held.end < keep.end {
                return Err(TsFileError::corrupt(
                    "value stream",
                    None,
                    format!("decoded {} values, expected {count}", scratch.len()),
                ));
            }
            let n = keep.len();
            self.values.append_range(&scratch, keep.start - held.start..keep.end - held.start)?;
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

    /// Make room for `rows` more rows (the fixed-width part; string bytes grow as they come),
    /// so a builder refilled batch after batch does not grow from nothing each time.
    pub fn reserve(&mut self, rows: usize) {
        match &mut self.values {
            ColumnValues::Boolean(b) => b.reserve(rows),
            ColumnValues::Int32(v) => v.reserve(rows),
            ColumnValues::Int64(v) => v.reserve(rows),
            ColumnValues::Float(v) => v.reserve(rows),
            ColumnValues::Double(v) => v.reserve(rows),
            ColumnValues::Binary(v) => v.offsets.reserve(rows),
        }
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

    /// The values of a builder rendered one string per row (`None` = null).
    fn rows(b: &mut ColumnBuilder) -> Vec<Option<String>> {
        let (values, nulls) = b.take();
        let n = values.len();
        (0..n)
            .map(|i| {
                if nulls.as_ref().is_some_and(|m| m.is_null(i)) {
                    return None;
                }
                Some(match &values {
                    ColumnValues::Boolean(v) => v.get_bit(i).to_string(),
                    ColumnValues::Int32(v) => v[i].to_string(),
                    ColumnValues::Int64(v) => v[i].to_string(),
                    ColumnValues::Float(v) => format!("{:08x}", v[i].to_bits()),
                    ColumnValues::Double(v) => format!("{:016x}", v[i].to_bits()),
                    ColumnValues::Binary(v) => format!("{:?}", v.get(i).unwrap()),
                })
            })
            .collect()
    }

    /// Every stream the prefix decoders handle, plus one they do not (RLE falls back to a
    /// full decode): 300 values with repeats, extremes and NaN.
    fn prefix_streams() -> Vec<(TsDataType, Encoding, Vec<u8>)> {
        use crate::encoding::{gorilla, plain, rle, ts2diff};
        let n = 300usize;
        let ints: Vec<i64> = (0..n as i64).map(|i| if i % 17 == 0 { i64::MIN + i } else { i * i - 40 * i }).collect();
        let i32s: Vec<i32> = (0..n as i32).map(|i| if i % 23 == 0 { i32::MAX } else { (i * 7) % 101 - 50 }).collect();
        let f64s: Vec<f64> = (0..n).map(|i| if i % 31 == 0 { f64::NAN } else { (i as f64).sin() * 100.0 }).collect();
        let f32s: Vec<f32> = (0..n).map(|i| if i % 29 == 0 { f32::INFINITY } else { i as f32 * 0.25 }).collect();
        let bools: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
        let texts: Vec<String> = (0..n).map(|i| "x".repeat(i % 7)).collect();
        vec![
            (TsDataType::Int64, Encoding::Gorilla, gorilla::encode::encode_i64(&ints)),
            (TsDataType::Int32, Encoding::Gorilla, gorilla::encode::encode_i32(&i32s)),
            (TsDataType::Double, Encoding::Gorilla, gorilla::encode::encode_f64(&f64s)),
            (TsDataType::Float, Encoding::Gorilla, gorilla::encode::encode_f32(&f32s)),
            (TsDataType::Int64, Encoding::Ts2Diff, ts2diff::encode::i64_blocks(&ints, 128)),
            (TsDataType::Int32, Encoding::Ts2Diff, ts2diff::encode::i32_blocks(&i32s, 128)),
            (TsDataType::Int64, Encoding::Plain, plain::encode::i64(&ints)),
            (TsDataType::Double, Encoding::Plain, plain::encode::f64(&f64s)),
            (TsDataType::Float, Encoding::Plain, plain::encode::f32(&f32s)),
            (TsDataType::Boolean, Encoding::Plain, plain::encode::bool(&bools)),
            (TsDataType::String, Encoding::Plain, plain::encode::binary(&texts)),
            (TsDataType::Int32, Encoding::Plain, plain::encode::i32(&i32s)),
            (TsDataType::Int32, Encoding::Rle, rle::encode::i32(&i32s)),
        ]
    }

    #[test]
    fn test_kept_prefix_of_a_page_equals_the_full_decode() {
        let opts = DecodeOptions::default();
        let count = 300;
        for (ty, enc, data) in prefix_streams() {
            let mut full = ColumnBuilder::new(ty).unwrap();
            full.append_dense(enc, &data, count, &opts).unwrap();
            let full = rows(&mut full);
            // Dense pages: any window, including empty, one value, block and page edges.
            for keep in
                [0..0, 0..1, 5..6, 0..128, 100..129, 128..130, 129..131, 150..299, 260..280, 299..300, 200..300, 300..300, 0..300]
            {
                let mut b = ColumnBuilder::new(ty).unwrap();
                b.append_range(enc, &data, count, keep.clone(), &opts).unwrap();
                assert_eq!(rows(&mut b), full[keep.clone()], "{ty} {enc:?} {keep:?}");
            }
            // Pages with nulls: every third row null, so 450 rows hold the 300 values.
            let nrows: usize = 450;
            let mut bitmap = vec![0u8; nrows.div_ceil(8)];
            let mut expect = Vec::new();
            let mut src = 0;
            for r in 0..nrows {
                if r % 3 != 1 {
                    bitmap[r / 8] |= 0x80 >> (r % 8);
                    expect.push(full[src].clone());
                    src += 1;
                } else {
                    expect.push(None);
                }
            }
            for keep in [0..0, 0..1, 1..2, 10..200, 300..400, 390..450, 449..450, 450..450, 0..450] {
                let mut b = ColumnBuilder::new(ty).unwrap();
                b.append_with_bitmap(enc, &data, &bitmap, nrows, keep.clone(), &opts).unwrap();
                assert_eq!(rows(&mut b), expect[keep.clone()], "{ty} {enc:?} bitmap {keep:?}");
            }
        }
    }

    #[test]
    fn test_prefix_decoding_reads_no_further_than_needed() {
        use crate::encoding::{gorilla, plain, ts2diff};
        let opts = DecodeOptions::default();
        let values: Vec<i64> = (0..300).map(|i| i * 3).collect();
        // Damage after the first block / past the first values: the prefix still decodes,
        // the whole page does not.
        for (enc, mut data, at) in [
            (Encoding::Ts2Diff, ts2diff::encode::i64_blocks(&values, 128), 24usize),
            (Encoding::Gorilla, gorilla::encode::encode_i64(&values), 0),
            (Encoding::Plain, plain::encode::i64(&values), 0),
        ] {
            match enc {
                // A negative delta count in the second block (blocks of width 0 are 24 bytes).
                Encoding::Ts2Diff => data[at] = 0xff,
                // Truncate the stream (cuts off the last values and the end marker).
                _ => data.truncate(data.len() / 2),
            }
            for keep in [0..300, 250..300] {
                let mut b = ColumnBuilder::new(TsDataType::Int64).unwrap();
                let r = b.append_range(enc, &data, 300, keep.clone(), &opts);
                assert!(r.is_err(), "{enc:?} {keep:?}: the damaged end of the page fails");
            }
            let mut b = ColumnBuilder::new(TsDataType::Int64).unwrap();
            let r = b.append_range(enc, &data, 300, 2..50, &opts);
            if enc == Encoding::Plain {
                // PLAIN's size is known: a short stream is corrupt whatever is kept.
                assert!(r.is_err());
            } else {
                r.unwrap();
                assert_eq!(rows(&mut b), (2..50).map(|i| Some((i * 3).to_string())).collect::<Vec<_>>(), "{enc:?}");
            }
        }
        // Damage inside the kept prefix is still an error.
        let mut data = ts2diff::encode::i64_blocks(&values, 128);
        data[0] = 0xff;
        let mut b = ColumnBuilder::new(TsDataType::Int64).unwrap();
        assert!(b.append_range(Encoding::Ts2Diff, &data, 300, 2..50, &opts).is_err());
    }

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
