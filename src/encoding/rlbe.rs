//! RLBE decoder (run-length on bit length + Fibonacci-coded run lengths) for INT32/DATE,
//! INT64/TIMESTAMP, FLOAT and DOUBLE.
//!
//! An MSB-first bit stream of byte-aligned blocks over `W`-bit words (W = 32 or 64; FLOAT and
//! DOUBLE use their IEEE bits, current lossless semantics). A block is a 32-bit value count,
//! then runs until that many values are produced: a length code `len` (6 | 7 bits, 1..=W), the
//! run length as a Fibonacci code (bit j adds F_j with F = 1, 2, 3, 5, …, ended by the first two
//! consecutive 1 bits), then one `len`-bit delta per value (for `len == W` the writer clears the
//! top bit, which the reader sets again). The first delta of a block is the value itself,
//! later values add their delta (wrapping). The block is zero-padded to a byte boundary.

use crate::encoding::bits::BitReader;
use crate::encoding::gorilla::retag;
use crate::error::{Result, TsFileError};

/// Decode `count` RLBE-encoded INT32/DATE values, appending them to `out`.
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode_words::<32, _, _>(data, count, out, "RLBE INT32 stream", |w| w as u32 as i32)
}

/// Decode `count` RLBE-encoded INT64/TIMESTAMP values, appending them to `out`.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode_words::<64, _, _>(data, count, out, "RLBE INT64 stream", |w| w as i64)
}

/// Decode `count` RLBE-encoded FLOAT values (integer deltas on the IEEE bits), appending them
/// to `out`.
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    decode_words::<32, _, _>(data, count, out, "RLBE FLOAT stream", |w| f32::from_bits(w as u32))
}

/// Decode `count` RLBE-encoded DOUBLE values (integer deltas on the IEEE bits), appending them
/// to `out`.
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_words::<64, _, _>(data, count, out, "RLBE DOUBLE stream", f64::from_bits)
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
    let code_bits: u32 = if W == 32 { 6 } else { 7 };
    let mask: u64 = u64::MAX >> (64 - W);
    let top: u64 = 1u64 << (W - 1);
    // Every value takes at least one bit.
    out.reserve(count.min(data.len().saturating_mul(8)));
    let mut r = BitReader::new(data);
    let mut remaining = count;
    while remaining > 0 {
        let block_at = r.bytes_consumed();
        let n = r.read(32)? as usize;
        if n == 0 || n > remaining {
            return Err(TsFileError::corrupt(
                what,
                None,
                format!(
                    "block at byte {block_at} holds {n} values, {remaining} of {count} expected"
                ),
            ));
        }
        let mut value = 0u64;
        let mut left = n;
        while left > 0 {
            let run_at = r.bit_position();
            let len = r.read(code_bits)? as u32;
            if len == 0 || len > W {
                return Err(TsFileError::corrupt(
                    what,
                    None,
                    format!("at bit {run_at}: bit length {len} outside 1..={W}"),
                ));
            }
            let run = read_fibonacci(&mut r, left, what)?;
            if len == W {
                for _ in 0..run {
                    let d = r.read(W)? | top;
                    value = value.wrapping_add(d) & mask;
                    out.push(conv(value));
                }
            } else {
                for _ in 0..run {
                    let d = r.read(len)?;
                    value = value.wrapping_add(d) & mask;
                    out.push(conv(value));
                }
            }
            left -= run;
        }
        let pad_at = r.bit_position();
        let pad = ((8 - pad_at % 8) % 8) as u32;
        if r.read(pad)? != 0 {
            return Err(TsFileError::corrupt(
                what,
                None,
                format!("non-zero padding bits at bit {pad_at} after a block"),
            ));
        }
        remaining -= n;
    }
    if r.bits_remaining() > 0 {
        return Err(TsFileError::corrupt(
            what,
            None,
            format!(
                "{} unexpected trailing byte(s) at byte {} after {count} values",
                r.bits_remaining() / 8,
                r.bytes_consumed()
            ),
        ));
    }
    Ok(())
}

/// Read a Fibonacci-coded run length (1..=`limit`).
#[inline]
fn read_fibonacci(r: &mut BitReader<'_>, limit: usize, what: &'static str) -> Result<usize> {
    let start = r.bit_position();
    let (mut f, mut g) = (1usize, 2usize); // F_j, F_{j+1}
    let mut sum = 0usize;
    let mut last = false;
    loop {
        let bit = r.read_bit()?;
        if bit && last {
            return Ok(sum);
        }
        if bit {
            sum = match sum.checked_add(f) {
                Some(s) if s <= limit => s,
                _ => {
                    return Err(TsFileError::corrupt(
                        what,
                        None,
                        format!(
                            "Fibonacci run length at bit {start} exceeds the {limit} values left \
                             in the block"
                        ),
                    ))
                }
            };
        }
        last = bit;
        let next = f.saturating_add(g);
        f = g;
        g = next;
    }
}

