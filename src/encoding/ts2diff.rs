//! TS_2DIFF (encoding id 4): block delta + bit packing; also the default time encoding.
//!
//! A stream is a sequence of blocks until its end (writers emit full blocks of 128 deltas
//! and a shorter last one, but the block length is not a format limit):
//!
//! ```text
//! i32 n          deltas in the block (the block holds n + 1 values)
//! i32 w          bit width of the rebased deltas, 0..=32 (INT32) / 0..=64 (INT64)
//! T   min_delta  i32 (INT32/DATE/FLOAT) or i64 (INT64/TIMESTAMP/DOUBLE), big-endian
//! T   first      first value of the block
//! BP(w, n)       n rebased deltas r_i, MSB-first, ceil(n*w/8) bytes (zero-padded)
//! ```
//!
//! `v_0 = first`, `v_i = v_{i-1} + min_delta + r_i`, all wrapping.
//!
//! FLOAT/DOUBLE put the scaled-integer float wrapper
//! ([`float_wrapper`](crate::encoding::float_wrapper), shared with RLE on floats) in front of
//! INT32/INT64 blocks.

use crate::encoding::bits::{self, PackedInt};
use crate::encoding::corrupt;
use crate::encoding::float_wrapper::{FloatWrapper, ScaledFloat};
use crate::error::{Result, TsFileError};

/// Deltas unpacked per call into the scratch buffer (a multiple of 8, so every chunk starts
/// on a byte boundary).
const CHUNK: usize = 128;

/// How many values the blocks may produce.
#[derive(Clone, Copy)]
enum Limit {
    /// Exactly this many (decode by count): more is corruption.
    Count(usize),
    /// The first `stop` of `count` values: decoding ends with the block that reaches `stop`
    /// (the caller drops the values past it); more than `count` is corruption.
    Prefix { count: usize, stop: usize },
    /// At most this many (stream decoded to its end): more is a resource limit.
    Max(usize),
}

/// A capacity to reserve up front: at most `wanted`, and no more than the bytes could hold
/// for realistic writers (a 16-byte INT32 block with `w = 0` holds 129 values).
#[inline]
fn initial_capacity(wanted: usize, bytes: usize) -> usize {
    wanted.min(bytes.saturating_mul(9))
}

/// The header of one block and where its parts lie in the stream.
#[derive(Clone, Copy)]
struct Block<T> {
    /// Deltas in the block (the block holds `n + 1` values).
    n: usize,
    /// Bit width of the rebased deltas.
    w: u32,
    min_delta: T,
    /// First value of the block.
    first: T,
    /// Byte where the packed deltas start.
    body: usize,
    /// Byte after the block.
    end: usize,
}

impl<T: PackedInt> Block<T> {
    /// Bytes of a block header: two i32 plus two values.
    const HEADER: usize = 8 + 2 * T::BYTES;

    /// Parse and check the block at byte `pos` (which must be `< data.len()`): header
    /// present, counts not negative, width possible for `T`, packed deltas inside `data`.
    #[inline(always)]
    fn parse(data: &[u8], pos: usize, what: &str) -> Result<Self> {
        let header = data.get(pos..pos.saturating_add(Self::HEADER)).and_then(|h| {
            let (n, h) = h.split_first_chunk::<4>()?;
            let (w, values) = h.split_first_chunk::<4>()?;
            Some((i32::from_be_bytes(*n), i32::from_be_bytes(*w), values))
        });
        let Some((n, w, values)) = header else {
            return Err(corrupt(
                what,
                format!(
                    "block at byte {pos}: truncated header, {} bytes needed, {} present",
                    Self::HEADER,
                    data.len().saturating_sub(pos)
                ),
            ));
        };
        let min_delta = T::from_be(values);
        let first = T::from_be(values.get(T::BYTES..).unwrap_or_default());
        let (Ok(n), Ok(w)) = (usize::try_from(n), u32::try_from(w)) else {
            return Err(corrupt(what, format!("block at byte {pos}: negative delta count {n} or bit width {w}")));
        };
        if w > T::BITS {
            return Err(corrupt(what, format!("block at byte {pos}: bit width {w} exceeds {} for {}", T::BITS, T::NAME)));
        }
        let body = pos + Self::HEADER;
        let packed = bits::packed_len(w, n).unwrap_or(usize::MAX);
        let Some(end) = body.checked_add(packed).filter(|&end| end <= data.len()) else {
            return Err(corrupt(
                what,
                format!("block at byte {pos}: {n} deltas of {w} bits need {packed} bytes, {} present", data.len() - body),
            ));
        };
        Ok(Block { n, w, min_delta, first, body, end })
    }

    /// Values the block holds.
    #[inline(always)]
    fn values(&self) -> usize {
        self.n + 1
    }

    /// Check that the block, at byte `pos` after `before` values of the stream, holds no
    /// more values than remain of the stream's `count`.
    #[inline(always)]
    fn check_fits(&self, pos: usize, before: usize, count: usize, what: &str) -> Result<()> {
        let remain = count.saturating_sub(before);
        if self.values() > remain {
            return Err(corrupt(
                what,
                format!("block at byte {pos} holds {} values but only {remain} of {count} remain", self.values()),
            ));
        }
        Ok(())
    }
}

