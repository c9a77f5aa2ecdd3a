//! MSB-first bit streams, shared by the bit-level encodings (TS_2DIFF, RLE, GORILLA, CHIMP,
//! SPRINTZ, RLBE, CAMEL, ...).
//!
//! The first bit of a stream is bit 7 of byte 0; a field of width `w` is stored most
//! significant bit first, and fields follow each other without alignment.
//!
//! [`BitReader::read`] loads up to eight bytes at once and extracts the field with two
//! shifts, so a read costs a few instructions; it never reads past the end of its slice and
//! reports an error instead.

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
                a[..tail.len()].copy_from_slice(tail);
                u64::from_be_bytes(a)
            }
        }
    }

    #[cold]
    fn eof(&self, n: u32) -> TsFileError {
        TsFileError::corrupt(
            "bit stream",
            None,
            format!(
                "needs {n} more bits at bit {} of {} (stream truncated)",
                self.pos, self.len
            ),
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
        let shift = (self.pos % 8) as u32;
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

/// Writes MSB-first bit streams; used by the test-only encoders and benchmarks.
#[cfg(any(test, feature = "encoders"))]
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    bytes: Vec<u8>,
    nbits: usize,
}

#[cfg(any(test, feature = "encoders"))]
impl BitWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append the low `n` bits of `v`, most significant first.
    pub fn write(&mut self, v: u64, n: u32) {
        for i in (0..n).rev() {
            self.write_bit((v >> i) & 1 == 1);
        }
    }

    /// Append one bit.
    pub fn write_bit(&mut self, bit: bool) {
        if self.nbits % 8 == 0 {
            self.bytes.push(0);
        }
        if bit {
            if let Some(last) = self.bytes.last_mut() {
                *last |= 1 << (7 - (self.nbits % 8));
            }
        }
        self.nbits += 1;
    }

    /// Number of bits written.
    pub fn bit_len(&self) -> usize {
        self.nbits
    }

    /// The bytes, zero-padded to a byte boundary.
    pub fn finish(self) -> Vec<u8> {
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
