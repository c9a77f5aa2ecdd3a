//! The series bloom filter stored in TsFileMetadata.
//!
//! ```text
//! BloomFilter := UVarInt byte_length, bits[byte_length],
//!                then, only if byte_length > 0: UVarInt bit_count, UVarInt hash_function_count
//! ```
//!
//! Bit `i` is bit `i % 8` (LSB first) of `bits[i / 8]`; trailing zero bytes may be omitted.
//! The key of a series is the UTF-8 of `device path + "." + measurement` (a null segment is
//! written `null`; the aligned time column has an empty measurement). Each of the first
//! `hash_function_count` seeds of 5, 7, 11, 19, 31, 37, 43, 59 gives a MurmurHash3 x64 128
//! hash; the two 64-bit halves are added, the low 32 bits taken as `i32`, mapped to its
//! absolute value (`i32::MIN` to 0) and reduced modulo `bit_count`. This matches the C++
//! writer (tail bytes treated as unsigned); a Java writer may hash non-ASCII keys differently,
//! so a miss is proof of absence only for keys this reader hashes the same way.

use crate::error::{Result, TsFileError};
use crate::format::Cursor;

const SEEDS: [u64; 8] = [5, 7, 11, 19, 31, 37, 43, 59];

/// A parsed bloom filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BloomFilter {
    /// The bitset bytes as stored (trailing zero bytes may be trimmed).
    pub bits: Vec<u8>,
    /// Filter size in bits.
    pub size_bits: u32,
    /// Number of hash functions (1..=8).
    pub hash_functions: u32,
}

impl BloomFilter {
    /// Parse the filter; `Ok(None)` when the file has none (`byte_length = 0`).
    pub fn parse(c: &mut Cursor<'_>) -> Result<Option<BloomFilter>> {
        let start = c.offset();
        let len = c.uvarint("bloom filter length")? as usize;
        if len == 0 {
            return Ok(None);
        }
        let bits = c.bytes(len, "bloom filter bits")?.to_vec();
        let size_bits = c.uvarint("bloom filter size")?;
        let hash_functions = c.uvarint("bloom filter hash function count")?;
        if size_bits == 0 || !(1..=8).contains(&hash_functions) {
            return Err(TsFileError::corrupt(
                "bloom filter",
                Some(start),
                format!("invalid parameters: {size_bits} bits, {hash_functions} hash functions"),
            ));
        }
        if len as u64 > u64::from(size_bits).div_ceil(8) {
            return Err(TsFileError::corrupt("bloom filter", Some(start), format!("{len} bytes exceed {size_bits} bits")));
        }
        Ok(Some(BloomFilter { bits, size_bits, hash_functions }))
    }

    fn bit(&self, i: u32) -> bool {
        let byte = self.bits.get((i / 8) as usize).copied().unwrap_or(0);
        byte & (1 << (i % 8)) != 0
    }

    /// False only when the series is certainly absent (for keys hashed as the C++ writer
    /// does).
    pub fn may_contain(&self, device_path: &str, measurement: &str) -> bool {
        let mut key = Vec::with_capacity(device_path.len() + measurement.len() + 1);
        key.extend_from_slice(device_path.as_bytes());
        key.push(b'.');
        key.extend_from_slice(measurement.as_bytes());
        (0..self.hash_functions.min(8)).all(|i| self.bit(series_bit(&key, i, self.size_bits)))
    }
}

/// The bit that hash function `i` (0..8) sets for `key` in a filter of `size_bits` bits.
pub(crate) fn series_bit(key: &[u8], i: u32, size_bits: u32) -> u32 {
    let seed = SEEDS.get(i as usize).copied().unwrap_or(SEEDS[0]);
    let (h1, h2) = murmur3_x64_128(key, seed);
    // why: keeping the low 32 bits is the Java writer's `(int)` cast of the combined hash.
    #[allow(clippy::cast_possible_truncation)]
    let v = h1.wrapping_add(h2) as u32 as i32;
    let v = if v == i32::MIN { 0 } else { v.abs() }.cast_unsigned();
    v % size_bits.max(1)
}

#[inline]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// MurmurHash3 x64 128-bit of `data` with `seed` (both halves seeded), returning `(h1, h2)`.
pub fn murmur3_x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mut h1 = seed;
    let mut h2 = seed;
    let mut blocks = data.chunks_exact(16);
    for b in &mut blocks {
        // why: `chunks_exact(16)` yields 16-byte blocks, so both halves are in bounds.
        #[allow(clippy::indexing_slicing)]
        let (b_lo, b_hi) = (&b[..8], &b[8..]);
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(b_lo);
        hi.copy_from_slice(b_hi);
        let k1 = u64::from_le_bytes(lo).wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1.rotate_left(27).wrapping_add(h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        let k2 = u64::from_le_bytes(hi).wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
        h2 = h2.rotate_left(31).wrapping_add(h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let mut k1: u64 = 0;
    let mut k2: u64 = 0;
    for (i, &b) in tail.iter().enumerate() {
        if i < 8 {
            k1 |= u64::from(b) << (8 * i);
        } else {
            k2 |= u64::from(b) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !tail.is_empty() {
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_murmur3_reference_vectors() {
        // Reference values of MurmurHash3_x64_128 (seed 0) from the original implementation.
        assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
        assert_eq!(murmur3_x64_128(b"hello", 0), (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19));
        assert_eq!(
            murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0),
            (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347)
        );
    }

    #[test]
    fn test_parse_none_and_invalid() {
        assert_eq!(BloomFilter::parse(&mut Cursor::new(&[0], 0)).unwrap(), None);
        // 1 byte of bits, 0 bits size -> invalid
        assert!(BloomFilter::parse(&mut Cursor::new(&[1, 0xff, 0, 5], 0)).is_err());
        // 9 hash functions
        assert!(BloomFilter::parse(&mut Cursor::new(&[1, 0xff, 8, 9], 0)).is_err());
        // 2 bytes for 8 bits
        assert!(BloomFilter::parse(&mut Cursor::new(&[2, 0xff, 0, 8, 1], 0)).is_err());
    }

    #[test]
    fn test_may_contain_all_bits_set_and_clear() {
        let full = BloomFilter { bits: vec![0xff; 32], size_bits: 256, hash_functions: 5 };
        assert!(full.may_contain("root.sg.d1", "s1"));
        let empty = BloomFilter { bits: vec![], size_bits: 256, hash_functions: 5 };
        assert!(!empty.may_contain("root.sg.d1", "s1"));
    }
}
