//! GORILLA_V1 decoder (legacy, written only by Java) for FLOAT and DOUBLE.
//!
//! The first value is 4 (FLOAT) / 8 (DOUBLE) bytes of IEEE bits in **little-endian** order;
//! an MSB-first bit stream follows with, per further value, `'0'` (repeat), `'10'` + `b` bits
//! where `b = W − lz(prev) − tz(prev)` is derived from the **previous value** (not a stored
//! XOR window) and the bits are XORed in at `tz(prev)`, or `'11'` + `L` (5|6 bits) + `N` (6|7
//! bits) + `N` bits XORed in at `W − L − N`. After the last value the writer encodes a NaN and
//! zero-pads the current byte (no extra byte). NaN is legal data, so decoding is driven by the
//! value count; afterwards a NaN, zero padding and nothing else must follow.

use crate::encoding::bits::BitReader;
use crate::encoding::gorilla::retag;
use crate::error::{Result, TsFileError};

/// Decode `count` GORILLA_V1 FLOAT values, appending them to `out`.
// why: a 32-bit stream's words are read with 32 bits, so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    decode_words::<32, _, _>(data, count, out, "GORILLA_V1 FLOAT stream", |w| f32::from_bits(w as u32))
}

/// Decode `count` GORILLA_V1 DOUBLE values, appending them to `out`.
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_words::<64, _, _>(data, count, out, "GORILLA_V1 DOUBLE stream", f64::from_bits)
}

/// True when the `W`-bit pattern is a NaN (any payload).
#[inline]
// why: only a 32-bit word (W == 32, read with 32 bits) is cast, which keeps every bit.
#[allow(clippy::cast_possible_truncation)]
fn is_nan<const W: u32>(w: u64) -> bool {
    if W == 32 {
        f32::from_bits(w as u32).is_nan()
    } else {
        f64::from_bits(w).is_nan()
    }
}

fn decode_words<const W: u32, T, F: Fn(u64) -> T>(
    data: &[u8],
    count: usize,
    out: &mut Vec<T>,
    what: &'static str,
    conv: F,
) -> Result<()> {
    decode_inner::<W, T, F>(data, count, out, what, conv).map_err(|e| retag(e, what))
}

fn decode_inner<const W: u32, T, F: Fn(u64) -> T>(
    data: &[u8],
    count: usize,
    out: &mut Vec<T>,
    what: &'static str,
    conv: F,
) -> Result<()> {
    if count == 0 && data.is_empty() {
        return Ok(());
    }
    let nbytes = (W / 8) as usize;
    let Some((head, rest)) = data.split_at_checked(nbytes) else {
        return Err(TsFileError::corrupt(
            what,
            None,
            format!("first value needs {nbytes} bytes at byte 0, {} available", data.len()),
        ));
    };
    let mut le = [0u8; 8];
    for (d, s) in le.iter_mut().zip(head) {
        *d = *s;
    }
    let mut value = u64::from_le_bytes(le);
    out.reserve(count.min(rest.len().saturating_mul(8).saturating_add(1)));
    let mut r = BitReader::new(rest);
    if count > 0 {
        out.push(conv(value));
        for _ in 1..count {
            value = next_word::<W>(&mut r, value, what)?;
            out.push(conv(value));
        }
        value = next_word::<W>(&mut r, value, what)?;
    }
    if !is_nan::<W>(value) {
        return Err(TsFileError::corrupt(
            what,
            None,
            format!(
                "expected the NaN end marker after {count} values, found {value:#x} (ending at \
                 bit {} after the first value)",
                r.bit_position()
            ),
        ));
    }
    crate::encoding::gorilla::check_end(rest, r.bit_position(), what, false)
}

#[inline(always)]
fn next_word<const W: u32>(r: &mut BitReader<'_>, prev: u64, what: &'static str) -> Result<u64> {
    if !r.read_bit()? {
        return Ok(prev);
    }
    let start = r.bit_position() - 1;
    if !r.read_bit()? {
        // Window of the previous value itself.
        let (lz, tz) = if prev == 0 { (W, W) } else { (prev.leading_zeros() - (64 - W), prev.trailing_zeros()) };
        let Some(b) = W.checked_sub(lz + tz).filter(|&b| b > 0) else {
            return Err(TsFileError::corrupt(
                what,
                None,
                format!("control '10' at bit {start} but the previous value {prev:#x} has no window"),
            ));
        };
        return Ok(prev ^ (r.read(b)? << tz));
    }
    let (lw, nw): (u32, u32) = if W == 32 { (5, 6) } else { (6, 7) };
    let header = r.read(lw + nw)?;
    // why: the header has lw + nw bits, so both fields have at most 7 bits.
    #[allow(clippy::cast_possible_truncation)]
    let (l, n) = ((header >> nw) as u32, (header & ((1u64 << nw) - 1)) as u32);
    if l + n > W || n == 0 {
        // A changed value has at least one significant bit; 0 would also shift by W.
        return Err(TsFileError::corrupt(
            what,
            None,
            format!("at bit {start}: leading zeros {l} and significant bits {n} do not fit {W} bits"),
        ));
    }
    Ok(prev ^ (r.read(n)? << (W - l - n)))
}

