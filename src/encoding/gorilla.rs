//! GORILLA (v2) decoder for INT32/DATE, INT64/TIMESTAMP, FLOAT and DOUBLE.
//!
//! An MSB-first bit stream over `W`-bit words (W = 32 for INT32/FLOAT bits, 64 for
//! INT64/DOUBLE bits): the first value in `W` raw bits, then per value `'0'` (repeat the
//! previous value), `'10'` + `W − lz − tz` bits (XOR shifted by the stored `tz`, window reused)
//! or `'11'` + `lz` (5|6 bits) + `sig − 1` (5|6 bits) + `sig` bits (new window,
//! `tz = W − lz − sig`); each value is the previous one XOR the decoded word.
//!
//! After the last value the writer encodes an end marker (`i32::MIN`, `i64::MIN`, `0x7fc00000`
//! or `0x7ff8000000000000`), zero-pads the current byte and, when the marker ended on a byte
//! boundary, writes one extra `0x00` byte. The marker value is legal data, so decoding is driven
//! by the value count; afterwards the marker, the zero padding and at most one extra `0x00`
//! byte are checked, and anything else left over is reported as corruption.

use crate::error::{Result, TsFileError};

/// End marker of INT32/DATE streams (`i32::MIN`).
pub(crate) const MARKER_32_INT: u64 = 0x8000_0000;
/// End marker of INT64/TIMESTAMP streams (`i64::MIN`).
pub(crate) const MARKER_64_INT: u64 = 0x8000_0000_0000_0000;
/// End marker of FLOAT streams (the canonical NaN bits).
pub(crate) const MARKER_32_FLOAT: u64 = 0x7fc0_0000;
/// End marker of DOUBLE streams (the canonical NaN bits).
pub(crate) const MARKER_64_FLOAT: u64 = 0x7ff8_0000_0000_0000;

/// Decode `count` GORILLA-encoded INT32/DATE values, appending them to `out`.
// why: a 32-bit stream's words are read with 32 bits, so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode_words::<32, _, _>(data, count, out, MARKER_32_INT, "GORILLA INT32 stream", |w| w as u32 as i32)
}

/// Decode `count` GORILLA-encoded INT64/TIMESTAMP values, appending them to `out`.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode_words::<64, _, _>(data, count, out, MARKER_64_INT, "GORILLA INT64 stream", |w| w as i64)
}

/// Decode `count` GORILLA-encoded FLOAT values (IEEE bits, NaN payloads kept), appending
/// them to `out`.
// why: a 32-bit stream's words are read with 32 bits, so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    decode_words::<32, _, _>(data, count, out, MARKER_32_FLOAT, "GORILLA FLOAT stream", |w| f32::from_bits(w as u32))
}

/// Decode `count` GORILLA-encoded DOUBLE values (IEEE bits, NaN payloads kept), appending
/// them to `out`.
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_words::<64, _, _>(data, count, out, MARKER_64_FLOAT, "GORILLA DOUBLE stream", f64::from_bits)
}

/// Decode only the first `n` of a stream's `count` values (`n < count`: a reader keeping a
/// prefix of a page's rows). The rest of the stream, its end marker and padding are not
/// read, so damage there goes unnoticed, as in a page that is skipped.
pub fn decode_f64_prefix(data: &[u8], count: usize, n: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_words_upto::<64, _, _>(data, count, n.min(count), out, MARKER_64_FLOAT, "GORILLA DOUBLE stream", f64::from_bits)
}

/// [`decode_f64_prefix`] for FLOAT.
// why: a 32-bit stream's words are read with 32 bits, so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_f32_prefix(data: &[u8], count: usize, n: usize, out: &mut Vec<f32>) -> Result<()> {
    decode_words_upto::<32, _, _>(data, count, n.min(count), out, MARKER_32_FLOAT, "GORILLA FLOAT stream", |w| {
        f32::from_bits(w as u32)
    })
}

