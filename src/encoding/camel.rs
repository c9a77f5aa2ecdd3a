//! CAMEL decoder (DOUBLE only).
//!
//! The stream is one or more blocks (writers emit one per page): a zig-zag VarInt `nbits`
//! followed by `ceil(nbits / 8)` bytes holding an MSB-first bit stream, zero-padded. Inside a
//! block the first value is 64 raw IEEE bits; every further value is `sign(1) type(1)` and
//! either **type 1 (decimal)**: integer part as a delta `varlong` against the previous integer
//! part, `decimal count − 1` (4 bits), an XOR flag bit with `count` high mantissa bits, and a
//! `varlong` remainder, rebuilt as `±(int·10^c + dec) / 10^c`; or **type 0 (XOR)**: Gorilla
//! style on the 64-bit pattern (`0` repeat, `10` reuse the window, `11`, lz(6), (sig−1)(6)
//! and sig bits), XORed against the previous *signed* value's bits while the payload is
//! `|value|`. `varlong` is zig-zag in groups of 7 data bits followed by a continuation bit.
//! Values are read until `nbits` are used; the count is not stored, so it must equal the
//! external count.
//!
//! NaN is written through the decimal path (integer part 0, decimal 0) and reads back as 0.0
//! (writer loss, as in the reference readers). Unlike the C++ reader, the XOR reference after
//! such a value is the canonical NaN the writer used, so XOR-coded values that follow a NaN
//! (e.g. ±inf) decode as written instead of being corrupted.

use crate::encoding::bits::BitReader;
use crate::encoding::gorilla::retag;
use crate::error::{Result, TsFileError};

const WHAT: &str = "CAMEL DOUBLE stream";
const SIGN: u64 = 1 << 63;
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;
/// Largest decimal count a reader accepts (writers use at most 10).
const MAX_DECIMALS: u64 = 15;

/// Decode `count` CAMEL-encoded DOUBLE values, appending them to `out`.
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_inner(data, count, out).map_err(|e| retag(e, WHAT))
}

/// The bit pattern with NaN canonicalised (Java `doubleToLongBits`).
#[inline]
fn canonical_bits(v: f64) -> u64 {
    if v.is_nan() {
        CANONICAL_NAN
    } else {
        v.to_bits()
    }
}

/// 10^c for c = 1..=15, exact in `f64`.
#[inline]
fn pow10(c: u64) -> f64 {
    let mut p: i64 = 1;
    for _ in 0..c {
        p = p.wrapping_mul(10);
    }
    p as f64
}

/// LEB128 `u32` at the start of `data` and its length in bytes.
fn read_uvarint32(data: &[u8]) -> Option<(u32, usize)> {
    let mut v: u64 = 0;
    for (i, &b) in data.iter().enumerate().take(5) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(v).ok().map(|v| (v, i + 1));
        }
    }
    None
}

fn decode_inner(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    // Every value after the first of a block takes at least 2 bits.
    out.reserve(count.min(data.len().saturating_mul(4)));
    let mut pos = 0usize;
    let mut produced = 0usize;
    while pos < data.len() {
        let rest = data.get(pos..).unwrap_or(&[]);
        let Some((zz, used)) = read_uvarint32(rest) else {
            return Err(TsFileError::corrupt(WHAT, None, format!("invalid or truncated VarInt block length at byte {pos}")));
        };
        let nbits = ((zz >> 1) as i32) ^ -((zz & 1) as i32);
        if nbits <= 0 {
            return Err(TsFileError::corrupt(WHAT, None, format!("block at byte {pos} declares {nbits} bits")));
        }
        let nbits = nbits as usize;
        let start = pos + used;
        let nbytes = nbits.div_ceil(8);
        let Some(block) = data.get(start..start.saturating_add(nbytes)) else {
            return Err(TsFileError::corrupt(
                WHAT,
                None,
                format!("block at byte {start} needs {nbytes} bytes, {} available", data.len() - start.min(data.len())),
            ));
        };
        decode_block(block, nbits, start, count, &mut produced, out)?;
        pos = start + nbytes;
    }
    if produced != count {
        return Err(TsFileError::corrupt(WHAT, None, format!("stream holds {produced} values, {count} expected")));
    }
    Ok(())
}

