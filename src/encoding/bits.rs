//! MSB-first bit streams, shared by the bit-level encodings (TS_2DIFF, RLE, GORILLA, CHIMP,
//! SPRINTZ, RLBE, CAMEL, ...).
//!
//! The first bit of a stream is bit 7 of byte 0; a field of width `w` is stored most
//! significant bit first, and fields follow each other without alignment.
//!
//! [`BitReader::read`] loads up to eight bytes at once and extracts the field with two
//! shifts, so a read costs a few instructions; it never reads past the end of its slice and
//! reports an error instead.
//!
//! Packed groups `BP(w, k)` (k fields of w bits back to back, `ceil(k·w/8)` bytes) are
//! decoded in bulk by [`unpack`]: it dispatches once on the width to a monomorphic loop that
//! decodes eight fields (exactly `w` bytes) per step with unaligned big-endian word loads.

use crate::error::{Result, TsFileError};

/// Reads fields of 0..=64 bits, most significant bit first.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    /// Absolute bit position of the next bit.
    pos: usize,
    /// Total number of bits.
    len: usize,
}

impl<'a> BitReader<'a> {
    /// A reader over all bits of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        BitReader { data, pos: 0, len: data.len().saturating_mul(8) }
    }

    /// Bits not yet read.
    #[inline]
    pub fn bits_remaining(&self) -> usize {
        self.len - self.pos
    }

    /// Bit position of the next bit.
    #[inline]
    pub fn bit_position(&self) -> usize {
        self.pos
    }

    /// Number of bytes touched so far (the position rounded up to a whole byte).
    #[inline]
    pub fn bytes_consumed(&self) -> usize {
        self.pos.div_ceil(8)
    }

    /// Skip to the next byte boundary (no-op when already aligned).
    #[cfg(any(test, feature = "experimental"))]
    #[inline]
    pub fn align_to_byte(&mut self) {
        self.pos = self.bytes_consumed().saturating_mul(8).min(self.len);
    }

    #[inline]
    fn load_be_u64(&self, byte: usize) -> u64 {
        match self.data.get(byte..byte + 8) {
            Some(s) => {
                let mut a = [0u8; 8];
                a.copy_from_slice(s);
                u64::from_be_bytes(a)
            }
            None => {
                let mut a = [0u8; 8];
                let tail = self.data.get(byte..).unwrap_or(&[]);
                if let Some(d) = a.get_mut(..tail.len()) {
                    d.copy_from_slice(tail);
                }
                u64::from_be_bytes(a)
            }
        }
    }

    #[cold]
    fn eof(&self, n: u32) -> TsFileError {
        TsFileError::corrupt(
            "bit stream",
            None,
            format!("needs {n} more bits at bit {} of {} (stream truncated)", self.pos, self.len),
        )
    }

    /// Read an unsigned field of `n` bits (`n <= 64`; `n == 0` reads nothing and returns 0).
    #[inline]
    pub fn read(&mut self, n: u32) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        if n > 64 || (n as usize) > self.bits_remaining() {
            return Err(self.eof(n));
        }
        if n <= 56 {
            Ok(self.read_unchecked_le56(n))
        } else {
            let hi = self.read_unchecked_le56(n - 32);
            let lo = self.read_unchecked_le56(32);
            Ok((hi << 32) | lo)
        }
    }

    /// Read `n <= 56` bits that are known to be available, advancing the position.
    #[inline]
    fn read_unchecked_le56(&mut self, n: u32) -> u64 {
        let word = self.load_be_u64(self.pos / 8);
        let shift = self.pos % 8;
        self.pos += n as usize;
        (word << shift) >> (64 - n)
    }

    /// Read one bit.
    #[inline]
    pub fn read_bit(&mut self) -> Result<bool> {
        let Some(&b) = self.data.get(self.pos / 8) else {
            return Err(self.eof(1));
        };
        let bit = (b >> (7 - (self.pos % 8))) & 1;
        self.pos += 1;
        Ok(bit == 1)
    }
}

