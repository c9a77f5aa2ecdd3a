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

use arrow_buffer::BooleanBufferBuilder;

use crate::error::{Result, TsFileError};
use crate::format::{Encoding, TsDataType};

pub mod bitmap;
pub mod bits;
pub mod camel;
pub mod chimp;
pub mod dictionary;
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
    /// Exact 128-bit product, shifted, then truncated to 64 bits (the C++ writer; default).
    #[default]
    Exact128,
    /// Product wrapped to 64 bits, then shifted (the Java writer, i.e. IoTDB).
    Wrapping64,
}

/// Options that change how streams are decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// SPRINTZ 64-bit product semantics (INT64/TIMESTAMP/DOUBLE).
    pub sprintz_product: SprintzProduct,
    /// Upper bound on the number of values one page may decode to (guards against streams
    /// that claim huge counts in a few bytes).
    pub max_page_values: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions { sprintz_product: SprintzProduct::default(), max_page_values: 1 << 24 }
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

fn unsupported(encoding: Encoding, data_type: TsDataType) -> TsFileError {
    TsFileError::unsupported(format!("encoding {encoding} for {data_type}"))
}

/// Reject a count no stream of `len` bytes could hold (`max_per_byte` values per byte), and
/// counts above the configured page limit. Used before reserving output space.
pub(crate) fn check_count(count: usize, opts: &DecodeOptions, what: &str) -> Result<()> {
    if count > opts.max_page_values {
        return Err(TsFileError::LimitExceeded {
            what: format!("values in one {what} page"),
            value: count as u64,
            limit: opts.max_page_values as u64,
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
    check_count(count, opts, "BOOLEAN")?;
    match encoding {
        Encoding::Plain => plain::decode_bool(data, count, out),
        Encoding::Rle => rle::decode_bool(data, count, out),
        Encoding::Bitmap => bitmap::decode_bool(data, count, out),
        e => Err(unsupported(e, TsDataType::Boolean)),
    }
}

/// Decode `count` INT32 or DATE values.
pub fn decode_i32(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<i32>,
    opts: &DecodeOptions,
) -> Result<()> {
    check_count(count, opts, "INT32")?;
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
pub fn decode_i64(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<i64>,
    opts: &DecodeOptions,
) -> Result<()> {
    check_count(count, opts, "INT64")?;
    match encoding {
        Encoding::Plain => plain::decode_i64(data, count, out),
        Encoding::Rle => rle::decode_i64(data, count, out),
        Encoding::Ts2Diff => ts2diff::decode_i64(data, count, out),
        Encoding::Gorilla => gorilla::decode_i64(data, count, out),
        Encoding::Zigzag => zigzag::decode_i64(data, count, out),
        Encoding::Chimp => chimp::decode_i64(data, count, out),
        Encoding::Sprintz => sprintz::decode_i64(data, count, out, opts.sprintz_product),
        Encoding::Rlbe => rlbe::decode_i64(data, count, out),
        Encoding::Regular => regular::decode_i64(data, count, out),
        e => Err(unsupported(e, TsDataType::Int64)),
    }
}

/// Decode `count` FLOAT values.
pub fn decode_f32(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<f32>,
    opts: &DecodeOptions,
) -> Result<()> {
    check_count(count, opts, "FLOAT")?;
    match encoding {
        Encoding::Plain => plain::decode_f32(data, count, out),
        Encoding::Rle => rle::decode_f32(data, count, out),
        Encoding::Ts2Diff => ts2diff::decode_f32(data, count, out),
        Encoding::GorillaV1 => gorilla_v1::decode_f32(data, count, out),
        Encoding::Gorilla => gorilla::decode_f32(data, count, out),
        Encoding::Chimp => chimp::decode_f32(data, count, out),
        Encoding::Sprintz => sprintz::decode_f32(data, count, out),
        Encoding::Rlbe => rlbe::decode_f32(data, count, out),
        e => Err(unsupported(e, TsDataType::Float)),
    }
}

/// Decode `count` DOUBLE values.
pub fn decode_f64(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<f64>,
    opts: &DecodeOptions,
) -> Result<()> {
    check_count(count, opts, "DOUBLE")?;
    match encoding {
        Encoding::Plain => plain::decode_f64(data, count, out),
        Encoding::Rle => rle::decode_f64(data, count, out),
        Encoding::Ts2Diff => ts2diff::decode_f64(data, count, out),
        Encoding::GorillaV1 => gorilla_v1::decode_f64(data, count, out),
        Encoding::Gorilla => gorilla::decode_f64(data, count, out),
        Encoding::Chimp => chimp::decode_f64(data, count, out),
        Encoding::Sprintz => sprintz::decode_f64(data, count, out, opts.sprintz_product),
        Encoding::Rlbe => rlbe::decode_f64(data, count, out),
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
    check_count(count, opts, data_type.name())?;
    match (encoding, data_type) {
        (Encoding::Plain, _) => plain::decode_binary(data, count, out),
        (Encoding::Dictionary, TsDataType::Text | TsDataType::String) => {
            dictionary::decode_binary(data, count, out)
        }
        (e, t) => Err(unsupported(e, t)),
    }
}

/// Decode a whole time stream (INT64 timestamps) whose value count is not known in advance:
/// the count is derived from the stream itself. Supported for PLAIN (length / 8) and
/// TS_2DIFF (blocks until the end); other encodings need a count, use [`decode_i64`].
pub fn decode_time(
    encoding: Encoding,
    data: &[u8],
    out: &mut Vec<i64>,
    opts: &DecodeOptions,
) -> Result<()> {
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
            check_count(n, opts, "time")?;
            plain::decode_i64(data, n, out)
        }
        Encoding::Ts2Diff => ts2diff::decode_i64_to_end(data, out, opts.max_page_values),
        e => Err(TsFileError::unsupported(format!(
            "time stream encoding {e} without a known value count"
        ))),
    }
}
