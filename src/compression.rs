//! Page decompression (stub: being implemented).
#![allow(unused_variables, missing_docs)]
use crate::error::{Result, TsFileError};
use crate::format::Compression;

/// Decompress one page's stored bytes into exactly `uncompressed_size` bytes.
pub fn decompress(codec: Compression, input: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
    Err(TsFileError::unsupported("decompression not implemented yet"))
}