/// [`decode_f64_prefix`] for INT32/DATE.
// why: a 32-bit stream's words are read with 32 bits, so the cast keeps every bit.
#[allow(clippy::cast_possible_truncation)]
pub fn decode_i32_prefix(data: &[u8], count: usize, n: usize, out: &mut Vec<i32>) -> Result<()> {
    decode_words_upto::<32, _, _>(data, count, n.min(count), out, MARKER_32_INT, "GORILLA INT32 stream", |w| w as u32 as i32)
}

/// [`decode_f64_prefix`] for INT64/TIMESTAMP.
pub fn decode_i64_prefix(data: &[u8], count: usize, n: usize, out: &mut Vec<i64>) -> Result<()> {
    decode_words_upto::<64, _, _>(data, count, n.min(count), out, MARKER_64_INT, "GORILLA INT64 stream", |w| w as i64)
}

/// Give errors raised by the shared [`BitReader`](crate::encoding::bits::BitReader) (named
/// "bit stream") the name of the stream being decoded; other errors pass through unchanged.
#[cold]
pub(crate) fn retag(e: TsFileError, what: &str) -> TsFileError {
    match e {
        TsFileError::Corrupt { what: w, offset, detail } if w == "bit stream" => {
            TsFileError::Corrupt { what: what.to_string(), offset, detail }
        }
        other => other,
    }
}

/// The stored XOR window: `sig == 0` means no window has been stored yet.
#[derive(Clone, Copy)]
struct Window {
    tz: u32,
    sig: u32,
}

/// The bits of `data` from bit `pos` on, most significant first and left-aligned in the
/// result: at least 57 of them are valid; bits past the end of `data` read as zero.
///
/// The hot loop below peeks one such window per value instead of issuing several
/// [`BitReader`](crate::encoding::bits::BitReader) reads (each a bounds-checked memory load),
/// and checks the end of the stream once per value; this roughly halves the decoding time of
/// GORILLA, the default FLOAT/DOUBLE encoding.
#[inline(always)]
fn peek(data: &[u8], pos: usize) -> u64 {
    let byte = pos >> 3;
    let word = match data.get(byte..byte.wrapping_add(8)) {
        Some(s) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_be_bytes(a)
        }
        None => peek_tail(data, byte),
    };
    word << (pos & 7)
}

/// [`peek`] near the end of `data`: the last bytes, zero-filled.
#[cold]
#[inline(never)]
fn peek_tail(data: &[u8], byte: usize) -> u64 {
    let mut a = [0u8; 8];
    for (d, s) in a.iter_mut().zip(data.get(byte..).unwrap_or(&[])) {
        *d = *s;
    }
    u64::from_be_bytes(a)
}

/// `n` bits (1..=64) at bit `pos`, right-aligned; bits past the end read as zero.
#[inline(always)]
fn take(data: &[u8], pos: usize, n: u32) -> u64 {
    if n <= 57 {
        peek(data, pos) >> (64 - n)
    } else {
        let hi = peek(data, pos) >> 32;
        let lo = peek(data, pos + 32) >> (96 - n);
        (hi << (n - 32)) | lo
    }
}

#[inline(always)]
fn decode_words<const W: u32, T, F: Fn(u64) -> T>(
    data: &[u8],
    count: usize,
    out: &mut Vec<T>,
    marker: u64,
    what: &'static str,
    conv: F,
) -> Result<()> {
    decode_words_upto::<W, T, F>(data, count, count, out, marker, what, conv)
}

