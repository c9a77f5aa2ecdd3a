//! RLBE decoder (run-length on bit length + Fibonacci-coded run lengths) for INT32/DATE,
//! INT64/TIMESTAMP, FLOAT and DOUBLE.
//!
//! An MSB-first bit stream of byte-aligned blocks over `W`-bit words (W = 32 or 64; FLOAT and
//! DOUBLE use their IEEE bits). A block is a 32-bit value count, then runs until that many
//! values are produced: a length code `len` (6 | 7 bits, 1..=W), the run length as a Fibonacci
//! code (bit j adds F_j with F = 1, 2, 3, 5, …, ended by the first two consecutive 1 bits), then
//! one `len`-bit delta word per value (for `len == W` the writers store the top bit as 0 and the
//! reader sets it again). The first word of a block is the value itself. The block is
//! zero-padded to a byte boundary.
//!
//! How later words make values depends on the writer, for FLOAT and DOUBLE only
//! ([`RlbeFloat`]); the bytes do not say which writer it was:
//! * **Java writer** (Apache TsFile Java as used by IoTDB; [`RlbeFloat::FloatDeltas`]): a
//!   word is the IEEE bits of the *floating-point difference* `v_i - v_{i-1}`, and the value
//!   is `v_{i-1} + d_i` in FLOAT/DOUBLE arithmetic (so the writer may round, and a NaN or
//!   infinity makes every later value of the block NaN, exactly as the Java reader returns).
//! * **C++ writer** ([`RlbeFloat::BitDeltas`]): a word is the wrapping *integer difference*
//!   of the IEEE bit patterns, added back with wrapping integer arithmetic (lossless).
//!
//! INT32/INT64 use integer differences in both writers. The read layer picks the float layout
//! per page by checking the decoded values against the page statistics
//! ([`crate::encoding::WriterLayout`]).

use crate::encoding::bits::BitReader;
use crate::encoding::gorilla::retag;
use crate::encoding::RlbeFloat;
use crate::error::{Result, TsFileError};

/// Decode `count` RLBE-encoded INT32/DATE values, appending them to `out`.
// why: an INT32 value is the low 32 bits of the wrapping sum of its words (Java int arithmetic).
#[allow(clippy::cast_possible_truncation)]
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode_words::<32, _, _>(data, count, out, "RLBE INT32 stream", IntSum(0, |w| w as u32 as i32))
}

/// Decode `count` RLBE-encoded INT64/TIMESTAMP values, appending them to `out`.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode_words::<64, _, _>(data, count, out, "RLBE INT64 stream", IntSum(0, |w| w as i64))
}

/// Decode `count` RLBE-encoded FLOAT values written in `layout`, appending them to `out`.
// why: a 32-bit stream's words have at most 32 bits (runs are checked to 1..=32), so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>, layout: RlbeFloat) -> Result<()> {
    const WHAT: &str = "RLBE FLOAT stream";
    match layout {
        RlbeFloat::FloatDeltas => decode_words::<32, _, _>(data, count, out, WHAT, F32Sum(0.0)),
        RlbeFloat::BitDeltas => decode_words::<32, _, _>(data, count, out, WHAT, IntSum(0, |w| f32::from_bits(w as u32))),
    }
}

/// Decode `count` RLBE-encoded DOUBLE values written in `layout`, appending them to `out`.
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>, layout: RlbeFloat) -> Result<()> {
    const WHAT: &str = "RLBE DOUBLE stream";
    match layout {
        RlbeFloat::FloatDeltas => decode_words::<64, _, _>(data, count, out, WHAT, F64Sum(0.0)),
        RlbeFloat::BitDeltas => decode_words::<64, _, _>(data, count, out, WHAT, IntSum(0, f64::from_bits)),
    }
}

/// How the words of a block become values (monomorphized: no dispatch per value).
trait Accumulate<T> {
    /// The first word of a block: the value itself.
    fn first(&mut self, word: u64) -> T;
    /// A later word: a difference to the previous value.
    fn next(&mut self, word: u64) -> T;
}

/// Wrapping integer sum of words, converted by the function (which truncates to 32 bits for
/// the 32-bit types).
struct IntSum<F>(u64, F);

impl<T, F: Fn(u64) -> T> Accumulate<T> for IntSum<F> {
    #[inline(always)]
    fn first(&mut self, word: u64) -> T {
        self.0 = word;
        (self.1)(word)
    }
    #[inline(always)]
    fn next(&mut self, word: u64) -> T {
        self.0 = self.0.wrapping_add(word);
        (self.1)(self.0)
    }
}

