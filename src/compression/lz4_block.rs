//! The writer's LZ4 block compressor (raw block, no frame), for pages.
//!
//! ```text
//! sequence := token, [literal length bytes], literals, offset (u16 LE), [match length bytes]
//! token    := literal length (high 4 bits, 15 = more bytes follow) | match length - 4 (low 4 bits)
//! ```
//!
//! The last sequence holds literals only; the last 5 bytes are literals and no match starts
//! in the last 12 bytes (the format's end-of-block rules). Matches are found greedily through
//! a hash table of 2^16 positions (4-byte hash), extended backwards and forwards, and every
//! position is tried (no skipping over incompressible stretches). The reference library's
//! default mode has a 4,096-entry table and skips ahead after 64 misses; `lz4_flex`'s after
//! 32: on the XOR streams of GORILLA pages, which are short on repeats, trying every position
//! finds the matches those skip (the M benchmark's GORILLA columns: 3 % smaller than with
//! `lz4_flex`), at the price of speed on incompressible input. The output is a standard block:
//! any LZ4 decoder reads it (the tests use `lz4_flex`).

use std::cell::RefCell;

const MIN_MATCH: usize = 4;
/// Bytes at the end of a block that are always literals.
const LAST_LITERALS: usize = 5;
/// No match may start in the last this many bytes.
const MF_LIMIT: usize = 12;
const HASH_LOG: u32 = 16;
const MAX_OFFSET: usize = 65_535;

thread_local! {
    /// Hash table of positions (plus `base`) reused across calls: an entry below the call's
    /// `base` is from an earlier input and ignored, so the table is never cleared.
    static TABLE: RefCell<(Vec<u32>, u32)> = const { RefCell::new((Vec::new(), 0)) };
}