/// Decode one block of `nbits` bits (`block` is exactly `ceil(nbits / 8)` bytes starting at
/// byte `at` of the stream).
fn decode_block(block: &[u8], nbits: usize, at: usize, count: usize, produced: &mut usize, out: &mut Vec<f64>) -> Result<()> {
    let mut r = BitReader::new(block);
    let push = |v: f64, produced: &mut usize, out: &mut Vec<f64>| -> Result<()> {
        if *produced >= count {
            return Err(TsFileError::corrupt(
                WHAT,
                None,
                format!("block at byte {at} holds more than the {count} expected values"),
            ));
        }
        *produced += 1;
        out.push(v);
        Ok(())
    };
    if nbits < 64 {
        return Err(TsFileError::corrupt(WHAT, None, format!("block at byte {at} has {nbits} bits, fewer than its first value")));
    }
    let first = f64::from_bits(r.read(64)?);
    push(first, produced, out)?;
    // Java `(long)` cast: toward zero, saturating, NaN -> 0 (Rust `as` does the same).
    // why: dropping the fraction is the writer's predictor (the Java `(long)` cast above).
    #[allow(clippy::cast_possible_truncation)]
    let mut int_prev: i64 = first as i64;
    let mut prev_bits = canonical_bits(first);
    let mut window: Option<(u32, u32)> = None;
    while r.bit_position() < nbits {
        let vstart = r.bit_position();
        let sign = r.read_bit()?;
        let (value, xor_ref) = if r.read_bit()? {
            let abs = read_decimal(&mut r, &mut int_prev, vstart, at)?;
            let value = if sign { -abs } else { abs };
            // A decimal of magnitude 0 can only come from a NaN (the writer codes 0.0 with the
            // XOR path): it reads back as 0.0, but the writer's XOR reference is the canonical
            // NaN, so use that to keep the following XOR-coded values (e.g. ±inf) intact.
            (value, if abs == 0.0 { CANONICAL_NAN } else { canonical_bits(value) })
        } else {
            let bits = read_xor(&mut r, prev_bits, &mut window, vstart, at)?;
            let value = f64::from_bits(if sign { bits ^ SIGN } else { bits });
            (value, canonical_bits(value))
        };
        if r.bit_position() > nbits {
            return Err(TsFileError::corrupt(
                WHAT,
                None,
                format!("value at bit {vstart} of the block at byte {at} runs past its {nbits} bits"),
            ));
        }
        push(value, produced, out)?;
        prev_bits = xor_ref;
    }
    let pad = u32::try_from(block.len() * 8 - nbits)
        .map_err(|_| TsFileError::corrupt(WHAT, None, format!("block at byte {at}: {nbits} bits in {} bytes", block.len())))?;
    if r.read(pad)? != 0 {
        return Err(TsFileError::corrupt(WHAT, None, format!("non-zero padding after bit {nbits} of the block at byte {at}")));
    }
    Ok(())
}

/// Zig-zag `i64` in groups of 7 data bits, each followed by a continuation bit.
fn read_varlong(r: &mut BitReader<'_>, at: usize) -> Result<i64> {
    let start = r.bit_position();
    let mut result: u64 = 0;
    let mut shift = 0u32;
    loop {
        let group = r.read(8)?;
        result |= (group >> 1) << shift;
        shift += 7;
        if group & 1 == 0 {
            break;
        }
        if shift >= 64 {
            return Err(TsFileError::corrupt(
                WHAT,
                None,
                format!("varlong at bit {start} of the block at byte {at} is longer than 10 groups"),
            ));
        }
    }
    Ok(((result >> 1) as i64) ^ -((result & 1) as i64))
}

/// A type-1 (decimal) absolute value; updates the integer-part predictor.
fn read_decimal(r: &mut BitReader<'_>, int_prev: &mut i64, vstart: usize, at: usize) -> Result<f64> {
    *int_prev = int_prev.wrapping_add(read_varlong(r, at)?);
    let c = r.read(4)? + 1;
    if c > MAX_DECIMALS {
        return Err(TsFileError::corrupt(
            WHAT,
            None,
            format!(
                "decimal count {c} > {MAX_DECIMALS} in the value at bit {vstart} of the block \
                 at byte {at}"
            ),
        ));
    }
    let has_xor = r.read_bit()?;
    // why: c <= MAX_DECIMALS (checked above).
    #[allow(clippy::cast_possible_truncation)]
    let hi = if has_xor { r.read(c as u32)? } else { 0 };
    let m = read_varlong(r, at)?;
    let p = pow10(c);
    let frac = if has_xor {
        let base = m as f64 / p + 1.0;
        f64::from_bits((hi << (52 - c)) ^ canonical_bits(base)) - 1.0
    } else {
        m as f64 / p
    };
    // Java Math.round: floor(x + 0.5) cast to long (saturating, NaN -> 0).
    // why: the saturating float-to-integer cast is Java's Math.round, which the writer used.
    #[allow(clippy::cast_possible_truncation)]
    let dec = (frac * p + 0.5).floor() as i64 as f64;
    let ip = *int_prev as f64;
    Ok(if *int_prev >= 0 { (ip * p + dec) / p } else { -(ip * p + dec) / p })
}