/// Number of bytes of a packed group `BP(width, n)`: `ceil(n * width / 8)`, or `None` on
/// overflow.
#[inline]
pub fn packed_len(width: u32, n: usize) -> Option<usize> {
    let bits = (n as u128).checked_mul(u128::from(width))?;
    usize::try_from(bits.div_ceil(8)).ok()
}

/// Unpack the packed group `BP(width, out.len())` from the start of `src`: `out.len()`
/// unsigned `width`-bit fields laid out back to back, most significant bit first.
///
/// The fields come from the first [`packed_len`]`(width, out.len())` bytes of `src`; the
/// word loads may also look at later bytes of `src` (pass the rest of the stream, not just
/// the packed bytes, to stay on the fast path), which never changes the result. Fails when
/// `width > 64` or `src` is shorter than the packed length. The inner loops are monomorphic
/// per width and decode eight fields (exactly `width` bytes) at a time.
pub fn unpack(width: u32, src: &[u8], out: &mut [u64]) -> Result<()> {
    let need = packed_len(width, out.len());
    match need {
        Some(need) if width <= 64 && src.len() >= need => {}
        _ => {
            return Err(TsFileError::corrupt(
                "bit-packed group",
                None,
                format!(
                    "{} values of width {width} need {} bytes, {} available",
                    out.len(),
                    need.map_or_else(|| "too many".to_string(), |n| n.to_string()),
                    src.len()
                ),
            ))
        }
    }
    macro_rules! dispatch {
        ($($w:literal)*) => {
            match width {
                0 => out.fill(0),
                $($w => unpack_width::<$w>(src, out),)*
                _ => {}
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
        31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59
        60 61 62 63 64);
    Ok(())
}

/// Bytes a window must hold to decode one group of eight fields of any width with 8- or
/// 16-byte loads: at most 56 bytes of offset plus a 16-byte load.
const WINDOW: usize = 72;

/// Unpack `out.len()` fields of `W` bits; `src` holds at least `ceil(out.len() * W / 8)` bytes.
#[inline(never)]
fn unpack_width<const W: usize>(src: &[u8], out: &mut [u64]) {
    let (groups, rest) = out.as_chunks_mut::<8>();
    let mut offset = 0usize;
    for group in groups {
        match src.get(offset..offset + WINDOW).and_then(|w| <&[u8; WINDOW]>::try_from(w).ok()) {
            Some(win) => unpack8::<W>(win, group),
            None => unpack8::<W>(&padded_window(src.get(offset..).unwrap_or(&[])), group),
        }
        offset += W;
    }
    if !rest.is_empty() {
        let win = padded_window(src.get(offset..).unwrap_or(&[]));
        let mut tmp = [0u64; 8];
        unpack8::<W>(&win, &mut tmp);
        for (o, v) in rest.iter_mut().zip(tmp) {
            *o = v;
        }
    }
}

/// Copy up to [`WINDOW`] bytes into a zero-padded window.
#[inline]
fn padded_window(src: &[u8]) -> [u8; WINDOW] {
    let mut win = [0u8; WINDOW];
    let n = src.len().min(WINDOW);
    if let (Some(d), Some(s)) = (win.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
    win
}

/// Decode eight `W`-bit fields from the first `W` bytes of `win`. With `W` and the index
/// constant after unrolling, every offset and shift is a compile-time constant.
#[inline(always)]
fn unpack8<const W: usize>(win: &[u8; WINDOW], out: &mut [u64; 8]) {
    for (i, o) in out.iter_mut().enumerate() {
        let bit = i * W;
        let byte = bit / 8;
        let shift = bit % 8;
        *o = if W + 7 <= 64 {
            // why: byte + 8 <= 7 * W / 8 + 8 <= 64 < WINDOW; constant after unrolling, checked at compile time.
            #[allow(clippy::indexing_slicing)]
            let s = &win[byte..byte + 8];
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            (u64::from_be_bytes(a) << shift) >> (64 - W)
        } else {
            // why: byte + 16 <= 7 * 64 / 8 + 16 = WINDOW; constant after unrolling, checked at compile time.
            #[allow(clippy::indexing_slicing)]
            let s = &win[byte..byte + 16];
            let mut a = [0u8; 16];
            a.copy_from_slice(s);
            // why: shifted right by 128 - W with W <= 64, the value has at most 64 significant bits.
            #[allow(clippy::cast_possible_truncation)]
            let v = ((u128::from_be_bytes(a) << shift) >> (128 - W)) as u64;
            v
        };
    }
}

/// Integer lane types of the bit-packing codecs (TS_2DIFF, RLE): `i32` and `i64`.
pub(crate) trait PackedInt: Copy + Default + PartialEq + std::fmt::Debug + 'static {
    /// Width of the type in bits (32 or 64).
    const BITS: u32;
    /// Size of the type in bytes.
    const BYTES: usize;
    /// The TsFile type name, for error messages.
    const NAME: &'static str;
    /// The low bits of `v`, reinterpreted as this type.
    fn from_u64(v: u64) -> Self;
    /// Wrapping addition.
    fn wrapping_add(self, other: Self) -> Self;
    /// Wrapping multiplication by a small factor.
    fn wrapping_mul_usize(self, k: usize) -> Self;
    /// Big-endian value from exactly [`Self::BYTES`] bytes.
    fn from_be(bytes: &[u8]) -> Self;
}

impl PackedInt for i32 {
    const BITS: u32 = 32;
    const BYTES: usize = 4;
    const NAME: &'static str = "INT32";
    #[inline(always)]
    // why: keeping the low 32 bits is the contract ("the low bits of `v`, reinterpreted").
    #[allow(clippy::cast_possible_truncation)]
    fn from_u64(v: u64) -> Self {
        v as u32 as i32
    }
    #[inline(always)]
    fn wrapping_add(self, other: Self) -> Self {
        i32::wrapping_add(self, other)
    }
    #[inline(always)]
    // why: a product wrapped mod 2^32 depends only on `k` mod 2^32, which is what the cast keeps.
    #[allow(clippy::cast_possible_truncation)]
    fn wrapping_mul_usize(self, k: usize) -> Self {
        i32::wrapping_mul(self, k as u32 as i32)
    }
    #[inline(always)]
    fn from_be(bytes: &[u8]) -> Self {
        let mut a = [0u8; 4];
        if let Some(s) = bytes.get(..4) {
            a.copy_from_slice(s);
        }
        i32::from_be_bytes(a)
    }
}

impl PackedInt for i64 {
    const BITS: u32 = 64;
    const BYTES: usize = 8;
    const NAME: &'static str = "INT64";
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v as i64
    }
    #[inline(always)]
    fn wrapping_add(self, other: Self) -> Self {
        i64::wrapping_add(self, other)
    }
    #[inline(always)]
    fn wrapping_mul_usize(self, k: usize) -> Self {
        i64::wrapping_mul(self, k as u64 as i64)
    }
    #[inline(always)]
    fn from_be(bytes: &[u8]) -> Self {
        let mut a = [0u8; 8];
        if let Some(s) = bytes.get(..8) {
            a.copy_from_slice(s);
        }
        i64::from_be_bytes(a)
    }
}

/// Writes MSB-first bit streams: the encoders of the writer and the test encoders.
///
/// Bits gather in a 64-bit accumulator and leave it eight bytes at a time, so writing a field
/// costs a shift and an or, not a loop over its bits.
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    bytes: Vec<u8>,
    /// Pending bits, left-aligned: the first pending bit is bit 63.
    acc: u64,
    /// Number of pending bits in `acc` (0..64).
    pending: u32,
}