/// Test-only RLBE encoders reproducing the C++ writer (blocks of at most 10 000 values).
#[cfg(any(test, feature = "encoders"))]
pub mod encode {
    use crate::encoding::bits::BitWriter;

    /// Bits needed for a `width`-bit delta: 1 for zero, `width` for negative values.
    fn bit_len(d: u64) -> u32 {
        if d == 0 {
            1
        } else {
            64 - d.leading_zeros()
        }
    }

    /// Append the Fibonacci code of `n >= 1` (Zeckendorf terms low first, then a 1).
    fn write_fibonacci(w: &mut BitWriter, n: usize) {
        let mut fib = vec![1usize, 2];
        while fib[fib.len() - 1] <= n {
            let k = fib.len();
            fib.push(fib[k - 1] + fib[k - 2]);
        }
        let mut bits = vec![false; fib.len()];
        let mut rest = n;
        for j in (0..fib.len()).rev() {
            if fib[j] <= rest {
                bits[j] = true;
                rest -= fib[j];
            }
        }
        let top = bits.iter().rposition(|&b| b).unwrap_or(0);
        for &b in &bits[..=top] {
            w.write_bit(b);
        }
        w.write_bit(true);
    }

    /// Encode `width`-bit words (32 or 64) in blocks of at most `block` values.
    pub fn encode_words_with_block(width: u32, words: &[u64], block: usize) -> Vec<u8> {
        let mask = u64::MAX >> (64 - width);
        let code_bits = if width == 32 { 6 } else { 7 };
        let mut w = BitWriter::new();
        for chunk in words.chunks(block.max(1)) {
            w.write(chunk.len() as u64, 32);
            let mut prev = 0u64;
            let deltas: Vec<u64> = chunk
                .iter()
                .map(|&v| {
                    let d = v.wrapping_sub(prev) & mask;
                    prev = v;
                    d
                })
                .collect();
            let mut i = 0;
            while i < deltas.len() {
                let len = bit_len(deltas[i]);
                let mut j = i;
                while j < deltas.len() && bit_len(deltas[j]) == len {
                    j += 1;
                }
                w.write(u64::from(len), code_bits);
                write_fibonacci(&mut w, j - i);
                for &d in &deltas[i..j] {
                    let d = if len == width { d & !(1u64 << (width - 1)) } else { d };
                    w.write(d, len);
                }
                i = j;
            }
            while !w.bit_len().is_multiple_of(8) {
                w.write_bit(false);
            }
        }
        w.finish()
    }

    /// Encode `width`-bit words with the writer's default block size of 10 000 values.
    pub fn encode_words(width: u32, words: &[u64]) -> Vec<u8> {
        encode_words_with_block(width, words, 10_000)
    }

