//! CHIMP (Chimp128 variant) decoder for INT32/DATE, INT64/TIMESTAMP, FLOAT and DOUBLE.
//!
//! An MSB-first bit stream over `W`-bit words (W = 32 or 64) with a ring of the previous
//! `P` values (P = 64 / 128, index width I = 6 / 7, significant-bit field S = 5 / 6). The
//! first value is `W` raw bits (ring slot 0); every further value starts with two flag bits:
//! `00` + idx → `ring[idx]`; `01` + idx + lead(3) + sig(S) + sig bits → `ring[idx]` XOR the
//! bits placed below `LEAD[lead]` leading zeros; `10` + `W − stored_lz` bits → previous XOR bits;
//! `11` + lead(3) + `W − LEAD[lead]` bits → same with a new stored leading-zero count
//! (`LEAD = [0, 8, 12, 16, 18, 20, 22, 24]`). Each value then goes to the next ring slot.
//!
//! The stream ends like GORILLA: an end marker value, zero padding, and an extra `0x00` byte
//! when the marker ended on a byte boundary. Decoding is driven by the value count; afterwards
//! the marker, the padding and at most one extra `0x00` byte are checked. An index naming a
//! ring slot no value has reached yet, and `10` without a stored leading-zero count (at the
//! start or right after `00`/`01`, which writers never emit) are reported as corruption.

use crate::encoding::bits::BitReader;
use crate::encoding::gorilla::{check_end, retag, MARKER_32_FLOAT, MARKER_32_INT, MARKER_64_FLOAT, MARKER_64_INT};
use crate::error::{Result, TsFileError};

/// Decode `count` CHIMP-encoded INT32/DATE values, appending them to `out`.
// why: a 32-bit stream's words are read with 32 bits, so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode_words::<32, 64, _, _>(data, count, out, MARKER_32_INT, "CHIMP INT32 stream", |w| w as u32 as i32)
}

/// Decode `count` CHIMP-encoded INT64/TIMESTAMP values, appending them to `out`.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode_words::<64, 128, _, _>(data, count, out, MARKER_64_INT, "CHIMP INT64 stream", |w| w as i64)
}

/// Decode `count` CHIMP-encoded FLOAT values (IEEE bits), appending them to `out`.
// why: a 32-bit stream's words are read with 32 bits, so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    decode_words::<32, 64, _, _>(data, count, out, MARKER_32_FLOAT, "CHIMP FLOAT stream", |w| f32::from_bits(w as u32))
}

/// Decode `count` CHIMP-encoded DOUBLE values (IEEE bits), appending them to `out`.
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_words::<64, 128, _, _>(data, count, out, MARKER_64_FLOAT, "CHIMP DOUBLE stream", f64::from_bits)
}

/// Leading-zero count of a 3-bit code.
#[inline(always)]
fn lead(code: u64) -> u32 {
    match code & 7 {
        0 => 0,
        1 => 8,
        2 => 12,
        3 => 16,
        4 => 18,
        5 => 20,
        6 => 22,
        _ => 24,
    }
}

/// "No stored leading-zero count" (after cases 00/01 and at the start).
const NO_LZ: u32 = u32::MAX;

/// Decoder state: ring of previous values, the current slot, how many slots hold values.
struct State<const P: usize> {
    ring: [u64; P],
    cur: usize,
    filled: usize,
    stored_lz: u32,
    prev: u64,
}

#[inline(always)]
fn decode_words<const W: u32, const P: usize, T, F: Fn(u64) -> T>(
    data: &[u8],
    count: usize,
    out: &mut Vec<T>,
    marker: u64,
    what: &'static str,
    conv: F,
) -> Result<()> {
    decode_inner::<W, P, T, F>(data, count, out, marker, what, conv).map_err(|e| retag(e, what))
}

