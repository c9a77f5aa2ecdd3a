//! ZIGZAG (encoding id 9) for INT32/DATE and INT64/TIMESTAMP.
//!
//! ```text
//! group (writers emit one per page; decoded while bytes remain):
//!   UVarInt byte_len, UVarInt n,
//!   byte_len bytes holding exactly n LEB128 varints of zig-zag mapped values
//! ```
//!
//! INT32 values use 32-bit zig-zag and at most 5 bytes; INT64 values use 64-bit zig-zag
//! and at most 10 bytes.

use crate::encoding::corrupt;
use crate::encoding::plain::{read_uvarint, unzigzag32, VarIntError};
use crate::error::Result;

/// A value type with its LEB128 zig-zag reader.
trait ZigzagInt: Copy {
    fn read(data: &[u8], pos: usize) -> std::result::Result<(Self, usize), VarIntError>;
}

impl ZigzagInt for i32 {
    #[inline(always)]
    fn read(data: &[u8], pos: usize) -> std::result::Result<(i32, usize), VarIntError> {
        read_uvarint(data, pos).map(|(u, p)| (unzigzag32(u), p))
    }
}

impl ZigzagInt for i64 {
    #[inline(always)]
    fn read(data: &[u8], pos: usize) -> std::result::Result<(i64, usize), VarIntError> {
        let mut u = 0u64;
        for i in 0..10usize {
            let Some(&b) = data.get(pos + i) else {
                return Err(VarIntError::Truncated);
            };
            let payload = u64::from(b & 0x7f);
            if i == 9 && payload > 1 {
                return Err(VarIntError::Overflow);
            }
            u |= payload << (7 * i);
            if b & 0x80 == 0 {
                return Ok((((u >> 1) as i64) ^ -((u & 1) as i64), pos + i + 1));
            }
        }
        Err(VarIntError::Overflow)
    }
}

fn decode<T: ZigzagInt>(data: &[u8], count: usize, out: &mut Vec<T>, what: &str) -> Result<()> {
    let mut produced = 0usize;
    let mut pos = 0usize;
    while pos < data.len() {
        let group = pos;
        let header = |p: usize, field: &str| {
            read_uvarint(data, p).map_err(|e| corrupt(what, format!("group at byte {group}: {field}: {e}")))
        };
        let (byte_len, p) = header(pos, "byte length")?;
        let (n, p) = header(p, "value count")?;
        let (byte_len, n) = (byte_len as usize, n as usize);
        let end = p.checked_add(byte_len).filter(|&e| e <= data.len()).ok_or_else(|| {
            corrupt(what, format!("group at byte {group} declares {byte_len} bytes, {} remain", data.len() - p))
        })?;
        if n > byte_len {
            return Err(corrupt(what, format!("group at byte {group}: {n} values cannot fit in {byte_len} bytes")));
        }
        if n > count - produced {
            return Err(corrupt(
                what,
                format!("group at byte {group} holds {n} values but only {} of {count} remain", count - produced),
            ));
        }
        let body = data.get(..end).unwrap_or(&[]);
        out.reserve(n);
        let mut q = p;
        for i in 0..n {
            let (v, next) = T::read(body, q).map_err(|e| corrupt(what, format!("value {} at byte {q}: {e}", produced + i)))?;
            out.push(v);
            q = next;
        }
        if q != end {
            return Err(corrupt(what, format!("group at byte {group}: {} bytes left over after {n} values", end - q)));
        }
        produced += n;
        pos = end;
    }
    if produced != count {
        return Err(corrupt(what, format!("at byte {}: stream ends after {produced} of {count} values", data.len())));
    }
    Ok(())
}

/// Decode `count` INT32/DATE values.
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode(data, count, out, "ZIGZAG INT32 stream")
}

/// Decode `count` INT64/TIMESTAMP values.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode(data, count, out, "ZIGZAG INT64 stream")
}

