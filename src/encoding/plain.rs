//! PLAIN (encoding id 0): values back to back, no header and no count.
//!
//! | type | one value |
//! |---|---|
//! | BOOLEAN | 1 byte: `0x00` false, anything else true |
//! | INT32, DATE | VarInt: zig-zag (`(n << 1) ^ (n >> 31)`) then UVarInt (LEB128, ≤ 5 bytes) |
//! | INT64, TIMESTAMP | 8 bytes big-endian |
//! | FLOAT, DOUBLE | 4 / 8 bytes big-endian IEEE-754 bits |
//! | TEXT, STRING, BLOB, OBJECT | VarInt byte length (≥ 0) followed by the bytes |
//!
//! The stream must hold exactly `count` values: missing and leftover bytes are both errors.
//! The UVarInt/VarInt readers here are shared by the other byte-oriented decoders.

use arrow_buffer::BooleanBufferBuilder;

use crate::encoding::corrupt;
use crate::encoding::BinaryValues;
use crate::error::Result;

/// Why a UVarInt could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarIntError {
    /// The stream ended inside the varint.
    Truncated,
    /// More than 5 bytes, or more than 32 bits of payload.
    Overflow,
}

impl std::fmt::Display for VarIntError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VarIntError::Truncated => f.write_str("truncated varint"),
            VarIntError::Overflow => f.write_str("varint overflows 32 bits"),
        }
    }
}

/// Read a 32-bit UVarInt (LEB128, at most 5 bytes) at `pos`; returns the value and the
/// position after it.
#[inline(always)]
pub(crate) fn read_uvarint(data: &[u8], pos: usize) -> std::result::Result<(u32, usize), VarIntError> {
    match data.get(pos) {
        Some(&b) if b < 0x80 => Ok((u32::from(b), pos + 1)),
        Some(_) => read_uvarint_slow(data, pos),
        None => Err(VarIntError::Truncated),
    }
}

#[inline(never)]
fn read_uvarint_slow(data: &[u8], pos: usize) -> std::result::Result<(u32, usize), VarIntError> {
    let mut value = 0u32;
    for i in 0..5usize {
        let Some(&b) = data.get(pos + i) else {
            return Err(VarIntError::Truncated);
        };
        let payload = u32::from(b & 0x7f);
        if i == 4 && payload > 0x0f {
            return Err(VarIntError::Overflow);
        }
        value |= payload << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, pos + i + 1));
        }
    }
    Err(VarIntError::Overflow)
}

/// Undo the 32-bit zig-zag mapping.
#[inline(always)]
pub(crate) fn unzigzag32(u: u32) -> i32 {
    ((u >> 1) as i32) ^ -((u & 1) as i32)
}

/// Read a VarInt (zig-zag `i32`) at `pos`.
#[inline(always)]
pub(crate) fn read_varint(data: &[u8], pos: usize) -> std::result::Result<(i32, usize), VarIntError> {
    read_uvarint(data, pos).map(|(u, p)| (unzigzag32(u), p))
}

/// Check that exactly `count` fixed-size values of `size` bytes make up `data`.
fn check_fixed(data: &[u8], count: usize, size: usize, what: &str) -> Result<()> {
    match count.checked_mul(size) {
        Some(n) if n == data.len() => Ok(()),
        Some(n) if n > data.len() => Err(corrupt(
            what,
            format!(
                "value {} at byte {}: stream truncated, {count} values need {n} bytes, {} present",
                data.len() / size,
                data.len() / size * size,
                data.len()
            ),
        )),
        _ => Err(corrupt(
            what,
            format!(
                "at byte {}: {} unexpected trailing bytes after {count} values",
                count.saturating_mul(size),
                data.len().saturating_sub(count.saturating_mul(size))
            ),
        )),
    }
}

/// Decode `count` BOOLEAN values: one byte each, non-zero = true.
pub fn decode_bool(data: &[u8], count: usize, out: &mut BooleanBufferBuilder) -> Result<()> {
    check_fixed(data, count, 1, "PLAIN BOOLEAN stream")?;
    out.reserve(count);
    for chunk in data.chunks(64) {
        let mut word = 0u64;
        for (i, &b) in chunk.iter().enumerate() {
            word |= u64::from(b != 0) << i;
        }
        out.append_word(word, chunk.len());
    }
    Ok(())
}