/// Decode the first `stop` (≤ `count`) of `count` values; only when `stop == count` are the
/// end marker and padding checked.
#[inline(always)]
fn decode_words_upto<const W: u32, T, F: Fn(u64) -> T>(
    data: &[u8],
    count: usize,
    stop: usize,
    out: &mut Vec<T>,
    marker: u64,
    what: &'static str,
    conv: F,
) -> Result<()> {
    if count == 0 && data.is_empty() {
        return Ok(());
    }
    let nbits = data.len().saturating_mul(8);
    if nbits < W as usize {
        return Err(truncated(what, 0, 0, nbits));
    }
    // Every value after the first takes at least one bit.
    out.reserve(stop.min(nbits));
    let mut win = Window { tz: 0, sig: 0 };
    let mut pos = W as usize;
    let mut value = take(data, 0, W);
    if stop > 0 {
        out.push(conv(value));
        // Words are decoded into a small local array and appended a run at a time: the loop
        // then keeps its state in registers instead of updating the vector's length per
        // value, and the stream's end is checked once per run (bits past it read as zero).
        let mut run = [0u64; RUN];
        let mut i = 1;
        while i < stop {
            let n = (stop - i).min(RUN);
            let start = (pos, value, win);
            // why: n <= RUN = run.len() (the min above).
            #[allow(clippy::indexing_slicing)]
            let run = &mut run[..n];
            for slot in run.iter_mut() {
                value = next_word::<W>(data, &mut pos, value, &mut win, what)?;
                *slot = value;
            }
            if pos > nbits {
                return Err(first_truncated::<W>(data, start, i, nbits, what));
            }
            out.extend(run.iter().map(|&w| conv(w)));
            i += n;
        }
    }
    if stop < count {
        return Ok(());
    }
    if count > 0 {
        value = next_word::<W>(data, &mut pos, value, &mut win, what)?;
        if pos > nbits {
            return Err(truncated(what, count, pos, nbits));
        }
    }
    if value != marker {
        return Err(bad_marker(what, count, value, marker, pos));
    }
    check_end(data, pos, what, true)
}

/// Values decoded between two checks of the stream's end.
const RUN: usize = 64;

/// The truncation error of a run that read past the end of the stream: decode the run again
/// from its start (`pos`, previous value, window) to name the first value that did.
#[cold]
#[inline(never)]
fn first_truncated<const W: u32>(
    data: &[u8],
    (mut pos, mut value, mut win): (usize, u64, Window),
    first: usize,
    nbits: usize,
    what: &'static str,
) -> TsFileError {
    for i in first..first + RUN {
        match next_word::<W>(data, &mut pos, value, &mut win, what) {
            Err(e) => return e,
            Ok(v) => value = v,
        }
        if pos > nbits {
            return truncated(what, i, pos, nbits);
        }
    }
    // Not reached: the run being decoded again is the one that ran past the end.
    truncated(what, first, pos, nbits)
}

/// Decode the word that follows `prev`, starting at bit `*pos`; bits past the end of `data`
/// read as zero, so the caller checks `*pos` against the stream length.
#[inline(always)]
fn next_word<const W: u32>(data: &[u8], pos: &mut usize, prev: u64, win: &mut Window, what: &'static str) -> Result<u64> {
    // Header width: 5 bits each for 32-bit words, 6 bits each for 64-bit words.
    let hw: u32 = if W == 32 { 5 } else { 6 };
    let p = *pos;
    let w = peek(data, p);
    if w >> 63 == 0 {
        // '0': repeat.
        *pos = p + 1;
        return Ok(prev);
    }
    if w & (1 << 62) == 0 {
        // '10': reuse the stored window.
        let Window { tz, sig } = *win;
        if sig == 0 {
            return Err(no_window(what, p));
        }
        let x = if sig <= 55 { (w << 2) >> (64 - sig) } else { take(data, p + 2, sig) };
        *pos = p + 2 + sig as usize;
        return Ok(prev ^ (x << tz));
    }
    // '11': new window.
    let header = (w << 2) >> (64 - 2 * hw);
    // why: the header has 2 * hw bits, so both fields have hw <= 6 bits.
    #[allow(clippy::cast_possible_truncation)]
    let (lz, sig) = ((header >> hw) as u32, (header & ((1u64 << hw) - 1)) as u32 + 1);
    if lz + sig > W {
        return Err(bad_window(what, lz, sig, W, p));
    }
    let tz = W - lz - sig;
    *win = Window { tz, sig };
    let start = 2 + 2 * hw;
    let x = if start + sig <= 57 { (w << start) >> (64 - sig) } else { take(data, p + start as usize, sig) };
    *pos = p + (start + sig) as usize;
    Ok(prev ^ (x << tz))
}