impl BitWriter {
    /// An empty writer.
    #[cfg(any(test, feature = "test-util"))]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer that appends to `bytes` (whose contents are kept).
    pub fn with_buffer(bytes: Vec<u8>) -> Self {
        BitWriter { bytes, acc: 0, pending: 0 }
    }

    /// Append the low `n` bits of `v` (`n <= 64`; more is treated as 64), most significant
    /// first.
    #[inline]
    pub fn write(&mut self, v: u64, n: u32) {
        let n = n.min(64);
        if n == 0 {
            return;
        }
        let v = if n == 64 { v } else { v & ((1u64 << n) - 1) };
        let free = 64 - self.pending;
        if n < free {
            self.acc |= v << (free - n);
            self.pending += n;
        } else {
            // The accumulator fills: its high `free` bits take the top of `v`.
            let rest = n - free;
            self.acc |= v >> rest;
            self.bytes.extend_from_slice(&self.acc.to_be_bytes());
            self.acc = if rest == 0 { 0 } else { v << (64 - rest) };
            self.pending = rest;
        }
    }

    /// Append one bit.
    #[cfg(any(test, feature = "test-util"))]
    #[inline]
    pub fn write_bit(&mut self, bit: bool) {
        self.write(u64::from(bit), 1);
    }

    /// Number of bits written (counting the bytes a [`BitWriter::with_buffer`] started with).
    pub fn bit_len(&self) -> usize {
        self.bytes.len() * 8 + self.pending as usize
    }