#[inline(always)]
fn decode_inner<const W: u32, const P: usize, T, F: Fn(u64) -> T>(
    data: &[u8],
    count: usize,
    out: &mut Vec<T>,
    marker: u64,
    what: &'static str,
    conv: F,
) -> Result<()> {
    if count == 0 && data.is_empty() {
        return Ok(());
    }
    // Every value after the first takes at least 8 bits (2 flag bits + a 6-bit index, or more).
    out.reserve(count.min(data.len()));
    let mut r = BitReader::new(data);
    let first = r.read(W)?;
    let mut st = State::<P> { ring: [0; P], cur: 0, filled: 1, stored_lz: NO_LZ, prev: first };
    if let Some(slot) = st.ring.first_mut() {
        *slot = first;
    }
    if count > 0 {
        out.push(conv(first));
        for _ in 1..count {
            let v = next_word::<W, P>(&mut r, &mut st, what)?;
            out.push(conv(v));
        }
        next_word::<W, P>(&mut r, &mut st, what)?;
    }
    if st.prev != marker {
        return Err(TsFileError::corrupt(
            what,
            None,
            format!(
                "expected the end marker {marker:#x} after {count} values, found {:#x} \
                 (ending at bit {})",
                st.prev,
                r.bit_position()
            ),
        ));
    }
    check_end(data, r.bit_position(), what, true)
}

#[inline(always)]
fn next_word<const W: u32, const P: usize>(r: &mut BitReader<'_>, st: &mut State<P>, what: &'static str) -> Result<u64> {
    // Index width I and significant-bit field width S.
    let iw: u32 = if W == 32 { 6 } else { 7 };
    let sw: u32 = if W == 32 { 5 } else { 6 };
    let start = r.bit_position();
    let value = match r.read(2)? {
        0 => {
            // why: a field of iw <= 7 bits.
            #[allow(clippy::cast_possible_truncation)]
            let idx = r.read(iw)? as usize;
            st.stored_lz = NO_LZ;
            ring_get(st, idx, what, start)?
        }
        1 => {
            let header = r.read(iw + 3 + sw)?;
            // why: the header has iw + 3 + sw bits, so this is a field of iw <= 7 bits.
            #[allow(clippy::cast_possible_truncation)]
            let idx = (header >> (3 + sw)) as usize;
            let lz = lead(header >> sw);
            // why: masked to sw <= 6 bits.
            #[allow(clippy::cast_possible_truncation)]
            let mut sig = (header & ((1u64 << sw) - 1)) as u32;
            if sig == 0 {
                sig = W;
            }
            if lz + sig > W {
                return Err(TsFileError::corrupt(
                    what,
                    None,
                    format!(
                        "at bit {start}: leading zeros {lz} + significant bits {sig} exceed \
                         the word width {W}"
                    ),
                ));
            }
            let base = ring_get(st, idx, what, start)?;
            st.stored_lz = NO_LZ;
            base ^ (r.read(sig)? << (W - lz - sig))
        }
        2 => {
            if st.stored_lz == NO_LZ {
                return Err(TsFileError::corrupt(
                    what,
                    None,
                    format!("control '10' at bit {start} but no leading-zero count is stored"),
                ));
            }
            st.prev ^ r.read(W - st.stored_lz)?
        }
        _ => {
            let lz = lead(r.read(3)?);
            st.stored_lz = lz;
            st.prev ^ r.read(W - lz)?
        }
    };
    st.cur = (st.cur + 1) % P;
    if let Some(slot) = st.ring.get_mut(st.cur) {
        *slot = value;
    }
    if st.filled < P {
        st.filled += 1;
    }
    st.prev = value;
    Ok(value)
}

/// The ring slot `idx`, which must already hold a value.
#[inline(always)]
fn ring_get<const P: usize>(st: &State<P>, idx: usize, what: &'static str, pos: usize) -> Result<u64> {
    match st.ring.get(idx) {
        Some(&v) if idx < st.filled => Ok(v),
        _ => Err(TsFileError::corrupt(
            what,
            None,
            format!("at bit {pos}: ring index {idx} refers to a slot not written yet ({} filled)", st.filled),
        )),
    }
}