/// Check what a GORILLA/CHIMP writer leaves after the end marker, which ends at bit `pos` of
/// `data`: zero bits up to the next byte boundary and, when `allow_extra_zero_byte`, at most
/// one extra `0x00` byte.
pub(crate) fn check_end(data: &[u8], pos: usize, what: &'static str, allow_extra_zero_byte: bool) -> Result<()> {
    let byte = pos / 8;
    let used = pos % 8;
    if used > 0 {
        let last = data.get(byte).copied().unwrap_or(0);
        if last & (0xff >> used) != 0 {
            return Err(TsFileError::corrupt(what, None, format!("non-zero padding bits at bit {pos} after the end marker")));
        }
    }
    let at = pos.div_ceil(8);
    let left = data.len().saturating_sub(at);
    match (left, data.last()) {
        (0, _) => Ok(()),
        (1, Some(0)) if allow_extra_zero_byte => Ok(()),
        _ => {
            Err(TsFileError::corrupt(what, None, format!("{left} unexpected trailing byte(s) at byte {at} after the end marker")))
        }
    }
}

#[cold]
fn truncated(what: &str, index: usize, pos: usize, nbits: usize) -> TsFileError {
    TsFileError::corrupt(
        what,
        None,
        format!(
            "stream truncated: value {index} (counting the end marker) needs bits up to {pos}, \
             the stream has {nbits}"
        ),
    )
}

#[cold]
fn bad_marker(what: &str, count: usize, value: u64, marker: u64, pos: usize) -> TsFileError {
    TsFileError::corrupt(
        what,
        None,
        format!(
            "expected the end marker {marker:#x} after {count} values, found {value:#x} \
             (ending at bit {pos})"
        ),
    )
}

#[cold]
fn no_window(what: &str, pos: usize) -> TsFileError {
    TsFileError::corrupt(what, None, format!("control '10' at bit {} reuses an XOR window but none is stored", pos - 2))
}

#[cold]
fn bad_window(what: &str, lz: u32, sig: u32, w: u32, pos: usize) -> TsFileError {
    TsFileError::corrupt(
        what,
        None,
        format!("at bit {pos}: leading zeros {lz} + significant bits {sig} exceed the word width {w}"),
    )
}

/// GORILLA encoders that reproduce the C++ writer byte for byte (end marker plus an
/// unconditionally written final byte); the Java writer's streams differ from them at most by
/// that final byte, which the decoder accepts either way.
pub mod encode {
    use super::{MARKER_32_FLOAT, MARKER_32_INT, MARKER_64_FLOAT, MARKER_64_INT};
    use crate::encoding::bits::BitWriter;

    /// Streaming encoder of `width`-bit words (32 or 64).
    #[derive(Debug)]
    pub struct WordEncoder {
        w: BitWriter,
        width: u32,
        /// Bits of the leading-zero and length fields (5 for 32-bit words, 6 for 64-bit).
        header_bits: u32,
        prev: Option<u64>,
        /// Stored window `(leading, trailing)`; writers start with none.
        stored: Option<(u32, u32)>,
    }

    impl WordEncoder {
        /// An encoder appending to `out` (whose contents are kept).
        pub fn new(width: u32, out: Vec<u8>) -> Self {
            let width = if width == 32 { 32 } else { 64 };
            WordEncoder { w: BitWriter::with_buffer(out), width, header_bits: if width == 32 { 5 } else { 6 }, prev: None, stored: None }
        }

        /// Encode one word (its low `width` bits).
        #[inline]
        pub fn push(&mut self, v: u64) {
            let Some(p) = self.prev else {
                self.w.write(v, self.width);
                self.prev = Some(v);
                return;
            };
            let x = p ^ v;
            self.prev = Some(v);
            if x == 0 {
                self.w.write(0, 1);
                return;
            }
            let lz = x.leading_zeros().saturating_sub(64 - self.width);
            let tz = x.trailing_zeros();
            match self.stored {
                Some((slz, stz)) if lz >= slz && tz >= stz => {
                    // '10' then the bits inside the stored window.
                    self.w.write(0b10, 2);
                    self.w.write(x >> stz, self.width - slz - stz);
                }
                _ => {
                    let sig = self.width - lz - tz;
                    self.w.write(0b11, 2);
                    self.w.write(u64::from(lz), self.header_bits);
                    self.w.write(u64::from(sig - 1), self.header_bits);
                    self.w.write(x >> tz, sig);
                    self.stored = Some((lz, tz));
                }
            }
        }