/// Decode the blocks in `data[start..]`, passing every value through `map` into `out`.
/// Returns the number of values produced. Every block is checked against `limit` before
/// anything is reserved or produced.
#[inline(always)]
fn decode_blocks<T: PackedInt, O, F: FnMut(T) -> O>(
    data: &[u8],
    start: usize,
    limit: Limit,
    out: &mut Vec<O>,
    what: &str,
    mut map: F,
) -> Result<usize> {
    let mut pos = start;
    let mut produced = 0usize;
    let mut scratch = [0u64; CHUNK];
    let stop = match limit {
        Limit::Prefix { stop, .. } => stop,
        _ => usize::MAX,
    };
    while pos < data.len() && produced < stop {
        let block = Block::<T>::parse(data, pos, what)?;
        let Block { n, w, min_delta, first, body: body_start, end } = block;
        // The packed deltas; unpacking may look at the bytes after them (never beyond the
        // stream), which keeps the word loads on the fast path.
        let body = data.get(body_start..).unwrap_or(&[]);
        let values = n + 1;
        match limit {
            Limit::Count(count) | Limit::Prefix { count, .. } => block.check_fits(pos, produced, count, what)?,
            Limit::Max(max) if values > max - produced => {
                return Err(TsFileError::LimitExceeded {
                    what: format!("values in one {what} (block at byte {pos}; option max_page_values)"),
                    value: (produced as u64).saturating_add(values as u64),
                    limit: max as u64,
                });
            }
            _ => {}
        }
        out.reserve(values);
        out.push(map(first));
        if w == 0 {
            // Every rebased delta is 0: an arithmetic progression.
            out.extend((1..=n).map(|i| map(first.wrapping_add(min_delta.wrapping_mul_usize(i)))));
        } else {
            let mut prev = first;
            let mut done = 0usize;
            while done < n {
                let m = CHUNK.min(n - done);
                // `done` is a multiple of 8, so the chunk starts on a byte boundary.
                let src = body.get(done / 8 * w as usize..).unwrap_or(&[]);
                // why: m <= CHUNK = scratch.len() (the min above); hot loop, keeps its shape.
                #[allow(clippy::indexing_slicing)]
                let lane = &mut scratch[..m];
                bits::unpack(w, src, lane)?;
                out.extend(lane.iter().map(|&r| {
                    prev = prev.wrapping_add(min_delta).wrapping_add(T::from_u64(r));
                    map(prev)
                }));
                done += m;
            }
        }
        produced += values;
        pos = end;
    }
    Ok(produced)
}

/// Where decoding of values `start..` of a `count`-value integer stream begins: the byte of
/// the block holding value `start` and the index of that block's first value. The headers of
/// the blocks before it are checked (and their values counted against `count`), their
/// deltas are not read.
fn skip_blocks<T: PackedInt>(data: &[u8], count: usize, start: usize, what: &str) -> Result<(usize, usize)> {
    let (mut pos, mut index) = (0usize, 0usize);
    while pos < data.len() {
        let b = Block::<T>::parse(data, pos, what)?;
        b.check_fits(pos, index, count, what)?;
        if index + b.values() > start {
            break;
        }
        index += b.values();
        pos = b.end;
    }
    Ok((pos, index))
}

/// Decode exactly `count` values of an integer stream.
fn decode_int<T: PackedInt>(data: &[u8], count: usize, out: &mut Vec<T>, what: &str) -> Result<()> {
    out.reserve(initial_capacity(count, data.len()));
    let produced = decode_blocks::<T, T, _>(data, 0, Limit::Count(count), out, what, |x| x)?;
    check_count(produced, count, data.len(), what)
}

/// Decode values `start..n` of an integer stream of `count` values, appending to `out`
/// from the first value of the block that holds value `start` (blocks before it are
/// skipped by their headers, blocks after the one holding value `n - 1` are not read).
/// Returns the index of the first value appended.
fn decode_int_window<T: PackedInt>(
    data: &[u8],
    count: usize,
    start: usize,
    n: usize,
    out: &mut Vec<T>,
    what: &str,
) -> Result<usize> {
    let n = n.min(count);
    let (pos, first) = skip_blocks::<T>(data, count, start.min(n), what)?;
    let base = out.len();
    let wanted = n.saturating_sub(first);
    out.reserve(initial_capacity(wanted, data.len() - pos.min(data.len())));
    let produced = decode_blocks::<T, T, _>(data, pos, Limit::Prefix { count: count - first, stop: wanted }, out, what, |x| x)?;
    if produced < wanted {
        return check_count(first + produced, count, data.len(), what).map(|_| first);
    }
    out.truncate(base + wanted);
    Ok(first)
}

/// Decode values `start..n` of a stream's `count` INT64/TIMESTAMP values (a reader keeping
/// rows `start..n` of a page): appends from the first value of the block holding value
/// `start` and returns that value's index. Blocks before it are skipped by their headers
/// and blocks after the one holding value `n - 1` are not read, so damage inside them goes
/// unnoticed, as in a page that is skipped.
pub fn decode_i64_window(data: &[u8], count: usize, start: usize, n: usize, out: &mut Vec<i64>) -> Result<usize> {
    decode_int_window(data, count, start, n, out, "TS_2DIFF INT64 stream")
}

/// [`decode_i64_window`] for INT32/DATE.
pub fn decode_i32_window(data: &[u8], count: usize, start: usize, n: usize, out: &mut Vec<i32>) -> Result<usize> {
    decode_int_window(data, count, start, n, out, "TS_2DIFF INT32 stream")
}

/// Decode the part of a time stream of `count` ascending timestamps that can hold values in
/// `[lo, hi]`: the blocks whose span (from their first value to the next block's first
/// value) meets the range. Every block header is checked, the values are counted against
/// `count` and the first values must ascend; the deltas of the other blocks are not read.
/// Appends the decoded timestamps to `out` and returns the index of the first one in the
/// stream (the caller checks that they ascend and finds the range among them).
pub fn decode_time_window(data: &[u8], count: usize, lo: i64, hi: i64, out: &mut Vec<i64>) -> Result<usize> {
    const WHAT: &str = "TS_2DIFF time stream";
    // (byte, index) of the first block needed, and the index after the last one.
    let mut from: Option<(usize, usize)> = None;
    let mut upto = 0usize;
    let mut prev: Option<(Block<i64>, usize, usize)> = None;
    let mut need = |b: &Block<i64>, pos: usize, index: usize, next_first: Option<i64>| {
        if b.first <= hi && next_first.is_none_or(|f| f > lo) {
            from.get_or_insert((pos, index));
            upto = index + b.values();
        }
    };
    let (mut pos, mut index) = (0usize, 0usize);
    while pos < data.len() {
        let b = Block::<i64>::parse(data, pos, WHAT)?;
        b.check_fits(pos, index, count, WHAT)?;
        if let Some((p, ppos, pindex)) = prev {
            if b.first <= p.first {
                return Err(corrupt(
                    WHAT,
                    format!(
                        "block at byte {pos} starts at {}, not after the block before it ({}): timestamps must ascend",
                        b.first, p.first
                    ),
                ));
            }
            need(&p, ppos, pindex, Some(b.first));
        }
        prev = Some((b, pos, index));
        index += b.values();
        pos = b.end;
    }
    if let Some((p, ppos, pindex)) = prev {
        need(&p, ppos, pindex, None);
    }
    check_count(index, count, data.len(), WHAT)?;
    let Some((pos, first)) = from else {
        return Ok(0);
    };
    out.reserve(upto - first);
    let produced =
        decode_blocks::<i64, i64, _>(data, pos, Limit::Prefix { count: count - first, stop: upto - first }, out, WHAT, |x| x)?;
    if produced != upto - first {
        return Err(corrupt(WHAT, format!("decoded {produced} values of blocks holding {}", upto - first)));
    }
    Ok(first)
}