    /// RLBE stream of INT32/DATE values.
    pub fn encode_i32(values: &[i32]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|&v| u64::from(v as u32)).collect();
        encode_words(32, &words)
    }

    /// RLBE stream of INT64/TIMESTAMP values.
    pub fn encode_i64(values: &[i64]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|&v| v as u64).collect();
        encode_words(64, &words)
    }

    /// RLBE stream of FLOAT values (integer deltas on the IEEE bits).
    pub fn encode_f32(values: &[f32]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| u64::from(v.to_bits())).collect();
        encode_words(32, &words)
    }

    /// RLBE stream of DOUBLE values (integer deltas on the IEEE bits).
    pub fn encode_f64(values: &[f64]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        encode_words(64, &words)
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
    fn test_decode_i32_spec_example() {
        let data = hex("00000005 13 a0 9d c1 bf ff ff f7 09 d0");
        assert_eq!(dec_i32(&data, 5).unwrap(), vec![10, 12, 15, -3, 7]);
        assert_eq!(encode_i32(&[10, 12, 15, -3, 7]), data);
    }

    #[test]
    fn test_decode_i32_fibonacci_codes() {
        // 1 -> 11, 2 -> 011, 3 -> 0011, 4 -> 1011; run of 4 one-bit zeros.
        for (n, code) in [(1usize, "11"), (2, "011"), (3, "0011"), (4, "1011"), (12, "101011")] {
            let mut w = BitWriter::new();
            w.write(n as u64, 32);
            w.write(1, 6); // len 1
            for c in code.chars() {
                w.write_bit(c == '1');
            }
            w.write(0, n as u32); // n deltas of 0
            assert_eq!(dec_i32(&w.finish(), n).unwrap(), vec![0; n], "run {n}");
        }
    }

    #[test]
    fn test_decode_i64_min_and_specials() {
        let vals = [i64::MIN, 0, i64::MAX, -1, i64::MIN, i64::MIN, 1, 0];
        let data = encode_i64(&vals);
        assert_eq!(dec_i64(&data, vals.len()).unwrap(), vals);
    }

    #[test]
    fn test_decode_f64_multiple_blocks_and_runs() {
        let mut vals: Vec<f64> = (0..25_000).map(|i| (i / 7) as f64 * 0.5).collect();
        vals.extend([f64::NAN, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::from_bits(1)]);
        let data = encode_f64(&vals);
        let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(dec_f64(&data, vals.len()).unwrap(), want);
        // Count mismatches fail.
        assert!(dec_f64(&data, vals.len() - 1).is_err());
        assert!(dec_f64(&data, vals.len() + 1).is_err());
    }

    #[test]
    fn test_decode_i32_zero_and_one_value() {
        assert!(dec_i32(&[], 0).unwrap().is_empty());
        assert!(dec_i32(&[0], 0).is_err());
        let one = encode_i32(&[i32::MIN]);
        assert_eq!(dec_i32(&one, 1).unwrap(), vec![i32::MIN]);
        assert!(dec_i32(&[], 1).is_err());
    }

    #[test]
    fn test_decode_f32_truncation_every_byte() {
        let vals: Vec<f32> = (0..200).map(|i| ((i * 37) % 11) as f32 - 3.5).collect();
        let data = encode_f32(&vals);
        for len in 0..data.len() {
            assert!(dec_f32(&data[..len], vals.len()).is_err(), "prefix {len}");
        }
        assert!(dec_f32(&data, vals.len()).is_ok());
    }

    #[test]
    fn test_decode_i32_invalid_fields() {
        let block = |len: u64, fib: &str, count: u64| {
            let mut w = BitWriter::new();
            w.write(count, 32);
            w.write(len, 6);
            for c in fib.chars() {
                w.write_bit(c == '1');
            }
            w.write(0, 64);
            w.finish()
        };
        let err = dec_i32(&block(0, "11", 1), 1).unwrap_err().to_string();
        assert!(err.contains("RLBE INT32 stream") && err.contains("bit length 0"), "{err}");
        assert!(dec_i32(&block(33, "11", 1), 1).is_err());
        assert!(dec_i64(&block(0, "11", 1), 1).is_err());
        // Run of 4 in a block of 3.
        let err = dec_i32(&block(1, "1011", 3), 3).unwrap_err().to_string();
        assert!(err.contains("Fibonacci"), "{err}");
        // Block count 0 and block count beyond the page count.
        assert!(dec_i32(&block(1, "11", 0), 1).is_err());
        assert!(dec_i32(&block(1, "11", 5), 1).is_err());
        // Trailing bytes and non-zero padding.
        let mut data = encode_i32(&[1, 2, 3]);
        data.push(0);
        assert!(dec_i32(&data, 3).is_err());
        let mut data = encode_i32(&[1, 2, 3]);
        *data.last_mut().unwrap() |= 1;
        assert!(dec_i32(&data, 3).is_err());
    }

    #[test]
    fn test_decode_i32_huge_count_small_input() {
        let mut w = BitWriter::new();
        w.write(u64::from(u32::MAX), 32);
        w.write(1, 6);
        w.write(0b11, 2);
        w.write(0, 1);
        let data = w.finish();
        let mut out = Vec::new();
        assert!(decode_i32(&data, usize::MAX / 2, &mut out).is_err());
        assert!(out.capacity() <= 64);
    }

    proptest! {
        #[test]
        fn test_decode_i32_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<i32>(), Just(i32::MIN), Just(0), -3i32..3], 0..400), block in 1usize..50) {
            let words: Vec<u64> = vals.iter().map(|&v| u64::from(v as u32)).collect();
            let data = encode_words_with_block(32, &words, block);
            prop_assert_eq!(dec_i32(&data, vals.len()).unwrap(), vals.clone());
            prop_assert_eq!(dec_i32(&encode_i32(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<i64>(), Just(i64::MIN), Just(0), -3i64..3], 0..400)) {
            prop_assert_eq!(dec_i64(&encode_i64(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_f32_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<u32>().prop_map(f32::from_bits), Just(f32::NAN), Just(-0.0f32),
                        Just(f32::INFINITY), Just(f32::NEG_INFINITY), (0u32..16).prop_map(f32::from_bits)],
            0..400)) {
            let want: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f32(&encode_f32(&vals), vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_f64_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<u64>().prop_map(f64::from_bits), Just(f64::NAN), Just(-0.0f64),
                        Just(f64::INFINITY), Just(f64::NEG_INFINITY), (0u64..16).prop_map(f64::from_bits)],
            0..400)) {
            let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f64(&encode_f64(&vals), vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_i64_arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64), n in 0usize..100) {
            let _ = dec_i64(&data, n);
            let _ = dec_f32(&data, n);
        }
    }
}