/// Test-only ZIGZAG encoders (feature `test-util`): one group per call.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::plain::encode::uvarint;

    fn leb128(mut u: u64, out: &mut Vec<u8>) {
        while u >= 0x80 {
            out.push((u as u8) | 0x80);
            u >>= 7;
        }
        out.push(u as u8);
    }

    fn group(body: Vec<u8>, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        uvarint(body.len() as u32, &mut out);
        uvarint(n as u32, &mut out);
        out.extend(body);
        out
    }

    /// INT32 group: 32-bit zig-zag, LEB128.
    pub fn i32(values: &[i32]) -> Vec<u8> {
        let mut body = Vec::new();
        for &v in values {
            leb128(u64::from(((v << 1) ^ (v >> 31)) as u32), &mut body);
        }
        group(body, values.len())
    }

    /// INT64 group: 64-bit zig-zag, LEB128.
    pub fn i64(values: &[i64]) -> Vec<u8> {
        let mut body = Vec::new();
        for &v in values {
            leb128(((v << 1) ^ (v >> 63)) as u64, &mut body);
        }
        group(body, values.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TsFileError;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn i32s(data: &[u8], count: usize) -> Result<Vec<i32>> {
        let mut v = Vec::new();
        decode_i32(data, count, &mut v).map(|_| v)
    }

    fn i64s(data: &[u8], count: usize) -> Result<Vec<i64>> {
        let mut v = Vec::new();
        decode_i64(data, count, &mut v).map(|_| v)
    }

    fn detail(e: &TsFileError) -> String {
        match e {
            TsFileError::Corrupt { what, detail, .. } => format!("{what}: {detail}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn test_decode_i32_spec_example() {
        let bytes = h("04 03 02 01 d8 04");
        assert_eq!(i32s(&bytes, 3).unwrap(), vec![1, -1, 300]);
        assert_eq!(encode::i32(&[1, -1, 300]), bytes);
    }

    #[test]
    fn test_decode_i32_cpp_writer_page_extremes() {
        // C++ writer (PyPI `tsfile` 2.5): [1, -1, 300, i32::MIN, i32::MAX, 0].
        let bytes = h("0f 06 02 01 d8 04 ff ff ff ff 0f fe ff ff ff 0f 00");
        let want = [1, -1, 300, i32::MIN, i32::MAX, 0];
        assert_eq!(i32s(&bytes, 6).unwrap(), want);
        assert_eq!(encode::i32(&want), bytes);
    }

    #[test]
    fn test_decode_i64_cpp_writer_page_extremes() {
        // C++ writer: i * i * 12345 - 99999999 for i in 0..12, then i64::MIN, i64::MAX.
        let bytes = h("440efd83af5f8bc3ad5fb580a95ffbbba15fddf5965fdbad895ff5e3f85eab98e55efdcace5e\
                       ebfbb45ef5aa985e9bd8f85dffffffffffffffffff01feffffffffffffffff01");
        let mut want: Vec<i64> = (0..12).map(|i| i * i * 12345 - 99_999_999).collect();
        want.extend([i64::MIN, i64::MAX]);
        assert_eq!(i64s(&bytes, 14).unwrap(), want);
        assert_eq!(encode::i64(&want), bytes);
    }

    #[test]
    fn test_decode_zero_and_one_value() {
        assert!(i32s(&[], 0).unwrap().is_empty());
        assert!(i64s(&[], 0).unwrap().is_empty());
        assert!(i32s(&h("00 00"), 0).unwrap().is_empty());
        assert_eq!(i32s(&encode::i32(&[-5]), 1).unwrap(), vec![-5]);
        assert_eq!(i64s(&encode::i64(&[-5]), 1).unwrap(), vec![-5]);
        assert!(i32s(&[], 1).is_err());
    }

    #[test]
    fn test_decode_several_groups() {
        let mut bytes = encode::i64(&[1, 2, 3]);
        bytes.extend(encode::i64(&[-4, i64::MIN]));
        assert_eq!(i64s(&bytes, 5).unwrap(), vec![1, 2, 3, -4, i64::MIN]);
        assert!(i64s(&bytes, 4).is_err());
        assert!(i64s(&bytes, 6).is_err());
    }

    #[test]
    fn test_decode_malformed_groups_are_errors() {
        // Declared count disagrees with the bytes: one byte left over / value truncated.
        let e = i32s(&h("04 02 02 01 d8 04"), 2).unwrap_err();
        assert!(detail(&e).contains("bytes left over"), "{}", detail(&e));
        let e = i32s(&h("04 04 02 01 d8 04"), 4).unwrap_err();
        assert!(detail(&e).contains("value 3 at byte 6: truncated varint"), "{}", detail(&e));
        // More values than bytes.
        assert!(i32s(&h("01 05 00"), 5).is_err());
        // byte_len beyond the data.
        assert!(detail(&i32s(&h("09 01 00"), 1).unwrap_err()).contains("declares 9 bytes"));
        // INT32 value over 32 bits, INT64 value over 64 bits.
        assert!(i32s(&h("05 01 ff ff ff ff 1f"), 1).is_err());
        assert!(i64s(&h("0a 01 ff ff ff ff ff ff ff ff ff 03"), 1).is_err());
        assert!(i64s(&h("0a 01 ff ff ff ff ff ff ff ff ff 01"), 1).is_ok());
        // Huge count on a tiny stream.
        assert!(i32s(&h("04 03 02 01 d8 04"), usize::MAX).is_err());
    }

    #[test]
    fn test_decode_truncated_at_every_byte_is_error() {
        let vals = [i64::MIN, 0, 77, -300_000, i64::MAX];
        let bytes = encode::i64(&vals);
        for cut in 0..bytes.len() {
            assert!(i64s(&bytes[..cut], vals.len()).is_err(), "cut {cut}");
        }
        let v32 = [i32::MIN, 5, -5];
        let b32 = encode::i32(&v32);
        for cut in 0..b32.len() {
            assert!(i32s(&b32[..cut], v32.len()).is_err(), "cut {cut}");
        }
    }

    proptest! {
        #[test]
        fn test_decode_i32_round_trip(vals in proptest::collection::vec(any::<i32>(), 0..300)) {
            prop_assert_eq!(i32s(&encode::i32(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_round_trip(vals in proptest::collection::vec(any::<i64>(), 0..300)) {
            prop_assert_eq!(i64s(&encode::i64(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_never_panics_on_garbage(
            data in proptest::collection::vec(any::<u8>(), 0..64), count in 0usize..64
        ) {
            let _ = i32s(&data, count);
            let _ = i64s(&data, count);
        }
    }
}
