//! Page decompression.
//!
//! Every TsFile page is compressed on its own with the codec named by its chunk header's
//! `compression_type` byte, and its page header declares the exact `uncompressed_size`.
//! [`decompress`] / [`decompress_into`] turn one page's stored bytes back into exactly that
//! many bytes:
//!
//! | codec | stored bytes | implementation |
//! | --- | --- | --- |
//! | UNCOMPRESSED | the page itself (`compressed_size == uncompressed_size`) | copy |
//! | SNAPPY | one raw snappy block (not framed) | `snap::raw` |
//! | GZIP | one gzip member (RFC 1952) | `flate2` (pure-Rust backend) |
//! | LZO | one LZO1X block | in this crate (`lzo.rs`: no crate decodes corrupt input safely) |
//! | LZ4 | one raw LZ4 block (no frame, no size prefix) | `lz4_flex::block` |
//! | ZSTD | one zstd frame | `zstd` (bulk API) |
//! | LZMA2 | LZMA2 inside an XZ container | `lzma-rs`, sizes checked first (`xz.rs`) |
//!
//! # Guarantees
//!
//! * The result is exactly `uncompressed_size` bytes, or a [`TsFileError::Decompress`]
//!   naming the codec: a page that decompresses to fewer or more bytes is invalid.
//! * Memory is bounded by the declared size, not by what the input claims to expand to.
//!   Block codecs (SNAPPY, LZ4, LZO, ZSTD) write into a buffer of exactly
//!   `uncompressed_size` bytes and fail when the data would not fit; GZIP is read through a
//!   bounded loop that stops at `uncompressed_size + 1` bytes; for LZMA2 the sizes that the
//!   LZMA2 chunk headers declare are summed *before* decoding and must equal the declared
//!   size. A decompression bomb (a few bytes claiming gigabytes) is therefore rejected
//!   without being inflated. In addition, a declared size larger than the codec's largest
//!   possible expansion of the input is rejected before any buffer is allocated.
//! * Arbitrary input never panics.
//! * An empty page (`uncompressed_size == 0`) with empty stored bytes is accepted for every
//!   codec, as is a codec's own encoding of zero bytes.
#![cfg_attr(not(test), warn(clippy::cast_possible_truncation, clippy::indexing_slicing))]

use std::cell::RefCell;
use std::io::{self, Read};

mod compress;
mod lz4_block;
mod lzo;
mod xz;

pub use compress::{can_compress, compress_into};

use lzo::lzo;
use xz::lzma2;

use crate::error::{Result, TsFileError};
use crate::format::Compression;

/// Decompress one page's stored bytes into exactly `uncompressed_size` bytes.
///
/// Returns [`TsFileError::Decompress`] (naming the codec) when the input is not a valid
/// stream for `codec`, or when it does not decompress to exactly `uncompressed_size` bytes.
/// See [`decompress_into`] to reuse an output buffer.
#[cfg(any(test, feature = "experimental"))]
pub fn decompress(codec: Compression, input: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decompress_into(codec, input, uncompressed_size, &mut out)?;
    Ok(out)
}

/// Decompress one page's stored bytes into `out`, replacing what it holds: on success it
/// holds exactly `uncompressed_size` bytes.
///
/// The buffer's capacity is reused, so decoding many pages through one `Vec` allocates only
/// when a page is larger than every previous one. On error `out` is left empty.
pub fn decompress_into(codec: Compression, input: &[u8], uncompressed_size: usize, out: &mut Vec<u8>) -> Result<()> {
    let n = uncompressed_size;
    let result = if n == 0 && input.is_empty() {
        out.clear();
        Ok(())
    } else {
        match codec {
            Compression::Uncompressed => uncompressed(input, n, out),
            Compression::Snappy => snappy(input, n, out),
            Compression::Gzip => gzip(input, n, out),
            Compression::Lzo => lzo(input, n, out),
            Compression::Lz4 => lz4(input, n, out),
            Compression::Zstd => zstd(input, n, out),
            Compression::Lzma2 => lzma2(input, n, out),
        }
    };
    match result {
        Ok(()) if out.len() == n => Ok(()),
        Ok(()) => {
            let produced = out.len();
            out.clear();
            Err(error(codec, format!("produced {produced} bytes, page declares {n}")))
        }
        Err(detail) => {
            out.clear();
            Err(error(codec, detail))
        }
    }
}