/// FLOAT sum of differences stored as IEEE bits (the Java writer).
struct F32Sum(f32);

// why: a 32-bit stream's words have at most 32 bits (runs are checked to 1..=32), so the casts keep every bit.
#[allow(clippy::cast_possible_truncation)]
impl Accumulate<f32> for F32Sum {
    #[inline(always)]
    fn first(&mut self, word: u64) -> f32 {
        self.0 = f32::from_bits(word as u32);
        self.0
    }
    #[inline(always)]
    fn next(&mut self, word: u64) -> f32 {
        self.0 += f32::from_bits(word as u32);
        self.0
    }
}

/// DOUBLE sum of differences stored as IEEE bits (the Java writer).
struct F64Sum(f64);

impl Accumulate<f64> for F64Sum {
    #[inline(always)]
    fn first(&mut self, word: u64) -> f64 {
        self.0 = f64::from_bits(word);
        self.0
    }
    #[inline(always)]
    fn next(&mut self, word: u64) -> f64 {
        self.0 += f64::from_bits(word);
        self.0
    }
}

fn decode_words<const W: u32, T, A: Accumulate<T>>(
    data: &[u8],
    count: usize,
    out: &mut Vec<T>,
    what: &'static str,
    acc: A,
) -> Result<()> {
    decode_inner::<W, T, A>(data, count, out, what, acc).map_err(|e| retag(e, what))
}