/// Decode `count` INT32/DATE values, each a VarInt (zig-zag + LEB128).
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    const WHAT: &str = "PLAIN INT32 stream";
    out.reserve(count.min(data.len()));
    let mut pos = 0usize;
    for i in 0..count {
        match read_varint(data, pos) {
            Ok((v, p)) => {
                out.push(v);
                pos = p;
            }
            Err(e) => return Err(corrupt(WHAT, format!("value {i} of {count} at byte {pos}: {e}"))),
        }
    }
    if pos != data.len() {
        return Err(corrupt(WHAT, format!("at byte {pos}: {} unexpected trailing bytes after {count} values", data.len() - pos)));
    }
    Ok(())
}

/// Decode `count` INT64/TIMESTAMP values, 8 bytes big-endian each.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    check_fixed(data, count, 8, "PLAIN INT64 stream")?;
    out.extend(data.chunks_exact(8).map(|c| {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        i64::from_be_bytes(a)
    }));
    Ok(())
}

/// Decode `count` FLOAT values, 4 bytes big-endian IEEE-754 each (bit patterns preserved).
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    check_fixed(data, count, 4, "PLAIN FLOAT stream")?;
    out.extend(data.chunks_exact(4).map(|c| {
        let mut a = [0u8; 4];
        a.copy_from_slice(c);
        f32::from_bits(u32::from_be_bytes(a))
    }));
    Ok(())
}

/// Decode `count` DOUBLE values, 8 bytes big-endian IEEE-754 each (bit patterns preserved).
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    check_fixed(data, count, 8, "PLAIN DOUBLE stream")?;
    out.extend(data.chunks_exact(8).map(|c| {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        f64::from_bits(u64::from_be_bytes(a))
    }));
    Ok(())
}

/// The bytes of values `window` of `count` values of a fixed-width PLAIN stream (BOOLEAN 1,
/// FLOAT 4, INT64/DOUBLE 8 bytes), for a reader keeping some of a page's rows. The stream's
/// size is still checked against `count`.
pub fn fixed_window<'a>(
    data: &'a [u8],
    count: usize,
    window: std::ops::Range<usize>,
    size: usize,
    what: &str,
) -> Result<&'a [u8]> {
    check_fixed(data, count, size, what)?;
    let end = window.end.min(count);
    let start = window.start.min(end);
    Ok(data.get(start * size..end * size).unwrap_or(&[]))
}

/// Decode `count` TEXT/STRING/BLOB/OBJECT values: VarInt length, then that many bytes.
pub fn decode_binary(data: &[u8], count: usize, out: &mut BinaryValues) -> Result<()> {
    let pos = decode_binary_upto(data, count, 0, count, out)?;
    if pos != data.len() {
        return Err(corrupt(
            "PLAIN binary stream",
            format!("at byte {pos}: {} unexpected trailing bytes after {count} values", data.len() - pos),
        ));
    }
    Ok(())
}

/// Decode values `window` of `count` TEXT/STRING/BLOB/OBJECT values (a reader keeping some
/// of a page's rows): the values before it are stepped over by their lengths, the stream
/// after it is not read.
pub fn decode_binary_window(data: &[u8], count: usize, window: std::ops::Range<usize>, out: &mut BinaryValues) -> Result<()> {
    let end = window.end.min(count);
    decode_binary_upto(data, count, window.start.min(end), end, out).map(|_| ())
}

