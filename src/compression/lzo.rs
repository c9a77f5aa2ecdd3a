//! LZO1X page decompression.
//!
//! LZO1X is decoded here rather than through a crate: the available pure-Rust decoder
//! (`lzokay-native`) panics on corrupt input (unchecked back-reference arithmetic) and grows
//! its output without limit, and the other port is GPL-licensed. The decoder below follows
//! the LZO1X bitstream as documented by lzokay (MIT) and checks every literal run and
//! back-reference against the input and the fixed-size output.
#![cfg_attr(not(test), warn(clippy::cast_possible_truncation, clippy::indexing_slicing))]

use super::{check_expansion, sized, CodecResult};

/// An LZO1X long-length byte run adds 255 output bytes per input byte.
const LZO_MAX_RATIO: usize = 255;

/// Decompress one LZO1X page into exactly `n` bytes.
pub(super) fn lzo(input: &[u8], n: usize, out: &mut Vec<u8>) -> CodecResult {
    check_expansion(input.len(), n, LZO_MAX_RATIO)?;
    let buf = sized(out, n);
    let written = lzo1x_decompress(input, buf)?;
    out.truncate(written);
    Ok(())
}

/// Decode one LZO1X block into `out`, returning the number of bytes written.
///
/// Instruction set (the first byte may instead be `18..=255`: a literal run of `byte - 17`):
///
/// | opcode | meaning |
/// | --- | --- |
/// | `0..=15` after a match | copy 2 bytes (distance ≤ 1 KiB) or, after a literal run, 3 bytes (2–3 KiB) |
/// | `0..=15` after a literal-free match | literal run of `3 + L` bytes (`L = 0`: long length) |
/// | `16..=31` (M4) | copy from 16–48 KiB back; distance 16384 with length 3 ends the stream |
/// | `32..=63` (M3) | copy up to 16 KiB back, LE16 distance |
/// | `64..=255` (M2) | copy 3–8 bytes from ≤ 2 KiB back |
///
/// Every match carries 0–3 trailing literals in its low two bits ("state").
fn lzo1x_decompress(input: &[u8], out: &mut [u8]) -> std::result::Result<usize, String> {
    let mut lzo = LzoState { input, ip: 0, out, op: 0 };
    // Literals copied by the previous instruction (4 = a long literal run).
    let mut state: usize = 0;
    let first = lzo.byte()?;
    if first > 17 {
        let count = usize::from(first - 17);
        lzo.literals(count)?;
        state = count.min(4);
    } else {
        lzo.ip = 0;
    }
    loop {
        let inst = lzo.byte()?;
        let (len, distance, trailing) = if inst >= 64 {
            // M2: 0b1LLDDDSS / 0b01LDDDSS + H: length 3..=8, distance (H << 3) + D + 1.
            let h = usize::from(lzo.byte()?);
            let distance = (h << 3) + usize::from((inst >> 2) & 7) + 1;
            (usize::from(inst >> 5) + 1, distance, usize::from(inst & 3))
        } else if inst >= 32 {
            // M3: 0b001LLLLL [long length] + LE16(D << 2 | S): distance D + 1.
            let len = lzo.length(usize::from(inst & 31), 31)? + 2;
            let d = lzo.le16()?;
            (len, (d >> 2) + 1, d & 3)
        } else if inst >= 16 {
            // M4: 0b0001HLLL [long length] + LE16(D << 2 | S): distance 16384 + (H << 14) + D.
            let len = lzo.length(usize::from(inst & 7), 7)? + 2;
            let d = lzo.le16()?;
            let distance = (usize::from(inst & 8) << 11) + (d >> 2);
            if distance == 0 {
                if len != 3 {
                    return Err("malformed LZO end-of-stream marker".to_string());
                }
                break;
            }
            (len, distance + 16384, d & 3)
        } else if state == 0 {
            // Literal run: 3 + L bytes.
            let len = lzo.length(usize::from(inst), 15)? + 3;
            lzo.literals(len)?;
            state = 4;
            continue;
        } else {
            // M1: a short match whose meaning depends on the previous instruction.
            let h = usize::from(lzo.byte()?);
            let base = usize::from(inst >> 2) + (h << 2);
            if state < 4 {
                (2, base + 1, usize::from(inst & 3))
            } else {
                (3, base + 2049, usize::from(inst & 3))
            }
        };
        lzo.copy_match(distance, len)?;
        lzo.literals(trailing)?;
        state = trailing;
    }
    let trailing_input = lzo.input.len() - lzo.ip;
    if trailing_input != 0 {
        return Err(format!("{trailing_input} bytes after the LZO end-of-stream marker"));
    }
    Ok(lzo.op)
}

/// Cursor over an LZO1X block and its fixed-size output.
struct LzoState<'a> {
    input: &'a [u8],
    ip: usize,
    out: &'a mut [u8],
    op: usize,
}

impl LzoState<'_> {
    fn byte(&mut self) -> std::result::Result<u8, String> {
        let b = self.input.get(self.ip).copied().ok_or("truncated LZO stream")?;
        self.ip += 1;
        Ok(b)
    }

    fn le16(&mut self) -> std::result::Result<usize, String> {
        let lo = usize::from(self.byte()?);
        let hi = usize::from(self.byte()?);
        Ok(lo | hi << 8)
    }

    /// A length field: `field` itself, or when it is zero, `base` plus a run of zero bytes
    /// (255 each) and a final non-zero byte.
    fn length(&mut self, field: usize, base: usize) -> std::result::Result<usize, String> {
        if field != 0 {
            return Ok(field);
        }
        let mut len = base;
        loop {
            let b = self.byte()?;
            if b != 0 {
                return len.checked_add(usize::from(b)).ok_or_else(|| "LZO length overflow".into());
            }
            len = len.checked_add(255).ok_or("LZO length overflow")?;
        }
    }

    fn output_full(&self, len: usize) -> String {
        format!("stream decompresses to more than the declared {} bytes (at {} needs {len} more)", self.out.len(), self.op)
    }

    fn literals(&mut self, len: usize) -> std::result::Result<(), String> {
        if len == 0 {
            return Ok(());
        }
        let src = self.ip.checked_add(len).and_then(|end| self.input.get(self.ip..end)).ok_or("truncated LZO literal run")?;
        let out_len = self.out.len();
        let dst = self.op.checked_add(len).filter(|&end| end <= out_len).and_then(|end| self.out.get_mut(self.op..end));
        let Some(dst) = dst else {
            return Err(self.output_full(len));
        };
        dst.copy_from_slice(src);
        self.ip += len;
        self.op += len;
        Ok(())
    }

    fn copy_match(&mut self, distance: usize, len: usize) -> std::result::Result<(), String> {
        if distance > self.op {
            return Err(format!("LZO match distance {distance} reaches before the start of the output (at {})", self.op));
        }
        let end = match self.op.checked_add(len) {
            Some(end) if end <= self.out.len() => end,
            _ => return Err(self.output_full(len)),
        };
        let start = self.op - distance;
        if distance >= len {
            self.out.copy_within(start..start + len, self.op);
        } else {
            // Overlapping copy: the run repeats the last `distance` bytes.
            for i in self.op..end {
                let b = self.out.get(i - distance).copied().unwrap_or_default();
                if let Some(slot) = self.out.get_mut(i) {
                    *slot = b;
                }
            }
        }
        self.op = end;
        Ok(())
    }
}