fn error(codec: Compression, detail: String) -> TsFileError {
    TsFileError::Decompress { codec: codec.name(), detail }
}

/// Per-codec failures are plain strings; [`decompress_into`] adds the codec name.
type CodecResult = std::result::Result<(), String>;

/// Reject a declared size that `input_len` bytes of this codec cannot possibly expand to, so
/// that an absurd `uncompressed_size` never turns into an allocation.
fn check_expansion(input_len: usize, n: usize, max_ratio: usize) -> CodecResult {
    let limit = input_len.saturating_mul(max_ratio).saturating_add(64);
    if n > limit {
        return Err(format!(
            "page declares {n} bytes, more than {input_len} compressed bytes can expand to \
             (at most {limit})"
        ));
    }
    Ok(())
}

/// Make `out` `n` bytes long (reusing its capacity) and return it as the slice a codec
/// writes into. Only bytes beyond the old length are zeroed: what an earlier page left is
/// overwritten, since [`decompress_into`] accepts only a result of exactly `n` written bytes
/// and every codec here writes its output front to back and refuses back-references before
/// the start of the output.
fn sized(out: &mut Vec<u8>, n: usize) -> &mut [u8] {
    out.truncate(n);
    out.resize(n, 0);
    out.as_mut_slice()
}

fn uncompressed(input: &[u8], n: usize, out: &mut Vec<u8>) -> CodecResult {
    if input.len() != n {
        return Err(format!("page stores {} bytes but declares {n}", input.len()));
    }
    out.clear();
    out.extend_from_slice(input);
    Ok(())
}

fn snappy(input: &[u8], n: usize, out: &mut Vec<u8>) -> CodecResult {
    // The block starts with its own uncompressed length: check it before allocating.
    let declared = snap::raw::decompress_len(input).map_err(|e| e.to_string())?;
    if declared != n {
        return Err(format!("snappy block declares {declared} bytes, page declares {n}"));
    }
    let buf = sized(out, n);
    let written = snap::raw::Decoder::new().decompress(input, buf).map_err(|e| e.to_string())?;
    out.truncate(written);
    Ok(())
}

/// DEFLATE's largest expansion is 258 bytes per 2 bits, about 1032:1.
const GZIP_MAX_RATIO: usize = 1032;

fn gzip(input: &[u8], n: usize, out: &mut Vec<u8>) -> CodecResult {
    check_expansion(input.len(), n, GZIP_MAX_RATIO)?;
    let mut decoder = flate2::bufread::GzDecoder::new(input);
    // Reading to the end also verifies the member's CRC-32 and ISIZE trailer.
    read_bounded(&mut decoder, n, out)?;
    let trailing = decoder.get_ref().len();
    if trailing != 0 {
        return Err(format!("{trailing} bytes after the gzip member"));
    }
    Ok(())
}

/// Read `reader` to its end into `out`, but never more than `n + 1` bytes: a stream longer
/// than `n` bytes is an error as soon as byte `n + 1` arrives, however long it would be.
fn read_bounded<R: Read>(reader: &mut R, n: usize, out: &mut Vec<u8>) -> CodecResult {
    let cap = n.checked_add(1).ok_or_else(|| format!("declared size {n} is too large"))?;
    out.clear();
    out.resize(cap, 0);
    let mut filled = 0;
    loop {
        if filled > n {
            out.clear();
            return Err(format!("stream decompresses to more than the declared {n} bytes"));
        }
        let Some(dest) = out.get_mut(filled..) else {
            return Err("internal buffer accounting error".to_string());
        };
        match reader.read(dest) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                out.clear();
                return Err(e.to_string());
            }
        }
    }
    out.truncate(filled);
    Ok(())
}