/// Decode values `skip..stop` of `count` values (the first `skip` are only stepped over);
/// returns the byte after the last one.
fn decode_binary_upto(data: &[u8], count: usize, skip: usize, stop: usize, out: &mut BinaryValues) -> Result<usize> {
    const WHAT: &str = "PLAIN binary stream";
    // Every value takes at least one byte (its length), and the value bytes are a subset of
    // the input: both reservations are bounded by the input size. A part of the stream
    // reserves its share of the value bytes (at the average length), not the whole stream's.
    let wanted = stop - skip;
    out.offsets.reserve(wanted.min(data.len()));
    let value_bytes = data.len().saturating_sub(count);
    // The values are a subset of the input: when the input fits after the values already held,
    // so does every offset, and the per-value check of `BinaryValues::push` is not needed.
    let fits = out.data.len().saturating_add(data.len()) <= i32::MAX as usize;
    // Short values are copied as a fixed 16-byte block (one vector move instead of a call to
    // memcpy per value) and the vector cut back to the value; the block may reach 16 bytes
    // past the last value's end, hence the extra reservation.
    let share = if wanted >= count { value_bytes } else { value_bytes / count.max(1) * wanted };
    out.data.reserve(share + if fits { SHORT } else { 0 });
    let mut pos = 0usize;
    for i in 0..stop {
        let (len, start) =
            read_varint(data, pos).map_err(|e| corrupt(WHAT, format!("length of value {i} at byte {pos}: {e}")))?;
        let Ok(len) = usize::try_from(len) else {
            return Err(corrupt(WHAT, format!("value {i} at byte {pos}: negative length {len}")));
        };
        let Some(bytes) = start.checked_add(len).and_then(|end| data.get(start..end)) else {
            return Err(corrupt(
                WHAT,
                format!("value {i} at byte {pos}: length {len} exceeds the {} remaining bytes", data.len() - start),
            ));
        };
        if i >= skip {
            if !fits {
                out.push(bytes)?;
            } else {
                let at = out.data.len();
                match data.get(start..start + SHORT).and_then(|b| <&[u8; SHORT]>::try_from(b).ok()) {
                    Some(block) if len <= SHORT => {
                        out.data.extend_from_slice(block);
                        out.data.truncate(at + len);
                    }
                    _ => out.data.extend_from_slice(bytes),
                }
                // why: in range of i32, checked by `fits` above.
                #[allow(clippy::cast_possible_truncation)]
                let offset = (at + len) as i32;
                out.offsets.push(offset);
            }
        }
        pos = start + len;
    }
    Ok(pos)
}

/// Values up to this many bytes are copied as one fixed-size block.
const SHORT: usize = 16;

/// PLAIN encoders, the exact inverse of the decoders: the writer's `*_into` functions append to
/// a buffer; the others (tests) return a new one.
pub mod encode {
    /// Append a 32-bit UVarInt (LEB128).
    #[inline]
    // why: each byte takes the low 7 bits, masked before the cast.
    #[allow(clippy::cast_possible_truncation)]
    pub fn uvarint(mut v: u32, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        out.push((v & 0x7f) as u8);
    }

    /// Append a VarInt: zig-zag of an `i32`, then UVarInt.
    #[inline]
    pub fn varint(v: i32, out: &mut Vec<u8>) {
        uvarint(((v << 1) ^ (v >> 31)).cast_unsigned(), out);
    }

    /// Append BOOLEAN values: one byte each.
    pub fn bool_into(values: impl IntoIterator<Item = bool>, out: &mut Vec<u8>) {
        out.extend(values.into_iter().map(u8::from));
    }

    /// Append INT32 values: a VarInt each.
    pub fn i32_into(values: &[i32], out: &mut Vec<u8>) {
        for &v in values {
            varint(v, out);
        }
    }