    /// The bytes, zero-padded to a byte boundary.
    pub fn finish(mut self) -> Vec<u8> {
        let n = self.pending.div_ceil(8) as usize;
        let acc = self.acc.to_be_bytes();
        self.bytes.extend_from_slice(acc.get(..n).unwrap_or(&acc));
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_read_fields_msb_first() {
        // 101 101 101 001 010 000... (from the RLE example in the spec)
        let mut r = BitReader::new(&[0xb6, 0x94, 0x00]);
        let got: Vec<u64> = (0..5).map(|_| r.read(3).unwrap()).collect();
        assert_eq!(got, vec![5, 5, 5, 1, 2]);
    }

    #[test]
    fn test_read_against_naive_for_all_widths() {
        let data: Vec<u8> = (0..64u32).map(|i| (i.wrapping_mul(0x9d) ^ 0x5a) as u8).collect();
        let naive = |pos: usize, n: u32| -> u64 {
            let mut v = 0u64;
            for i in 0..n as usize {
                let p = pos + i;
                let bit = (data[p / 8] >> (7 - p % 8)) & 1;
                v = (v << 1) | u64::from(bit);
            }
            v
        };
        for n in 0..=64u32 {
            for start in 0..9usize {
                let mut r = BitReader::new(&data);
                r.read(start as u32).unwrap();
                let mut pos = start;
                while pos + n as usize <= data.len() * 8 && pos < 200 {
                    assert_eq!(r.read(n).unwrap(), naive(pos, n), "n={n} pos={pos}");
                    pos += n as usize;
                    if n == 0 {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn test_read_past_end_is_error() {
        let mut r = BitReader::new(&[0xff]);
        assert_eq!(r.read(7).unwrap(), 0x7f);
        assert!(r.read(2).is_err());
        assert!(r.read_bit().unwrap());
        assert!(r.read_bit().is_err());
        assert!(BitReader::new(&[]).read(1).is_err());
        assert!(BitReader::new(&[0; 16]).read(65).is_err());
    }

    #[test]
    fn test_writer_round_trip() {
        let mut w = BitWriter::new();
        let fields = [(1u64, 1u32), (0x3ff, 10), (u64::MAX, 64), (0, 3), (0x1234_5678_9abc, 57)];
        for (v, n) in fields {
            w.write(v, n);
        }
        let bytes = w.finish();
        let mut r = BitReader::new(&bytes);
        for (v, n) in fields {
            let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            assert_eq!(r.read(n).unwrap(), v & mask);
        }
    }

    /// Naive bit-by-bit reference for `BP(width, n)`.
    fn unpack_naive(width: u32, src: &[u8], n: usize) -> Vec<u64> {
        (0..n)
            .map(|i| {
                let mut v = 0u64;
                for b in 0..width as usize {
                    let p = i * width as usize + b;
                    let bit = (src[p / 8] >> (7 - p % 8)) & 1;
                    v = (v << 1) | u64::from(bit);
                }
                v
            })
            .collect()
    }

    #[test]
    fn test_unpack_matches_naive_for_all_widths_and_lengths() {
        let data: Vec<u8> = (0..1100u32).map(|i| (i.wrapping_mul(0x9e37_79b9) >> 13) as u8 ^ (i as u8)).collect();
        for width in 0..=64u32 {
            for n in (0..=40).chain([63, 64, 65, 127, 128, 129]) {
                let need = packed_len(width, n).unwrap();
                let src = &data[..need];
                let mut out = vec![u64::MAX; n];
                unpack(width, src, &mut out).unwrap();
                assert_eq!(out, unpack_naive(width, src, n), "width {width} n {n}");
            }
        }
    }

    #[test]
    fn test_unpack_ignores_bytes_after_the_group() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 37 + 11) as u8).collect();
        for width in 1..=64u32 {
            for n in [1usize, 7, 8, 9, 20] {
                let need = packed_len(width, n).unwrap();
                let mut exact = vec![0u64; n];
                unpack(width, &data[..need], &mut exact).unwrap();
                let mut trailing = data[..need].to_vec();
                trailing.extend([0xff; 100]);
                let mut padded = vec![0u64; n];
                unpack(width, &trailing, &mut padded).unwrap();
                assert_eq!(exact, padded, "width {width} n {n}");
            }
        }
    }

    #[test]
    fn test_unpack_all_ones_and_offsets() {
        // All-ones input must give the full mask at every width (top bits of u128 loads).
        let ones = [0xffu8; 80];
        for width in 1..=64u32 {
            let mut out = [0u64; 9];
            unpack(width, &ones, &mut out).unwrap();
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            assert!(out.iter().all(|&v| v == mask), "width {width}: {out:?}");
        }
        // A packed group starting at a non-zero offset of a longer slice.
        let mut w = BitWriter::new();
        for v in [5u64, 0, 7, 1, 2, 3, 4, 6, 5] {
            w.write(v, 3);
        }
        let bytes = w.finish();
        let mut out = [0u64; 9];
        unpack(3, &bytes, &mut out).unwrap();
        assert_eq!(out, [5, 0, 7, 1, 2, 3, 4, 6, 5]);
    }

    #[test]
    fn test_unpack_short_input_and_bad_width_are_errors() {
        let mut out = [0u64; 8];
        assert!(unpack(3, &[0, 0], &mut out).is_err());
        assert!(unpack(3, &[0, 0, 0], &mut out).is_ok());
        assert!(unpack(65, &[0; 100], &mut out).is_err());
        assert!(unpack(64, &[0; 63], &mut out).is_err());
        let mut none: [u64; 0] = [];
        assert!(unpack(64, &[], &mut none).is_ok());
        assert_eq!(packed_len(7, 3), Some(3));
        assert_eq!(packed_len(64, usize::MAX).map(|_| ()), if usize::BITS >= 64 { None } else { Some(()) });
    }

    #[test]
    fn test_packed_int_helpers() {
        assert_eq!(<i32 as PackedInt>::from_u64(0xffff_ffff), -1);
        assert_eq!(<i32 as PackedInt>::from_u64(0x1_0000_0005), 5);
        assert_eq!(<i64 as PackedInt>::from_be(&[0xff; 8]), -1);
        assert_eq!(<i32 as PackedInt>::from_be(&[0, 0, 1, 2]), 258);
        assert_eq!(PackedInt::wrapping_mul_usize(i32::MAX, 3), i32::MAX.wrapping_mul(3));
        assert_eq!(PackedInt::wrapping_mul_usize(-2i64, 1 << 40), -2i64 << 40);
    }

    #[test]
    fn test_align_to_byte() {
        let mut r = BitReader::new(&[0xff, 0x80]);
        r.read(3).unwrap();
        r.align_to_byte();
        assert_eq!(r.bit_position(), 8);
        assert!(r.read_bit().unwrap());
        r.align_to_byte();
        assert_eq!(r.bits_remaining(), 0);
    }
}