/// Test-only GORILLA_V1 encoders reproducing the Java writer.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::bits::BitWriter;

    /// Encode `width`-bit words (32 or 64) as the Java writer does, ending with `nan` and
    /// zero padding.
    pub fn encode_words(width: u32, words: &[u64], nan: u64) -> Vec<u8> {
        let (lw, nw): (u32, u32) = if width == 32 { (5, 6) } else { (6, 7) };
        let mut head: Vec<u8> = Vec::new();
        let mut w = BitWriter::new();
        let mut prev: Option<u64> = None;
        let win = |v: u64| -> (u32, u32) {
            if v == 0 {
                (width, width)
            } else {
                (v.leading_zeros() - (64 - width), v.trailing_zeros())
            }
        };
        for &v in words.iter().chain(std::iter::once(&nan)) {
            let Some(p) = prev else {
                head.extend_from_slice(&v.to_le_bytes()[..(width / 8) as usize]);
                prev = Some(v);
                continue;
            };
            prev = Some(v);
            let x = p ^ v;
            if x == 0 {
                w.write_bit(false);
                continue;
            }
            let (plz, ptz) = win(p);
            let (xlz, xtz) = win(x);
            if xlz >= plz && xtz >= ptz {
                w.write(0b10, 2);
                w.write(x >> ptz, width - plz - ptz);
            } else {
                let n = width - xlz - xtz;
                w.write(0b11, 2);
                w.write(u64::from(xlz), lw);
                w.write(u64::from(n), nw);
                w.write(x >> xtz, n);
            }
        }
        head.extend(w.finish());
        head
    }

    /// GORILLA_V1 stream of FLOAT values (Java writes canonical NaN bits for NaN).
    pub fn encode_f32(values: &[f32]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| u64::from(v.to_bits())).collect();
        encode_words(32, &words, 0x7fc0_0000)
    }

    /// GORILLA_V1 stream of DOUBLE values.
    pub fn encode_f64(values: &[f64]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        encode_words(64, &words, 0x7ff8_0000_0000_0000)
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::*;
    use crate::encoding::bits::BitWriter;
    use crate::encoding::test_util::hex;
    use proptest::prelude::*;

    fn dec_f32(data: &[u8], n: usize) -> Result<Vec<u32>> {
        let mut v = Vec::new();
        decode_f32(data, n, &mut v).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }
    fn dec_f64(data: &[u8], n: usize) -> Result<Vec<u64>> {
        let mut v = Vec::new();
        decode_f64(data, n, &mut v).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }

    #[test]
    fn test_decode_f32_spec_example() {
        let data = hex("00 00 80 3f | 61 23 ff 11 1f e0".replace('|', "").as_str());
        assert_eq!(dec_f32(&data, 3).unwrap(), vec![0x3f80_0000, 0x3f80_0000, 0x4000_0000]);
        assert_eq!(encode_f32(&[1.0, 1.0, 2.0]), data);
    }

    #[test]
    fn test_decode_f32_case_10_uses_previous_value_window() {
        // prev = 1.0 (0x3f800000: lz 2, tz 23) -> '10' carries 32-2-23 = 7 bits at << 23.
        let mut w = BitWriter::new();
        w.write(0b10, 2);
        w.write(0b000_0001, 7); // xor 1 << 23 -> 0x3f000000 = 0.5
                                // NaN marker via '11': xor = 0x3f000000 ^ 0x7fc00000 = 0x40c00000 (lz 1, tz 22, n 9)
        w.write(0b11, 2);
        w.write(1, 5);
        w.write(9, 6);
        w.write(0x40c0_0000 >> 22, 9);
        let mut data = 1.0f32.to_bits().to_le_bytes().to_vec();
        data.extend(w.finish());
        assert_eq!(dec_f32(&data, 2).unwrap(), vec![0x3f80_0000, 0x3f00_0000]);
        assert_eq!(encode_f32(&[1.0, 0.5]), data);
    }

    #[test]
    fn test_decode_f64_nan_data_zero_and_one_value() {
        let mut vals = vec![f64::NAN, 1.5, f64::NAN, f64::NAN, -0.0, f64::INFINITY, f64::from_bits(3)];
        vals.extend(std::iter::repeat_n(-7.25, 500));
        let data = encode_f64(&vals);
        let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(dec_f64(&data, vals.len()).unwrap(), want);
        assert!(dec_f64(&[], 0).unwrap().is_empty());
        let empty = encode_f64(&[]);
        assert_eq!(empty.len(), 8);
        assert!(dec_f64(&empty, 0).unwrap().is_empty());
        let one = encode_f64(&[2.0]);
        assert_eq!(dec_f64(&one, 1).unwrap(), vec![2.0f64.to_bits()]);
        assert!(dec_f64(&[], 1).is_err());
    }

    #[test]
    fn test_decode_f32_truncation_every_byte() {
        let vals: Vec<f32> = (0..50).map(|i| (i as f32) * 1.25 - 7.0).collect();
        let data = encode_f32(&vals);
        for len in 0..data.len() {
            assert!(dec_f32(&data[..len], vals.len()).is_err(), "prefix {len}");
        }
        assert!(dec_f32(&data, vals.len()).is_ok());
    }

    #[test]
    fn test_decode_f64_zero_significant_bits_is_an_error() {
        // First value 0, then '11' with L = 0 and N = 0: would shift a word by 64 bits
        // (found by the arbitrary-bytes property test).
        let mut out = Vec::new();
        let e = decode_f64(&[0, 0, 0, 0, 0, 0, 0, 0, 192, 0], 1 + 1, &mut out).unwrap_err();
        assert!(e.to_string().contains("significant bits 0"), "{e}");
        let mut out = Vec::new();
        assert!(decode_f32(&[0, 0, 0, 0, 192, 0], 2, &mut out).is_err());
    }

    #[test]
    fn test_decode_f32_invalid_fields() {
        // '11' with L + N > 32.
        let mut w = BitWriter::new();
        w.write(0b11, 2);
        w.write(20, 5);
        w.write(20, 6);
        w.write(0, 40);
        let mut data = 1.0f32.to_bits().to_le_bytes().to_vec();
        data.extend(w.finish());
        assert!(dec_f32(&data, 2).is_err());
        // '10' after a zero value (no window).
        let mut data = 0u32.to_le_bytes().to_vec();
        data.extend([0b1000_0000, 0, 0, 0, 0]);
        let err = dec_f32(&data, 2).unwrap_err().to_string();
        assert!(err.contains("GORILLA_V1 FLOAT stream") && err.contains("window"), "{err}");
        // Missing NaN marker (stream ends with a repeat).
        let mut data = 1.0f32.to_bits().to_le_bytes().to_vec();
        data.push(0);
        assert!(dec_f32(&data, 1).is_err());
        // Extra byte after the padded marker (V1 writers never add one).
        let mut data = encode_f32(&[1.0, 2.0]);
        data.push(0);
        assert!(dec_f32(&data, 2).is_err());
        // Non-zero padding.
        let mut data = encode_f32(&[1.0, 1.0, 2.0]);
        *data.last_mut().unwrap() |= 1;
        assert!(dec_f32(&data, 3).is_err());
    }

    fn f32s() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            Just(f32::NAN),
            Just(-0.0f32),
            Just(0.0f32),
            Just(f32::INFINITY),
            Just(f32::NEG_INFINITY),
            (0u32..16).prop_map(f32::from_bits),
            (0u32..8).prop_map(|i| i as f32 * 0.5),
        ]
    }

    proptest! {
        #[test]
        fn test_decode_f32_round_trip(vals in proptest::collection::vec(f32s(), 0..300)) {
            let data = encode_f32(&vals);
            let want: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f32(&data, vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_f64_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<u64>().prop_map(f64::from_bits), Just(f64::NAN), Just(0.0f64),
                        Just(-0.0f64), Just(f64::INFINITY), (0u64..16).prop_map(f64::from_bits)],
            0..300)) {
            let data = encode_f64(&vals);
            let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f64(&data, vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_f64_arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64), n in 0usize..100) {
            let _ = dec_f64(&data, n);
            let _ = dec_f32(&data, n);
        }
    }
}
