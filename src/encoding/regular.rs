//! REGULAR (encoding id 7, legacy Java) for INT32/DATE and INT64/TIMESTAMP.
//!
//! Blocks (of up to 128 values) until the end of the stream, each an arithmetic progression:
//!
//! ```text
//! u8  has_missing                0 or 1
//! [i32 bm_len, bm_len bytes]     only if has_missing: Java BitSet bytes, slot i ⇔
//!                                byte[i/8] bit (i%8) (LSB-first)
//! i32 slots                      slots of the progression (≥ 1)
//! T   min_delta, T first         i32 or i64, big-endian
//! ```
//!
//! Slot `i` holds `first + i·min_delta` (wrapping). Without a bitmap every slot is a value;
//! with one, only the slots whose bit is set (bits at or beyond `slots` are ignored).
//! Current writers never produce this encoding.

use crate::encoding::bits::PackedInt;
use crate::encoding::corrupt;
use crate::error::Result;

/// Number of set bits among the first `slots` bits of an LSB-first bitmap.
fn present_slots(bitmap: &[u8], slots: usize) -> usize {
    let full = (slots / 8).min(bitmap.len());
    let mut n: usize = bitmap.iter().take(full).map(|b| b.count_ones() as usize).sum();
    if !slots.is_multiple_of(8) {
        if let Some(&b) = bitmap.get(slots / 8) {
            n += (b & ((1u8 << (slots % 8)) - 1)).count_ones() as usize;
        }
    }
    n
}

fn decode<T: PackedInt>(data: &[u8], count: usize, out: &mut Vec<T>, what: &str) -> Result<()> {
    let mut produced = 0usize;
    let mut pos = 0usize;
    while pos < data.len() {
        let block = pos;
        let truncated = |need: &str| corrupt(what, format!("block at byte {block}: truncated {need}"));
        let has_missing = match data.get(pos) {
            Some(0) => false,
            Some(1) => true,
            Some(b) => return Err(corrupt(what, format!("block at byte {block}: missing-point flag {b}"))),
            None => return Err(truncated("flag")),
        };
        pos += 1;
        let mut bitmap = None;
        if has_missing {
            let len = data.get(pos..pos + 4).map(<i32 as PackedInt>::from_be).ok_or_else(|| truncated("bitmap length"))?;
            let Ok(len) = usize::try_from(len) else {
                return Err(corrupt(what, format!("block at byte {block}: negative bitmap length {len}")));
            };
            pos += 4;
            bitmap = Some(pos.checked_add(len).and_then(|e| data.get(pos..e)).ok_or_else(|| truncated("bitmap"))?);
            pos += len;
        }
        let header = 4 + 2 * T::BYTES;
        let h = data.get(pos..pos + header).ok_or_else(|| truncated("header"))?;
        let slots = <i32 as PackedInt>::from_be(h);
        let values = h.get(4..).unwrap_or_default();
        let min_delta = T::from_be(values);
        let first = T::from_be(values.get(T::BYTES..).unwrap_or_default());
        let slots = match usize::try_from(slots) {
            Ok(s) if s >= 1 => s,
            _ => return Err(corrupt(what, format!("block at byte {block}: {slots} slots"))),
        };
        pos += header;
        let values = bitmap.map_or(slots, |bm| present_slots(bm, slots));
        if values > count - produced {
            return Err(corrupt(
                what,
                format!("block at byte {block} holds {values} values but only {} of {count} remain", count - produced),
            ));
        }
        out.reserve(values);
        let slot = |i: usize| first.wrapping_add(min_delta.wrapping_mul_usize(i));
        match bitmap {
            None => out.extend((0..slots).map(slot)),
            // Slots beyond the bitmap are absent: never walk past it.
            Some(bm) => out.extend(
                (0..slots.min(bm.len().saturating_mul(8)))
                    .filter(|&i| bm.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0))
                    .map(slot),
            ),
        }
        produced += values;
    }
    if produced != count {
        return Err(corrupt(what, format!("at byte {}: stream ends after {produced} of {count} values", data.len())));
    }
    Ok(())
}

/// Decode `count` INT32/DATE values.
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode(data, count, out, "REGULAR INT32 stream")
}

/// Decode `count` INT64/TIMESTAMP values.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode(data, count, out, "REGULAR INT64 stream")
}

