//! BITMAP (encoding id 5, legacy Java; no current reader maps the id to a decoder).
//!
//! ```text
//! packs until the end of the stream (the Java encoder writes one per page):
//!   UVarInt byte_len, UVarInt n
//!   byte_len bytes of entries: (UVarInt value, ceil(n/8) bytes membership bitmap)
//! ```
//!
//! Bitmaps are MSB-first: row `i` belongs to the entry whose bitmap has bit `7 − i%8` of
//! byte `i/8` set. Values are INT32 (the UVarInt is the `u32` pattern); BOOLEAN is the
//! same with non-zero = true. Every row must belong to exactly one entry.

use arrow_buffer::BooleanBufferBuilder;

use crate::encoding::corrupt;
use crate::encoding::plain::read_uvarint;
use crate::error::Result;

fn decode(data: &[u8], count: usize, out: &mut Vec<i32>, what: &str) -> Result<()> {
    let mut produced = 0usize;
    let mut pos = 0usize;
    while pos < data.len() {
        let pack = pos;
        let varint =
            |p: usize, field: &str| read_uvarint(data, p).map_err(|e| corrupt(what, format!("{field} at byte {p}: {e}")));
        let (byte_len, p) = varint(pos, "pack length")?;
        let (n, p) = varint(p, "pack row count")?;
        let (byte_len, n) = (byte_len as usize, n as usize);
        let end = p
            .checked_add(byte_len)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| corrupt(what, format!("pack at byte {pack} declares {byte_len} bytes, {} remain", data.len() - p)))?;
        let bm_len = n.div_ceil(8);
        if bm_len > byte_len {
            return Err(corrupt(what, format!("pack at byte {pack}: {n} rows cannot fit in {byte_len} bytes")));
        }
        if n > count - produced {
            return Err(corrupt(
                what,
                format!("pack at byte {pack} holds {n} rows but only {} of {count} remain", count - produced),
            ));
        }
        let base = out.len();
        out.resize(base + n, 0);
        let mut covered = vec![false; n];
        let body = data.get(..end).unwrap_or(&[]);
        let mut q = p;
        while q < end {
            let entry = q;
            let (value, q2) = read_uvarint(body, q).map_err(|e| corrupt(what, format!("entry value at byte {entry}: {e}")))?;
            let bm = body
                .get(q2..q2 + bm_len)
                .ok_or_else(|| corrupt(what, format!("entry at byte {entry}: bitmap of {bm_len} bytes truncated")))?;
            for (i, (slot, seen)) in out.iter_mut().skip(base).zip(covered.iter_mut()).enumerate() {
                if bm.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0) {
                    if *seen {
                        return Err(corrupt(what, format!("entry at byte {entry}: row {} already has a value", produced + i)));
                    }
                    *seen = true;
                    *slot = value as i32;
                }
            }
            q = q2 + bm_len;
        }
        if let Some(i) = covered.iter().position(|&c| !c) {
            return Err(corrupt(what, format!("pack at byte {pack}: row {} has no value", produced + i)));
        }
        produced += n;
        pos = end;
    }
    if produced != count {
        return Err(corrupt(what, format!("at byte {}: stream ends after {produced} of {count} values", data.len())));
    }
    Ok(())
}

/// Decode `count` BOOLEAN values (INT32-like; non-zero = true).
pub fn decode_bool(data: &[u8], count: usize, out: &mut BooleanBufferBuilder) -> Result<()> {
    let mut ints = Vec::new();
    decode(data, count, &mut ints, "BITMAP BOOLEAN stream")?;
    out.reserve(count);
    for chunk in ints.chunks(64) {
        let mut word = 0u64;
        for (i, &v) in chunk.iter().enumerate() {
            word |= u64::from(v != 0) << i;
        }
        out.append_word(word, chunk.len());
    }
    Ok(())
}

/// Decode `count` INT32 values.
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode(data, count, out, "BITMAP INT32 stream")
}

