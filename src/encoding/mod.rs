//! Value and time stream decoders: decompressed page bytes → typed values.
//!
//! One module per encoding (see `spec/encodings.md` of the project for every bit layout).
//! The functions here dispatch once per page on `(encoding, type)` and call a monomorphic
//! decoder that appends straight into Arrow-ready buffers: `Vec<i32>`/`Vec<i64>`/`Vec<f32>`/
//! `Vec<f64>` (turned into Arrow buffers without copying), a [`BooleanBufferBuilder`] for
//! booleans, and [`BinaryValues`] (offsets + bytes) for TEXT/STRING/BLOB/OBJECT.
//!
//! Contract of every decoder:
//! * decode **by count**: exactly `count` values are appended, or an error is returned (end
//!   markers of GORILLA/CHIMP are legal data and never stop decoding early);
//! * all state is per call (one page); nothing carries over between pages;
//! * the stream must be consumed, except for the padding the encoding allows;
//! * never panic and never reserve more than the input bytes could encode.
//!
//! Errors are [`TsFileError::Corrupt`] naming the encoding and the position inside the stream;
//! the `read` layer adds the file offset, series and page.
#![cfg_attr(not(test), warn(clippy::cast_possible_truncation, clippy::indexing_slicing))]

use arrow_buffer::BooleanBufferBuilder;

use crate::error::{Result, TsFileError};
use crate::format::provenance::WriterKind;
use crate::format::{Encoding, TsDataType};

pub mod bitmap;
pub mod bits;
pub mod camel;
pub mod chimp;
pub mod dictionary;
pub(crate) mod float_wrapper;
pub mod gorilla;
pub mod gorilla_v1;
pub mod plain;
pub mod regular;
pub mod rlbe;
pub mod rle;
pub mod sprintz;
#[cfg(test)]
mod test_util;
pub mod ts2diff;
pub mod zigzag;


/// How a SPRINTZ decoder computes the FIRE predictor's 64-bit product `alpha * delta`.
///
/// The file does not record which writer produced it; the two agree only while the product
/// stays below 2^63 in magnitude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SprintzProduct {
    /// Product wrapped to 64 bits, then shifted (the Java writer, i.e. IoTDB; default).
    #[default]
    Wrapping64,
    /// Exact 128-bit product, shifted, then truncated to 64 bits (the C++ writer).
    Exact128,
}

/// How RLBE FLOAT/DOUBLE words after the first of a block make values (see [`rlbe`]).
///
/// The file does not record which writer produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RlbeFloat {
    /// IEEE bits of the floating-point difference to the previous value, added back in
    /// FLOAT/DOUBLE arithmetic (the Java writer, i.e. IoTDB; default).
    #[default]
    FloatDeltas,
    /// Wrapping integer difference of the IEEE bit patterns (the C++ writer).
    BitDeltas,
}

/// Which writer's semantics to assume where the Java and C++ writers store the same bytes
/// with different meanings: SPRINTZ on INT64/TIMESTAMP/DOUBLE ([`SprintzProduct`]) and RLBE
/// on FLOAT/DOUBLE (`rlbe::RlbeFloat`).
///
/// With [`WriterLayout::Auto`] the read layer decides per file: the writer the file's footer
/// names, else the one its deciding pages name; a page whose statistics contradict the
/// decision, or a page of an undecided file that cannot decide, is an error (`check`, and
/// [`crate::format::provenance`]). The bare decode functions, which see neither statistics
/// nor the file, read `Auto` as Java.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriterLayout {
    /// The writer decided per file from its footer and its deciding pages (default).
    #[default]
    Auto,
    /// Always the Java writer's semantics (no statistics check).
    Java,
    /// Always the C++ writer's semantics (no statistics check).
    Cpp,
}

impl WriterLayout {
    /// The SPRINTZ product rule of this layout (`Auto` without a decision: Java's).
    pub fn sprintz_product(self) -> SprintzProduct {
        match self {
            WriterLayout::Auto | WriterLayout::Java => SprintzProduct::Wrapping64,
            WriterLayout::Cpp => SprintzProduct::Exact128,
        }
    }