        /// Encode the end `marker` and flush as the C++ writer does; returns the bytes and the
        /// number of meaningful bits (values plus marker, before padding).
        pub fn finish(mut self, marker: u64) -> (Vec<u8>, usize) {
            self.push(marker);
            let bits = self.w.bit_len();
            if bits.is_multiple_of(8) {
                // The writer flushes its (empty) byte buffer unconditionally.
                self.w.write(0, 8);
            }
            (self.w.finish(), bits)
        }
    }

    /// Append a GORILLA stream of INT32/DATE values.
    pub fn i32_into(values: &[i32], out: &mut Vec<u8>) {
        let mut e = WordEncoder::new(32, std::mem::take(out));
        for &v in values {
            e.push(u64::from(v.cast_unsigned()));
        }
        *out = e.finish(MARKER_32_INT).0;
    }

    /// Append a GORILLA stream of INT64/TIMESTAMP values.
    pub fn i64_into(values: &[i64], out: &mut Vec<u8>) {
        let mut e = WordEncoder::new(64, std::mem::take(out));
        for &v in values {
            e.push(v.cast_unsigned());
        }
        *out = e.finish(MARKER_64_INT).0;
    }

    /// Append a GORILLA stream of FLOAT values (raw IEEE bits).
    pub fn f32_into(values: &[f32], out: &mut Vec<u8>) {
        let mut e = WordEncoder::new(32, std::mem::take(out));
        for &v in values {
            e.push(u64::from(v.to_bits()));
        }
        *out = e.finish(MARKER_32_FLOAT).0;
    }

    /// Append a GORILLA stream of DOUBLE values (raw IEEE bits).
    pub fn f64_into(values: &[f64], out: &mut Vec<u8>) {
        let mut e = WordEncoder::new(64, std::mem::take(out));
        for &v in values {
            e.push(v.to_bits());
        }
        *out = e.finish(MARKER_64_FLOAT).0;
    }

    /// Append a GORILLA stream of `width`-bit words to `w`, followed by `marker`, without the
    /// final flush.
    #[cfg(any(test, feature = "test-util"))]
    pub fn write_words(w: &mut BitWriter, width: u32, words: &[u64], marker: u64) {
        let mut e = WordEncoder::new(width, Vec::new());
        e.w = std::mem::take(w);
        for &v in words {
            e.push(v);
        }
        e.push(marker);
        *w = e.w;
    }

    /// Encode `width`-bit words with the end `marker` and the C++ flush; also returns the
    /// number of meaningful bits (values plus marker, before padding).
    #[cfg(any(test, feature = "test-util"))]
    pub fn encode_words(width: u32, words: &[u64], marker: u64) -> (Vec<u8>, usize) {
        let mut e = WordEncoder::new(width, Vec::new());
        for &v in words {
            e.push(v);
        }
        e.finish(marker)
    }

    /// GORILLA stream of INT32/DATE values as the C++ writer produces it.
    #[cfg(any(test, feature = "test-util"))]
    pub fn encode_i32(values: &[i32]) -> Vec<u8> {
        let mut out = Vec::new();
        i32_into(values, &mut out);
        out
    }

    /// GORILLA stream of INT64/TIMESTAMP values as the C++ writer produces it.
    #[cfg(any(test, feature = "test-util"))]
    pub fn encode_i64(values: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        i64_into(values, &mut out);
        out
    }

    /// GORILLA stream of FLOAT values (raw IEEE bits) as the C++ writer produces it.
    #[cfg(any(test, feature = "test-util"))]
    pub fn encode_f32(values: &[f32]) -> Vec<u8> {
        let mut out = Vec::new();
        f32_into(values, &mut out);
        out
    }