/// Test-only BITMAP encoder (feature `test-util`).
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::plain::encode::uvarint;

    /// One pack: entries in first-appearance order.
    pub fn i32(values: &[i32]) -> Vec<u8> {
        let mut distinct: Vec<i32> = Vec::new();
        for &v in values {
            if !distinct.contains(&v) {
                distinct.push(v);
            }
        }
        let mut body = Vec::new();
        for d in distinct {
            uvarint(d as u32, &mut body);
            let mut bm = vec![0u8; values.len().div_ceil(8)];
            for (i, _) in values.iter().enumerate().filter(|(_, &v)| v == d) {
                bm[i / 8] |= 0x80 >> (i % 8);
            }
            body.extend(bm);
        }
        let mut out = Vec::new();
        uvarint(body.len() as u32, &mut out);
        uvarint(values.len() as u32, &mut out);
        out.extend(body);
        out
    }

    /// BOOLEAN as 0/1 values.
    pub fn bool(values: &[bool]) -> Vec<u8> {
        i32(&values.iter().map(|&b| i32::from(b)).collect::<Vec<_>>())
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

    fn bools(data: &[u8], count: usize) -> Result<Vec<bool>> {
        let mut b = BooleanBufferBuilder::new(0);
        decode_bool(data, count, &mut b)?;
        Ok(b.finish().iter().collect())
    }

    fn detail(e: &TsFileError) -> String {
        match e {
            TsFileError::Corrupt { what, detail, .. } => format!("{what}: {detail}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn test_decode_i32_spec_example() {
        let bytes = h("04 03 01 a0 02 40");
        assert_eq!(i32s(&bytes, 3).unwrap(), vec![1, 2, 1]);
        assert_eq!(encode::i32(&[1, 2, 1]), bytes);
    }

    #[test]
    fn test_decode_zero_and_one_value() {
        assert!(i32s(&[], 0).unwrap().is_empty());
        assert!(bools(&[], 0).unwrap().is_empty());
        assert_eq!(i32s(&encode::i32(&[i32::MIN]), 1).unwrap(), vec![i32::MIN]);
        assert!(i32s(&[], 1).is_err());
    }

    #[test]
    fn test_decode_bool_and_multi_byte_bitmaps() {
        let vals: Vec<bool> = (0..21).map(|i| i % 3 == 0).collect();
        assert_eq!(bools(&encode::bool(&vals), 21).unwrap(), vals);
        let ints: Vec<i32> = (0..17).map(|i| [i32::MAX, -1, 0][i % 3]).collect();
        let mut bytes = encode::i32(&ints);
        bytes.extend(encode::i32(&[4, 4]));
        let want: Vec<i32> = [ints, vec![4, 4]].concat();
        assert_eq!(i32s(&bytes, 19).unwrap(), want);
    }

    #[test]
    fn test_decode_uncovered_or_doubly_covered_rows_are_errors() {
        // Row 2 has no value.
        let e = i32s(&h("04 03 01 80 02 40"), 3).unwrap_err();
        assert!(detail(&e).contains("row 2 has no value"), "{}", detail(&e));
        // Row 0 in two bitmaps.
        let e = i32s(&h("04 03 01 a0 02 c0"), 3).unwrap_err();
        assert!(detail(&e).contains("row 0 already has a value"), "{}", detail(&e));
    }

    #[test]
    fn test_decode_malformed_packs_are_errors() {
        assert!(i32s(&h("04 03 01 a0 02 40"), 2).is_err());
        assert!(i32s(&h("04 03 01 a0 02 40"), 4).is_err());
        // Pack longer than the data; too many rows for its bytes; truncated entry.
        assert!(i32s(&h("09 03 01 a0 02 40"), 3).is_err());
        assert!(i32s(&h("01 ff 01 00"), 255).is_err());
        assert!(i32s(&h("03 03 01 a0 02"), 3).is_err());
        let mut out = Vec::new();
        assert!(decode_i32(&h("02 ff ff ff ff 0f 01 ff"), 100, &mut out).is_err());
    }

    #[test]
    fn test_decode_truncated_at_every_byte_is_error() {
        let bytes = encode::i32(&[5, -5, 5, 0, 300, 5, 5, 5, 5, 1]);
        for cut in 0..bytes.len() {
            assert!(i32s(&bytes[..cut], 10).is_err(), "cut {cut}");
        }
    }

    proptest! {
        #[test]
        fn test_decode_round_trip(vals in proptest::collection::vec(-3i32..3, 0..100)) {
            prop_assert_eq!(i32s(&encode::i32(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_never_panics_on_garbage(
            data in proptest::collection::vec(any::<u8>(), 0..40), count in 0usize..100
        ) {
            let _ = i32s(&data, count);
            let _ = bools(&data, count);
        }
    }
}