/// Test-only CHIMP encoders that reproduce the C++ writer byte for byte.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::bits::BitWriter;
    use crate::encoding::gorilla::{MARKER_32_FLOAT, MARKER_32_INT, MARKER_64_FLOAT, MARKER_64_INT};

    /// Rounded-down leading zeros and their 3-bit code.
    fn round_lead(lz: u32) -> (u32, u64) {
        match lz {
            0..=7 => (0, 0),
            8..=11 => (8, 1),
            12..=15 => (12, 2),
            16..=17 => (16, 3),
            18..=19 => (18, 4),
            20..=21 => (20, 5),
            22..=23 => (22, 6),
            _ => (24, 7),
        }
    }

    /// Encode `width`-bit words (32 or 64) followed by `marker` with the C++ flush; also
    /// returns the number of meaningful bits (before padding and the optional extra byte).
    pub fn encode_words(width: u32, words: &[u64], marker: u64) -> (Vec<u8>, usize) {
        let (p, log2p, threshold) = if width == 32 { (64usize, 6u32, 11u32) } else { (128, 7, 13) };
        let sw: u32 = if width == 32 { 5 } else { 6 };
        let key_mask: u64 = (1u64 << (threshold + 1)) - 1;
        let mut w = BitWriter::new();
        let mut stored = vec![0u64; p];
        let mut indices = vec![0usize; 1 << (threshold + 1)];
        let mut index = 0usize; // absolute index of the last written value
        let mut stored_lz = u32::MAX;
        let mut first = true;
        for &v in words.iter().chain(std::iter::once(&marker)) {
            let key = (v & 0xffff_ffff & key_mask) as usize;
            if first {
                first = false;
                stored[0] = v;
                indices[key] = 0;
                w.write(v, width);
                continue;
            }
            let cand = indices[key];
            let (prev_idx, xor, tz) = if index - cand < p {
                let t = v ^ stored[cand % p];
                let tz = if t == 0 { width } else { t.trailing_zeros() };
                if tz > threshold {
                    (cand % p, t, tz)
                } else {
                    (index % p, stored[index % p] ^ v, tz)
                }
            } else {
                (index % p, stored[index % p] ^ v, 0)
            };
            if xor == 0 {
                w.write(prev_idx as u64, log2p + 2);
                stored_lz = width + 1;
            } else {
                let lz = xor.leading_zeros() - (64 - width);
                let (rl, code) = round_lead(lz);
                if tz > threshold {
                    let sig = width - rl - tz;
                    w.write(0b01, 2);
                    w.write(prev_idx as u64, log2p);
                    w.write(code, 3);
                    w.write(u64::from(sig), sw);
                    w.write(xor >> tz, sig);
                    stored_lz = width + 1;
                } else if rl == stored_lz {
                    w.write(0b10, 2);
                    w.write(xor, width - rl);
                } else {
                    stored_lz = rl;
                    w.write(0b11, 2);
                    w.write(code, 3);
                    w.write(xor, width - rl);
                }
            }
            index += 1;
            stored[index % p] = v;
            indices[key] = index;
        }
        let bits = w.bit_len();
        if bits.is_multiple_of(8) {
            w.write(0, 8);
        }
        (w.finish(), bits)
    }

    /// CHIMP stream of INT32/DATE values as the C++ writer produces it.
    pub fn encode_i32(values: &[i32]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|&v| u64::from(v as u32)).collect();
        encode_words(32, &words, MARKER_32_INT).0
    }

    /// CHIMP stream of INT64/TIMESTAMP values as the C++ writer produces it.
    pub fn encode_i64(values: &[i64]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|&v| v as u64).collect();
        encode_words(64, &words, MARKER_64_INT).0
    }

    /// CHIMP stream of FLOAT values (raw IEEE bits) as the C++ writer produces it.
    pub fn encode_f32(values: &[f32]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| u64::from(v.to_bits())).collect();
        encode_words(32, &words, MARKER_32_FLOAT).0
    }

    /// CHIMP stream of DOUBLE values (raw IEEE bits) as the C++ writer produces it.
    pub fn encode_f64(values: &[f64]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        encode_words(64, &words, MARKER_64_FLOAT).0
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::*;
    use crate::encoding::bits::BitWriter;
    use crate::encoding::test_util::hex;
    use proptest::prelude::*;

    fn dec_i32(data: &[u8], n: usize) -> Result<Vec<i32>> {
        let mut v = Vec::new();
        decode_i32(data, n, &mut v).map(|_| v)
    }
    fn dec_i64(data: &[u8], n: usize) -> Result<Vec<i64>> {
        let mut v = Vec::new();
        decode_i64(data, n, &mut v).map(|_| v)
    }
    fn dec_f32(data: &[u8], n: usize) -> Result<Vec<u32>> {
        let mut v = Vec::new();
        decode_f32(data, n, &mut v).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }
    fn dec_f64(data: &[u8], n: usize) -> Result<Vec<u64>> {
        let mut v = Vec::new();
        decode_f64(data, n, &mut v).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }

    #[test]
    fn test_decode_i64_spec_example() {
        let data = hex("000000000000000a 00 7c 00 00 00 00 1b 10 00 00 00 00 00 00 01 80");
        assert_eq!(dec_i64(&data, 3).unwrap(), vec![10, 10, 12]);
        assert_eq!(encode_i64(&[10, 10, 12]), data);
    }

    #[test]
    fn test_decode_f32_spec_example() {
        let data = hex("3f800000 00 41 0a 40 40");
        assert_eq!(dec_f32(&data, 2).unwrap(), vec![1.0f32.to_bits(); 2]);
        assert_eq!(encode_f32(&[1.0, 1.0]), data);
    }

    #[test]
    fn test_decode_i32_marker_inside_data_and_ring_reuse() {
        let mut vals = vec![i32::MIN, 3, i32::MIN, i32::MIN];
        // Values that repeat with a long period exercise the ring (case 00/01 far back).
        for i in 0..500 {
            vals.push((i % 70) * 0x1000);
        }
        vals.push(i32::MIN);
        let data = encode_i32(&vals);
        assert_eq!(dec_i32(&data, vals.len()).unwrap(), vals);
    }

    #[test]
    fn test_decode_f64_specials_and_runs() {
        let mut vals = vec![
            f64::from_bits(0x7ff8_0000_0000_0000),
            f64::from_bits(0x7ff0_0000_0000_0001),
            -0.0,
            0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from_bits(1),
            f64::MIN_POSITIVE / 3.0,
        ];
        vals.extend(std::iter::repeat_n(2.5, 300));
        vals.extend((0..300).map(|i| i as f64 * 0.25));
        let data = encode_f64(&vals);
        let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(dec_f64(&data, vals.len()).unwrap(), want);
    }

    #[test]
    fn test_decode_i32_zero_and_one_value() {
        assert!(dec_i32(&[], 0).unwrap().is_empty());
        let empty = encode_i32(&[]);
        assert_eq!(empty, hex("80000000 00"));
        assert!(dec_i32(&empty, 0).unwrap().is_empty());
        let one = encode_i32(&[-5]);
        assert_eq!(dec_i32(&one, 1).unwrap(), vec![-5]);
        assert!(dec_i32(&one, 0).is_err());
        assert!(dec_i32(&[], 1).is_err());
    }

    #[test]
    fn test_decode_i64_truncation_every_byte() {
        let vals: Vec<i64> = (0..60).map(|i| (i * i * 12345) ^ (i << 40)).collect();
        let words: Vec<u64> = vals.iter().map(|&v| v as u64).collect();
        let (data, bits) = encode_words(64, &words, MARKER_64_INT);
        let min_len = bits.div_ceil(8);
        for len in 0..data.len() {
            let r = dec_i64(&data[..len], vals.len());
            assert_eq!(r.is_ok(), len >= min_len, "prefix {len} of {}", data.len());
        }
    }

    #[test]
    fn test_decode_f32_truncation_every_byte() {
        let vals: Vec<f32> = (0..60).map(|i| (i % 7) as f32 * 1.5).collect();
        let words: Vec<u64> = vals.iter().map(|v| u64::from(v.to_bits())).collect();
        let (data, bits) = encode_words(32, &words, MARKER_32_FLOAT);
        let min_len = bits.div_ceil(8);
        for len in 0..data.len() {
            let r = dec_f32(&data[..len], vals.len());
            assert_eq!(r.is_ok(), len >= min_len, "prefix {len} of {}", data.len());
        }
    }

    #[test]
    fn test_decode_i32_hand_built_all_four_cases() {
        let mut w = BitWriter::new();
        w.write(0x0001_0000, 32); // slot 0
        w.write(0b11, 2); // new lead code 7 (24 zeros), 8 bits
        w.write(7, 3);
        w.write(5, 8); // -> 0x00010005, slot 1
        w.write(0b10, 2); // reuse 24 zeros
        w.write(3, 8); // -> 0x00010006, slot 2
        w.write(0b01, 2); // ring[0] ^ (0b01 << 30)
        w.write(0, 6);
        w.write(0, 3);
        w.write(2, 5);
        w.write(0b01, 2); // -> 0x40010000, slot 3
        w.write(0b00, 2); // ring[2]
        w.write(2, 6); // -> 0x00010006, slot 4
        w.write(0b11, 2); // marker: lead 0, 32 bits
        w.write(0, 3);
        w.write(0x8001_0006, 32);
        let data = w.finish();
        let want = vec![0x0001_0000, 0x0001_0005, 0x0001_0006, 0x4001_0000, 0x0001_0006];
        assert_eq!(dec_i32(&data, 5).unwrap(), want);
        // The writer reaches the marker through case 01 instead (ring slot 3 shares its
        // hash key); its stream decodes to the same values.
        assert_eq!(dec_i32(&encode_i32(&want), 5).unwrap(), want);
    }

    #[test]
    fn test_decode_i32_index_of_unwritten_slot() {
        let mut w = BitWriter::new();
        w.write(10, 32);
        w.write(0b00, 2);
        w.write(5, 6); // only slot 0 is filled
        w.write(0, 30);
        let err = dec_i32(&w.finish(), 2).unwrap_err().to_string();
        assert!(err.contains("CHIMP INT32 stream") && err.contains("ring index 5"), "{err}");
    }

    #[test]
    fn test_decode_i32_reuse_without_stored_lz() {
        let mut w = BitWriter::new();
        w.write(10, 32);
        w.write(0b10, 2);
        w.write(0, 40);
        assert!(dec_i32(&w.finish(), 2).is_err());
        // '11' then '00' then '10': the 00 invalidated the stored count.
        let mut w = BitWriter::new();
        w.write(10, 32);
        w.write(0b11, 2);
        w.write(7, 3);
        w.write(6, 8); // 10 ^ 6 = 12
        w.write(0b00, 2);
        w.write(1, 6);
        w.write(0b10, 2);
        w.write(0, 40);
        let err = dec_i32(&w.finish(), 4).unwrap_err().to_string();
        assert!(err.contains("leading-zero"), "{err}");
    }

    #[test]
    fn test_decode_i32_case01_lead_plus_sig_exceeds_width() {
        let mut w = BitWriter::new();
        w.write(10, 32);
        w.write(0b01, 2);
        w.write(0, 6); // idx 0
        w.write(7, 3); // lead 24
        w.write(20, 5); // sig 20 -> 44 > 32
        w.write(0, 40);
        assert!(dec_i32(&w.finish(), 2).is_err());
    }

    #[test]
    fn test_decode_i64_trailing_garbage() {
        let good = encode_i64(&[10, 10, 12]);
        let mut bad = good.clone();
        bad.push(0x80);
        assert!(dec_i64(&bad, 3).is_err());
        let mut bad = good.clone();
        bad.extend([0, 0]);
        assert!(dec_i64(&bad, 3).is_err());
        let mut ok = good;
        ok.push(0);
        assert_eq!(dec_i64(&ok, 3).unwrap(), vec![10, 10, 12]);
    }

    fn f32s() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            Just(f32::NAN),
            Just(-0.0f32),
            Just(f32::INFINITY),
            Just(f32::NEG_INFINITY),
            (0u32..16).prop_map(f32::from_bits),
            (0u32..8).prop_map(|i| i as f32 * 0.5),
        ]
    }

    fn f64s() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<u64>().prop_map(f64::from_bits),
            Just(f64::NAN),
            Just(-0.0f64),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            (0u64..16).prop_map(f64::from_bits),
            (0u32..8).prop_map(|i| i as f64 * 0.5),
        ]
    }

    proptest! {
        #[test]
        fn test_decode_i32_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<i32>(), Just(i32::MIN), Just(0), -3i32..3, (0i32..8).prop_map(|i| i << 20)], 0..400)) {
            let data = encode_i32(&vals);
            prop_assert_eq!(dec_i32(&data, vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<i64>(), Just(i64::MIN), Just(0), -3i64..3, (0i64..8).prop_map(|i| i << 40)], 0..400)) {
            let data = encode_i64(&vals);
            prop_assert_eq!(dec_i64(&data, vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_f32_round_trip(vals in proptest::collection::vec(f32s(), 0..400)) {
            let data = encode_f32(&vals);
            let want: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f32(&data, vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_f64_round_trip(vals in proptest::collection::vec(f64s(), 0..400)) {
            let data = encode_f64(&vals);
            let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f64(&data, vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_i64_arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64), n in 0usize..100) {
            let _ = dec_i64(&data, n);
            let _ = dec_f32(&data, n);
        }
    }
}