    /// GORILLA stream of DOUBLE values (raw IEEE bits) as the C++ writer produces it.
    #[cfg(any(test, feature = "test-util"))]
    pub fn encode_f64(values: &[f64]) -> Vec<u8> {
        let mut out = Vec::new();
        f64_into(values, &mut out);
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

    /// Every strict prefix of a stream fails, except dropping the optional extra 0x00 byte.
    fn assert_truncations_fail<T>(data: &[u8], meaningful_bits: usize, dec: impl Fn(&[u8]) -> Result<T>) {
        let min_len = meaningful_bits.div_ceil(8);
        for len in 0..data.len() {
            let r = dec(&data[..len]);
            if len >= min_len {
                assert!(r.is_ok(), "prefix of {len} bytes (only the extra 0x00 dropped) must decode");
            } else {
                assert!(r.is_err(), "prefix of {len}/{} bytes must fail", data.len());
            }
        }
    }

    #[test]
    fn test_decode_i32_spec_example() {
        let data = hex("0000000a 7d 0f 83 b0 00 00 01 80");
        assert_eq!(dec_i32(&data, 3).unwrap(), vec![10, 10, 12]);
        assert_eq!(encode_i32(&[10, 10, 12]), data);
    }

    #[test]
    fn test_decode_f64_spec_example() {
        let data = hex("3ff0000000000000 60 95 ff f0 8a ff e0");
        let got = dec_f64(&data, 3).unwrap();
        assert_eq!(got, vec![1.0f64.to_bits(), 1.0f64.to_bits(), 2.0f64.to_bits()]);
        assert_eq!(encode_f64(&[1.0, 1.0, 2.0]), data);
    }

    #[test]
    fn test_decode_i32_marker_ending_on_byte_boundary_has_extra_zero_byte() {
        // Search for two values whose content (values + marker) is a whole number of bytes.
        let mut found = false;
        for v in 0..4096i32 {
            let words = [u64::from(v as u32), u64::from((v ^ 0x5a5) as u32)];
            let (bytes, bits) = encode_words(32, &words, MARKER_32_INT);
            if bits.is_multiple_of(8) {
                assert_eq!(bytes.len(), bits / 8 + 1);
                assert_eq!(*bytes.last().unwrap(), 0);
                let vals: Vec<i32> = words.iter().map(|&w| w as u32 as i32).collect();
                assert_eq!(dec_i32(&bytes, 2).unwrap(), vals);
                // Without the extra byte it still decodes; with two extra bytes it does not.
                assert_eq!(dec_i32(&bytes[..bytes.len() - 1], 2).unwrap(), vals);
                let mut more = bytes.clone();
                more.push(0);
                assert!(dec_i32(&more, 2).is_err());
                found = true;
                break;
            }
        }
        assert!(found);
    }

    #[test]
    fn test_decode_i32_marker_value_inside_data() {
        let vals = [i32::MIN, 5, i32::MIN, i32::MIN, 0, i32::MIN];
        let data = encode_i32(&vals);
        assert_eq!(dec_i32(&data, vals.len()).unwrap(), vals);
        // Decoding fewer values than written leaves a non-marker or extra data: error.
        assert!(dec_i32(&data, 1).is_err());
        assert!(dec_i32(&data, 2).is_err());
    }

    #[test]
    fn test_decode_f32_nan_data_and_specials() {
        let vals = [
            f32::from_bits(0x7fc0_0000),
            f32::from_bits(0x7fc0_0001),
            f32::from_bits(0xffc1_2345),
            f32::from_bits(0x7f80_0001), // signalling NaN payload
            -0.0,
            0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(1),
            f32::MIN_POSITIVE / 2.0,
            f32::MAX,
            f32::from_bits(0x7fc0_0000),
        ];
        let data = encode_f32(&vals);
        let want: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(dec_f32(&data, vals.len()).unwrap(), want);
    }

    #[test]
    fn test_decode_f64_specials() {
        let vals = [
            f64::from_bits(0x7ff8_0000_0000_0000),
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff8_dead_beef_0001),
            -0.0,
            0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from_bits(1),
            f64::MIN_POSITIVE / 3.0,
            f64::MAX,
        ];
        let data = encode_f64(&vals);
        let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(dec_f64(&data, vals.len()).unwrap(), want);
    }