fn decode_inner<const W: u32, T, A: Accumulate<T>>(
    data: &[u8],
    count: usize,
    out: &mut Vec<T>,
    what: &'static str,
    mut acc: A,
) -> Result<()> {
    let code_bits: u32 = if W == 32 { 6 } else { 7 };
    let top: u64 = 1u64 << (W - 1);
    // Every value takes at least one bit.
    out.reserve(count.min(data.len().saturating_mul(8)));
    let mut r = BitReader::new(data);
    let mut remaining = count;
    while remaining > 0 {
        let block_at = r.bytes_consumed();
        let stored = r.read(32)?;
        let n = match usize::try_from(stored) {
            Ok(n) if n != 0 && n <= remaining => n,
            _ => {
                return Err(TsFileError::corrupt(
                    what,
                    None,
                    format!("block at byte {block_at} holds {stored} values, {remaining} of {count} expected"),
                ))
            }
        };
        let mut left = n;
        while left > 0 {
            let run_at = r.bit_position();
            let stored = r.read(code_bits)?;
            let len = match u32::try_from(stored) {
                Ok(len) if len != 0 && len <= W => len,
                _ => {
                    return Err(TsFileError::corrupt(what, None, format!("at bit {run_at}: bit length {stored} outside 1..={W}")))
                }
            };
            let mut run = read_fibonacci(&mut r, left, what)?;
            let set = if len == W { top } else { 0 };
            if left == n && run > 0 {
                // The block's first word is its first value.
                out.push(acc.first(r.read(len)? | set));
                run -= 1;
                left -= 1;
            }
            for _ in 0..run {
                let d = r.read(len)? | set;
                out.push(acc.next(d));
            }
            left -= run;
        }
        let pad_at = r.bit_position();
        // why: a remainder modulo 8.
        #[allow(clippy::cast_possible_truncation)]
        let pad = ((8 - pad_at % 8) % 8) as u32;
        if r.read(pad)? != 0 {
            return Err(TsFileError::corrupt(what, None, format!("non-zero padding bits at bit {pad_at} after a block")));
        }
        remaining -= n;
    }
    if r.bits_remaining() > 0 {
        return Err(TsFileError::corrupt(
            what,
            None,
            format!("{} unexpected trailing byte(s) at byte {} after {count} values", r.bits_remaining() / 8, r.bytes_consumed()),
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

/// Test-only RLBE encoders reproducing the C++ writer (blocks of at most 10 000 values) and,
/// for FLOAT/DOUBLE, the Java writer's floating-point differences.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
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

    /// Encode blocks of at most `block` values whose words are already computed: the first
    /// word of each block is its value, later ones differences (`width`-bit words).
    pub fn encode_blocks(width: u32, blocks: &[Vec<u64>]) -> Vec<u8> {
        let code_bits = if width == 32 { 6 } else { 7 };
        let mut w = BitWriter::new();
        for deltas in blocks {
            w.write(deltas.len() as u64, 32);
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

    /// Encode `width`-bit words (32 or 64) with integer differences, in blocks of at most
    /// `block` values.
    pub fn encode_words_with_block(width: u32, words: &[u64], block: usize) -> Vec<u8> {
        let mask = u64::MAX >> (64 - width);
        let blocks: Vec<Vec<u64>> = words
            .chunks(block.max(1))
            .map(|chunk| {
                let mut prev = 0u64;
                chunk
                    .iter()
                    .map(|&v| {
                        let d = v.wrapping_sub(prev) & mask;
                        prev = v;
                        d
                    })
                    .collect()
            })
            .collect();
        encode_blocks(width, &blocks)
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

    /// RLBE stream of FLOAT values as the C++ writer stores them (integer deltas on the
    /// IEEE bits).
    pub fn encode_f32(values: &[f32]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| u64::from(v.to_bits())).collect();
        encode_words(32, &words)
    }

    /// RLBE stream of DOUBLE values as the C++ writer stores them (integer deltas on the
    /// IEEE bits).
    pub fn encode_f64(values: &[f64]) -> Vec<u8> {
        let words: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        encode_words(64, &words)
    }

    /// RLBE stream of FLOAT values as the Java writer stores them (IEEE bits of the FLOAT
    /// differences), in blocks of at most `block` values.
    pub fn encode_f32_java(values: &[f32], block: usize) -> Vec<u8> {
        let blocks: Vec<Vec<u64>> = values
            .chunks(block.max(1))
            .map(|c| {
                let first = std::iter::once(u64::from(c[0].to_bits()));
                first.chain(c.windows(2).map(|p| u64::from((p[1] - p[0]).to_bits()))).collect()
            })
            .collect();
        encode_blocks(32, &blocks)
    }

    /// RLBE stream of DOUBLE values as the Java writer stores them (IEEE bits of the DOUBLE
    /// differences), in blocks of at most `block` values.
    pub fn encode_f64_java(values: &[f64], block: usize) -> Vec<u8> {
        let blocks: Vec<Vec<u64>> = values
            .chunks(block.max(1))
            .map(|c| {
                let first = std::iter::once(c[0].to_bits());
                first.chain(c.windows(2).map(|p| (p[1] - p[0]).to_bits())).collect()
            })
            .collect();
        encode_blocks(64, &blocks)
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
    /// C++ layout (integer deltas on the bits).
    fn dec_f32(data: &[u8], n: usize) -> Result<Vec<u32>> {
        dec_f32_as(data, n, RlbeFloat::BitDeltas)
    }
    fn dec_f64(data: &[u8], n: usize) -> Result<Vec<u64>> {
        dec_f64_as(data, n, RlbeFloat::BitDeltas)
    }
    fn dec_f32_as(data: &[u8], n: usize, layout: RlbeFloat) -> Result<Vec<u32>> {
        let mut v = Vec::new();
        decode_f32(data, n, &mut v, layout).map(|_| v.iter().map(|x| x.to_bits()).collect())
    }
    fn dec_f64_as(data: &[u8], n: usize, layout: RlbeFloat) -> Result<Vec<u64>> {
        let mut v = Vec::new();
        decode_f64(data, n, &mut v, layout).map(|_| v.iter().map(|x| x.to_bits()).collect())
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

    /// A value stream of the Java writer (t05, device `p`, first page) and its expected
    /// present values (IEEE bits, hex per line).
    fn java_fixture(name: &str) -> (Vec<u8>, Vec<u64>) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pages/java");
        let data = std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
        let want = std::fs::read_to_string(dir.join(format!("{name}.expected")))
            .unwrap()
            .lines()
            .map(|l| u64::from_str_radix(l, 16).unwrap())
            .collect();
        (data, want)
    }

    #[test]
    fn test_decode_f32_java_writer_page() {
        let (data, want) = java_fixture("t05-f32-rlbe");
        let want: Vec<u32> = want.iter().map(|&w| w as u32).collect();
        assert_eq!(want.len(), 386);
        assert_eq!(dec_f32_as(&data, 386, RlbeFloat::FloatDeltas).unwrap(), want);
        // The same bytes read as the C++ layout are well-formed but almost all wrong.
        let cpp = dec_f32_as(&data, 386, RlbeFloat::BitDeltas).unwrap();
        assert_eq!(cpp[0], want[0]);
        assert!(cpp.iter().zip(&want).filter(|(a, b)| a != b).count() > 350);
        assert!(dec_f32_as(&data, 385, RlbeFloat::FloatDeltas).is_err());
        assert!(dec_f32_as(&data[..data.len() - 1], 386, RlbeFloat::FloatDeltas).is_err());
    }

    #[test]
    fn test_decode_f64_java_writer_page() {
        let (data, want) = java_fixture("t05-f64-rlbe");
        assert_eq!(want.len(), 390);
        assert_eq!(dec_f64_as(&data, 390, RlbeFloat::FloatDeltas).unwrap(), want);
        let cpp = dec_f64_as(&data, 390, RlbeFloat::BitDeltas).unwrap();
        assert!(cpp.iter().zip(&want).filter(|(a, b)| a != b).count() > 350);
        assert!(dec_f64_as(&data, 391, RlbeFloat::FloatDeltas).is_err());
    }

    #[test]
    fn test_decode_java_layout_one_value_and_specials() {
        for v in [0.0f32, -0.0, 1.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::from_bits(1), f32::MIN] {
            let data = encode_f32_java(&[v], 10_000);
            assert_eq!(dec_f32_as(&data, 1, RlbeFloat::FloatDeltas).unwrap(), vec![v.to_bits()], "{v}");
            let d = f64::from(v);
            let data = encode_f64_java(&[d], 10_000);
            assert_eq!(dec_f64_as(&data, 1, RlbeFloat::FloatDeltas).unwrap(), vec![d.to_bits()], "{d}");
        }
        // -0.0 first keeps its sign (a raw first value, top bit restored); later ±inf/NaN
        // make every later value of the block NaN, as the Java reader returns them.
        let vals = [-0.0f64, 2.5, -1.25, f64::INFINITY, 3.0, 4.0];
        let got = dec_f64_as(&encode_f64_java(&vals, 10_000), 6, RlbeFloat::FloatDeltas).unwrap();
        assert_eq!(&got[..4], &[(-0.0f64).to_bits(), 2.5f64.to_bits(), (-1.25f64).to_bits(), f64::INFINITY.to_bits()]);
        assert!(f64::from_bits(got[4]).is_nan() && f64::from_bits(got[5]).is_nan());
        // A new block starts from a raw value again: blocks of 3 put ±inf and -0.0 first.
        let vals = [1.0f32, f32::NAN, 2.0, f32::NEG_INFINITY, 0.5, 0.25, -0.0, 7.0, -7.0, 1e30];
        let data = encode_f32_java(&vals, 3);
        let got = dec_f32_as(&data, vals.len(), RlbeFloat::FloatDeltas).unwrap();
        assert_eq!(got[0], 1.0f32.to_bits());
        assert!(f32::from_bits(got[1]).is_nan() && f32::from_bits(got[2]).is_nan());
        assert_eq!(got[3], f32::NEG_INFINITY.to_bits());
        assert!(f32::from_bits(got[4]).is_nan() && f32::from_bits(got[5]).is_nan());
        let tail: Vec<u32> = vals[6..].iter().map(|v| v.to_bits()).collect();
        assert_eq!(&got[6..], &tail[..]);
        // Block counts still bound the page: one value too many or too few fails.
        assert!(dec_f32_as(&data, vals.len() - 1, RlbeFloat::FloatDeltas).is_err());
        assert!(dec_f32_as(&data, vals.len() + 1, RlbeFloat::FloatDeltas).is_err());
    }

    #[test]
    fn test_decode_java_layout_rounds_like_the_java_reader() {
        // 1e8 - 1.0 rounds in FLOAT: the stored difference does not give 1.0 back, and the
        // reader must return what the Java reader returns (1e8 + (1 - 1e8) in FLOAT).
        let vals = [1e8f32, 1.0, 3.0];
        let got = dec_f32_as(&encode_f32_java(&vals, 10_000), 3, RlbeFloat::FloatDeltas).unwrap();
        let second = 1e8f32 + (1.0f32 - 1e8f32);
        assert_eq!(got, vec![1e8f32.to_bits(), second.to_bits(), (second + (3.0f32 - 1.0f32)).to_bits()]);
        assert_ne!(second, 1.0);
    }

    proptest! {
        #[test]
        fn test_decode_java_layout_round_trip(ints in proptest::collection::vec(-4000i32..4000, 1..300), block in 1usize..40) {
            // Multiples of 1/4 of moderate size: every FLOAT/DOUBLE difference is exact.
            let f: Vec<f32> = ints.iter().map(|&i| i as f32 * 0.25).collect();
            let want: Vec<u32> = f.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f32_as(&encode_f32_java(&f, block), f.len(), RlbeFloat::FloatDeltas).unwrap(), want);
            let d: Vec<f64> = ints.iter().map(|&i| f64::from(i) * 0.25 + 1e6).collect();
            let want: Vec<u64> = d.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f64_as(&encode_f64_java(&d, block), d.len(), RlbeFloat::FloatDeltas).unwrap(), want);
        }

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
            let _ = dec_f32_as(&data, n, RlbeFloat::FloatDeltas);
            let _ = dec_f64_as(&data, n, RlbeFloat::FloatDeltas);
        }
    }
}
