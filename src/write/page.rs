//! Page payloads: encode a run of values (or timestamps) with the column's encoding, then
//! compress it.
//!
//! Aligned value page payload: `int32 row_count`, the presence bitmap (`ceil(rows / 8)`
//! bytes, row `i` is bit `7 - i % 8` of byte `i / 8`, set = present), then the encoded
//! non-null values. Aligned time page payload: the encoded timestamps.

use crate::compression::compress_into;
use crate::encoding::{gorilla, plain, ts2diff};
use crate::error::{Result, TsFileError};
use crate::format::Encoding;
use crate::write::buffer::ValueSlice;
use crate::write::options::ColumnOptions;

/// Append `values` encoded with `encoding` to `out`.
pub fn encode_values(encoding: Encoding, values: ValueSlice<'_>, out: &mut Vec<u8>) -> Result<()> {
    match (encoding, values) {
        (Encoding::Plain, ValueSlice::Boolean(v)) => plain::encode::bool_into(v.iter().copied(), out),
        (Encoding::Plain, ValueSlice::Int32(v)) => plain::encode::i32_into(v, out),
        (Encoding::Plain, ValueSlice::Int64(v)) => plain::encode::i64_into(v, out),
        (Encoding::Plain, ValueSlice::Float(v)) => plain::encode::f32_into(v, out),
        (Encoding::Plain, ValueSlice::Double(v)) => plain::encode::f64_into(v, out),
        (Encoding::Plain, b @ ValueSlice::Binary { .. }) => {
            for i in 0..b.len() {
                plain::encode::binary_value_into(b.binary(i), out);
            }
        }
        (Encoding::Ts2Diff, ValueSlice::Int32(v)) => ts2diff::encode::i32_into(v, out),
        (Encoding::Ts2Diff, ValueSlice::Int64(v)) => ts2diff::encode::i64_into(v, out),
        (Encoding::Gorilla, ValueSlice::Int32(v)) => gorilla::encode::i32_into(v, out),
        (Encoding::Gorilla, ValueSlice::Int64(v)) => gorilla::encode::i64_into(v, out),
        (Encoding::Gorilla, ValueSlice::Float(v)) => gorilla::encode::f32_into(v, out),
        (Encoding::Gorilla, ValueSlice::Double(v)) => gorilla::encode::f64_into(v, out),
        (e, _) => return Err(TsFileError::unsupported(format!("writing this column type with encoding {e}"))),
    }
    Ok(())
}

/// Bytes that PLAIN takes for one value of a slice's type (binary: the length prefix counts
/// one byte per 7 bits of length), used to close pages at the byte limit.
pub fn plain_width(values: &ValueSlice<'_>, i: usize) -> usize {
    match values {
        ValueSlice::Boolean(_) => 1,
        ValueSlice::Int32(_) | ValueSlice::Float(_) => 4,
        ValueSlice::Int64(_) | ValueSlice::Double(_) => 8,
        ValueSlice::Binary { .. } => {
            let n = values.binary(i).len();
            n + 1 + n / 128
        }
    }
}

/// Scratch buffers of the page encoder, reused from page to page.
#[derive(Debug, Default)]
pub struct PageScratch {
    /// The uncompressed payload.
    pub raw: Vec<u8>,
    /// The stored (compressed) payload.
    pub stored: Vec<u8>,
}

impl PageScratch {
    /// Build an aligned value page of `present.len()` rows in `raw`, then compress it into
    /// `stored`.
    pub fn value_page(&mut self, options: ColumnOptions, present: &[bool], values: ValueSlice<'_>) -> Result<()> {
        self.raw.clear();
        let rows = i32::try_from(present.len()).map_err(|_| TsFileError::InvalidArgument("page of too many rows".into()))?;
        self.raw.extend_from_slice(&rows.to_be_bytes());
        for byte in present.chunks(8) {
            let mut b = 0u8;
            for (i, &p) in byte.iter().enumerate() {
                b |= u8::from(p) << (7 - i);
            }
            self.raw.push(b);
        }
        encode_values(options.encoding, values, &mut self.raw)?;
        self.stored.clear();
        compress_into(options.compression, &self.raw, &mut self.stored)?;
        Ok(())
    }

    /// Build a time page of `times` in `raw`, then compress it into `stored`.
    pub fn time_page(&mut self, options: ColumnOptions, times: &[i64]) -> Result<()> {
        self.raw.clear();
        encode_values(options.encoding, ValueSlice::Int64(times), &mut self.raw)?;
        self.stored.clear();
        compress_into(options.compression, &self.raw, &mut self.stored)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{decode_f64, decode_i64, DecodeOptions};
    use crate::format::Compression;

    #[test]
    fn test_value_page_layout_and_round_trip() {
        let mut s = PageScratch::default();
        let opts = ColumnOptions { encoding: Encoding::Gorilla, compression: Compression::Uncompressed };
        let present = [true, false, true, true, false, false, false, false, true];
        let vals = [1.5, f64::NAN, -0.0, 7.0];
        s.value_page(opts, &present, ValueSlice::Double(&vals)).unwrap();
        assert_eq!(&s.raw[..6], &[0, 0, 0, 9, 0b1011_0000, 0b1000_0000]);
        assert_eq!(s.raw, s.stored);
        let mut back = Vec::new();
        decode_f64(Encoding::Gorilla, &s.raw[6..], 4, &mut back, &DecodeOptions::default()).unwrap();
        assert_eq!(back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let times = [i64::MIN, -1, 0, i64::MAX];
        s.time_page(ColumnOptions { encoding: Encoding::Ts2Diff, compression: Compression::Lz4 }, &times).unwrap();
        let mut back = Vec::new();
        decode_i64(Encoding::Ts2Diff, &s.raw, 4, &mut back, &DecodeOptions::default()).unwrap();
        assert_eq!(back, times);
        assert!(encode_values(Encoding::Ts2Diff, ValueSlice::Double(&[1.0]), &mut Vec::new()).is_err());
    }
}