    /// Append INT64 values: 8 bytes big-endian each.
    pub fn i64_into(values: &[i64], out: &mut Vec<u8>) {
        out.reserve(values.len() * 8);
        for v in values {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }

    /// Append FLOAT values: 4 bytes big-endian IEEE bits each (NaN payloads kept).
    pub fn f32_into(values: &[f32], out: &mut Vec<u8>) {
        out.reserve(values.len() * 4);
        for v in values {
            out.extend_from_slice(&v.to_bits().to_be_bytes());
        }
    }

    /// Append DOUBLE values: 8 bytes big-endian IEEE bits each (NaN payloads kept).
    pub fn f64_into(values: &[f64], out: &mut Vec<u8>) {
        out.reserve(values.len() * 8);
        for v in values {
            out.extend_from_slice(&v.to_bits().to_be_bytes());
        }
    }

    /// Append one TEXT/STRING/BLOB value: VarInt length plus bytes. A value longer than
    /// `i32::MAX` bytes cannot be stored; the caller rejects it first (the length saturates).
    #[inline]
    pub fn binary_value_into(v: &[u8], out: &mut Vec<u8>) {
        varint(i32::try_from(v.len()).unwrap_or(i32::MAX), out);
        out.extend_from_slice(v);
    }

    /// BOOLEAN: one byte per value.
    #[cfg(any(test, feature = "test-util"))]
    pub fn bool(values: &[bool]) -> Vec<u8> {
        values.iter().map(|&b| u8::from(b)).collect()
    }

    /// INT32: VarInt per value.
    #[cfg(any(test, feature = "test-util"))]
    pub fn i32(values: &[i32]) -> Vec<u8> {
        let mut out = Vec::new();
        i32_into(values, &mut out);
        out
    }

    /// INT64: 8 bytes big-endian per value.
    #[cfg(any(test, feature = "test-util"))]
    pub fn i64(values: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        i64_into(values, &mut out);
        out
    }

    /// FLOAT: 4 bytes big-endian IEEE bits per value.
    #[cfg(any(test, feature = "test-util"))]
    pub fn f32(values: &[f32]) -> Vec<u8> {
        let mut out = Vec::new();
        f32_into(values, &mut out);
        out
    }

    /// DOUBLE: 8 bytes big-endian IEEE bits per value.
    #[cfg(any(test, feature = "test-util"))]
    pub fn f64(values: &[f64]) -> Vec<u8> {
        let mut out = Vec::new();
        f64_into(values, &mut out);
        out
    }

    /// TEXT/STRING/BLOB: VarInt length plus bytes per value.
    #[cfg(any(test, feature = "test-util"))]
    pub fn binary<B: AsRef<[u8]>>(values: &[B]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in values {
            binary_value_into(v.as_ref(), &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TsFileError;
    use proptest::prelude::*;

    fn bools(data: &[u8], count: usize) -> Result<Vec<bool>> {
        let mut b = BooleanBufferBuilder::new(0);
        decode_bool(data, count, &mut b)?;
        Ok(b.finish().iter().collect())
    }

    fn i32s(data: &[u8], count: usize) -> Result<Vec<i32>> {
        let mut v = Vec::new();
        decode_i32(data, count, &mut v).map(|_| v)
    }

    fn i64s(data: &[u8], count: usize) -> Result<Vec<i64>> {
        let mut v = Vec::new();
        decode_i64(data, count, &mut v).map(|_| v)
    }

    fn f32s(data: &[u8], count: usize) -> Result<Vec<f32>> {
        let mut v = Vec::new();
        decode_f32(data, count, &mut v).map(|_| v)
    }

    fn f64s(data: &[u8], count: usize) -> Result<Vec<f64>> {
        let mut v = Vec::new();
        decode_f64(data, count, &mut v).map(|_| v)
    }

    fn bins(data: &[u8], count: usize) -> Result<Vec<Vec<u8>>> {
        let mut v = BinaryValues::new();
        decode_binary(data, count, &mut v)?;
        Ok(v.iter().map(<[u8]>::to_vec).collect())
    }

    fn h(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn is_corrupt_at(e: &TsFileError, needle: &str) -> bool {
        matches!(e, TsFileError::Corrupt { what, detail, .. }
            if what.starts_with("PLAIN") && detail.contains(needle))
    }

    // ---- worked examples of the spec ----

    #[test]
    fn test_decode_windows_step_over_what_they_skip() {
        let texts: Vec<String> = (0..50).map(|i| format!("v{i}").repeat(i % 4)).collect();
        let data = encode::binary(&texts);
        for (a, b) in [(0, 0), (0, 1), (10, 20), (49, 50), (0, 50), (30, 80), (40, 10)] {
            let mut out = BinaryValues::new();
            decode_binary_window(&data, 50, a..b, &mut out).unwrap();
            let end = b.min(50);
            let expect: Vec<&[u8]> = texts[a.min(end)..end].iter().map(|t| t.as_bytes()).collect();
            let got: Vec<&[u8]> = (0..out.len()).map(|i| out.get(i).unwrap()).collect();
            assert_eq!(got, expect, "{a}..{b}");
        }
        // A length running past the stream is found while stepping over it too.
        let mut cut = data.clone();
        cut.truncate(data.len() / 2);
        assert!(decode_binary_window(&cut, 50, 45..46, &mut BinaryValues::new()).is_err());
        let ints = encode::i64(&(0..10).collect::<Vec<_>>());
        assert_eq!(fixed_window(&ints, 10, 3..5, 8, "x").unwrap(), &ints[24..40]);
        let (from, to) = (5, 3);
        assert_eq!(fixed_window(&ints, 10, from..to, 8, "x").unwrap(), &[] as &[u8]);
        assert!(fixed_window(&ints[..79], 10, 3..5, 8, "x").is_err());
    }

    #[test]
    fn test_decode_i32_spec_example() {
        assert_eq!(i32s(&h("02 01 d8 04"), 3).unwrap(), vec![1, -1, 300]);
        assert_eq!(encode::i32(&[1, -1, 300]), h("02 01 d8 04"));
    }

    #[test]
    fn test_decode_i64_spec_example() {
        let bytes = h("0000000000000001 fffffffffffffffe");
        assert_eq!(i64s(&bytes, 2).unwrap(), vec![1, -2]);
        assert_eq!(encode::i64(&[1, -2]), bytes);
    }

    #[test]
    fn test_decode_bool_spec_example() {
        assert_eq!(bools(&h("01 00"), 2).unwrap(), vec![true, false]);
        // Anything non-zero is true.
        assert_eq!(bools(&h("02 ff 00 80"), 4).unwrap(), vec![true, true, false, true]);
    }

    #[test]
    fn test_decode_f32_spec_example() {
        assert_eq!(f32s(&h("3f c0 00 00"), 1).unwrap(), vec![1.5]);
    }

    #[test]
    fn test_decode_binary_spec_example() {
        let got = bins(&h("04 61 62 00"), 2).unwrap();
        assert_eq!(got, vec![b"ab".to_vec(), Vec::new()]);
        assert_eq!(encode::binary(&[&b"ab"[..], b""]), h("04 61 62 00"));
    }

    // ---- edge cases ----

    #[test]
    fn test_decode_all_zero_values() {
        assert!(bools(&[], 0).unwrap().is_empty());
        assert!(i32s(&[], 0).unwrap().is_empty());
        assert!(i64s(&[], 0).unwrap().is_empty());
        assert!(f32s(&[], 0).unwrap().is_empty());
        assert!(f64s(&[], 0).unwrap().is_empty());
        assert!(bins(&[], 0).unwrap().is_empty());
    }

    #[test]
    fn test_decode_i32_extremes() {
        let vals = [i32::MIN, i32::MAX, 0, -1, 1, -64, 63, -65, 64];
        let bytes = encode::i32(&vals);
        // i32::MIN zig-zags to u32::MAX: five bytes, last byte 0x0f.
        assert_eq!(&bytes[..5], &[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(i32s(&bytes, vals.len()).unwrap(), vals);
    }

    #[test]
    fn test_decode_i32_varint_overflow_is_error() {
        // Fifth byte carries more than 4 payload bits.
        let e = i32s(&h("ff ff ff ff 1f"), 1).unwrap_err();
        assert!(is_corrupt_at(&e, "overflows"), "{e}");
        // Six-byte varint.
        assert!(i32s(&h("80 80 80 80 80 00"), 1).is_err());
    }

    #[test]
    fn test_decode_i64_and_floats_extremes() {
        let vals = [i64::MIN, i64::MAX, 0, -1];
        assert_eq!(i64s(&encode::i64(&vals), 4).unwrap(), vals);
        let f = [f32::NAN, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, 1e-45];
        let got = f32s(&encode::f32(&f), f.len()).unwrap();
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), f.map(f32::to_bits));
        // A NaN payload survives untouched.
        let nan = f32::from_bits(0x7fa0_0001);
        assert_eq!(f32s(&encode::f32(&[nan]), 1).unwrap()[0].to_bits(), 0x7fa0_0001);
        let d = [f64::NAN, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::from_bits(0xfff0_0000_0000_0001)];
        let got = f64s(&encode::f64(&d), d.len()).unwrap();
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), d.map(f64::to_bits));
    }

    #[test]
    fn test_decode_bool_crosses_word_boundaries() {
        let vals: Vec<bool> = (0..200).map(|i| i % 3 == 0 || i % 7 == 0).collect();
        assert_eq!(bools(&encode::bool(&vals), 200).unwrap(), vals);
        // Appending after existing bits keeps both.
        let mut b = BooleanBufferBuilder::new(0);
        b.append(true);
        b.append(false);
        b.append(true);
        decode_bool(&encode::bool(&vals), 200, &mut b).unwrap();
        let all: Vec<bool> = b.finish().iter().collect();
        assert_eq!(&all[..3], &[true, false, true]);
        assert_eq!(&all[3..], &vals[..]);
    }

    #[test]
    fn test_decode_count_mismatch_is_error() {
        assert!(bools(&h("01 00"), 1).is_err());
        assert!(bools(&h("01 00"), 3).is_err());
        assert!(i32s(&h("02 01 d8 04"), 2).is_err());
        assert!(i32s(&h("02 01 d8 04"), 4).is_err());
        let b = encode::i64(&[1, 2]);
        assert!(i64s(&b, 1).is_err());
        assert!(i64s(&b, 3).is_err());
        assert!(i64s(&b[..15], 2).is_err());
        assert!(f32s(&encode::f32(&[1.0, 2.0]), 1).is_err());
        assert!(f64s(&encode::f64(&[1.0]), 2).is_err());
        assert!(bins(&h("04 61 62 00"), 1).is_err());
        assert!(bins(&h("04 61 62 00"), 3).is_err());
        // A huge count on a tiny stream fails without allocating for it.
        assert!(i64s(&b, usize::MAX).is_err());
        assert!(i32s(&b, usize::MAX / 2).is_err());
        assert!(bins(&h("00"), usize::MAX / 2).is_err());
    }

    #[test]
    fn test_decode_errors_name_position() {
        let e = i32s(&h("02 01 d8"), 3).unwrap_err();
        assert!(is_corrupt_at(&e, "value 2 of 3 at byte 2"), "{e}");
        let e = i64s(&[0; 12], 2).unwrap_err();
        assert!(is_corrupt_at(&e, "at byte 8"), "{e}");
        let e = bins(&h("04 61 62 00 00"), 2).unwrap_err();
        assert!(is_corrupt_at(&e, "at byte 4"), "{e}");
    }

    #[test]
    fn test_decode_binary_negative_and_overlong_length_is_error() {
        // VarInt -1 (null sentinel elsewhere) is not a valid value length.
        let e = bins(&h("01"), 1).unwrap_err();
        assert!(is_corrupt_at(&e, "negative length -1"), "{e}");
        assert!(bins(&h("03 00"), 1).is_err());
        // Length claims more bytes than remain.
        let e = bins(&h("08 61 62"), 1).unwrap_err();
        assert!(is_corrupt_at(&e, "exceeds"), "{e}");
        // Length i32::MAX.
        assert!(bins(&h("fe ff ff ff 0f"), 1).is_err());
    }

    #[test]
    fn test_decode_binary_appends_after_existing_values() {
        let mut v = BinaryValues::new();
        v.push(b"zz").unwrap();
        decode_binary(&encode::binary(&[&b"a"[..], b"", b"bcd"]), 3, &mut v).unwrap();
        assert_eq!(v.offsets, vec![0, 2, 3, 3, 6]);
        assert_eq!(v.data, b"zzabcd");
    }

    #[test]
    fn test_decode_binary_short_block_copies_at_every_length_and_position() {
        // Lengths around the 16-byte block (0, 1, 15, 16, 17, 40), the last values ending
        // less than 16 bytes before the end of the stream, windows starting anywhere.
        let vals: Vec<Vec<u8>> =
            (0..60u8).map(|i| (0..[0, 1, 15, 16, 17, 40, 3][usize::from(i) % 7]).map(|j| i ^ j).collect()).collect();
        let data = encode::binary(&vals);
        let mut v = BinaryValues::new();
        decode_binary(&data, vals.len(), &mut v).unwrap();
        let got: Vec<Vec<u8>> = (0..v.len()).map(|i| v.get(i).unwrap().to_vec()).collect();
        assert_eq!(got, vals);
        // The block copies need no more room than the values and one block.
        assert!(v.data.capacity() <= data.len() + SHORT, "{}", v.data.capacity());
        for start in 0..vals.len() {
            for end in [start, start + 1, (start + 7).min(vals.len()), vals.len()] {
                let mut w = BinaryValues::new();
                w.push(b"prefix").unwrap();
                decode_binary_window(&data, vals.len(), start..end, &mut w).unwrap();
                let got: Vec<Vec<u8>> = (1..w.len()).map(|i| w.get(i).unwrap().to_vec()).collect();
                assert_eq!(got, vals[start..end], "{start}..{end}");
                assert_eq!(w.get(0), Some(&b"prefix"[..]));
            }
        }
        // One short value at the very end (no 16 bytes left after it) and alone.
        for len in [0usize, 1, 5, 16] {
            let one = vec![vec![7u8; len]];
            let mut v = BinaryValues::new();
            decode_binary(&encode::binary(&one), 1, &mut v).unwrap();
            assert_eq!((v.offsets.clone(), v.data.clone()), (vec![0, len as i32], one[0].clone()));
        }
    }

    #[test]
    fn test_decode_truncated_at_every_byte_is_error() {
        let i = encode::i32(&[1, -300, i32::MIN, 7]);
        let l = encode::i64(&[5, -5]);
        let s = encode::binary(&[&b"hello"[..], b"", b"w"]);
        for cut in 0..i.len() {
            assert!(i32s(&i[..cut], 4).is_err(), "cut {cut}");
        }
        for cut in 0..l.len() {
            assert!(i64s(&l[..cut], 2).is_err(), "cut {cut}");
            assert!(f64s(&l[..cut], 2).is_err(), "cut {cut}");
            assert!(f32s(&l[..cut / 2], 2).is_err(), "cut {cut}");
            assert!(bools(&l[..cut], 16).is_err(), "cut {cut}");
        }
        for cut in 0..s.len() {
            assert!(bins(&s[..cut], 3).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn test_read_uvarint_helpers() {
        assert_eq!(read_uvarint(&[0x7f], 0), Ok((127, 1)));
        assert_eq!(read_uvarint(&[0xac, 0x02], 0), Ok((300, 2)));
        assert_eq!(read_uvarint(&[0, 0xff, 0xff, 0xff, 0xff, 0x0f], 1), Ok((u32::MAX, 6)));
        assert_eq!(read_uvarint(&[0x80], 0), Err(VarIntError::Truncated));
        assert_eq!(read_uvarint(&[], 0), Err(VarIntError::Truncated));
        assert_eq!(read_uvarint(&[0xff, 0xff, 0xff, 0xff, 0x10], 0), Err(VarIntError::Overflow));
        assert_eq!(read_varint(&[0x03], 0), Ok((-2, 1)));
        assert_eq!(unzigzag32(u32::MAX), i32::MIN);
        assert_eq!(unzigzag32(u32::MAX - 1), i32::MAX);
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
        fn test_decode_float_round_trip(bits in proptest::collection::vec(any::<u64>(), 0..200)) {
            let d: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
            let got = f64s(&encode::f64(&d), d.len()).unwrap();
            prop_assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), bits.clone());
            let f: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b as u32)).collect();
            let got = f32s(&encode::f32(&f), f.len()).unwrap();
            prop_assert_eq!(
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                f.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }

        #[test]
        fn test_decode_bool_round_trip(vals in proptest::collection::vec(any::<bool>(), 0..300)) {
            prop_assert_eq!(bools(&encode::bool(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_binary_round_trip(
            vals in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..50)
        ) {
            prop_assert_eq!(bins(&encode::binary(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_never_panics_on_garbage(
            data in proptest::collection::vec(any::<u8>(), 0..64), count in 0usize..80
        ) {
            let _ = i32s(&data, count);
            let _ = i64s(&data, count);
            let _ = bins(&data, count);
            let _ = bools(&data, count);
        }
    }
}