fn check_count(produced: usize, count: usize, len: usize, what: &str) -> Result<()> {
    if produced != count {
        return Err(corrupt(what, format!("at byte {len}: stream ends after {produced} of {count} values")));
    }
    Ok(())
}

/// Decode `count` INT32/DATE values.
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode_int(data, count, out, "TS_2DIFF INT32 stream")
}

/// Decode `count` INT64/TIMESTAMP values.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode_int(data, count, out, "TS_2DIFF INT64 stream")
}

/// Decode `count` FLOAT values (scaled-integer wrapper over INT32 blocks).
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    decode_float(data, count, out, "TS_2DIFF FLOAT stream")
}

/// Decode `count` DOUBLE values (scaled-integer wrapper over INT64 blocks).
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_float(data, count, out, "TS_2DIFF DOUBLE stream")
}

/// Decode a whole INT64 time stream whose value count is not known: blocks until the end
/// of `data`. Fails with [`TsFileError::LimitExceeded`] before reserving or producing a
/// block that would take the total above `max_values`.
pub fn decode_i64_to_end(data: &[u8], out: &mut Vec<i64>, max_values: usize) -> Result<()> {
    out.reserve(initial_capacity(max_values, data.len()));
    decode_blocks::<i64, i64, _>(data, 0, Limit::Max(max_values), out, "TS_2DIFF time stream", |x| x)?;
    Ok(())
}

/// Whether the block headers of a decoded INT64 stream alone show that its `values` strictly
/// ascend, without looking at every value: in each block with deltas the smallest is at
/// least 1 and even the largest deltas its bit width allows cannot carry the block past
/// `i64::MAX`, and each block starts above the last value of the block before. `false`
/// means unknown (a block with a delta below 1, deltas too wide for the bound, or a stream
/// that does not match `values`): compare the values themselves.
pub fn ascending_by_headers(data: &[u8], values: &[i64]) -> bool {
    let (mut pos, mut index) = (0usize, 0usize);
    let mut last: Option<i64> = None;
    while pos < data.len() {
        let Ok(b) = Block::<i64>::parse(data, pos, "TS_2DIFF time stream") else {
            return false;
        };
        if values.get(index) != Some(&b.first) || last.is_some_and(|l| b.first <= l) {
            return false;
        }
        let widest = (1i128 << b.w) - 1;
        let top = i128::from(b.first) + b.n as i128 * (i128::from(b.min_delta) + widest);
        if (b.n > 0 && b.min_delta < 1) || top > i128::from(i64::MAX) {
            return false;
        }
        index += b.values();
        last = values.get(index - 1).copied();
        pos = b.end;
    }
    index == values.len()
}

fn decode_float<F: ScaledFloat>(data: &[u8], count: usize, out: &mut Vec<F>, what: &str) -> Result<()> {
    if data.is_empty() && count == 0 {
        return Ok(());
    }
    let (wrapper, start) = FloatWrapper::parse(data, count, what)?;
    out.reserve(initial_capacity(count, data.len()));
    let limit = Limit::Count(count);
    let produced = if wrapper.is_form1() {
        let scale = wrapper.scale;
        decode_blocks::<F::Int, F, _>(data, start, limit, out, what, |x| F::scaled(x, scale))?
    } else {
        let mut p = 0usize;
        decode_blocks::<F::Int, F, _>(data, start, limit, out, what, |x| {
            let v = wrapper.value(p, x);
            p += 1;
            v
        })?
    };
    check_count(produced, count, data.len(), what)
}

/// TS_2DIFF encoders: the writer's (INT32/DATE, INT64/TIMESTAMP and time columns) and, for
/// tests, the lossy FLOAT/DOUBLE variants.
pub mod encode {
    use crate::encoding::bits::BitWriter;

    /// Deltas per block, as the Java and C++ writers use (a block holds one value more).
    pub const BLOCK: usize = 128;