    /// The RLBE FLOAT/DOUBLE layout of this layout (`Auto` without a decision: Java's).
    pub fn rlbe_float(self) -> RlbeFloat {
        match self {
            WriterLayout::Auto | WriterLayout::Java => RlbeFloat::FloatDeltas,
            WriterLayout::Cpp => RlbeFloat::BitDeltas,
        }
    }

    /// The writer this layout forces, `None` for [`WriterLayout::Auto`].
    pub fn forced(self) -> Option<WriterKind> {
        match self {
            WriterLayout::Auto => None,
            WriterLayout::Java => Some(WriterKind::Java),
            WriterLayout::Cpp => Some(WriterKind::Cpp),
        }
    }

    /// The option value: `auto`, `java` or `cpp`.
    pub fn name(self) -> &'static str {
        match self {
            WriterLayout::Auto => "auto",
            WriterLayout::Java => "java",
            WriterLayout::Cpp => "cpp",
        }
    }
}

impl From<WriterKind> for WriterLayout {
    fn from(w: WriterKind) -> Self {
        match w {
            WriterKind::Java => WriterLayout::Java,
            WriterKind::Cpp => WriterLayout::Cpp,
        }
    }
}

/// True when `encoding` on `data_type` means different values for the Java and C++ writers.
pub fn writer_dependent(encoding: Encoding, data_type: TsDataType) -> bool {
    matches!(
        (encoding, data_type),
        (Encoding::Rlbe, TsDataType::Float | TsDataType::Double)
            | (Encoding::Sprintz, TsDataType::Int64 | TsDataType::Timestamp | TsDataType::Double)
    )
}

/// Options that change how streams are decoded, including the resource limits of one page.
///
/// Every limit guards against input that is structurally valid but claims far more than a
/// real writer produces (a few bytes announcing millions of values, a dictionary entry
/// repeated into gigabytes). Exceeding one is a [`TsFileError::LimitExceeded`] whose `what`
/// names the DataFusion option key that raises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Java or C++ semantics for SPRINTZ INT64/TIMESTAMP/DOUBLE and RLBE FLOAT/DOUBLE.
    /// Option `writer_layout`.
    pub writer_layout: WriterLayout,
    /// Upper bound on the number of values one page may decode to (guards against streams
    /// that claim huge counts in a few bytes). Option `max_page_values`.
    pub max_page_values: usize,
    /// Upper bound on the bytes of one page, both decompressed (`uncompressed_size`) and
    /// decoded into values (fixed-width values, string offsets and bytes). Checked before the
    /// buffers are allocated. Option `max_page_bytes`.
    pub max_page_bytes: usize,
    /// Longest single TEXT/STRING/BLOB/OBJECT value or dictionary entry, in bytes. Option
    /// `max_string_bytes`.
    pub max_string_bytes: usize,
    /// Largest dictionary of one DICTIONARY page: the sum of its entries' byte lengths.
    /// Option `max_dictionary_bytes`.
    pub max_dictionary_bytes: usize,
}

/// Default of [`DecodeOptions::max_page_values`]: 16 Mi values (writers use a few thousand).
pub const DEFAULT_MAX_PAGE_VALUES: usize = 1 << 24;
/// Default of [`DecodeOptions::max_page_bytes`]: 256 MiB (writers' pages are about 64 KiB).
pub const DEFAULT_MAX_PAGE_BYTES: usize = 256 << 20;
/// Default of [`DecodeOptions::max_string_bytes`]: 64 MiB.
pub const DEFAULT_MAX_STRING_BYTES: usize = 64 << 20;
/// Default of [`DecodeOptions::max_dictionary_bytes`]: 64 MiB.
pub const DEFAULT_MAX_DICTIONARY_BYTES: usize = 64 << 20;

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            writer_layout: WriterLayout::default(),
            max_page_values: DEFAULT_MAX_PAGE_VALUES,
            max_page_bytes: DEFAULT_MAX_PAGE_BYTES,
            max_string_bytes: DEFAULT_MAX_STRING_BYTES,
            max_dictionary_bytes: DEFAULT_MAX_DICTIONARY_BYTES,
        }
    }
}