    #[test]
    fn test_decode_i64_min_values_and_runs() {
        let mut vals = vec![i64::MIN; 50];
        vals.extend([0, 1, -1, i64::MAX, i64::MIN, 7]);
        vals.extend(std::iter::repeat_n(42, 1000));
        let data = encode_i64(&vals);
        assert_eq!(dec_i64(&data, vals.len()).unwrap(), vals);
    }

    #[test]
    fn test_decode_i32_zero_and_one_value() {
        // Zero values: the writer would emit just the marker as the first value.
        assert_eq!(dec_i32(&[], 0).unwrap(), Vec::<i32>::new());
        let empty = encode_i32(&[]);
        assert_eq!(empty, hex("80000000 00"));
        assert_eq!(dec_i32(&empty, 0).unwrap(), Vec::<i32>::new());
        assert!(dec_i32(&[0x00], 0).is_err());
        let one = encode_i32(&[77]);
        assert_eq!(dec_i32(&one, 1).unwrap(), vec![77]);
        assert!(dec_i32(&one, 0).is_err());
        // A count too large by a few values is indistinguishable from data: each zero padding
        // bit reads as "repeat" of the marker. Beyond the padding it fails.
        assert!(dec_i32(&one, 9).is_err());
        assert!(dec_i32(&[], 1).is_err());
    }

    #[test]
    fn test_decode_f64_truncation_every_byte() {
        let vals: Vec<f64> = (0..40).map(|i| (i as f64) * 0.37 - 3.0).collect();
        let words: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
        let (data, bits) = encode_words(64, &words, MARKER_64_FLOAT);
        assert_truncations_fail(&data, bits, |d| dec_f64(d, vals.len()));
    }

    #[test]
    fn test_decode_i32_truncation_every_byte() {
        let vals: Vec<i32> = (0..30).map(|i| i * i * 1000 - 7).collect();
        let words: Vec<u64> = vals.iter().map(|&v| u64::from(v as u32)).collect();
        let (data, bits) = encode_words(32, &words, MARKER_32_INT);
        assert_truncations_fail(&data, bits, |d| dec_i32(d, vals.len()));
    }

    #[test]
    fn test_decode_i32_invalid_window_lz_plus_sig() {
        let mut w = BitWriter::new();
        w.write(10, 32);
        w.write(0b11, 2);
        w.write(31, 5); // lz 31
        w.write(31, 5); // sig 32 -> 63 > 32
        w.write(0, 40);
        let err = dec_i32(&w.finish(), 2).unwrap_err().to_string();
        assert!(err.contains("GORILLA INT32"), "{err}");
        assert!(err.contains("exceed"), "{err}");
    }

    #[test]
    fn test_decode_i64_invalid_window_lz_plus_sig() {
        let mut w = BitWriter::new();
        w.write(10, 64);
        w.write(0b11, 2);
        w.write(60, 6);
        w.write(9, 6); // sig 10 -> 70 > 64
        w.write(0, 40);
        assert!(dec_i64(&w.finish(), 2).is_err());
    }

    #[test]
    fn test_decode_i32_reuse_without_window() {
        let mut w = BitWriter::new();
        w.write(10, 32);
        w.write(0b10, 2);
        w.write(0, 40);
        let err = dec_i32(&w.finish(), 2).unwrap_err().to_string();
        assert!(err.contains("window"), "{err}");
    }