/// A type-0 (XOR) bit pattern of `|value|`.
fn read_xor(r: &mut BitReader<'_>, prev_bits: u64, window: &mut Option<(u32, u32)>, vstart: usize, at: usize) -> Result<u64> {
    if !r.read_bit()? {
        return Ok(prev_bits);
    }
    if !r.read_bit()? {
        let Some((lz, tz)) = *window else {
            return Err(TsFileError::corrupt(
                WHAT,
                None,
                format!(
                    "value at bit {vstart} of the block at byte {at} reuses an XOR window but \
                     none is stored"
                ),
            ));
        };
        return Ok(prev_bits ^ (r.read(64 - lz - tz)? << tz));
    }
    let header = r.read(12)?;
    // why: a 12-bit header shifted right by 6 is below 64.
    #[allow(clippy::cast_possible_truncation)]
    let lz = (header >> 6) as u32;
    let sig = (header & 0x3f) as u32 + 1;
    if lz + sig > 64 {
        return Err(TsFileError::corrupt(
            WHAT,
            None,
            format!(
                "value at bit {vstart} of the block at byte {at}: leading zeros {lz} + \
                 significant bits {sig} exceed 64"
            ),
        ));
    }
    let tz = 64 - lz - sig;
    *window = Some((lz, tz));
    Ok(prev_bits ^ (r.read(sig)? << tz))
}