/// Byte-string values in Arrow layout: `offsets[i]..offsets[i+1]` indexes `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryValues {
    /// `len() + 1` offsets, starting at 0.
    pub offsets: Vec<i32>,
    /// Concatenated value bytes.
    pub data: Vec<u8>,
}

impl Default for BinaryValues {
    fn default() -> Self {
        Self::new()
    }
}

impl BinaryValues {
    /// Empty values.
    pub fn new() -> Self {
        BinaryValues { offsets: vec![0], data: Vec::new() }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Append one value; fails if the total exceeds Arrow's `i32` offsets.
    #[inline]
    pub fn push(&mut self, v: &[u8]) -> Result<()> {
        self.data.extend_from_slice(v);
        let end = i32::try_from(self.data.len()).map_err(|_| TsFileError::LimitExceeded {
            what: "bytes of string values in one array".into(),
            value: self.data.len() as u64,
            limit: i32::MAX as u64,
        })?;
        self.offsets.push(end);
        Ok(())
    }

    /// Value `i`, if present.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let s = usize::try_from(*self.offsets.get(i)?).ok()?;
        let e = usize::try_from(*self.offsets.get(i + 1)?).ok()?;
        self.data.get(s..e)
    }

    /// Iterate over the values.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}

/// A [`TsFileError::Corrupt`] without a file offset (the `read` layer adds it): `what` names
/// the stream (e.g. `"TS_2DIFF INT64 stream"`), `detail` the position and the defect.
#[cold]
pub(crate) fn corrupt(what: &str, detail: impl Into<String>) -> TsFileError {
    TsFileError::corrupt(what, None, detail)
}

fn unsupported(encoding: Encoding, data_type: TsDataType) -> TsFileError {
    TsFileError::unsupported(format!("encoding {encoding} for {data_type}"))
}

/// Reject a page count above [`DecodeOptions::max_page_values`], or one whose values
/// (`bits` bits each in memory) would exceed [`DecodeOptions::max_page_bytes`]. Used before
/// reserving output space.
pub(crate) fn check_count(count: usize, bits: usize, opts: &DecodeOptions, what: &str) -> Result<()> {
    if count > opts.max_page_values {
        return Err(TsFileError::LimitExceeded {
            what: format!("values in one {what} page (option max_page_values)"),
            value: count as u64,
            limit: opts.max_page_values as u64,
        });
    }
    let bytes = count.saturating_mul(bits).div_ceil(8);
    if bytes > opts.max_page_bytes {
        return Err(page_bytes_exceeded(format!("bytes of the values of one {what} page"), bytes, opts));
    }
    Ok(())
}

/// The [`TsFileError::LimitExceeded`] of [`DecodeOptions::max_page_bytes`].
pub(crate) fn page_bytes_exceeded(what: String, bytes: usize, opts: &DecodeOptions) -> TsFileError {
    TsFileError::LimitExceeded {
        what: format!("{what} (option max_page_bytes)"),
        value: bytes as u64,
        limit: opts.max_page_bytes as u64,
    }
}

/// Reject a string value or dictionary entry longer than [`DecodeOptions::max_string_bytes`].
#[inline]
pub(crate) fn check_string_len(len: usize, opts: &DecodeOptions, what: &str) -> Result<()> {
    if len > opts.max_string_bytes {
        return Err(TsFileError::LimitExceeded {
            what: format!("bytes of one {what} (option max_string_bytes)"),
            value: len as u64,
            limit: opts.max_string_bytes as u64,
        });
    }
    Ok(())
}

/// Decode `count` BOOLEAN values.
pub fn decode_bool(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut BooleanBufferBuilder,
    opts: &DecodeOptions,
) -> Result<()> {
    // RLE decodes through a temporary `i32` per value.
    let bits = if encoding == Encoding::Rle { 32 } else { 1 };
    check_count(count, bits, opts, "BOOLEAN")?;
    match encoding {
        Encoding::Plain => plain::decode_bool(data, count, out),
        Encoding::Rle => rle::decode_bool(data, count, out),
        Encoding::Bitmap => bitmap::decode_bool(data, count, out),
        e => Err(unsupported(e, TsDataType::Boolean)),
    }
}

/// Decode `count` INT32 or DATE values.
pub fn decode_i32(encoding: Encoding, data: &[u8], count: usize, out: &mut Vec<i32>, opts: &DecodeOptions) -> Result<()> {
    check_count(count, 32, opts, "INT32")?;
    match encoding {
        Encoding::Plain => plain::decode_i32(data, count, out),
        Encoding::Rle => rle::decode_i32(data, count, out),
        Encoding::Ts2Diff => ts2diff::decode_i32(data, count, out),
        Encoding::Gorilla => gorilla::decode_i32(data, count, out),
        Encoding::Zigzag => zigzag::decode_i32(data, count, out),
        Encoding::Chimp => chimp::decode_i32(data, count, out),
        Encoding::Sprintz => sprintz::decode_i32(data, count, out),
        Encoding::Rlbe => rlbe::decode_i32(data, count, out),
        Encoding::Regular => regular::decode_i32(data, count, out),
        Encoding::Bitmap => bitmap::decode_i32(data, count, out),
        e => Err(unsupported(e, TsDataType::Int32)),
    }
}

/// Decode `count` INT64 or TIMESTAMP values.
pub fn decode_i64(encoding: Encoding, data: &[u8], count: usize, out: &mut Vec<i64>, opts: &DecodeOptions) -> Result<()> {
    check_count(count, 64, opts, "INT64")?;
    match encoding {
        Encoding::Plain => plain::decode_i64(data, count, out),
        Encoding::Rle => rle::decode_i64(data, count, out),
        Encoding::Ts2Diff => ts2diff::decode_i64(data, count, out),
        Encoding::Gorilla => gorilla::decode_i64(data, count, out),
        Encoding::Zigzag => zigzag::decode_i64(data, count, out),
        Encoding::Chimp => chimp::decode_i64(data, count, out),
        Encoding::Sprintz => sprintz::decode_i64(data, count, out, opts.writer_layout.sprintz_product()),
        Encoding::Rlbe => rlbe::decode_i64(data, count, out),
        Encoding::Regular => regular::decode_i64(data, count, out),
        e => Err(unsupported(e, TsDataType::Int64)),
    }
}

/// Decode `count` FLOAT values.
pub fn decode_f32(encoding: Encoding, data: &[u8], count: usize, out: &mut Vec<f32>, opts: &DecodeOptions) -> Result<()> {
    check_count(count, 32, opts, "FLOAT")?;
    match encoding {
        Encoding::Plain => plain::decode_f32(data, count, out),
        Encoding::Rle => rle::decode_f32(data, count, out),
        Encoding::Ts2Diff => ts2diff::decode_f32(data, count, out),
        Encoding::GorillaV1 => gorilla_v1::decode_f32(data, count, out),
        Encoding::Gorilla => gorilla::decode_f32(data, count, out),
        Encoding::Chimp => chimp::decode_f32(data, count, out),
        Encoding::Sprintz => sprintz::decode_f32(data, count, out),
        Encoding::Rlbe => rlbe::decode_f32(data, count, out, opts.writer_layout.rlbe_float()),
        e => Err(unsupported(e, TsDataType::Float)),
    }
}

/// Decode `count` DOUBLE values.
pub fn decode_f64(encoding: Encoding, data: &[u8], count: usize, out: &mut Vec<f64>, opts: &DecodeOptions) -> Result<()> {
    check_count(count, 64, opts, "DOUBLE")?;
    match encoding {
        Encoding::Plain => plain::decode_f64(data, count, out),
        Encoding::Rle => rle::decode_f64(data, count, out),
        Encoding::Ts2Diff => ts2diff::decode_f64(data, count, out),
        Encoding::GorillaV1 => gorilla_v1::decode_f64(data, count, out),
        Encoding::Gorilla => gorilla::decode_f64(data, count, out),
        Encoding::Chimp => chimp::decode_f64(data, count, out),
        Encoding::Sprintz => sprintz::decode_f64(data, count, out, opts.writer_layout.sprintz_product()),
        Encoding::Rlbe => rlbe::decode_f64(data, count, out, opts.writer_layout.rlbe_float()),
        Encoding::Camel => camel::decode_f64(data, count, out),
        e => Err(unsupported(e, TsDataType::Double)),
    }
}

/// Decode `count` TEXT/STRING/BLOB/OBJECT values (`data_type` selects the valid encodings).
pub fn decode_binary(
    encoding: Encoding,
    data_type: TsDataType,
    data: &[u8],
    count: usize,
    out: &mut BinaryValues,
    opts: &DecodeOptions,
) -> Result<()> {
    check_count(count, 32, opts, data_type.name())?;
    match (encoding, data_type) {
        (Encoding::Plain, _) => {
            let first = out.len();
            plain::decode_binary(data, count, out)?;
            check_longest_since(out, first, opts, data_type)
        }
        (Encoding::Dictionary, TsDataType::Text | TsDataType::String) => dictionary::decode_binary_with(data, count, out, opts),
        (e, t) => Err(unsupported(e, t)),
    }
}

/// PLAIN values are slices of the input: check the longest of those appended after value
/// `first` (computed from the offsets) against `max_string_bytes`.
pub(crate) fn check_longest_since(out: &BinaryValues, first: usize, opts: &DecodeOptions, data_type: TsDataType) -> Result<()> {
    let new_offsets = out.offsets.get(first..).unwrap_or(&[]);
    let longest = new_offsets.iter().zip(new_offsets.iter().skip(1)).map(|(a, b)| b.saturating_sub(*a)).max().unwrap_or(0);
    let longest = usize::try_from(longest).unwrap_or(0);
    check_string_len(longest, opts, &format!("{data_type} value"))
}

/// Decode a whole time stream (INT64 timestamps) whose value count is not known in advance:
/// the count is derived from the stream itself. Supported for PLAIN (length / 8) and
/// TS_2DIFF (blocks until the end); other encodings need a count, use [`decode_i64`].
///
/// Returns `true` when the stream's structure already shows the timestamps strictly ascend
/// (TS_2DIFF block headers: [`ts2diff::ascending_by_headers`]); `false` means unknown, so a
/// reader that requires ascending timestamps compares them itself.
pub fn decode_time(encoding: Encoding, data: &[u8], out: &mut Vec<i64>, opts: &DecodeOptions) -> Result<bool> {
    match encoding {
        Encoding::Plain => {
            if !data.len().is_multiple_of(8) {
                return Err(TsFileError::corrupt(
                    "PLAIN time stream",
                    None,
                    format!("length {} is not a multiple of 8", data.len()),
                ));
            }
            let n = data.len() / 8;
            check_count(n, 64, opts, "time")?;
            plain::decode_i64(data, n, out)?;
            Ok(false)
        }
        Encoding::Ts2Diff => {
            let start = out.len();
            ts2diff::decode_i64_to_end(data, out, opts.max_page_values)?;
            Ok(ts2diff::ascending_by_headers(data, out.get(start..).unwrap_or(&[])))
        }
        e => Err(TsFileError::unsupported(format!("time stream encoding {e} without a known value count"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit_key(e: &TsFileError) -> String {
        match e {
            TsFileError::LimitExceeded { what, .. } => what.clone(),
            other => panic!("expected LimitExceeded, got {other:?}"),
        }
    }

    #[test]
    fn test_check_count_page_values_and_bytes() {
        let opts = DecodeOptions { max_page_values: 100, max_page_bytes: 400, ..Default::default() };
        check_count(100, 32, &opts, "INT32").unwrap();
        assert!(limit_key(&check_count(101, 32, &opts, "INT32").unwrap_err()).contains("(option max_page_values)"));
        // 100 INT64 values are 800 bytes: within the count, above the bytes.
        let e = check_count(100, 64, &opts, "INT64").unwrap_err();
        assert!(limit_key(&e).contains("(option max_page_bytes)"));
        assert!(matches!(e, TsFileError::LimitExceeded { value: 800, limit: 400, .. }));
        // Booleans are bits.
        check_count(100, 1, &opts, "BOOLEAN").unwrap();
    }

    #[test]
    fn test_decode_values_above_max_page_bytes_before_decoding() {
        // 1000 timestamps in a few dozen TS_2DIFF bytes decode to 8000 bytes.
        let data = ts2diff::encode::i64(&(0..1000).collect::<Vec<_>>());
        let opts = DecodeOptions { max_page_bytes: 4000, ..Default::default() };
        let mut out = Vec::new();
        let e = decode_i64(Encoding::Ts2Diff, &data, 1000, &mut out, &opts).unwrap_err();
        assert!(limit_key(&e).contains("max_page_bytes"), "{e}");
        assert!(out.capacity() == 0, "nothing reserved");
        decode_i64(Encoding::Ts2Diff, &data, 1000, &mut out, &DecodeOptions::default()).unwrap();
        assert_eq!(out.len(), 1000);
    }

    #[test]
    fn test_decode_binary_string_and_dictionary_limits() {
        let values = [b"short".to_vec(), vec![b'x'; 100], b"short".to_vec()];
        let opts = DecodeOptions { max_string_bytes: 99, ..Default::default() };
        let mut out = BinaryValues::new();
        let plain = plain::encode::binary(&values);
        let e = decode_binary(Encoding::Plain, TsDataType::Blob, &plain, 3, &mut out, &opts).unwrap_err();
        assert!(limit_key(&e).contains("BLOB value (option max_string_bytes)"), "{e}");
        let dict = dictionary::encode::binary(&values, true);
        let mut out = BinaryValues::new();
        let e = decode_binary(Encoding::Dictionary, TsDataType::Text, &dict, 3, &mut out, &opts).unwrap_err();
        assert!(limit_key(&e).contains("dictionary entry (option max_string_bytes)"), "{e}");
        let opts = DecodeOptions { max_dictionary_bytes: 104, ..Default::default() };
        let e = decode_binary(Encoding::Dictionary, TsDataType::Text, &dict, 3, &mut out, &opts).unwrap_err();
        assert!(limit_key(&e).contains("option max_dictionary_bytes"), "{e}");
        assert!(matches!(e, TsFileError::LimitExceeded { value: 105, limit: 104, .. }));
        let mut out = BinaryValues::new();
        decode_binary(Encoding::Dictionary, TsDataType::Text, &dict, 3, &mut out, &DecodeOptions::default()).unwrap();
        assert_eq!(out.len(), 3);
    }

    /// A dictionary entry repeated many times expands far beyond its page: the expansion is
    /// checked against `max_page_bytes` before the output is allocated.
    #[test]
    fn test_decode_dictionary_expansion_is_bounded_before_allocation() {
        let big = vec![b'y'; 1000];
        let values: Vec<&[u8]> = std::iter::repeat_n(big.as_slice(), 5000).collect();
        let dict = dictionary::encode::binary(&values, true);
        assert!(dict.len() < 1100, "{} bytes", dict.len());
        let opts = DecodeOptions { max_page_bytes: 1 << 20, ..Default::default() };
        let mut out = BinaryValues::new();
        let e = decode_binary(Encoding::Dictionary, TsDataType::String, &dict, 5000, &mut out, &opts).unwrap_err();
        assert!(matches!(e, TsFileError::LimitExceeded { value: 5_020_000, .. }), "{e}");
        assert!(limit_key(&e).contains("max_page_bytes"));
        assert!(out.data.capacity() == 0, "nothing reserved");
    }
}
