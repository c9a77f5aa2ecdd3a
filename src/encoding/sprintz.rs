//! SPRINTZ decoder (FIRE predictor + bit packing) for INT32/DATE, INT64/TIMESTAMP, FLOAT and
//! DOUBLE.
//!
//! A page is a concatenation of **blocks of 9 values**: `u8 w` (high bit clear, `w <= W`), the
//! first value (INT32: UVarInt of the `u32` pattern; INT64: `i64` BE; FLOAT/DOUBLE: 4/8 bytes
//! BE IEEE bits), then `BP(w, 8)` in `w` bytes holding eight mapped residuals. The remaining
//! 1..=8 values form one final **tail**: `u8 (0x80 | n)` then one RLE section (INT32/INT64) or
//! a GORILLA stream (FLOAT/DOUBLE) of the `n` raw values.
//!
//! Residual `m` (unsigned `W`-bit) un-maps to `e = (m + 1) / 2` when odd and `−(m / 2)` when
//! even. The FIRE predictor restarts at every block: `alpha = acc >> s`,
//! `v_i = v_{i−1} + ((alpha · delta) >> q) + e_i`, then `acc −= e_i > 0 ? −delta : delta`
//! (kept in 32 bits) and `delta = v_i − v_{i−1}`; `s, q = 2, 8` for W = 32 and `3, 16` for
//! W = 64, all sums wrapping, FLOAT/DOUBLE predicted on their IEEE bits. For W = 64 the product
//! `alpha · delta` follows [`SprintzProduct`]: wrapped to 64 bits (Java writer, as in IoTDB;
//! the default) or exact 128-bit, shifted, then truncated (C++ writer). Nothing in the bytes
//! tells them apart, and they decode differently as soon as the product leaves 64 bits
//! (DOUBLE values with fractions do almost at once: their bit patterns differ by ~2^45).
//! The read layer picks the rule per page from the page statistics
//! (`crate::read::check`).

use crate::encoding::bits::BitReader;
use crate::encoding::corrupt;
use crate::encoding::gorilla::retag;
use crate::encoding::{gorilla, rle, SprintzProduct};
use crate::error::{Result, TsFileError};

/// Decode `count` SPRINTZ-encoded INT32/DATE values, appending them to `out`.
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode::<I32>(data, count, out, SprintzProduct::default())
}

/// Decode `count` SPRINTZ-encoded INT64/TIMESTAMP values with the given FIRE product rule,
/// appending them to `out`.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>, product: SprintzProduct) -> Result<()> {
    decode::<I64>(data, count, out, product)
}

/// Decode `count` SPRINTZ-encoded FLOAT values (predicted on IEEE bits), appending them to
/// `out`.
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    decode::<F32>(data, count, out, SprintzProduct::default())
}

/// Decode `count` SPRINTZ-encoded DOUBLE values (predicted on IEEE bits) with the given FIRE
/// product rule, appending them to `out`.
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>, product: SprintzProduct) -> Result<()> {
    decode::<F64>(data, count, out, product)
}

/// One value type: how its first value, blocks and tail are stored.
trait Flavor {
    type Out;
    /// Word width W.
    const W: u32;
    /// Name for errors.
    const WHAT: &'static str;
    /// Parse the first value of a block at `data[pos..]`: its bits and the next position.
    fn first(data: &[u8], pos: usize) -> Result<(u64, usize)>;
    /// Decode the 9 values of a block from its first value and `w` packed bytes.
    fn block(first: u64, packed: &[u8], w: u32, product: SprintzProduct, out: &mut Vec<Self::Out>) -> Result<()>;
    /// Decode the `n` tail values from the rest of the stream.
    fn tail(rest: &[u8], n: usize, out: &mut Vec<Self::Out>) -> Result<()>;
}

/// Big-endian fixed-width first value of `n` bytes.
fn first_be(data: &[u8], pos: usize, n: usize, what: &str) -> Result<(u64, usize)> {
    let Some(b) = data.get(pos..pos.saturating_add(n)) else {
        return Err(corrupt(what, format!("first value at byte {pos} needs {n} bytes, {} available", data.len() - pos)));
    };
    Ok((b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)), pos + n))
}

struct I32;
struct I64;
struct F32;
struct F64;

