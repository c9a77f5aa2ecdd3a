//! LZMA2 (XZ container) page decompression through `lzma-rs`, bounded up front: the sizes the
//! LZMA2 chunk headers declare are summed before anything is decoded and must equal the page's
//! declared size, and the output is written through a [`BoundedWriter`].
#![cfg_attr(not(test), warn(clippy::cast_possible_truncation, clippy::indexing_slicing))]

use std::io::{self, Write};

use super::CodecResult;

/// Decompress one LZMA2-in-XZ page into exactly `n` bytes.
pub(super) fn lzma2(input: &[u8], n: usize, out: &mut Vec<u8>) -> CodecResult {
    // lzma-rs inflates each XZ block into memory before writing it out, so bound the work
    // up front: the LZMA2 chunk headers state every chunk's size, and their sum must match.
    let total = xz_declared_size(input)?;
    if total != n as u64 {
        return Err(format!("xz stream declares {total} bytes, page declares {n}"));
    }
    out.clear();
    out.reserve(n);
    let mut sink = BoundedWriter { out, limit: n };
    let mut reader = input;
    lzma_rs::xz_decompress(&mut reader, &mut sink).map_err(|e| e.to_string())
}

/// A `Write` into a `Vec` that refuses to grow past `limit` bytes.
pub(super) struct BoundedWriter<'a> {
    pub(super) out: &'a mut Vec<u8>,
    pub(super) limit: usize,
}

impl Write for BoundedWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() > self.limit.saturating_sub(self.out.len()) {
            return Err(io::Error::other(format!("stream decompresses to more than the declared {} bytes", self.limit)));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sum the uncompressed sizes that an XZ stream's LZMA2 chunk headers declare, without
/// decoding anything. Only the structure needed to find the chunks is checked here (magic,
/// block headers, a single LZMA2 filter, chunk framing); checksums, the index and the
/// footer are verified by the decoder afterwards.
pub(super) fn xz_declared_size(input: &[u8]) -> std::result::Result<u64, String> {
    const MAGIC: &[u8] = &[0xFD, b'7', b'z', b'X', b'Z', 0x00];
    const LZMA2_FILTER_ID: u64 = 0x21;
    let truncated = || "truncated xz stream".to_string();
    let byte = |pos: usize| input.get(pos).copied().ok_or_else(truncated);
    let be16 = |pos: usize| -> std::result::Result<u64, String> { Ok(u64::from(byte(pos)?) << 8 | u64::from(byte(pos + 1)?)) };

    if input.len() < 12 || input.get(..6) != Some(MAGIC) {
        return Err("missing xz stream header magic".to_string());
    }
    let check_size = match byte(7)? & 0x0F {
        0 => 0,
        1..=3 => 4,
        4..=6 => 8,
        7..=9 => 16,
        10..=12 => 32,
        _ => 64,
    };
    let mut pos = 12usize;
    let mut total = 0u64;
    loop {
        let block_start = pos;
        let size_byte = byte(pos)?;
        if size_byte == 0 {
            // The index follows, then the 12-byte stream footer. Its backward size must
            // describe the index exactly (lzma-rs computes `(backward_size + 1) << 2`, which
            // overflows for a crafted 0xFFFF_FFFF).
            xz_check_footer(input, pos)?;
            return Ok(total);
        }
        let header_len = (usize::from(size_byte) + 1) * 4;
        let header_end = pos.checked_add(header_len).ok_or_else(truncated)?;
        let header = input.get(pos..header_end).ok_or_else(truncated)?;
        let flags = header.get(1).copied().ok_or_else(truncated)?;
        if flags & 0x03 != 0 {
            return Err("xz block uses a filter chain; only a single LZMA2 filter is supported".into());
        }
        let mut hp = 2usize;
        if flags & 0x40 != 0 {
            xz_multibyte(header, &mut hp)?; // compressed size
        }
        if flags & 0x80 != 0 {
            xz_multibyte(header, &mut hp)?; // uncompressed size
        }
        let filter = xz_multibyte(header, &mut hp)?;
        if filter != LZMA2_FILTER_ID {
            return Err(format!("xz filter 0x{filter:x} is not LZMA2"));
        }
        pos = header_end;
        // LZMA2 chunks up to the end marker 0x00.
        loop {
            let control = byte(pos)?;
            pos += 1;
            let (unpacked, skip) = match control {
                0x00 => break,
                0x01 | 0x02 => {
                    let size = be16(pos)? + 1;
                    (size, 2 + size)
                }
                0x03..=0x7F => return Err(format!("invalid LZMA2 chunk control byte 0x{control:02x}")),
                _ => {
                    let unpacked = (u64::from(control & 0x1F) << 16 | be16(pos)?) + 1;
                    let packed = be16(pos + 2)? + 1;
                    let props = if (control >> 5) & 0x03 >= 2 { 1 } else { 0 };
                    (unpacked, 4 + props + packed)
                }
            };
            total = total.checked_add(unpacked).ok_or_else(truncated)?;
            let skip = usize::try_from(skip).map_err(|_| truncated())?;
            pos = pos.checked_add(skip).ok_or_else(truncated)?;
            if pos > input.len() {
                return Err(truncated());
            }
        }
        // Block padding to a multiple of four, then the block check.
        let unpadded = pos - block_start;
        pos += (4 - unpadded % 4) % 4 + check_size;
        if pos > input.len() {
            return Err(truncated());
        }
    }
}

/// Check the XZ stream footer (`CRC32, backward size (LE u32), flags, "YZ"`) against the
/// index that starts at `index_start` and runs up to the footer.
fn xz_check_footer(input: &[u8], index_start: usize) -> CodecResult {
    let footer_start = input
        .len()
        .checked_sub(12)
        .filter(|&f| f >= index_start)
        .ok_or_else(|| "truncated xz stream (no room for the index and footer)".to_string())?;
    let footer = input.get(footer_start..).unwrap_or_default();
    if footer.get(10..12) != Some(b"YZ") {
        return Err("missing xz stream footer magic".to_string());
    }
    let mut size = [0u8; 4];
    size.copy_from_slice(footer.get(4..8).unwrap_or(&[0; 4]));
    let backward = u64::from(u32::from_le_bytes(size));
    let index_len = (footer_start - index_start) as u64;
    if (backward + 1) * 4 != index_len {
        return Err(format!("xz footer's backward size {backward} does not match the {index_len}-byte index"));
    }
    Ok(())
}

/// An XZ variable-length integer (7 bits per byte, low group first, at most 9 bytes).
fn xz_multibyte(buf: &[u8], pos: &mut usize) -> std::result::Result<u64, String> {
    let mut value = 0u64;
    for i in 0..9 {
        let b = buf.get(*pos).copied().ok_or("truncated xz block header")?;
        *pos += 1;
        value |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("xz integer longer than 9 bytes".to_string())
}