/// An LZ4 match-length extension byte of 255 yields 255 output bytes.
const LZ4_MAX_RATIO: usize = 255;

fn lz4(input: &[u8], n: usize, out: &mut Vec<u8>) -> CodecResult {
    check_expansion(input.len(), n, LZ4_MAX_RATIO)?;
    let buf = sized(out, n);
    let written = lz4_flex::block::decompress_into(input, buf).map_err(|e| e.to_string())?;
    out.truncate(written);
    Ok(())
}

/// A zstd RLE block turns 4 bytes (3-byte header + 1) into up to 128 KiB.
const ZSTD_MAX_RATIO: usize = 32 * 1024;

thread_local! {
    /// One zstd decompression context per thread, reused across pages.
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

fn zstd(input: &[u8], n: usize, out: &mut Vec<u8>) -> CodecResult {
    check_expansion(input.len(), n, ZSTD_MAX_RATIO)?;
    // A frame usually records its content size: compare before allocating.
    match zstd::zstd_safe::get_frame_content_size(input) {
        Ok(Some(size)) if size != n as u64 => {
            return Err(format!("zstd frame declares {size} bytes, page declares {n}"));
        }
        Ok(_) => {}
        Err(_) => return Err("not a zstd frame (bad magic or truncated frame header)".to_string()),
    }
    let buf = sized(out, n);
    // The bulk API decodes into the fixed-size buffer and fails if the frame needs more room.
    let written = ZSTD_DECOMPRESSOR.with(|cell| -> std::result::Result<usize, String> {
        let mut slot = cell.try_borrow_mut().map_err(|e| e.to_string())?;
        let decompressor = match slot.as_mut() {
            Some(d) => d,
            None => slot.insert(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?),
        };
        decompressor.decompress_to_buffer(input, buf).map_err(|e| e.to_string())
    })?;
    out.truncate(written);
    Ok(())
}


#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::xz::{xz_declared_size, BoundedWriter};
    use super::*;
    use std::io::Write;
    use std::path::PathBuf;

    const ALL: [Compression; 7] = [
        Compression::Uncompressed,
        Compression::Snappy,
        Compression::Gzip,
        Compression::Lzo,
        Compression::Lz4,
        Compression::Zstd,
        Compression::Lzma2,
    ];

    /// Compress with each codec's reference compressor (the format the writers produce).
    fn compress(codec: Compression, data: &[u8]) -> Vec<u8> {
        match codec {
            Compression::Uncompressed => data.to_vec(),
            Compression::Snappy => snap::raw::Encoder::new().compress_vec(data).unwrap(),
            Compression::Gzip => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Compression::Lzo => lzokay_native::compress(data).unwrap(),
            Compression::Lz4 => lz4_flex::block::compress(data),
            Compression::Zstd => zstd::bulk::compress(data, 3).unwrap(),
            Compression::Lzma2 => {
                let mut out = Vec::new();
                lzma_rs::xz_compress(&mut &data[..], &mut out).unwrap();
                out
            }
        }
    }

    /// Sample page-like data: a mix of repetitive text, small integers and noise.
    fn sample(len: usize) -> Vec<u8> {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut v = Vec::with_capacity(len);
        while v.len() < len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 4 {
                0 => v.extend_from_slice(b"root.sg.d1.temperature="),
                1 => v.extend_from_slice(&(state as u32 % 1000).to_be_bytes()),
                2 => v.push((state >> 32) as u8),
                _ => v.extend_from_slice(&[0u8; 9]),
            }
        }
        v.truncate(len);
        v
    }

    fn assert_decompress_error(result: Result<Vec<u8>>, codec: Compression) -> String {
        match result {
            Err(TsFileError::Decompress { codec: name, detail }) => {
                assert_eq!(name, codec.name());
                detail
            }
            other => panic!("{codec}: expected a Decompress error, got {other:?}"),
        }
    }

    #[test]
    fn test_decompress_round_trip_every_codec() {
        for codec in ALL {
            for len in [1usize, 7, 100, 4096, 70_000, 300_000] {
                let data = sample(len);
                let packed = compress(codec, &data);
                let got = decompress(codec, &packed, data.len()).unwrap_or_else(|e| panic!("{codec} len {len}: {e}"));
                assert!(got == data, "{codec} len {len}: content differs");
            }
        }
    }

    #[test]
    fn test_decompress_round_trip_uncompressible_and_zero_data() {
        let noise: Vec<u8> = (0..50_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let zeros = vec![0u8; 200_000];
        for codec in ALL {
            for data in [&noise, &zeros] {
                let got = decompress(codec, &compress(codec, data), data.len()).unwrap();
                assert!(&got == data, "{codec}");
            }
        }
    }

    #[test]
    fn test_decompress_lzo_python_vector() {
        // `lzallright.LZOCompressor().compress(data)` (an independent LZO1X implementation),
        // data = b"".join(b"ts=%d,temperature=%d.%d;" % (1700000000000 + i*1000, 20 + i % 7,
        // i % 10) for i in range(40)); 1360 bytes, CRC-32 0x9e2a2afc.
        const PACKED: &[u8] = &[
            0x17, 0x74, 0x73, 0x3d, 0x31, 0x37, 0x30, 0x28, 0x00, 0x00, 0x0f, 0x2c, 0x74, 0x65, 0x6d, 0x70, 0x65, 0x72, 0x61,
            0x74, 0x75, 0x72, 0x65, 0x3d, 0x32, 0x30, 0x2e, 0x30, 0x3b, 0x2a, 0x85, 0x00, 0x31, 0x2f, 0x87, 0x00, 0x31, 0x2e,
            0x31, 0x2b, 0x85, 0x00, 0x32, 0x2f, 0x87, 0x00, 0x32, 0x2e, 0x32, 0x2b, 0x85, 0x00, 0x33, 0x2f, 0x87, 0x00, 0x33,
            0x2e, 0x33, 0x2b, 0x85, 0x00, 0x34, 0x2f, 0x87, 0x00, 0x34, 0x2e, 0x34, 0x2b, 0x85, 0x00, 0x35, 0x2f, 0x87, 0x00,
            0x35, 0x2e, 0x35, 0x2b, 0x85, 0x00, 0x36, 0x2f, 0x87, 0x00, 0x36, 0x2e, 0x36, 0x2b, 0x84, 0x00, 0x7c, 0x00, 0x2e,
            0xb5, 0x03, 0x37, 0x2b, 0x85, 0x00, 0x38, 0x31, 0xb5, 0x03, 0x38, 0x2b, 0x85, 0x00, 0x39, 0x31, 0xb5, 0x03, 0x39,
            0x2a, 0x84, 0x00, 0x60, 0x26, 0x2f, 0xb4, 0x03, 0x2b, 0x4d, 0x05, 0x31, 0x30, 0x4d, 0x05, 0x34, 0x2c, 0x4d, 0x05,
            0x31, 0x30, 0x4d, 0x05, 0x35, 0x2c, 0x4d, 0x05, 0x31, 0x30, 0x4d, 0x05, 0x36, 0x2c, 0x4d, 0x05, 0x31, 0x30, 0x4d,
            0x05, 0x30, 0x2c, 0x4d, 0x05, 0x31, 0x30, 0x4d, 0x05, 0x31, 0x2c, 0x4d, 0x05, 0x31, 0x30, 0x4d, 0x05, 0x32, 0x2c,
            0x4c, 0x05, 0x9c, 0x00, 0x2e, 0xb4, 0x03, 0x2b, 0x4d, 0x05, 0x31, 0x30, 0x4d, 0x05, 0x34, 0x2c, 0x4d, 0x05, 0x31,
            0x30, 0x4d, 0x05, 0x35, 0x2c, 0x4c, 0x05, 0x78, 0x21, 0x2f, 0xb4, 0x03, 0x2b, 0x4d, 0x05, 0x32, 0x30, 0x4d, 0x05,
            0x30, 0x2c, 0x4d, 0x05, 0x32, 0x30, 0x4d, 0x05, 0x31, 0x2c, 0x4d, 0x05, 0x32, 0x30, 0x4d, 0x05, 0x32, 0x2c, 0x4d,
            0x05, 0x32, 0x30, 0x4d, 0x05, 0x33, 0x2c, 0x4d, 0x05, 0x32, 0x30, 0x4d, 0x05, 0x34, 0x2c, 0x4d, 0x05, 0x32, 0x30,
            0x4d, 0x05, 0x35, 0x2c, 0x4d, 0x05, 0x32, 0x30, 0x4d, 0x05, 0x36, 0x2c, 0x4d, 0x05, 0x32, 0x30, 0x4d, 0x05, 0x30,
            0x2c, 0x4d, 0x05, 0x32, 0x30, 0x4d, 0x05, 0x31, 0x2c, 0x4c, 0x05, 0x70, 0x1d, 0x2f, 0xb4, 0x03, 0x2b, 0x4d, 0x05,
            0x33, 0x30, 0x4d, 0x05, 0x33, 0x2c, 0x4d, 0x05, 0x33, 0x30, 0x4d, 0x05, 0x34, 0x2c, 0x4d, 0x05, 0x33, 0x30, 0x4d,
            0x05, 0x35, 0x2c, 0x4d, 0x05, 0x33, 0x30, 0x4d, 0x05, 0x36, 0x2c, 0x4d, 0x05, 0x33, 0x30, 0x4d, 0x05, 0x30, 0x2c,
            0x4d, 0x05, 0x33, 0x30, 0x4d, 0x05, 0x31, 0x2c, 0x4d, 0x05, 0x33, 0x30, 0x4d, 0x05, 0x32, 0x2c, 0x4d, 0x05, 0x33,
            0x30, 0x4d, 0x05, 0x33, 0x2c, 0x4d, 0x05, 0x33, 0x30, 0x4d, 0x05, 0x34, 0x4c, 0x2a, 0x11, 0x00, 0x00,
        ];
        let mut expected = Vec::new();
        for i in 0..40u64 {
            let line = format!("ts={},temperature={}.{};", 1_700_000_000_000 + i * 1000, 20 + i % 7, i % 10);
            expected.extend_from_slice(line.as_bytes());
        }
        assert_eq!(expected.len(), 1360);
        assert_eq!(decompress(Compression::Lzo, PACKED, 1360).unwrap(), expected);
        assert_eq!(crc32(&expected), 0x9e2a_2afc);
    }

    #[test]
    fn test_decompress_lzo_hand_made_streams() {
        // Literal run of 4 via the first byte (21 = 17 + 4), then the end marker.
        assert_eq!(decompress(Compression::Lzo, &[21, b'a', b'b', b'c', b'd', 0x11, 0, 0], 4).unwrap(), b"abcd");
        // Literal "ab" (first byte 19), then M2 length 3 distance 2 (0x40 | 1 << 2, H 0), end.
        let got = decompress(Compression::Lzo, &[19, b'a', b'b', 0x44, 0x00, 0x11, 0, 0], 5).unwrap();
        assert_eq!(got, b"ababa");
        // The encoding of zero bytes is just the end marker.
        assert_eq!(decompress(Compression::Lzo, &[0x11, 0, 0], 0).unwrap(), b"");
        // Long end marker (length field 0) is malformed.
        assert_decompress_error(decompress(Compression::Lzo, &[0x10, 0x01, 0, 0], 0), Compression::Lzo);
        // A match reaching before the start of the output (M2 distance 4 after 2 bytes).
        let detail =
            assert_decompress_error(decompress(Compression::Lzo, &[19, b'a', b'b', 0x4C, 0x00, 0x11, 0, 0], 5), Compression::Lzo);
        assert!(detail.contains("distance"), "{detail}");
        // Bytes after the end marker.
        assert_decompress_error(decompress(Compression::Lzo, &[0x11, 0, 0, 0], 0), Compression::Lzo);
    }

    #[test]
    fn test_decompress_into_reuses_buffer() {
        let big = sample(100_000);
        let small = sample(1000);
        let mut out = Vec::new();
        decompress_into(Compression::Lz4, &compress(Compression::Lz4, &big), big.len(), &mut out).unwrap();
        assert_eq!(out, big);
        let capacity = out.capacity();
        let ptr = out.as_ptr();
        for codec in ALL {
            decompress_into(codec, &compress(codec, &small), small.len(), &mut out).unwrap();
            assert_eq!(out, small, "{codec}");
            assert_eq!(out.capacity(), capacity, "{codec}: buffer was reallocated");
            assert_eq!(out.as_ptr(), ptr, "{codec}: buffer was reallocated");
        }
    }

    #[test]
    fn test_decompress_into_overwrites_stale_bytes() {
        // A reused buffer still holds an earlier page: a result must never show those bytes,
        // whether the new page is shorter, longer or declares more than its stream holds.
        for codec in ALL {
            for len in [1usize, 999, 5000] {
                let data = sample(len);
                let packed = compress(codec, &data);
                for stale_len in [0usize, len / 2, len, len + 777] {
                    let mut out = vec![0xA5u8; stale_len];
                    decompress_into(codec, &packed, len, &mut out).unwrap();
                    assert_eq!(out, data, "{codec} len {len} over {stale_len} stale bytes");
                    let mut out = vec![0xA5u8; stale_len + 64];
                    assert!(decompress_into(codec, &packed, len + 1, &mut out).is_err(), "{codec}");
                    assert!(out.is_empty(), "{codec}: stale bytes left after an error");
                }
            }
        }
    }

    #[test]
    fn test_decompress_into_clears_on_error() {
        let mut out = vec![1, 2, 3];
        let packed = compress(Compression::Gzip, b"hello");
        assert!(decompress_into(Compression::Gzip, &packed, 4, &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn test_decompress_wrong_declared_size() {
        let data = sample(5000);
        for codec in ALL {
            let packed = compress(codec, &data);
            for declared in [0, 1, data.len() - 1, data.len() + 1, data.len() * 2] {
                let detail = assert_decompress_error(decompress(codec, &packed, declared), codec);
                assert!(!detail.is_empty());
            }
        }
    }

    #[test]
    fn test_decompress_truncated_input() {
        let data = sample(20_000);
        for codec in ALL {
            let packed = compress(codec, &data);
            for keep in [0, 1, packed.len() / 2, packed.len() - 1] {
                if codec == Compression::Uncompressed && keep == packed.len() {
                    continue;
                }
                assert_decompress_error(decompress(codec, &packed[..keep], data.len()), codec);
            }
        }
    }

    #[test]
    fn test_decompress_garbage_input() {
        let garbage: Vec<u8> = (0..4000u32).map(|i| (i.wrapping_mul(0x9E37_79B9) >> 11) as u8).collect();
        for codec in ALL {
            if codec == Compression::Uncompressed {
                continue;
            }
            for declared in [0, 10, 4000, 100_000] {
                assert_decompress_error(decompress(codec, &garbage, declared), codec);
            }
        }
    }

    #[test]
    fn test_decompress_trailing_bytes_rejected() {
        let data = sample(3000);
        for codec in [Compression::Gzip, Compression::Lzo, Compression::Lzma2, Compression::Uncompressed] {
            let mut packed = compress(codec, &data);
            packed.extend_from_slice(&[0x55; 8]);
            assert_decompress_error(decompress(codec, &packed, data.len()), codec);
        }
    }

    #[test]
    fn test_decompress_corrupted_input_never_panics() {
        let data = sample(3000);
        for codec in ALL {
            let packed = compress(codec, &data);
            let step = (packed.len() / 150).max(1);
            for pos in (0..packed.len()).step_by(step) {
                for flip in [0xFFu8, 0x01, 0x80] {
                    let mut bad = packed.clone();
                    bad[pos] ^= flip;
                    if let Ok(out) = decompress(codec, &bad, data.len()) {
                        assert_eq!(out.len(), data.len());
                    }
                }
                let _ = decompress(codec, &packed[..pos], data.len());
            }
        }
    }

    proptest::proptest! {
        /// Arbitrary bytes (raw, or behind a codec's valid magic/header) never panic and
        /// never produce anything but exactly the declared size.
        #[test]
        fn test_decompress_arbitrary_bytes_never_panic(
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            n in 0usize..5000,
            prefix in 0usize..4,
        ) {
            let prefixes: [&[u8]; 4] = [
                &[],
                &[0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0, 0xFF],
                &[0x28, 0xB5, 0x2F, 0xFD],
                &[0xFD, b'7', b'z', b'X', b'Z', 0x00, 0x00, 0x01, 0x69, 0x22, 0xDE, 0x36],
            ];
            let mut input = prefixes[prefix].to_vec();
            input.extend_from_slice(&body);
            for codec in ALL {
                if let Ok(out) = decompress(codec, &input, n) {
                    proptest::prop_assert_eq!(out.len(), n);
                }
            }
        }
    }

    #[test]
    fn test_decompress_empty_page() {
        for codec in ALL {
            assert_eq!(decompress(codec, &[], 0).unwrap(), Vec::<u8>::new(), "{codec}");
            let packed = compress(codec, &[]);
            assert_eq!(decompress(codec, &packed, 0).unwrap(), Vec::<u8>::new(), "{codec}");
            if codec != Compression::Uncompressed {
                assert_decompress_error(decompress(codec, &[], 1), codec);
            }
        }
    }

    #[test]
    fn test_decompress_bomb_rejected_without_inflating() {
        // 10 MiB of zeros declared as a 100-byte page: every codec must refuse it. Block
        // codecs can only write into the 100-byte buffer; GZIP stops after 101 bytes;
        // LZMA2 and SNAPPY reject from the sizes in their headers.
        let zeros = vec![0u8; 10 * 1024 * 1024];
        for codec in ALL {
            if codec == Compression::Uncompressed {
                continue;
            }
            let packed = compress(codec, &zeros);
            let detail = assert_decompress_error(decompress(codec, &packed, 100), codec);
            assert!(!detail.is_empty());
        }
        // A real LZMA2 bomb (python: lzma.compress(bytes(10 << 20), format=lzma.FORMAT_XZ),
        // 1660 bytes): rejected from its chunk headers, before decoding.
        let xz = std::fs::read(pages_dir().join("bomb-zeros-10MiB.xz")).unwrap();
        assert!(xz.len() < 2000);
        assert_eq!(xz_declared_size(&xz).unwrap(), 10 * 1024 * 1024);
        let detail = assert_decompress_error(decompress(Compression::Lzma2, &xz, 100), Compression::Lzma2);
        assert!(detail.contains("declares 10485760"), "{detail}");
        // ZSTD without a content size in the frame header: the fixed buffer stops it.
        let mut c = zstd::bulk::Compressor::new(19).unwrap();
        c.include_contentsize(false).unwrap();
        let packed = c.compress(&zeros).unwrap();
        assert_eq!(zstd::zstd_safe::get_frame_content_size(&packed).unwrap(), None);
        assert_decompress_error(decompress(Compression::Zstd, &packed, 100), Compression::Zstd);
        // An absurd declared size for a tiny input is refused before allocating.
        let detail = assert_decompress_error(decompress(Compression::Lz4, &[0x10, 0x41], usize::MAX), Compression::Lz4);
        assert!(detail.contains("can expand to"), "{detail}");
    }

    /// A reader that produces zeros forever and counts how many it handed out.
    struct Endless {
        produced: usize,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            buf.fill(0);
            self.produced += buf.len();
            Ok(buf.len())
        }
    }

    #[test]
    fn test_read_bounded_stops_after_limit_plus_one() {
        let mut r = Endless { produced: 0 };
        let mut out = Vec::new();
        let err = read_bounded(&mut r, 100, &mut out).unwrap_err();
        assert!(err.contains("more than the declared 100"), "{err}");
        assert_eq!(r.produced, 101);
        assert!(out.capacity() <= 101 + 64);
    }

    #[test]
    fn test_bounded_writer_refuses_overflow() {
        let mut out = Vec::new();
        let mut w = BoundedWriter { out: &mut out, limit: 10 };
        assert!(w.write_all(&[1; 10]).is_ok());
        assert!(w.write_all(&[1]).is_err());
        assert_eq!(out.len(), 10);
    }

    #[test]
    fn test_xz_declared_size_rejects_malformed_headers() {
        let packed = compress(Compression::Lzma2, &sample(1000));
        assert_eq!(xz_declared_size(&packed).unwrap(), 1000);
        assert!(xz_declared_size(&packed[..11]).is_err());
        assert!(xz_declared_size(&packed[..20]).is_err());
        let mut bad = packed.clone();
        bad[0] = 0;
        assert!(xz_declared_size(&bad).is_err());
    }

    /// Fuzz finding (page_decode): a stream footer whose backward size is 0xFFFF_FFFF made
    /// lzma-rs compute `(backward_size + 1) << 2` and panic on overflow in debug builds.
    #[test]
    fn test_decompress_xz_footer_backward_size_overflow() {
        let mut packed = compress(Compression::Lzma2, &sample(1000));
        let n = packed.len();
        packed[n - 8..n - 4].copy_from_slice(&[0xff; 4]);
        let detail = assert_decompress_error(decompress(Compression::Lzma2, &packed, 1000), Compression::Lzma2);
        assert!(detail.contains("backward size 4294967295"), "{detail}");
        // Any other disagreement between the footer and the index is caught the same way.
        packed[n - 8..n - 4].copy_from_slice(&7u32.to_le_bytes());
        assert!(decompress(Compression::Lzma2, &packed, 1000).is_err());
    }

    #[test]
    fn test_decompress_uncompressed_size_mismatch() {
        let detail = assert_decompress_error(decompress(Compression::Uncompressed, b"abc", 4), Compression::Uncompressed);
        assert!(detail.contains("stores 3 bytes"), "{detail}");
        assert_eq!(decompress(Compression::Uncompressed, b"abc", 3).unwrap(), b"abc");
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = flate2::Crc::new();
        crc.update(data);
        crc.sum()
    }

    fn pages_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pages")
    }

    /// Check every page listed in `<dir>/pages.tsv` (written by `tools/extract_pages.py`):
    /// it decompresses to its declared size and, when the manifest has one, to the CRC-32
    /// computed by an independent implementation. Returns the pages checked per codec.
    fn check_pages(dir: &std::path::Path) -> std::collections::BTreeMap<&'static str, usize> {
        let manifest = std::fs::read_to_string(dir.join("pages.tsv")).unwrap();
        let mut seen = std::collections::BTreeMap::new();
        let mut out = Vec::new();
        for line in manifest.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let (file, codec, size, packed_size, crc) = (f[0], f[1], f[2], f[3], f[4]);
            let codec = Compression::from_name(codec).unwrap();
            let size: usize = size.parse().unwrap();
            let input = std::fs::read(dir.join(file)).unwrap();
            assert_eq!(input.len(), packed_size.parse::<usize>().unwrap(), "{file}");
            decompress_into(codec, &input, size, &mut out).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(out.len(), size, "{file}");
            if crc != "-" {
                assert_eq!(format!("{:08x}", crc32(&out)), crc, "{file}: content differs");
            }
            *seen.entry(codec.name()).or_insert(0) += 1;
        }
        seen
    }

    #[test]
    fn test_decompress_real_corpus_pages() {
        // Pages written by the Apache TsFile C++ writer (tests/data/pages/pages.tsv).
        let seen = check_pages(&pages_dir());
        for codec in ALL {
            assert!(seen.get(codec.name()).copied().unwrap_or(0) >= 2, "no {codec} fixture");
        }
        // Optional full check: TSFILE_PAGES_DIR=<dir from `extract_pages.py --all`>.
        if let Some(dir) = std::env::var_os("TSFILE_PAGES_DIR") {
            let seen = check_pages(std::path::Path::new(&dir));
            eprintln!("TSFILE_PAGES_DIR: decompressed {seen:?}");
        }
    }
}