impl Flavor for I32 {
    type Out = i32;
    const W: u32 = 32;
    const WHAT: &'static str = "SPRINTZ INT32 stream";
    fn first(data: &[u8], pos: usize) -> Result<(u64, usize)> {
        let mut v: u64 = 0;
        for i in 0..5 {
            let Some(&b) = data.get(pos + i) else {
                return Err(corrupt(Self::WHAT, format!("truncated UVarInt first value at byte {pos}")));
            };
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                if v > u64::from(u32::MAX) {
                    break;
                }
                return Ok((v, pos + i + 1));
            }
        }
        Err(corrupt(Self::WHAT, format!("UVarInt first value at byte {pos} exceeds 32 bits")))
    }
    fn block(first: u64, packed: &[u8], w: u32, _: SprintzProduct, out: &mut Vec<i32>) -> Result<()> {
        let first = u32::try_from(first).map_err(|_| corrupt(Self::WHAT, format!("first value {first} exceeds 32 bits")))?;
        block32(first, packed, w, out, |v| v as i32)
    }
    fn tail(rest: &[u8], n: usize, out: &mut Vec<i32>) -> Result<()> {
        rle::decode_i32(rest, n, out)
    }
}

impl Flavor for F32 {
    type Out = f32;
    const W: u32 = 32;
    const WHAT: &'static str = "SPRINTZ FLOAT stream";
    fn first(data: &[u8], pos: usize) -> Result<(u64, usize)> {
        first_be(data, pos, 4, Self::WHAT)
    }
    fn block(first: u64, packed: &[u8], w: u32, _: SprintzProduct, out: &mut Vec<f32>) -> Result<()> {
        let first = u32::try_from(first).map_err(|_| corrupt(Self::WHAT, format!("first value {first} exceeds 32 bits")))?;
        block32(first, packed, w, out, f32::from_bits)
    }
    fn tail(rest: &[u8], n: usize, out: &mut Vec<f32>) -> Result<()> {
        gorilla::decode_f32(rest, n, out)
    }
}

impl Flavor for I64 {
    type Out = i64;
    const W: u32 = 64;
    const WHAT: &'static str = "SPRINTZ INT64 stream";
    fn first(data: &[u8], pos: usize) -> Result<(u64, usize)> {
        first_be(data, pos, 8, Self::WHAT)
    }
    fn block(first: u64, packed: &[u8], w: u32, p: SprintzProduct, out: &mut Vec<i64>) -> Result<()> {
        match p {
            SprintzProduct::Exact128 => block64::<true, _>(first, packed, w, out, |v| v as i64),
            SprintzProduct::Wrapping64 => block64::<false, _>(first, packed, w, out, |v| v as i64),
        }
    }
    fn tail(rest: &[u8], n: usize, out: &mut Vec<i64>) -> Result<()> {
        rle::decode_i64(rest, n, out)
    }
}

impl Flavor for F64 {
    type Out = f64;
    const W: u32 = 64;
    const WHAT: &'static str = "SPRINTZ DOUBLE stream";
    fn first(data: &[u8], pos: usize) -> Result<(u64, usize)> {
        first_be(data, pos, 8, Self::WHAT)
    }
    fn block(first: u64, packed: &[u8], w: u32, p: SprintzProduct, out: &mut Vec<f64>) -> Result<()> {
        match p {
            SprintzProduct::Exact128 => block64::<true, _>(first, packed, w, out, f64::from_bits),
            SprintzProduct::Wrapping64 => block64::<false, _>(first, packed, w, out, f64::from_bits),
        }
    }
    fn tail(rest: &[u8], n: usize, out: &mut Vec<f64>) -> Result<()> {
        gorilla::decode_f64(rest, n, out)
    }
}

fn decode<F: Flavor>(data: &[u8], count: usize, out: &mut Vec<F::Out>, product: SprintzProduct) -> Result<()> {
    // A block stores 9 values in at least 3 bytes; a tail holds at most 8 values.
    out.reserve(count.min(data.len().saturating_mul(3).saturating_add(8)));
    let mut pos = 0usize;
    let mut remaining = count;
    while remaining > 0 {
        let at = pos;
        let Some(&h) = data.get(pos) else {
            return Err(corrupt(F::WHAT, format!("stream ends at byte {pos} with {remaining} of {count} values missing")));
        };
        pos += 1;
        if h & 0x80 != 0 {
            let n = usize::from(h & 0x7f);
            if !(1..=8).contains(&n) || n != remaining {
                return Err(corrupt(F::WHAT, format!("tail at byte {at} holds {n} values, {remaining} of {count} expected")));
            }
            let rest = data.get(pos..).unwrap_or(&[]);
            return F::tail(rest, n, out).map_err(|e| match e {
                e @ TsFileError::Corrupt { .. } => corrupt(F::WHAT, format!("tail at byte {pos} (offsets relative to it): {e}")),
                other => other,
            });
        }
        let w = u32::from(h);
        if w > F::W {
            return Err(corrupt(F::WHAT, format!("block at byte {at}: bit width {w} exceeds {}", F::W)));
        }
        if remaining < 9 {
            return Err(corrupt(F::WHAT, format!("block at byte {at} holds 9 values but only {remaining} of {count} remain")));
        }
        let (first, p) = F::first(data, pos)?;
        let Some(packed) = data.get(p..p + w as usize) else {
            return Err(corrupt(
                F::WHAT,
                format!("block at byte {at}: residuals at byte {p} need {w} bytes, {} available", data.len() - p),
            ));
        };
        F::block(first, packed, w, product, out).map_err(|e| retag(e, F::WHAT))?;
        pos = p + w as usize;
        remaining -= 9;
    }
    if pos != data.len() {
        return Err(corrupt(
            F::WHAT,
            format!("{} unexpected trailing byte(s) at byte {pos} after {count} values", data.len() - pos),
        ));
    }
    Ok(())
}