    macro_rules! block_encoder {
        ($name:ident, $t:ty, $u:ty) => {
            /// Append `values` as blocks of at most `block` deltas (writers use 128). No
            /// allocation besides the growth of `out`; never panics.
            pub fn $name(values: &[$t], block: usize, out: &mut Vec<u8>) {
                let block = block.max(1);
                for chunk in values.chunks(block.saturating_add(1)) {
                    let Some((&first, rest)) = chunk.split_first() else { continue };
                    let mut prev = first;
                    let mut min = if rest.is_empty() { 0 } else { <$t>::MAX };
                    for &v in rest {
                        min = min.min(v.wrapping_sub(prev));
                        prev = v;
                    }
                    // why: a rebased delta is the bit pattern of a wrapping difference.
                    #[allow(clippy::cast_sign_loss)]
                    let rebase = |v: $t, prev: $t| v.wrapping_sub(prev).wrapping_sub(min) as $u;
                    let mut prev = first;
                    let mut all = 0 as $u;
                    for &v in rest {
                        all |= rebase(v, prev);
                        prev = v;
                    }
                    let width = <$u>::BITS - all.leading_zeros();
                    // why: a width is at most 64, and writers' blocks hold 128 deltas.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                    {
                        out.extend_from_slice(&(rest.len() as i32).to_be_bytes());
                        out.extend_from_slice(&(width as i32).to_be_bytes());
                    }
                    out.extend_from_slice(&min.to_be_bytes());
                    out.extend_from_slice(&first.to_be_bytes());
                    if width > 0 {
                        let mut w = BitWriter::with_buffer(std::mem::take(out));
                        let mut prev = first;
                        for &v in rest {
                            w.write(u64::from(rebase(v, prev)), width);
                            prev = v;
                        }
                        *out = w.finish();
                    }
                }
            }
        };
    }
    block_encoder!(i32_blocks_into, i32, u32);
    block_encoder!(i64_blocks_into, i64, u64);

    /// Append an INT32/DATE stream with 128-delta blocks.
    pub fn i32_into(values: &[i32], out: &mut Vec<u8>) {
        i32_blocks_into(values, BLOCK, out);
    }

    /// Append an INT64/TIMESTAMP (or time) stream with 128-delta blocks.
    pub fn i64_into(values: &[i64], out: &mut Vec<u8>) {
        i64_blocks_into(values, BLOCK, out);
    }

    /// Blocks of at most `block` deltas.
    #[cfg(any(test, feature = "test-util"))]
    pub fn i32_blocks(values: &[i32], block: usize) -> Vec<u8> {
        let mut out = Vec::new();
        i32_blocks_into(values, block, &mut out);
        out
    }

    /// Blocks of at most `block` deltas.
    #[cfg(any(test, feature = "test-util"))]
    pub fn i64_blocks(values: &[i64], block: usize) -> Vec<u8> {
        let mut out = Vec::new();
        i64_blocks_into(values, block, &mut out);
        out
    }

    /// INT32 stream with 128-delta blocks.
    #[cfg(any(test, feature = "test-util"))]
    pub fn i32(values: &[i32]) -> Vec<u8> {
        i32_blocks(values, BLOCK)
    }

    /// INT64 stream with 128-delta blocks.
    #[cfg(any(test, feature = "test-util"))]
    pub fn i64(values: &[i64]) -> Vec<u8> {
        i64_blocks(values, BLOCK)
    }

    /// FLOAT stream: wrapper with `mpn` decimal digits, then 128-delta INT32 blocks.
    #[cfg(any(test, feature = "test-util"))]
    pub fn f32(values: &[f32], mpn: u32) -> Vec<u8> {
        let (mut out, ints) = crate::encoding::float_wrapper::encode::float_wrapper_f32(values, mpn);
        out.extend(i32(&ints));
        out
    }

    /// DOUBLE stream: wrapper with `mpn` decimal digits, then 128-delta INT64 blocks.
    #[cfg(any(test, feature = "test-util"))]
    pub fn f64(values: &[f64], mpn: u32) -> Vec<u8> {
        let (mut out, ints) = crate::encoding::float_wrapper::encode::float_wrapper_f64(values, mpn);
        out.extend(i64(&ints));
        out
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

    fn f32s(data: &[u8], count: usize) -> Result<Vec<f32>> {
        let mut v = Vec::new();
        decode_f32(data, count, &mut v).map(|_| v)
    }

    fn f64s(data: &[u8], count: usize) -> Result<Vec<f64>> {
        let mut v = Vec::new();
        decode_f64(data, count, &mut v).map(|_| v)
    }

    fn times(data: &[u8], max: usize) -> Result<Vec<i64>> {
        let mut v = Vec::new();
        decode_i64_to_end(data, &mut v, max)?;
        if ascending_by_headers(data, &v) {
            assert!(v.windows(2).all(|w| w[0] < w[1]), "not ascending: {v:?}");
        }
        Ok(v)
    }

    fn detail(e: &TsFileError) -> String {
        match e {
            TsFileError::Corrupt { what, detail, .. } => format!("{what}: {detail}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    fn bits32(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    fn bits64(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    // ---- worked examples of the spec ----

    #[test]
    fn test_decode_i64_spec_example() {
        let bytes = h("00000003 00000003 ffffffffffffffff 0000000000000064 9c 00");
        assert_eq!(i64s(&bytes, 4).unwrap(), vec![100, 103, 109, 108]);
        assert_eq!(encode::i64(&[100, 103, 109, 108]), bytes);
    }

    #[test]
    fn test_ascending_by_headers() {
        let mut v = Vec::new();
        let mut check = |values: &[i64], block: usize| {
            let data = encode::i64_blocks(values, block);
            v.clear();
            decode_i64_to_end(&data, &mut v, usize::MAX).unwrap();
            assert_eq!(v, values);
            ascending_by_headers(&data, &v)
        };
        let clock: Vec<i64> = (0..1000).map(|i| 1_700_000_000_000 + i * 1000 + (i * 37) % 500).collect();
        for block in [1, 2, 7, 128, 1000] {
            assert!(check(&clock, block), "block {block}");
            // Huge deltas: the bound (every delta as large as the width allows) holds for
            // one delta per block only; beyond that the answer is "unknown".
            assert_eq!(check(&[i64::MIN, -1, 0, i64::MAX], block), block == 1, "extremes, block {block}");
            assert!(check(&clock[..1], block));
            // A delta of 0, a step down, or a step down between blocks: not shown ascending.
            for i in [1, 2, 7, 8, 500, 999] {
                let mut equal = clock.clone();
                equal[i] = equal[i - 1];
                assert!(!check(&equal, block), "equal at {i}, block {block}");
                let mut down = clock.clone();
                down[i] = down[i - 1] - 1;
                assert!(!check(&down, block), "down at {i}, block {block}");
            }
        }
        // Deltas that wrap around i64 in the decoder's arithmetic are not taken as ascending.
        let wrapping = encode::i64_blocks(&[i64::MAX - 1, i64::MAX, i64::MIN], 8);
        v.clear();
        decode_i64_to_end(&wrapping, &mut v, usize::MAX).unwrap();
        assert!(!ascending_by_headers(&wrapping, &v));
        // Values that are not what the stream holds, or an empty stream with values.
        let data = encode::i64_blocks(&clock, 100);
        assert!(!ascending_by_headers(&data, &clock[1..]));
        assert!(!ascending_by_headers(&data, &clock[..999]));
        assert!(!ascending_by_headers(&[], &clock[..1]));
        assert!(ascending_by_headers(&[], &[]));
    }

    #[test]
    fn test_decode_i64_to_end_spec_time_example() {
        let bytes = h("00000004 00000000 0000000000000001 0000000000000000");
        assert_eq!(times(&bytes, 1000).unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(i64s(&bytes, 5).unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(encode::i64(&[0, 1, 2, 3, 4]), bytes);
    }

    #[test]
    fn test_decode_f32_spec_example() {
        let bytes = h("02 00000001 00000000 0000004b 00000096");
        assert_eq!(f32s(&bytes, 2).unwrap(), vec![1.5, 2.25]);
        assert_eq!(encode::f32(&[1.5, 2.25], 2), bytes);
    }

    #[test]
    fn test_decode_f64_spec_example_form3_nan() {
        let bytes = h("fe ff ff ff 07 02 01 02 02 00000001 00000000 7ff7ffffffffff6a 0000000000000096");
        let got = f64s(&bytes, 2).unwrap();
        assert_eq!(got[0], 1.5);
        assert_eq!(got[1].to_bits(), 0x7ff8_0000_0000_0000);
        assert_eq!(encode::f64(&[1.5, f64::NAN], 2), bytes);
    }

    #[test]
    fn test_decode_f64_spec_example_form2() {
        // The spec elides the blocks; they follow from the rules: one block, n = 1, w = 0,
        // min_delta = 1e17 - 150, first = 150.
        let bytes = h("ff ff ff ff 07 02 01 02 00000001 00000000 016345785d89ff6a 0000000000000096");
        assert_eq!(f64s(&bytes, 2).unwrap(), vec![1.5, 1e17]);
        assert_eq!(encode::f64(&[1.5, 1e17], 2), bytes);
    }

    /// A FLOAT page written by the C++ writer (PyPI `tsfile` 2.5): 140 values
    /// `i * 0.25 - 10`, except [135] = NaN, [137] = +inf, [138] = 3e7, [139] = -1.005.
    const CPP_FLOAT_PAGE: &str = "feffffff078c01ffffffffffffffffffffffffffffffff7f0900000000000000\
        000000000000000000800202000000800000000000000019fffffc180000000a0000002080400960000008b1\
        7fbff6b97fbff6b97fbff6b97fbff6b97fbff6b9ff7fed7200000000ff3fed400209ba207df632bc";

    /// The same values as DOUBLE, except [138] = 1e17.
    const CPP_DOUBLE_PAGE: &str = "feffffff078c01ffffffffffffffffffffffffffffffff7f0900000000000000\
        00000000000000000080020200000080000000000000000000000019fffffffffffffc180000000a00000040\
        800800000000096000000000000008b17ff7fffffffff6b97ff7fffffffff6b97ff7fffffffff6b97ff7ffff\
        fffff6b97ff7fffffffff6b9ffefffffffffed720000000000000000ffe7ffffffffed40016b45785d89f6a0\
        7e94ba87a275f63c";

    #[test]
    fn test_decode_f32_cpp_writer_page_form3() {
        let got = f32s(&h(CPP_FLOAT_PAGE), 140).unwrap();
        for (i, v) in got.iter().enumerate().take(135) {
            assert_eq!(*v, i as f32 * 0.25 - 10.0, "value {i}");
        }
        assert_eq!(got[135].to_bits(), 0x7fc0_0000);
        assert_eq!(got[136], 24.0);
        assert_eq!(got[137], f32::INFINITY);
        assert_eq!(got[138], 3e7);
        assert_eq!(got[139], -1.0, "lossy: -1.005 is rounded to 2 decimals by the writer");
        // Our encoder produces the same bytes.
        let mut vals: Vec<f32> = (0..140).map(|i| i as f32 * 0.25 - 10.0).collect();
        vals[135] = f32::NAN;
        vals[137] = f32::INFINITY;
        vals[138] = 3e7;
        vals[139] = -1.005;
        assert_eq!(encode::f32(&vals, 2), h(CPP_FLOAT_PAGE));
    }

    #[test]
    fn test_decode_f64_cpp_writer_page_form3() {
        let got = f64s(&h(CPP_DOUBLE_PAGE), 140).unwrap();
        for (i, v) in got.iter().enumerate().take(135) {
            assert_eq!(*v, i as f64 * 0.25 - 10.0, "value {i}");
        }
        assert!(got[135].is_nan());
        assert_eq!(got[136], 24.0);
        assert_eq!(got[137], f64::INFINITY);
        assert_eq!(got[138], 1e17);
        assert_eq!(got[139], -1.0);
    }

    // ---- integer edge cases ----

    #[test]
    fn test_decode_zero_and_one_value() {
        assert!(i32s(&[], 0).unwrap().is_empty());
        assert!(i64s(&[], 0).unwrap().is_empty());
        assert!(f32s(&[], 0).unwrap().is_empty());
        assert!(f64s(&[], 0).unwrap().is_empty());
        assert!(times(&[], 10).unwrap().is_empty());
        // One value: a block with n = 0.
        let one = encode::i32(&[-7]);
        assert_eq!(one, h("00000000 00000000 00000000 fffffff9"));
        assert_eq!(i32s(&one, 1).unwrap(), vec![-7]);
        assert_eq!(i64s(&encode::i64(&[i64::MIN]), 1).unwrap(), vec![i64::MIN]);
        assert_eq!(f32s(&encode::f32(&[2.5], 2), 1).unwrap(), vec![2.5]);
        // Empty data but values expected.
        assert!(i32s(&[], 1).is_err());
        assert!(f64s(&[], 1).is_err());
    }

    #[test]
    fn test_decode_exact_block_multiples() {
        for n in [128usize, 129, 130, 257, 258, 259, 387] {
            let vals: Vec<i64> = (0..n as i64).map(|i| i * i * 31 - 1000 * (i % 7)).collect();
            let bytes = encode::i64(&vals);
            assert_eq!(i64s(&bytes, n).unwrap(), vals, "n {n}");
            assert_eq!(times(&bytes, n).unwrap(), vals, "n {n}");
            let v32: Vec<i32> = vals.iter().map(|&v| v as i32).collect();
            assert_eq!(i32s(&encode::i32(&v32), n).unwrap(), v32, "n {n}");
        }
        // 129 values = exactly one full block; 258 = two.
        let b = encode::i32(&(0..258).collect::<Vec<i32>>());
        assert_eq!(b.len(), 2 * 16);
        assert_eq!(&b[..4], &[0, 0, 0, 128]);
    }

    #[test]
    fn test_decode_i32_extremes_and_wrapping_deltas() {
        let vals = [i32::MIN, i32::MAX, i32::MIN, 0, -1, i32::MAX, i32::MAX, i32::MIN + 1];
        let bytes = encode::i32(&vals);
        // Deltas span the whole 32-bit range: width 32.
        assert_eq!(&bytes[4..8], &[0, 0, 0, 32]);
        assert_eq!(i32s(&bytes, vals.len()).unwrap(), vals);
        let vals = [i64::MIN, i64::MAX, i64::MIN, 0, -1, i64::MAX, 5];
        let bytes = encode::i64(&vals);
        assert_eq!(&bytes[4..8], &[0, 0, 0, 64]);
        assert_eq!(i64s(&bytes, vals.len()).unwrap(), vals);
        assert_eq!(times(&bytes, 100).unwrap(), vals);
    }

    #[test]
    fn test_decode_width_zero_progression_wraps() {
        // w = 0 with a negative min_delta that wraps around.
        let vals: Vec<i32> = (0..100).map(|i: i32| i32::MAX.wrapping_add(i.wrapping_mul(-3))).collect();
        let bytes = encode::i32(&vals);
        assert_eq!(&bytes[4..8], &[0, 0, 0, 0]);
        assert_eq!(i32s(&bytes, 100).unwrap(), vals);
        let vals: Vec<i64> = (0..100).map(|i: i64| i64::MIN.wrapping_add(i.wrapping_mul(i64::MAX / 3))).collect();
        assert_eq!(i64s(&encode::i64(&vals), 100).unwrap(), vals);
    }

    #[test]
    fn test_decode_long_block_beyond_writer_limit() {
        // n is not limited to 128 by the format.
        let vals: Vec<i64> = (0..1000).map(|i| i * 3 + (i % 5)).collect();
        let bytes = encode::i64_blocks(&vals, 999);
        assert_eq!(&bytes[..4], &999i32.to_be_bytes());
        assert_eq!(i64s(&bytes, 1000).unwrap(), vals);
        // And short blocks of a single delta.
        let bytes = encode::i64_blocks(&vals, 1);
        assert_eq!(i64s(&bytes, 1000).unwrap(), vals);
    }

    #[test]
    fn test_decode_count_mismatch_is_error() {
        let bytes = encode::i32(&(0..300).collect::<Vec<_>>());
        let e = i32s(&bytes, 299).unwrap_err();
        assert!(detail(&e).contains("holds 42 values but only 41 of 299 remain"), "{}", detail(&e));
        let e = i32s(&bytes, 301).unwrap_err();
        assert!(detail(&e).contains("after 300 of 301"), "{}", detail(&e));
        assert!(i32s(&bytes, 0).is_err());
        let f = encode::f32(&[1.0, 2.0, 3.0], 2);
        assert!(f32s(&f, 2).is_err());
        assert!(f32s(&f, 4).is_err());
    }

    #[test]
    fn test_decode_bad_header_is_error() {
        // Width above the type width.
        let e = i32s(&h("00000001 00000021 00000000 00000000 00000000 00"), 2).unwrap_err();
        assert!(detail(&e).contains("bit width 33"), "{}", detail(&e));
        let ok64 = h("00000000 00000040 0000000000000000 0000000000000001");
        assert_eq!(i64s(&ok64, 1).unwrap(), vec![1]);
        let bad64 = h("00000000 00000041 0000000000000000 0000000000000001");
        assert!(i64s(&bad64, 1).is_err());
        // Negative n and negative width.
        assert!(i32s(&h("ffffffff 00000000 00000000 00000000"), 1).is_err());
        assert!(i32s(&h("00000000 ffffffff 00000000 00000000"), 1).is_err());
        // Trailing garbage shorter than a header.
        let mut b = encode::i32(&[1, 2, 3]);
        b.push(0);
        let e = i32s(&b, 3).unwrap_err();
        assert!(detail(&e).contains("block at byte 16: truncated header"), "{}", detail(&e));
    }

    #[test]
    fn test_decode_truncated_at_every_byte_is_error() {
        let vals: Vec<i64> = (0..140).map(|i| i * 1_000_003 - (i % 3) * 77).collect();
        let bytes = encode::i64(&vals);
        for cut in 0..bytes.len() {
            assert!(i64s(&bytes[..cut], vals.len()).is_err(), "cut {cut}");
            // To the end: truncation inside a block is an error; at a block boundary the
            // stream is simply shorter.
            if let Ok(v) = times(&bytes[..cut], 1 << 20) {
                assert!(v.len() < vals.len() && vals.starts_with(&v), "cut {cut}");
            }
        }
        let ok_cuts: Vec<usize> = (0..bytes.len()).filter(|&c| times(&bytes[..c], 1 << 20).is_ok()).collect();
        let w = u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
        assert!(w > 0);
        let first_block = 24 + (128 * w).div_ceil(8);
        assert_eq!(ok_cuts, vec![0, first_block]);
        let v32: Vec<i32> = (0..20).map(|i| i * -977).collect();
        let b32 = encode::i32(&v32);
        for cut in 0..b32.len() {
            assert!(i32s(&b32[..cut], v32.len()).is_err(), "cut {cut}");
        }
        let f = encode::f64(&[1.5, f64::NAN, 1e17, -3.25], 2);
        for cut in 0..f.len() {
            assert!(f64s(&f[..cut], 4).is_err(), "cut {cut}");
        }
        let f = encode::f32(&[1.5, f32::INFINITY, 3e7, -3.25], 2);
        for cut in 0..f.len() {
            assert!(f32s(&f[..cut], 4).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn test_decode_i64_to_end_limit_checked_before_allocating() {
        // A 24-byte block that claims 2^31 values (n = i32::MAX, w = 0).
        let bomb = h("7fffffff 00000000 0000000000000001 0000000000000000");
        let mut out = Vec::new();
        let e = decode_i64_to_end(&bomb, &mut out, 1 << 24).unwrap_err();
        assert!(matches!(e, TsFileError::LimitExceeded { value: 0x8000_0000, .. }), "{e:?}");
        assert!(out.is_empty());
        assert!(out.capacity() < 1 << 20);
        // The limit applies to the running total across blocks.
        let bytes = encode::i64(&(0..300).collect::<Vec<_>>());
        assert_eq!(times(&bytes, 300).unwrap().len(), 300);
        assert!(matches!(times(&bytes, 299), Err(TsFileError::LimitExceeded { .. })));
        assert!(matches!(times(&bytes, 257), Err(TsFileError::LimitExceeded { .. })));
        // By count, the same bomb is a count mismatch, found before producing anything.
        let mut out = Vec::new();
        assert!(decode_i64(&bomb, 10, &mut out).is_err());
        assert!(out.is_empty());
    }

    // ---- float wrapper ----

    #[test]
    fn test_decode_f32_form1_scaling_rules() {
        // mpn 0: scale 1.
        let b = encode::f32(&[3.0, -7.0, 12.0], 0);
        assert_eq!(b[0], 0);
        assert_eq!(f32s(&b, 3).unwrap(), vec![3.0, -7.0, 12.0]);
        // Lossy: 3.125 with 2 digits reads back as 3.13 (rounded in f64, then cast).
        assert_eq!(f32s(&encode::f32(&[3.125], 2), 1).unwrap(), vec![3.13]);
        // -0.0 becomes 0.0.
        assert_eq!(f32s(&encode::f32(&[-0.0], 2), 1).unwrap()[0].to_bits(), 0);
        // A header value with the high bit set is a negative Java int: no scaling.
        let mut b = h("80 80 80 80 08");
        b.extend(encode::i32(&[42]));
        assert_eq!(f32s(&b, 1).unwrap(), vec![42.0]);
        // A huge mpn divides by infinity.
        let mut b = h("90 03");
        b.extend(encode::i32(&[42]));
        assert_eq!(f32s(&b, 1).unwrap(), vec![0.0]);
    }

    #[test]
    fn test_decode_f32_special_values_raw_bitmap() {
        let nan_payload = f32::from_bits(0x7fa0_0001);
        let vals = [1.25, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30, nan_payload, 0.5];
        let bytes = encode::f32(&vals, 2);
        assert_eq!(&bytes[..5], &h("fe ff ff ff 07")[..]);
        assert_eq!(bits32(&f32s(&bytes, vals.len()).unwrap()), bits32(&vals));
    }

    #[test]
    fn test_decode_f64_special_values_raw_bitmap() {
        let vals =
            [f64::NAN, -1.5, f64::INFINITY, f64::NEG_INFINITY, 1e300, -0.0, f64::from_bits(0xfff0_0000_0000_0001), 1e17, -1e18];
        let got = f64s(&encode::f64(&vals, 2), vals.len()).unwrap();
        let mut want = vals;
        want[5] = 0.0; // scaled: the sign of zero is lost
        assert_eq!(bits64(&got), bits64(&want));
    }

    #[test]
    fn test_decode_f32_form2_unscaled_values() {
        // 3e7 * 100 overflows INT32: stored rounded, read back with divisor 1.
        let vals = [3e7, 1.5, -2e8, 0.01];
        let bytes = encode::f32(&vals, 2);
        assert_eq!(&bytes[..5], &h("ff ff ff ff 07")[..]);
        assert_eq!(bytes[5], 4); // cnt
        assert_eq!(bytes[6], 0b1010); // scaled bitmap: positions 1 and 3
        assert_eq!(f32s(&bytes, 4).unwrap(), vals);
    }

    #[test]
    fn test_decode_float_bitmaps_span_blocks() {
        // Page positions, not block positions, index the bitmaps.
        let mut vals: Vec<f64> = (0..300).map(|i| i as f64 / 4.0).collect();
        for p in [0usize, 128, 129, 200, 257, 258, 299] {
            vals[p] = if p % 2 == 0 { f64::NAN } else { 1e17 + p as f64 * 256.0 };
        }
        let got = f64s(&encode::f64(&vals, 2), 300).unwrap();
        assert_eq!(bits64(&got), bits64(&vals));
        // Exactly 8 values: the bitmaps still have cnt/8 + 1 = 2 bytes.
        let v8 = [f32::NAN, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let b = encode::f32(&v8, 2);
        assert_eq!(b.len(), 5 + 1 + 2 + 2 + 1 + 16 + (7 * 32usize).div_ceil(8));
        assert_eq!(bits32(&f32s(&b, 8).unwrap()), bits32(&v8));
    }

    #[test]
    fn test_decode_float_header_errors() {
        // cnt disagrees with the page's value count.
        let b = encode::f64(&[f64::NAN, 1.0], 2);
        let e = f64s(&b, 3).unwrap_err();
        assert!(detail(&e).contains("declares 2 values"), "{}", detail(&e));
        // Truncated bitmaps / tag.
        assert!(f64s(&b[..7], 2).is_err());
        assert!(f64s(&h("ff ff"), 1).is_err());
        // Header only, no blocks.
        assert!(f32s(&h("02"), 1).is_err());
        assert_eq!(f32s(&h("02"), 0).unwrap(), Vec::<f32>::new());
    }

    /// The window decoders against the full decode: what they append starts at the index
    /// they return and covers what was asked.
    fn check_int_window(vals: &[i64], block: usize, start: usize, end: usize) {
        let data = encode::i64_blocks(vals, block);
        let mut out = vec![7];
        let first = decode_i64_window(&data, vals.len(), start, end, &mut out).unwrap();
        let end = end.min(vals.len());
        assert!(first <= start.min(end), "{block} {start}..{end}: first {first}");
        // At a block boundary (blocks of block + 1 values), or at the end for an empty window.
        assert!(first.is_multiple_of(block + 1) || first == vals.len(), "{block} {start}..{end}: first {first}");
        assert_eq!(out[0], 7, "appends");
        assert_eq!(&out[1..], &vals[first..end], "{block} {start}..{end}");
    }

    fn check_time_window(vals: &[i64], block: usize, lo: i64, hi: i64) {
        let data = encode::i64_blocks(vals, block);
        let mut out = Vec::new();
        let first = decode_time_window(&data, vals.len(), lo, hi, &mut out).unwrap();
        let kept: Vec<i64> = vals.iter().copied().filter(|t| (lo..=hi).contains(t)).collect();
        let got: Vec<i64> = out.iter().copied().filter(|t| (lo..=hi).contains(t)).collect();
        assert_eq!(got, kept, "block {block}, [{lo}, {hi}]");
        assert_eq!(&vals[first..first + out.len()], &out[..], "block {block}, [{lo}, {hi}]: index {first}");
        // Only whole blocks that can hold the range: at most one block before and after it.
        assert!(
            out.len() <= kept.len() + 2 * (block + 1),
            "block {block}, [{lo}, {hi}]: {} decoded for {}",
            out.len(),
            kept.len()
        );
    }

    #[test]
    fn test_decode_window_skips_blocks_and_matches_the_full_decode() {
        let vals: Vec<i64> = (0..1000i64).map(|i| i * 10 + (i % 7)).collect();
        for block in [1, 8, 128, 999, 1000, 2000] {
            for (start, end) in
                [(0, 0), (0, 1), (5, 6), (127, 129), (128, 256), (500, 1000), (999, 1000), (1000, 1000), (0, 5000), (300, 200)]
            {
                check_int_window(&vals, block, start, end);
            }
            // Before, after, around block starts, between two timestamps, one timestamp,
            // everything, nothing (lo > hi).
            for (lo, hi) in [
                (i64::MIN, -1),
                (20_000, i64::MAX),
                (1280, 1290),
                (1279, 1281),
                (5001, 5009),
                (5003, 5003),
                (i64::MIN, i64::MAX),
                (700, 9000),
                (3000, 2000),
                (0, 0),
                (9996, 9996),
            ] {
                check_time_window(&vals, block, lo, hi);
            }
        }
        let mut out = Vec::new();
        assert_eq!(decode_time_window(&[], 0, 0, 10, &mut out).unwrap(), 0);
        assert!(out.is_empty());
    }

    #[test]
    fn test_decode_window_checks_every_header_but_reads_only_its_blocks() {
        let vals: Vec<i64> = (0..300i64).map(|i| 1000 + i * 3).collect();
        let clean = encode::i64_blocks(&vals, 100);
        // Blocks of width 0 (constant deltas) are 24-byte headers: damage the deltas'
        // width of the first block to 64 with no bytes for them: its header is bad.
        let mut bad_header = clean.clone();
        bad_header[7] = 65;
        let mut out = Vec::new();
        assert!(decode_i64_window(&bad_header, 300, 250, 260, &mut out).is_err());
        assert!(decode_time_window(&bad_header, 300, 1750, 1800, &mut out).is_err());
        // A wrong count is found from the headers alone.
        assert!(decode_i64_window(&clean, 299, 250, 260, &mut out).is_err());
        assert!(decode_time_window(&clean, 301, 1750, 1800, &mut out).unwrap_err().to_string().contains("ends after 300 of 301"));
        assert!(decode_time_window(&clean, 299, 1750, 1800, &mut out).is_err());
        // First values that do not ascend.
        let mut descending = clean.clone();
        descending[24 + 16..24 + 24].copy_from_slice(&0i64.to_be_bytes());
        let e = decode_time_window(&descending, 300, 1750, 1800, &mut out).unwrap_err();
        assert!(e.to_string().contains("must ascend"), "{e}");
        // The min delta of the first block is not read when the window lies in the third.
        let mut skipped = clean.clone();
        skipped[8..16].copy_from_slice(&(-5i64).to_be_bytes());
        out.clear();
        // (blocks of 101 values: the third starts at value 202).
        assert_eq!(decode_i64_window(&skipped, 300, 250, 260, &mut out).unwrap(), 202);
        assert_eq!(out, vals[202..260]);
        out.clear();
        assert_eq!(decode_time_window(&skipped, 300, 1750, 1800, &mut out).unwrap(), 202);
        assert_eq!(out, vals[202..300]);
    }

    proptest! {
        #[test]
        fn test_decode_i32_round_trip(vals in proptest::collection::vec(any::<i32>(), 0..400), block in 1usize..200) {
            prop_assert_eq!(i32s(&encode::i32_blocks(&vals, block), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_round_trip(vals in proptest::collection::vec(any::<i64>(), 0..400), block in 1usize..200) {
            let b = encode::i64_blocks(&vals, block);
            prop_assert_eq!(&i64s(&b, vals.len()).unwrap(), &vals);
            prop_assert_eq!(times(&b, vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_small_deltas_round_trip(
            start in any::<i64>(), steps in proptest::collection::vec(-1000i64..1000, 0..600)
        ) {
            let mut v = start;
            let vals: Vec<i64> = std::iter::once(start).chain(steps.iter().map(|s| { v = v.wrapping_add(*s); v })).collect();
            prop_assert_eq!(i64s(&encode::i64(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_f64_round_trip(ks in proptest::collection::vec(-10_000_000_000i64..10_000_000_000, 0..300)) {
            // Values with two decimals survive the scaling exactly.
            let vals: Vec<f64> = ks.iter().map(|&k| k as f64 / 100.0).collect();
            prop_assert_eq!(f64s(&encode::f64(&vals, 2), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_f32_round_trip(ks in proptest::collection::vec(-1_000_000i32..1_000_000, 0..300)) {
            let vals: Vec<f32> = ks.iter().map(|&k| (f64::from(k) / 100.0) as f32).collect();
            prop_assert_eq!(f32s(&encode::f32(&vals, 2), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_f32_any_bits_survive_when_raw(bits in proptest::collection::vec(any::<u32>(), 1..100)) {
            // Values that are NaN or beyond the INT32 range are stored as raw bits; others
            // are rounded to 2 decimals.
            let vals: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
            let got = f32s(&encode::f32(&vals, 2), vals.len()).unwrap();
            for (g, v) in got.iter().zip(&vals) {
                if v.is_nan() || v.abs() > 2.2e9 {
                    prop_assert_eq!(g.to_bits(), v.to_bits());
                } else {
                    prop_assert!((g - v).abs() <= 0.0051 + v.abs() * 1e-6, "{} vs {}", g, v);
                }
            }
        }

        #[test]
        fn test_decode_windows_match_the_full_decode(
            steps in proptest::collection::vec(1i64..50, 1..400), block in 1usize..150,
            a in 0usize..450, len in 0usize..450, lo in 0i64..20_000, span in -10i64..5_000,
        ) {
            let mut t = -1000i64;
            let vals: Vec<i64> = steps.iter().map(|s| { t += s; t }).collect();
            check_int_window(&vals, block, a, a + len);
            check_time_window(&vals, block, lo - 1000, lo - 1000 + span);
        }

        #[test]
        fn test_decode_never_panics_on_garbage(
            data in proptest::collection::vec(any::<u8>(), 0..120), count in 0usize..300
        ) {
            let _ = i32s(&data, count);
            let _ = i64s(&data, count);
            let _ = f32s(&data, count);
            let _ = f64s(&data, count);
            let _ = times(&data, 1 << 16);
        }
    }
}