/// Test-only CAMEL encoder reproducing the C++ writer.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use super::canonical_bits;
    use crate::encoding::bits::BitWriter;

    /// Java `Math.round`.
    fn java_round(x: f64) -> i64 {
        if x.is_nan() {
            0
        } else {
            (x + 0.5).floor() as i64
        }
    }

    fn write_varlong(w: &mut BitWriter, v: i64) {
        let mut u = ((v << 1) ^ (v >> 63)) as u64;
        while u & !0x7f != 0 {
            w.write(u & 0x7f, 7);
            w.write_bit(true);
            u >>= 7;
        }
        w.write(u & 0x7f, 7);
        w.write_bit(false);
    }

    struct Encoder {
        w: BitWriter,
        int_prev: i64,
        prev_bits: u64,
        window: Option<(u32, u32)>,
    }

    impl Encoder {
        fn gorilla(&mut self, value: f64) {
            let x = canonical_bits(value) ^ self.prev_bits;
            if x == 0 {
                self.w.write_bit(false);
                return;
            }
            self.w.write_bit(true);
            let (lz, tz) = (x.leading_zeros(), x.trailing_zeros());
            match self.window {
                Some((wl, wt)) if lz >= wl && tz >= wt => {
                    self.w.write_bit(false);
                    self.w.write(x >> wt, 64 - wl - wt);
                }
                _ => {
                    self.w.write_bit(true);
                    let sig = 64 - lz - tz;
                    self.w.write(u64::from(lz), 6);
                    self.w.write(u64::from(sig - 1), 6);
                    self.w.write(x >> tz, sig);
                    self.window = Some((lz, tz));
                }
            }
        }

        fn value(&mut self, v: f64) {
            self.w.write(canonical_bits(v) >> 63, 1);
            let value = v.abs();
            if value > i64::MAX as f64 || value == 0.0 || value.log10().floor().abs() > 10.0 {
                self.w.write_bit(false);
                self.gorilla(value);
                return;
            }
            let int_part = value as i64;
            let digits = int_part.unsigned_abs().to_string().len() as i64;
            let mut factor = 1.0f64;
            let mut dc: i64 = 0;
            while (value * factor - java_round(value * factor) as f64).abs() > 0.0 {
                factor *= 10.0;
                dc += 1;
                if digits + dc > 10 {
                    break;
                }
            }
            let dc = dc.max(1);
            if dc + digits > 10 {
                self.w.write_bit(false);
                self.gorilla(value);
                return;
            }
            let pow = 10i64.pow(dc as u32);
            let dv = java_round(value * pow as f64) % pow;
            self.w.write_bit(true);
            write_varlong(&mut self.w, int_part.wrapping_sub(self.int_prev));
            self.int_prev = int_part;
            self.w.write((dc - 1) as u64, 4);
            let threshold = 5i64.pow(dc as u32);
            let mut m = i64::from(dv as i32);
            if dv >= threshold {
                self.w.write_bit(true);
                m = i64::from((dv % threshold) as i32);
                let x = canonical_bits(dv as f64 / pow as f64 + 1.0) ^ canonical_bits(m as f64 / pow as f64 + 1.0);
                self.w.write(x >> (52 - dc), dc as u32);
            } else {
                self.w.write_bit(false);
            }
            write_varlong(&mut self.w, m);
        }
    }

    /// Bits of one CAMEL block for `values` (non-empty), before the length prefix.
    pub fn encode_block_bits(values: &[f64]) -> (Vec<u8>, usize) {
        let Some((&first, rest)) = values.split_first() else {
            return (Vec::new(), 0);
        };
        let mut e = Encoder { w: BitWriter::new(), int_prev: first as i64, prev_bits: canonical_bits(first), window: None };
        e.w.write(first.to_bits(), 64);
        for &v in rest {
            e.value(v);
            e.prev_bits = canonical_bits(v);
        }
        let n = e.w.bit_len();
        (e.w.finish(), n)
    }

    /// CAMEL stream of DOUBLE values as the C++ writer produces it (one block; nothing for no
    /// values).
    pub fn encode_f64(values: &[f64]) -> Vec<u8> {
        let (bits, n) = encode_block_bits(values);
        if n == 0 {
            return Vec::new();
        }
        let n = n as i32;
        let mut zz = ((n << 1) ^ (n >> 31)) as u32;
        let mut out = Vec::new();
        while zz >= 0x80 {
            out.push((zz as u8 & 0x7f) | 0x80);
            zz >>= 7;
        }
        out.push(zz as u8);
        out.extend(bits);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::*;
    use crate::encoding::bits::BitWriter;
    use crate::encoding::test_util::hex;
    use proptest::prelude::*;

    fn dec(data: &[u8], n: usize) -> Result<Vec<u64>> {
        let mut v = Vec::new();
        decode_f64(data, n, &mut v).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// A stream with one block made of hand-written bits.
    fn block(f: impl FnOnce(&mut BitWriter)) -> Vec<u8> {
        let mut w = BitWriter::new();
        f(&mut w);
        let n = w.bit_len() as u32;
        let mut out = vec![];
        let mut zz = n << 1;
        while zz >= 0x80 {
            out.push((zz as u8 & 0x7f) | 0x80);
            zz >>= 7;
        }
        out.push(zz as u8);
        out.extend(w.finish());
        out
    }

    #[test]
    fn test_decode_f64_spec_example() {
        let data = hex("e0 01 | 3ff8000000000000 41 06 80 62 82 04");
        assert_eq!(dec(&data, 3).unwrap(), bits(&[1.5, 2.25, -7.01]));
        assert_eq!(encode_f64(&[1.5, 2.25, -7.01]), data);
    }

    #[test]
    fn test_decode_f64_nan_becomes_zero_and_specials_survive() {
        let vals = [
            3.25,
            f64::NAN,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            1e300,
            -1e-300,
            f64::from_bits(1),
            f64::from_bits(0xfff8_0000_0000_0001),
            12345.678,
        ];
        let data = encode_f64(&vals);
        let mut want = bits(&vals);
        // NaN (any sign or payload) reads back as +0.0; the -0.0 and ±inf after it are intact.
        want[1] = 0.0f64.to_bits();
        want[9] = 0.0f64.to_bits();
        assert_eq!(dec(&data, vals.len()).unwrap(), want);
        let data = encode_f64(&[1.0, f64::NAN, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY]);
        let want = bits(&[1.0, 0.0, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY]);
        assert_eq!(dec(&data, 5).unwrap(), want);
        // A NaN first value is raw bits: kept.
        let data = encode_f64(&[f64::from_bits(0x7ff0_0000_dead_beef), 1.0]);
        assert_eq!(dec(&data, 2).unwrap(), vec![0x7ff0_0000_dead_beef, 1.0f64.to_bits()]);
    }

    #[test]
    fn test_decode_f64_negative_and_decimal_values() {
        let mut vals: Vec<f64> = (-300..300).map(|i| i as f64 / 8.0 + (i % 7) as f64 / 100.0).collect();
        vals.extend(std::iter::repeat_n(-0.5, 200));
        vals.extend(std::iter::repeat_n(1e-300, 200));
        let data = encode_f64(&vals);
        assert_eq!(dec(&data, vals.len()).unwrap(), bits(&vals));
    }

    #[test]
    fn test_decode_f64_zero_one_and_two_blocks() {
        assert!(dec(&[], 0).unwrap().is_empty());
        assert!(dec(&[], 1).is_err());
        let one = encode_f64(&[-2.5]);
        assert_eq!(dec(&one, 1).unwrap(), bits(&[-2.5]));
        assert!(dec(&one, 0).is_err());
        assert!(dec(&one, 2).is_err());
        // Two blocks: state restarts in each.
        let mut two = encode_f64(&[1.5, 2.25]);
        two.extend(encode_f64(&[100.5, 0.0, 7.125]));
        assert_eq!(dec(&two, 5).unwrap(), bits(&[1.5, 2.25, 100.5, 0.0, 7.125]));
        assert!(dec(&two, 4).is_err());
        assert!(dec(&two, 6).is_err());
    }

    #[test]
    fn test_decode_f64_truncation_every_byte() {
        let vals: Vec<f64> = (0..80).map(|i| (i * 37 % 101) as f64 / 4.0 - 3.0).collect();
        let data = encode_f64(&vals);
        for len in 0..data.len() {
            assert!(dec(&data[..len], vals.len()).is_err(), "prefix {len}");
        }
        assert!(dec(&data, vals.len()).is_ok());
    }

    #[test]
    fn test_decode_f64_invalid_fields() {
        // nbits = 0 and negative.
        assert!(dec(&[0x00], 0).is_err());
        assert!(dec(&[0x01], 0).is_err());
        // Fewer than 64 bits.
        let data = block(|w| w.write(0, 10));
        assert!(dec(&data, 1).is_err());
        // Decimal count 16.
        let data = block(|w| {
            w.write(1.0f64.to_bits(), 64);
            w.write(0b01, 2);
            w.write(0, 8); // varlong 0
            w.write(15, 4); // c = 16
            w.write(0, 1);
            w.write(0, 8);
        });
        let err = dec(&data, 2).unwrap_err().to_string();
        assert!(err.contains("CAMEL DOUBLE stream") && err.contains("decimal count"), "{err}");
        // Varlong of 11 groups.
        let data = block(|w| {
            w.write(1.0f64.to_bits(), 64);
            w.write(0b01, 2);
            for _ in 0..11 {
                w.write(0xff, 8);
            }
            w.write(0, 16);
        });
        assert!(dec(&data, 2).is_err());
        // '10' without window.
        let data = block(|w| {
            w.write(1.0f64.to_bits(), 64);
            w.write(0b00, 2);
            w.write(0b10, 2);
            w.write(0, 20);
        });
        assert!(dec(&data, 2).is_err());
        // lz + sig > 64.
        let data = block(|w| {
            w.write(1.0f64.to_bits(), 64);
            w.write(0b00, 2);
            w.write(0b11, 2);
            w.write(60, 6);
            w.write(10, 6);
            w.write(0, 11);
        });
        assert!(dec(&data, 2).is_err());
        // A value running past nbits (into the padding).
        let mut data = block(|w| {
            w.write(1.0f64.to_bits(), 64);
            w.write(0b00, 2);
            w.write(0b1, 1); // '1' then the '0' of the window flag lies in the padding
        });
        assert!(dec(&data, 2).is_err());
        // Non-zero padding.
        let good = encode_f64(&[1.5, 2.25, -7.01]);
        data.clone_from(&good);
        *data.last_mut().unwrap() |= 1;
        assert!(dec(&data, 3).is_err());
        // Trailing garbage (parsed as another block).
        data.clone_from(&good);
        data.push(0);
        assert!(dec(&data, 3).is_err());
    }

    proptest! {
        #[test]
        fn test_decode_f64_round_trip(vals in proptest::collection::vec(prop_oneof![
            // Random patterns outside the decimal range always take the lossless XOR path
            // (inside it, a pattern that is not the double nearest to its short decimal can be
            // rounded by the writer's decimal path).
            any::<u64>().prop_map(f64::from_bits).prop_filter("XOR path only", |v| {
                !v.is_nan() && (v.abs() >= 1e11 || v.abs() < 1e-10)
            }),
            (-100_000i64..100_000, 0u32..6).prop_map(|(i, k)| i as f64 / 10f64.powi(k as i32)),
            Just(0.0f64), Just(-0.0f64), Just(f64::INFINITY), Just(f64::NEG_INFINITY),
            (0u64..16).prop_map(f64::from_bits),
        ], 1..200)) {
            let data = encode_f64(&vals);
            prop_assert_eq!(dec(&data, vals.len()).unwrap(), bits(&vals));
        }

        #[test]
        fn test_decode_f64_arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64), n in 0usize..100) {
            let _ = dec(&data, n);
        }
    }
}