/// Un-map a residual read as an unsigned 32-bit value.
#[inline(always)]
fn unmap32(m: u32) -> i32 {
    if m & 1 == 1 {
        ((m >> 1) + 1) as i32
    } else {
        ((m >> 1) as i32).wrapping_neg()
    }
}

/// Un-map a residual read as an unsigned 64-bit value.
#[inline(always)]
fn unmap64(m: u64) -> i64 {
    if m & 1 == 1 {
        ((m >> 1) + 1) as i64
    } else {
        ((m >> 1) as i64).wrapping_neg()
    }
}

/// One 32-bit block: the first value and eight residuals of `w` bits.
#[inline]
fn block32<T>(first: u32, packed: &[u8], w: u32, out: &mut Vec<T>, conv: impl Fn(u32) -> T) -> Result<()> {
    let mut r = BitReader::new(packed);
    let mut prev = first as i32;
    out.push(conv(first));
    let (mut acc, mut delta) = (0i32, 0i32);
    for _ in 0..8 {
        // why: w <= 32 (checked with the block header); hot loop, keeps its shape.
        #[allow(clippy::cast_possible_truncation)]
        let e = unmap32(r.read(w)? as u32);
        let alpha = acc >> 2;
        let v = prev.wrapping_add(alpha.wrapping_mul(delta) >> 8).wrapping_add(e);
        acc = acc.wrapping_sub(if e > 0 { delta.wrapping_neg() } else { delta });
        delta = v.wrapping_sub(prev);
        prev = v;
        out.push(conv(v as u32));
    }
    Ok(())
}

/// One 64-bit block; `EXACT` selects the 128-bit product (C++) over the wrapped one (Java).
#[inline]
fn block64<const EXACT: bool, T>(first: u64, packed: &[u8], w: u32, out: &mut Vec<T>, conv: impl Fn(u64) -> T) -> Result<()> {
    let mut r = BitReader::new(packed);
    let mut prev = first as i64;
    out.push(conv(first));
    let (mut acc, mut delta) = (0i32, 0i64);
    for _ in 0..8 {
        let e = unmap64(r.read(w)?);
        let alpha = i64::from(acc >> 3);
        // why: the C++ writer truncates the shifted 128-bit product to 64 bits (module doc).
        #[allow(clippy::cast_possible_truncation)]
        let diff = if EXACT { ((i128::from(alpha) * i128::from(delta)) >> 16) as i64 } else { alpha.wrapping_mul(delta) >> 16 };
        let v = prev.wrapping_add(diff).wrapping_add(e);
        // why: the accumulator is a 32-bit int in both writers; keeping the low 32 bits is their wrapping.
        #[allow(clippy::cast_possible_truncation)]
        let acc_next = i64::from(acc).wrapping_sub(if e > 0 { delta.wrapping_neg() } else { delta }) as i32;
        acc = acc_next;
        delta = v.wrapping_sub(prev);
        prev = v;
        out.push(conv(v as u64));
    }
    Ok(())
}

