//! Page compression for the writer: the inverse of [`decompress_into`](super::decompress_into)
//! for every codec a writer may choose.
//!
//! | codec | stored bytes | implementation |
//! | --- | --- | --- |
//! | UNCOMPRESSED | the page itself | copy |
//! | SNAPPY | one raw snappy block | `snap::raw::Encoder` |
//! | GZIP | one gzip member | `flate2` (default level) |
//! | LZ4 | one raw LZ4 block (no frame, no size prefix) | in this crate (`lz4_block.rs`: a denser matcher than `lz4_flex`'s) |
//! | ZSTD | one zstd frame | `zstd` (level 3, the zstd default) |
//! | LZMA2 | LZMA2 in an XZ container | `lzma-rs` |
//!
//! LZO is not written (no sound compressor in the dependency set); choosing it is an
//! [`TsFileError::Unsupported`] error before anything is written.

use std::io::Write;

use crate::error::{Result, TsFileError};
use crate::format::Compression;

/// Whether [`compress_into`] can write `codec`.
pub fn can_compress(codec: Compression) -> bool {
    !matches!(codec, Compression::Lzo)
}

/// Compress one page's bytes with `codec`, appending the stored bytes to `out`; returns how
/// many bytes were appended.
pub fn compress_into(codec: Compression, input: &[u8], out: &mut Vec<u8>) -> Result<usize> {
    let start = out.len();
    let failed = |detail: String| TsFileError::InvalidArgument(format!("{} compression failed: {detail}", codec.name()));
    match codec {
        Compression::Uncompressed => out.extend_from_slice(input),
        Compression::Lz4 => super::lz4_block::compress_into(input, out),
        Compression::Snappy => {
            let max = snap::raw::max_compress_len(input.len());
            out.resize(start + max, 0);
            let n = snap::raw::Encoder::new()
                .compress(input, out.get_mut(start..).unwrap_or_default())
                .map_err(|e| failed(e.to_string()))?;
            out.truncate(start + n);
        }
        Compression::Zstd => {
            let compressed = zstd::bulk::compress(input, 3).map_err(|e| failed(e.to_string()))?;
            out.extend_from_slice(&compressed);
        }
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(std::mem::take(out), flate2::Compression::default());
            enc.write_all(input).map_err(|e| failed(e.to_string()))?;
            *out = enc.finish().map_err(|e| failed(e.to_string()))?;
        }
        Compression::Lzma2 => {
            let mut reader = input;
            lzma_rs::xz_compress(&mut reader, out).map_err(|e| failed(e.to_string()))?;
        }
        Compression::Lzo => return Err(TsFileError::unsupported("writing LZO pages")),
    }
    Ok(out.len() - start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::decompress;

    #[test]
    fn test_compress_round_trips_every_writable_codec() {
        let inputs: [Vec<u8>; 4] = [
            Vec::new(),
            vec![7],
            (0..100_000u32).map(|i| (i % 251) as u8).collect(),
            (0..5000u32).flat_map(|i| (i.wrapping_mul(2_654_435_761)).to_be_bytes()).collect(),
        ];
        for codec in Compression::ALL.iter().copied().filter(|c| can_compress(*c)) {
            for input in &inputs {
                let mut out = vec![0xAA];
                let n = compress_into(codec, input, &mut out).unwrap();
                assert_eq!(out.len(), n + 1, "{codec}");
                assert_eq!(out[0], 0xAA, "{codec}: the prefix is kept");
                let back = decompress(codec, &out[1..], input.len()).unwrap();
                assert_eq!(&back, input, "{codec}, {} bytes", input.len());
            }
        }
        assert!(compress_into(Compression::Lzo, b"x", &mut Vec::new()).is_err());
    }
}