/// Test-only REGULAR encoders (feature `test-util`).
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    fn block(header_tail: &[u8], slots: usize, present: Option<&[bool]>) -> Vec<u8> {
        let mut out = Vec::new();
        match present {
            None => out.push(0),
            Some(p) => {
                out.push(1);
                let mut bm = vec![0u8; p.len().div_ceil(8)];
                for (i, _) in p.iter().enumerate().filter(|(_, &b)| b) {
                    bm[i / 8] |= 1 << (i % 8);
                }
                out.extend_from_slice(&(bm.len() as i32).to_be_bytes());
                out.extend(bm);
            }
        }
        out.extend_from_slice(&(slots as i32).to_be_bytes());
        out.extend_from_slice(header_tail);
        out
    }

    /// One INT32 block: `slots` slots `first + i·delta`, optionally only the `present` ones.
    pub fn i32_block(first: i32, delta: i32, slots: usize, present: Option<&[bool]>) -> Vec<u8> {
        let tail = [delta.to_be_bytes(), first.to_be_bytes()].concat();
        block(&tail, slots, present)
    }

    /// One INT64 block: `slots` slots `first + i·delta`, optionally only the `present` ones.
    pub fn i64_block(first: i64, delta: i64, slots: usize, present: Option<&[bool]>) -> Vec<u8> {
        let tail = [delta.to_be_bytes(), first.to_be_bytes()].concat();
        block(&tail, slots, present)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn test_decode_i32_spec_example() {
        let bytes = h("00 00000003 00000003 0000000a");
        assert_eq!(i32s(&bytes, 3).unwrap(), vec![10, 13, 16]);
        assert_eq!(encode::i32_block(10, 3, 3, None), bytes);
    }

    #[test]
    fn test_decode_zero_and_one_value() {
        assert!(i32s(&[], 0).unwrap().is_empty());
        assert!(i64s(&[], 0).unwrap().is_empty());
        assert_eq!(i64s(&encode::i64_block(-9, 100, 1, None), 1).unwrap(), vec![-9]);
        assert!(i32s(&[], 1).is_err());
    }

    #[test]
    fn test_decode_with_missing_slots() {
        // Slots 10, 13, 16, 19, 22 with 13 and 19 missing.
        let present = [true, false, true, false, true];
        let bytes = encode::i32_block(10, 3, 5, Some(&present));
        assert_eq!(bytes, h("01 00000001 15 00000005 00000003 0000000a"));
        assert_eq!(i32s(&bytes, 3).unwrap(), vec![10, 16, 22]);
        assert!(i32s(&bytes, 5).is_err());
        // Bits at or beyond `slots` are ignored; a bitmap shorter than the slots leaves the
        // remaining slots absent.
        assert_eq!(i32s(&h("01 00000001 ff 00000003 00000001 00000000"), 3).unwrap(), vec![0, 1, 2]);
        assert_eq!(i32s(&h("01 00000001 81 0000000a 00000001 00000000"), 2).unwrap(), vec![0, 7]);
    }

    #[test]
    fn test_decode_several_blocks_and_wrapping() {
        let mut bytes = encode::i64_block(i64::MAX - 1, 1, 128, None);
        bytes.extend(encode::i64_block(0, -7, 3, Some(&[false, true, true])));
        let mut want: Vec<i64> = (0..128).map(|i| (i64::MAX - 1).wrapping_add(i)).collect();
        want.extend([-7, -14]);
        assert_eq!(i64s(&bytes, 130).unwrap(), want);
        let b32 = encode::i32_block(i32::MIN, i32::MAX, 4, None);
        let want: Vec<i32> = (0..4).map(|i| i32::MIN.wrapping_add(i32::MAX.wrapping_mul(i))).collect();
        assert_eq!(i32s(&b32, 4).unwrap(), want);
    }

    #[test]
    fn test_decode_malformed_blocks_are_errors() {
        // Bad flag, zero and negative slots, negative bitmap length.
        assert!(i32s(&h("02 00000001 00000000 00000000"), 1).is_err());
        assert!(i32s(&h("00 00000000 00000000 00000000"), 0).is_err());
        assert!(i32s(&h("00 ffffffff 00000000 00000000"), 0).is_err());
        assert!(i32s(&h("01 ffffffff 00000001 00000000 00000000"), 0).is_err());
        // A bitmap block with 2^31 - 1 slots but one present value is decoded without
        // walking the absent slots.
        let t = std::time::Instant::now();
        assert_eq!(i32s(&h("01 00000001 01 7fffffff 00000001 00000005"), 1).unwrap(), vec![5]);
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        // A block claiming 2^31 - 1 values from 13 bytes fails before allocating.
        let mut out = Vec::new();
        assert!(decode_i32(&h("00 7fffffff 00000001 00000000"), 10, &mut out).is_err());
        assert!(out.capacity() < 1 << 20);
        // Count mismatch.
        assert!(i32s(&encode::i32_block(1, 1, 5, None), 4).is_err());
        assert!(i32s(&encode::i32_block(1, 1, 5, None), 6).is_err());
    }

    #[test]
    fn test_decode_truncated_at_every_byte_is_error() {
        let mut bytes = encode::i64_block(5, 5, 4, Some(&[true, true, false, true]));
        bytes.extend(encode::i64_block(1, 2, 2, None));
        for cut in 0..bytes.len() {
            assert!(i64s(&bytes[..cut], 5).is_err(), "cut {cut}");
        }
    }

    proptest! {
        #[test]
        fn test_decode_round_trip(
            first in any::<i64>(), delta in any::<i64>(),
            present in proptest::collection::vec(any::<bool>(), 1..200), with_bitmap in any::<bool>()
        ) {
            let slots = present.len();
            let bm = with_bitmap.then_some(present.as_slice());
            let want: Vec<i64> = (0..slots)
                .filter(|&i| !with_bitmap || present[i])
                .map(|i| first.wrapping_add(delta.wrapping_mul(i as i64)))
                .collect();
            prop_assert_eq!(i64s(&encode::i64_block(first, delta, slots, bm), want.len()).unwrap(), want.clone());
            let want32: Vec<i32> = want.iter().map(|&v| v as i32).collect();
            let b32 = encode::i32_block(first as i32, delta as i32, slots, bm);
            prop_assert_eq!(i32s(&b32, want32.len()).unwrap(), want32);
        }

        #[test]
        fn test_decode_never_panics_on_garbage(
            data in proptest::collection::vec(any::<u8>(), 0..64), count in 0usize..300
        ) {
            let _ = i32s(&data, count);
            let _ = i64s(&data, count);
        }
    }
}