/// Test-only SPRINTZ encoders following the C++ writer (FIRE predictor, blocks of 9, RLE or
/// GORILLA tail); the 64-bit product rule is selectable to model the Java writer too.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::bits::BitWriter;
    use crate::encoding::SprintzProduct;

    /// Bits needed for `m` (at least 1).
    fn width(m: u64) -> u32 {
        (64 - m.leading_zeros()).max(1)
    }

    fn uvarint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// One RLE section holding `words` in a single bit-packed run (as the C++ writer does).
    pub fn rle_section(words: &[u64]) -> Vec<u8> {
        let w = words.iter().map(|&v| width(v)).max().unwrap_or(1);
        let groups = words.len().div_ceil(8).max(1);
        let k = words.len() - (groups - 1) * 8;
        let mut body = vec![w as u8];
        uvarint(&mut body, ((groups as u64) << 1) | 1);
        body.push(k as u8);
        let mut bw = BitWriter::new();
        for i in 0..groups * 8 {
            bw.write(words.get(i).copied().unwrap_or(0), w);
        }
        body.extend(bw.finish());
        let mut out = Vec::new();
        uvarint(&mut out, body.len() as u64);
        out.extend(body);
        out
    }

    /// Residual codes of one 32-bit block; `false` when a residual was `i32::MIN` (lost).
    fn residuals32(block: &[u32]) -> (Vec<u64>, bool) {
        let mut prev = block[0] as i32;
        let (mut acc, mut delta) = (0i32, 0i32);
        let mut ok = true;
        let mut codes = Vec::new();
        for &x in &block[1..] {
            let v = x as i32;
            let pred = prev.wrapping_add((acc >> 2).wrapping_mul(delta) >> 8);
            let err = v.wrapping_sub(pred);
            ok &= err != i32::MIN;
            acc = acc.wrapping_sub(if err > 0 { delta.wrapping_neg() } else { delta });
            delta = v.wrapping_sub(prev);
            prev = v;
            let m = if err <= 0 { err.wrapping_mul(-2) } else { err.wrapping_mul(2).wrapping_sub(1) };
            codes.push(u64::from(m as u32));
        }
        (codes, ok)
    }

    /// Residual codes of one 64-bit block under `product`; `false` when a residual was
    /// `i64::MIN` (lost).
    fn residuals64(block: &[u64], product: SprintzProduct) -> (Vec<u64>, bool) {
        let mut prev = block[0] as i64;
        let (mut acc, mut delta) = (0i32, 0i64);
        let mut ok = true;
        let mut codes = Vec::new();
        for &x in &block[1..] {
            let v = x as i64;
            let alpha = i64::from(acc >> 3);
            let diff = match product {
                SprintzProduct::Exact128 => ((i128::from(alpha) * i128::from(delta)) >> 16) as i64,
                SprintzProduct::Wrapping64 => alpha.wrapping_mul(delta) >> 16,
            };
            let err = v.wrapping_sub(prev.wrapping_add(diff));
            ok &= err != i64::MIN;
            acc = i64::from(acc).wrapping_sub(if err > 0 { delta.wrapping_neg() } else { delta }) as i32;
            delta = v.wrapping_sub(prev);
            prev = v;
            let m = if err <= 0 { err.wrapping_mul(-2) } else { err.wrapping_mul(2).wrapping_sub(1) };
            codes.push(m as u64);
        }
        (codes, ok)
    }

    /// Blocks of 9 words (`w` byte, first value bytes from `first`, packed residuals), then
    /// the tail from `tail`. Returns the bytes and whether every residual was representable.
    fn encode_with(
        words: &[u64],
        residuals: impl Fn(&[u64]) -> (Vec<u64>, bool),
        first: impl Fn(&mut Vec<u8>, u64),
        tail: impl Fn(&[u64]) -> Vec<u8>,
    ) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let mut lossless = true;
        let mut chunks = words.chunks_exact(9);
        for block in &mut chunks {
            let (codes, ok) = residuals(block);
            lossless &= ok;
            let w = codes.iter().map(|&m| width(m)).max().unwrap_or(1);
            out.push(w as u8);
            first(&mut out, block[0]);
            let mut bw = BitWriter::new();
            for &m in &codes {
                bw.write(m, w);
            }
            out.extend(bw.finish());
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            out.push(0x80 | rest.len() as u8);
            out.extend(tail(rest));
        }
        (out, lossless)
    }

    /// SPRINTZ stream of INT32/DATE values, and whether it decodes back to them (a residual of
    /// `i32::MIN` is lost by the writer).
    pub fn encode_i32(values: &[i32]) -> (Vec<u8>, bool) {
        let words: Vec<u64> = values.iter().map(|&v| u64::from(v as u32)).collect();
        encode_with(&words, |b| residuals32(&b.iter().map(|&x| x as u32).collect::<Vec<_>>()), uvarint, rle_section)
    }

    /// SPRINTZ stream of FLOAT values (IEEE bits) and whether it decodes back to them.
    pub fn encode_f32(values: &[f32]) -> (Vec<u8>, bool) {
        let words: Vec<u64> = values.iter().map(|v| u64::from(v.to_bits())).collect();
        encode_with(
            &words,
            |b| residuals32(&b.iter().map(|&x| x as u32).collect::<Vec<_>>()),
            |out, v| out.extend((v as u32).to_be_bytes()),
            |rest| {
                let vals: Vec<f32> = rest.iter().map(|&x| f32::from_bits(x as u32)).collect();
                crate::encoding::gorilla::encode::encode_f32(&vals)
            },
        )
    }

    /// SPRINTZ stream of INT64/TIMESTAMP values with the given product rule and whether it
    /// decodes back to them.
    pub fn encode_i64(values: &[i64], product: SprintzProduct) -> (Vec<u8>, bool) {
        let words: Vec<u64> = values.iter().map(|&v| v as u64).collect();
        encode_with(&words, |b| residuals64(b, product), |out, v| out.extend(v.to_be_bytes()), rle_section)
    }

    /// SPRINTZ stream of DOUBLE values (IEEE bits) with the given product rule and whether it
    /// decodes back to them.
    pub fn encode_f64(values: &[f64], product: SprintzProduct) -> (Vec<u8>, bool) {
        let words: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        encode_with(
            &words,
            |b| residuals64(b, product),
            |out, v| out.extend(v.to_be_bytes()),
            |rest| {
                let vals: Vec<f64> = rest.iter().map(|&x| f64::from_bits(x)).collect();
                crate::encoding::gorilla::encode::encode_f64(&vals)
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::*;
    use crate::encoding::test_util::hex;
    use proptest::prelude::*;

    const EXACT: SprintzProduct = SprintzProduct::Exact128;
    const WRAP: SprintzProduct = SprintzProduct::Wrapping64;

    fn dec_i32(data: &[u8], n: usize) -> Result<Vec<i32>> {
        let mut v = Vec::new();
        decode_i32(data, n, &mut v).map(|_| v)
    }
    fn dec_i64(data: &[u8], n: usize, p: SprintzProduct) -> Result<Vec<i64>> {
        let mut v = Vec::new();
        decode_i64(data, n, &mut v, p).map(|_| v)
    }
    fn dec_f32(data: &[u8], n: usize) -> Result<Vec<u32>> {
        let mut v = Vec::new();
        decode_f32(data, n, &mut v).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }
    fn dec_f64(data: &[u8], n: usize, p: SprintzProduct) -> Result<Vec<u64>> {
        let mut v = Vec::new();
        decode_f64(data, n, &mut v, p).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }

    #[test]
    fn test_decode_i32_spec_example() {
        let data = hex("01 64 ff | 81 0a 07 03 01 da 00 00 00 00 00 00");
        let want: Vec<i32> = (100..110).collect();
        assert_eq!(dec_i32(&data, 10).unwrap(), want);
        assert_eq!(encode_i32(&want), (data, true));
    }

    #[test]
    fn test_decode_f64_spec_example_tail_only() {
        let data = hex("82 | 3ff0000000000000 c1 2b ff e1 15 ff c0");
        assert_eq!(dec_f64(&data, 2, EXACT).unwrap(), vec![1.0f64.to_bits(), 2.0f64.to_bits()]);
        assert_eq!(encode_f64(&[1.0, 2.0], EXACT), (data, true));
    }

    #[test]
    fn test_decode_i32_block_only_exact_multiples() {
        for n in [9usize, 18, 27] {
            let vals: Vec<i32> = (0..n as i32).map(|i| i * i - 40).collect();
            let (data, ok) = encode_i32(&vals);
            assert!(ok);
            assert_eq!(dec_i32(&data, n).unwrap(), vals, "n = {n}");
            // No tail: the stream is exactly n / 9 blocks of 1 + 1 (UVarInt) + w bytes.
            assert!(data[0] & 0x80 == 0);
            assert!(dec_i32(&data, n - 1).is_err());
            assert!(dec_i32(&data, n + 1).is_err());
        }
    }

    #[test]
    fn test_decode_all_types_tails_1_to_8() {
        for blocks in 0..3usize {
            for t in 1..=8usize {
                let n = blocks * 9 + t;
                let vi: Vec<i32> = (0..n as i32).map(|i| 1000 + 3 * i - (i % 4)).collect();
                let (d, ok) = encode_i32(&vi);
                assert!(ok);
                assert_eq!(dec_i32(&d, n).unwrap(), vi, "i32 n = {n}");
                let vl: Vec<i64> = vi.iter().map(|&x| i64::from(x) << 20).collect();
                let (d, ok) = encode_i64(&vl, EXACT);
                assert!(ok);
                assert_eq!(dec_i64(&d, n, EXACT).unwrap(), vl, "i64 n = {n}");
                let vf: Vec<f32> = vi.iter().map(|&x| x as f32 * 0.5).collect();
                let (d, ok) = encode_f32(&vf);
                assert!(ok);
                let want: Vec<u32> = vf.iter().map(|v| v.to_bits()).collect();
                assert_eq!(dec_f32(&d, n).unwrap(), want, "f32 n = {n}");
                let vd: Vec<f64> = vi.iter().map(|&x| f64::from(x)).collect();
                let (d, ok) = encode_f64(&vd, EXACT);
                assert!(ok);
                let want: Vec<u64> = vd.iter().map(|v| v.to_bits()).collect();
                assert_eq!(dec_f64(&d, n, EXACT).unwrap(), want, "f64 n = {n}");
            }
        }
    }

    #[test]
    fn test_decode_i32_unsigned_residual_unmapping() {
        // Deltas of about 2^30..2^31: residual codes >= 2^31, where a signed un-mapping breaks.
        let vals: Vec<i32> = vec![0, 0x7000_0000, -0x7000_0000, 0x4000_0001, -5, 0x5fff_ffff, 3, -0x6000_0000, 9];
        let (data, ok) = encode_i32(&vals);
        assert!(ok);
        assert_eq!(data[0], 32);
        assert_eq!(dec_i32(&data, 9).unwrap(), vals);
    }

    #[test]
    fn test_decode_i32_min_residual_is_lost_by_the_writer() {
        // 0 -> i32::MIN: residual MIN maps to code 0, indistinguishable from "no change".
        let vals = vec![0, i32::MIN, i32::MIN, 5, 6, 7, 8, 9, 10];
        let (data, ok) = encode_i32(&vals);
        assert!(!ok);
        let got = dec_i32(&data, 9).unwrap();
        assert_eq!(got[0], 0);
        assert_ne!(got, vals);
    }

    #[test]
    fn test_decode_i64_product_modes_differ() {
        // Constant large steps make alpha * delta overflow 64 bits from the third value on.
        let d: i64 = (1 << 40) + (1 << 30) + 12_345;
        let vals: Vec<i64> = (0..9).map(|i| i * d).collect();
        let (exact, ok1) = encode_i64(&vals, EXACT);
        let (wrap, ok2) = encode_i64(&vals, WRAP);
        assert!(ok1 && ok2);
        assert_ne!(exact, wrap, "the two writers must produce different residuals");
        assert_eq!(dec_i64(&exact, 9, EXACT).unwrap(), vals);
        assert_eq!(dec_i64(&wrap, 9, WRAP).unwrap(), vals);
        assert_ne!(dec_i64(&exact, 9, WRAP).unwrap(), vals);
        assert_ne!(dec_i64(&wrap, 9, EXACT).unwrap(), vals);
        // The default is the Java rule.
        let mut out = Vec::new();
        decode_i64(&wrap, 9, &mut out, SprintzProduct::default()).unwrap();
        assert_eq!(out, vals);
    }

    #[test]
    fn test_decode_f64_product_modes_differ() {
        // Doubles whose bit patterns grow by a large constant step (as in the INT64 case).
        let d: u64 = (1 << 40) + (1 << 30) + 12_345;
        let vals: Vec<f64> = (0..9).map(|i| f64::from_bits(0x4000_0000_0000_0000 + i * d)).collect();
        let (exact, ok1) = encode_f64(&vals, EXACT);
        let (wrap, ok2) = encode_f64(&vals, WRAP);
        assert!(ok1 && ok2);
        assert_ne!(exact, wrap);
        let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(dec_f64(&exact, 9, EXACT).unwrap(), want);
        assert_eq!(dec_f64(&wrap, 9, WRAP).unwrap(), want);
        assert_ne!(dec_f64(&exact, 9, WRAP).unwrap(), want);
        assert_ne!(dec_f64(&wrap, 9, EXACT).unwrap(), want);
    }

    #[test]
    fn test_decode_f32_specials_in_blocks_and_tail() {
        let vals = [
            1.0f32,
            f32::from_bits(0x7fc0_1234),
            2.0,
            f32::INFINITY,
            3.0,
            f32::from_bits(1),
            4.0,
            f32::MIN_POSITIVE,
            5.0,
            // tail (GORILLA keeps everything)
            -0.0,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let (data, ok) = encode_f32(&vals);
        assert!(ok);
        let want: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(dec_f32(&data, vals.len()).unwrap(), want);
    }

    #[test]
    fn test_decode_f64_specials_min_and_runs_both_products() {
        let vals = [
            1.0f64,
            f64::from_bits(0x7ff8_dead_beef_0001),
            2.0,
            f64::INFINITY,
            3.0,
            f64::from_bits(1),
            4.0,
            f64::from_bits(i64::MIN as u64 | 5), // tiny negative subnormal
            5.0,
            // Tail (GORILLA): -0.0, -inf, NaN as raw bits.
            -0.0,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for p in [EXACT, WRAP] {
            let (data, ok) = encode_f64(&vals, p);
            assert!(ok);
            let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
            assert_eq!(dec_f64(&data, vals.len(), p).unwrap(), want);
        }
        let ints = [7i64, i64::MIN, i64::MIN, 9, i64::MIN + 1, 3, i64::MAX, 0, 1, i64::MIN, 4];
        for p in [EXACT, WRAP] {
            let (data, ok) = encode_i64(&ints, p);
            assert!(ok);
            assert_eq!(dec_i64(&data, ints.len(), p).unwrap(), ints);
        }
        let ints32 = [7i32, i32::MIN, i32::MIN, 9, i32::MIN + 1, 3, i32::MAX, 0, 1, i32::MIN];
        let (data, ok) = encode_i32(&ints32);
        assert!(ok);
        assert_eq!(dec_i32(&data, ints32.len()).unwrap(), ints32);
    }

    #[test]
    fn test_decode_i32_long_constant_run() {
        let vals = vec![-42i32; 9 * 40 + 3];
        let (data, ok) = encode_i32(&vals);
        assert!(ok);
        // Constant blocks use the minimum width 1 (all residual codes 0).
        assert_eq!(data[0], 1);
        assert_eq!(dec_i32(&data, vals.len()).unwrap(), vals);
        let vals = vec![2.5f32; 9 * 40];
        let (data, ok) = encode_f32(&vals);
        assert!(ok);
        assert_eq!(data.len(), 40 * (1 + 4 + 1));
        assert_eq!(dec_f32(&data, vals.len()).unwrap(), vec![2.5f32.to_bits(); 360]);
    }

    #[test]
    fn test_decode_zero_and_one_value() {
        assert!(dec_i32(&[], 0).unwrap().is_empty());
        assert!(dec_i32(&[0x01], 0).is_err());
        let (one, _) = encode_i32(&[i32::MIN]);
        assert_eq!(dec_i32(&one, 1).unwrap(), vec![i32::MIN]);
        let (one, _) = encode_i64(&[i64::MIN], EXACT);
        assert_eq!(dec_i64(&one, 1, EXACT).unwrap(), vec![i64::MIN]);
        let (one, _) = encode_f64(&[f64::NAN], EXACT);
        assert_eq!(dec_f64(&one, 1, EXACT).unwrap(), vec![f64::NAN.to_bits()]);
        assert!(dec_f64(&[], 1, EXACT).is_err());
    }

    #[test]
    fn test_decode_truncation_every_byte() {
        let vals: Vec<i32> = (0..25).map(|i| i * 7 - 30).collect();
        let (data, _) = encode_i32(&vals);
        for len in 0..data.len() {
            assert!(dec_i32(&data[..len], vals.len()).is_err(), "i32 prefix {len}");
        }
        let vals: Vec<f64> = (0..25).map(|i| i as f64 * 3.0 + 1.0).collect();
        let (data, _) = encode_f64(&vals, EXACT);
        let ok_len = {
            // Dropping a final extra 0x00 of the GORILLA tail is tolerated.
            let mut l = data.len();
            if dec_f64(&data[..l - 1], vals.len(), EXACT).is_ok() {
                assert_eq!(data[l - 1], 0);
                l -= 1;
            }
            l
        };
        for len in 0..ok_len {
            assert!(dec_f64(&data[..len], vals.len(), EXACT).is_err(), "f64 prefix {len}");
        }
    }

    #[test]
    fn test_decode_invalid_fields() {
        // Width above W.
        let err = dec_i32(&hex("21 00 00"), 9).unwrap_err().to_string();
        assert!(err.contains("SPRINTZ INT32 stream") && err.contains("width 33"), "{err}");
        let mut d = vec![65u8];
        d.extend([0; 80]);
        assert!(dec_i64(&d, 9, EXACT).is_err());
        // Tail with the wrong number of values, zero values or more than 8.
        let (data, _) = encode_i32(&[1, 2, 3]);
        assert!(dec_i32(&data, 2).is_err());
        assert!(dec_i32(&data, 4).is_err());
        assert!(dec_i32(&hex("80"), 1).is_err());
        assert!(dec_i32(&hex("89 00"), 9).is_err());
        // A block where only a tail can fit.
        assert!(dec_i32(&hex("01 00 00"), 5).is_err());
        // First value UVarInt longer than 32 bits.
        assert!(dec_i32(&hex("01 ff ff ff ff 7f 00"), 9).is_err());
        // Trailing bytes after blocks.
        let vals: Vec<i32> = (0..9).collect();
        let (mut data, _) = encode_i32(&vals);
        data.push(0);
        assert!(dec_i32(&data, 9).is_err());
        // Garbage after an RLE tail.
        let (mut data, _) = encode_i32(&[1, 2, 3]);
        data.push(0x05);
        let err = dec_i32(&data, 3).unwrap_err().to_string();
        assert!(err.contains("SPRINTZ INT32 stream"), "{err}");
    }

    #[test]
    fn test_decode_f64_java_writer_page() {
        // A DOUBLE page of the Java writer (t05, device `p`, first page): 43 blocks and a
        // tail of 3; fractional values near 104, so the products overflow 64 bits.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pages/java");
        let data = std::fs::read(dir.join("t05-f64-sprintz.bin")).unwrap();
        let want: Vec<u64> = std::fs::read_to_string(dir.join("t05-f64-sprintz.expected"))
            .unwrap()
            .lines()
            .map(|l| u64::from_str_radix(l, 16).unwrap())
            .collect();
        assert_eq!(want.len(), 390);
        assert_eq!(dec_f64(&data, 390, WRAP).unwrap(), want);
        assert_eq!(dec_f64(&data, 390, SprintzProduct::default()).unwrap(), want);
        let cpp = dec_f64(&data, 390, EXACT).unwrap();
        assert!(cpp.iter().zip(&want).filter(|(a, b)| a != b).count() > 200);
        // First values of blocks and the GORILLA tail do not depend on the rule.
        assert_eq!(cpp[..3], want[..3]);
        assert_eq!(cpp[387..], want[387..]);
        assert!(dec_f64(&data, 389, WRAP).is_err());
        assert!(dec_f64(&data[..data.len() - 1], 390, WRAP).is_err());
    }

    fn check_i32(vals: &[i32]) -> std::result::Result<(), TestCaseError> {
        let (data, ok) = encode_i32(vals);
        let got = dec_i32(&data, vals.len()).unwrap();
        if ok {
            prop_assert_eq!(got, vals.to_vec());
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn test_decode_i32_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<i32>(), Just(i32::MIN), Just(0), -300i32..300], 0..100)) {
            check_i32(&vals)?;
        }

        #[test]
        fn test_decode_i32_smooth_round_trip(start in any::<i32>(), steps in proptest::collection::vec(-1000i32..1000, 0..100)) {
            let mut v = start;
            let vals: Vec<i32> = steps.iter().map(|s| { v = v.wrapping_add(*s); v }).collect();
            let (data, ok) = encode_i32(&vals);
            prop_assert!(ok);
            prop_assert_eq!(dec_i32(&data, vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_round_trip_both_products(vals in proptest::collection::vec(
            prop_oneof![any::<i64>(), Just(i64::MIN), Just(0), -300i64..300], 0..100)) {
            for p in [EXACT, WRAP] {
                let (data, ok) = encode_i64(&vals, p);
                let got = dec_i64(&data, vals.len(), p).unwrap();
                if ok {
                    prop_assert_eq!(got, vals.clone());
                }
            }
        }

        #[test]
        fn test_decode_f32_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<u32>().prop_map(f32::from_bits), Just(f32::NAN), Just(-0.0f32),
                        Just(f32::INFINITY), (0u32..16).prop_map(f32::from_bits), (0u32..100).prop_map(|i| i as f32)],
            0..100)) {
            let (data, ok) = encode_f32(&vals);
            let got = dec_f32(&data, vals.len()).unwrap();
            if ok {
                let want: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
                prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn test_decode_f64_round_trip_both_products(vals in proptest::collection::vec(
            prop_oneof![any::<u64>().prop_map(f64::from_bits), Just(f64::NAN), Just(-0.0f64),
                        Just(f64::INFINITY), (0u64..16).prop_map(f64::from_bits), (0u32..100).prop_map(f64::from)],
            0..100)) {
            for p in [EXACT, WRAP] {
                let (data, ok) = encode_f64(&vals, p);
                let got = dec_f64(&data, vals.len(), p).unwrap();
                if ok {
                    let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
                    prop_assert_eq!(got, want);
                }
            }
        }

        #[test]
        fn test_decode_arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64), n in 0usize..40) {
            let _ = dec_i32(&data, n);
            let _ = dec_i64(&data, n, WRAP);
            let _ = dec_f32(&data, n);
            let _ = dec_f64(&data, n, EXACT);
        }
    }
}