#[inline]
fn read_u32(data: &[u8], i: usize) -> u32 {
    match data.get(i..i + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}

#[inline]
fn hash(seq: u32) -> usize {
    (seq.wrapping_mul(2_654_435_761) >> (32 - HASH_LOG)) as usize
}

/// Append a length continuation: 255 while `len >= 255`, then the rest.
#[inline]
fn put_len(out: &mut Vec<u8>, mut len: usize) {
    while len >= 255 {
        out.push(255);
        len -= 255;
    }
    // why: `len` < 255 here.
    #[allow(clippy::cast_possible_truncation)]
    out.push(len as u8);
}

/// Append one sequence: `literals`, then (unless `None`) a match of `len` bytes at `offset`.
fn put_sequence(out: &mut Vec<u8>, literals: &[u8], matched: Option<(usize, usize)>) {
    let lit = literals.len();
    let lit_nibble = lit.min(15);
    let match_nibble = matched.map_or(0, |(_, len)| (len - MIN_MATCH).min(15));
    // why: both nibbles are at most 15.
    #[allow(clippy::cast_possible_truncation)]
    out.push(((lit_nibble << 4) | match_nibble) as u8);
    if lit >= 15 {
        put_len(out, lit - 15);
    }
    out.extend_from_slice(literals);
    if let Some((offset, len)) = matched {
        // why: offsets are at most 65,535.
        #[allow(clippy::cast_possible_truncation)]
        out.extend_from_slice(&(offset as u16).to_le_bytes());
        if len - MIN_MATCH >= 15 {
            put_len(out, len - MIN_MATCH - 15);
        }
    }
}

/// Compress `input` as one raw LZ4 block appended to `out`.
pub fn compress_into(input: &[u8], out: &mut Vec<u8>) {
    let n = input.len();
    out.reserve(n + n / 255 + 16);
    if n < MF_LIMIT + 1 || u32::try_from(n).is_err() {
        put_sequence(out, input, None);
        return;
    }
    TABLE.with_borrow_mut(|(table, base)| {
        if table.is_empty() {
            table.resize(1 << HASH_LOG, 0);
        }
        // Positions are stored as `base + pos + 1`; restart when they could overflow.
        let start = match base.checked_add(u32::try_from(n).unwrap_or(u32::MAX)).and_then(|b| b.checked_add(1)) {
            Some(_) => *base,
            None => {
                table.iter_mut().for_each(|e| *e = 0);
                0
            }
        };
        let stamp = |pos: usize| start + u32::try_from(pos).unwrap_or(0) + 1;
        let match_limit = n - MF_LIMIT;
        let end_limit = n - LAST_LITERALS;
        let mut anchor = 0usize;
        let mut i = 0usize;
        while i < match_limit {
            let seq = read_u32(input, i);
            let h = hash(seq);
            let Some(slot) = table.get_mut(h) else { break };
            let cand = *slot;
            *slot = stamp(i);
            if cand <= start {
                i += 1;
                continue;
            }
            let m = (cand - start - 1) as usize;
            if i - m > MAX_OFFSET || read_u32(input, m) != seq {
                i += 1;
                continue;
            }
            // Extend backwards over pending literals, then forwards.
            let (mut s, mut ms) = (i, m);
            while s > anchor && ms > 0 && input.get(s - 1) == input.get(ms - 1) {
                s -= 1;
                ms -= 1;
            }
            let mut e = i + MIN_MATCH;
            while e < end_limit && input.get(e) == input.get(m + (e - i)) {
                e += 1;
            }
            put_sequence(out, input.get(anchor..s).unwrap_or_default(), Some((s - ms, e - s)));
            // Index a position inside the match too, for the next search.
            if e >= 2 && e - 2 > s {
                if let Some(slot) = table.get_mut(hash(read_u32(input, e - 2))) {
                    *slot = stamp(e - 2);
                }
            }
            anchor = e;
            i = e;
        }
        put_sequence(out, input.get(anchor..).unwrap_or_default(), None);
        *base = start.saturating_add(u32::try_from(n).unwrap_or(u32::MAX)).saturating_add(1);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(input: &[u8]) -> usize {
        let mut out = Vec::new();
        compress_into(input, &mut out);
        let back = lz4_flex::block::decompress(&out, input.len()).unwrap();
        assert_eq!(back, input);
        out.len()
    }

    #[test]
    fn test_round_trips_and_compresses_repeats() {
        for input in [Vec::new(), vec![1], vec![7; 12], vec![7; 13], (0..=255u8).collect::<Vec<_>>()] {
            round_trip(&input);
        }
        let text: Vec<u8> = b"temperature humidity ".iter().copied().cycle().take(100_000).collect();
        assert!(round_trip(&text) < 1_000);
        // Long literal runs and long matches (length continuation bytes), far offsets.
        let mut mixed: Vec<u8> = (0..70_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        mixed.extend_from_within(1000..5000);
        mixed.extend(vec![0u8; 5000]);
        round_trip(&mixed);
        // A GORILLA page of a temperature-like random walk (rounded to 0.01), the case
        // this matcher is for: no larger than lz4_flex's block.
        let mut x = 20.0f64;
        let mut state = 7u64;
        let walk: Vec<f64> = (0..10_000)
            .map(|_| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                x += ((state >> 33) % 7) as f64 / 100.0 - 0.03;
                (x * 100.0).round() / 100.0
            })
            .collect();
        let page = crate::encoding::gorilla::encode::encode_f64(&walk);
        let (ours, theirs) = (round_trip(&page), lz4_flex::block::compress(&page).len());
        assert!(ours <= theirs, "{ours} > {theirs} of {}", page.len());
        // Many calls through one table (stale entries of earlier inputs are ignored).
        for k in 0..50u8 {
            let v: Vec<u8> = (0..3000u32).map(|i| (i as u8).wrapping_mul(k) ^ (i >> 5) as u8).collect();
            round_trip(&v);
        }
    }

    proptest! {
        #[test]
        fn test_random_inputs_round_trip(data in proptest::collection::vec(0u8..4, 0..3000), noise in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut input = data;
            input.extend(noise);
            round_trip(&input);
        }
    }
}