    #[test]
    fn test_decode_i32_wrong_marker_and_trailing_garbage() {
        // [10] then a '0' (repeat: 10, not the marker).
        let mut w = BitWriter::new();
        w.write(10, 32);
        w.write(0, 8);
        assert!(dec_i32(&w.finish(), 1).is_err());
        let good = encode_i32(&[10, 10, 12]);
        // Non-zero padding bit.
        let mut bad = good.clone();
        *bad.last_mut().unwrap() |= 0x01;
        assert!(dec_i32(&bad, 3).is_err());
        // Extra non-zero byte, extra two zero bytes.
        let mut bad = good.clone();
        bad.push(0x01);
        assert!(dec_i32(&bad, 3).is_err());
        let mut bad = good.clone();
        bad.extend([0, 0]);
        assert!(dec_i32(&bad, 3).is_err());
        // One extra zero byte after a padded byte is tolerated (the documented leniency).
        let mut ok = good;
        ok.push(0);
        assert_eq!(dec_i32(&ok, 3).unwrap(), vec![10, 10, 12]);
    }

    #[test]
    fn test_decode_i32_error_names_position() {
        let data = encode_i32(&[1, 2, 3]);
        let err = dec_i32(&data[..5], 3).unwrap_err().to_string();
        assert!(err.contains("GORILLA INT32 stream"), "{err}");
        assert!(err.contains("bit"), "{err}");
    }

    #[test]
    fn test_decode_f64_truncation_names_the_first_value_past_the_end() {
        // Values are decoded in runs and the end is checked once per run: the error must
        // still name the first value that needs bits past the end, in any run.
        let vals: Vec<f64> = (0..300).map(|i| ((i * 7919 % 1000) as f64 / 100.0).round() + (i as f64) * 0.01).collect();
        let data = encode_f64(&vals);
        let mut out = Vec::new();
        for len in 9..data.len() - 1 {
            let cut = &data[..len];
            let err = dec_f64(cut, vals.len()).unwrap_err().to_string();
            let index: usize = err
                .split("value ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no value index in {err}"));
            let mut fits = |n: usize| {
                out.clear();
                decode_f64_prefix(cut, vals.len(), n, &mut out).is_ok()
            };
            if index < vals.len() {
                assert!(fits(index) && !fits(index + 1), "cut at {len}: {err}");
            } else {
                // The end marker ran past: every value but possibly the last fits (a prefix
                // of all `count` values is the whole decode, marker included).
                assert_eq!(index, vals.len(), "cut at {len}: {err}");
                assert!(fits(vals.len() - 1), "cut at {len}: {err}");
            }
        }
    }

    #[test]
    fn test_decode_f64_huge_count_small_input() {
        let data = encode_f64(&[1.0]);
        let mut out = Vec::new();
        assert!(decode_f64(&data, 1 << 40, &mut out).is_err());
        assert!(out.capacity() <= data.len() * 8 + 64);
    }

    fn nan_heavy_f32() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            Just(f32::NAN),
            Just(-0.0f32),
            Just(f32::INFINITY),
            Just(f32::NEG_INFINITY),
            (0u32..16).prop_map(f32::from_bits),
            (0u32..4).prop_map(|i| i as f32),
        ]
    }

    fn nan_heavy_f64() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<u64>().prop_map(f64::from_bits),
            Just(f64::NAN),
            Just(-0.0f64),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            (0u64..16).prop_map(f64::from_bits),
            (0u32..4).prop_map(|i| i as f64),
        ]
    }

    proptest! {
        #[test]
        fn test_decode_i32_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<i32>(), Just(i32::MIN), Just(0), -3i32..3], 0..300)) {
            let data = encode_i32(&vals);
            prop_assert_eq!(dec_i32(&data, vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_round_trip(vals in proptest::collection::vec(
            prop_oneof![any::<i64>(), Just(i64::MIN), Just(0), -3i64..3], 0..300)) {
            let data = encode_i64(&vals);
            prop_assert_eq!(dec_i64(&data, vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_f32_round_trip(vals in proptest::collection::vec(nan_heavy_f32(), 0..300)) {
            let data = encode_f32(&vals);
            let want: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f32(&data, vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_f64_round_trip(vals in proptest::collection::vec(nan_heavy_f64(), 0..300)) {
            let data = encode_f64(&vals);
            let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(dec_f64(&data, vals.len()).unwrap(), want);
        }

        #[test]
        fn test_decode_f64_arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64), n in 0usize..100) {
            let _ = dec_f64(&data, n);
            let _ = dec_i32(&data, n);
        }
    }
}
