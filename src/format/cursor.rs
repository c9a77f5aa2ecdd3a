//! A checked reader over a byte slice: the binary primitives of TsFile v4.
//!
//! All fixed-width numbers are big-endian. The variable-length primitives are:
//!
//! | name        | wire                                                              |
//! |-------------|-------------------------------------------------------------------|
//! | `UVarInt`   | unsigned LEB128, low 7-bit group first, at most 5 bytes (32 bits) |
//! | `VarInt`    | zig-zag of an `i32`, then `UVarInt`                               |
//! | `VarString` | `VarInt` length (−1 = null) + UTF-8 bytes                         |
//! | `String32`  | `int32` length (−1 = null) + UTF-8 bytes                          |
//! | `Binary32`  | `int32` length (−1 = null) + raw bytes                            |
//! | `VarBinary` | `VarInt` length (−1 = null) + raw bytes                           |
//!
//! A [`Cursor`] knows the absolute file offset of its first byte, so every error it raises
//! names the offset in the file where the failing primitive starts. Lengths are checked to be
//! non-negative and to fit in the remaining bytes *before* anything is sliced or allocated.
//!
//! ```
//! use datafusion_tsfile::format::Cursor;
//! // UVarInt 300 = ac 02, then VarString "ab" = 04 61 62
//! let mut c = Cursor::new(&[0xac, 0x02, 0x04, b'a', b'b'], 0);
//! assert_eq!(c.uvarint("n").unwrap(), 300);
//! assert_eq!(c.var_string("name").unwrap().as_deref(), Some("ab"));
//! assert!(c.is_empty());
//! ```

use crate::error::{Result, TsFileError};

/// A forward-only, bounds-checked reader over `&[u8]` that reports absolute file offsets.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor over `buf`, whose first byte sits at absolute file offset `base`.
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Cursor { buf, pos: 0, base }
    }

    /// Absolute file offset of the next byte to be read.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Position relative to the start of the slice.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// True when every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes, without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// Peek at the next byte without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    fn truncated(&self, what: &str, needed: usize) -> TsFileError {
        TsFileError::Truncated {
            what: what.to_string(),
            offset: self.offset(),
            needed: needed as u64,
            available: self.remaining() as u64,
        }
    }

    /// Consume exactly `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let buf = self.buf;
        match self.pos.checked_add(n).and_then(|end| Some((end, buf.get(self.pos..end)?))) {
            Some((end, out)) => {
                self.pos = end;
                Ok(out)
            }
            None => Err(self.truncated(what, n)),
        }
    }

    /// Skip `n` bytes.
    pub fn skip(&mut self, n: usize, what: &str) -> Result<()> {
        self.bytes(n, what).map(|_| ())
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let b = self.bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// One byte.
    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A boolean byte: 0 is false, anything else true.
    pub fn bool(&mut self, what: &str) -> Result<bool> {
        Ok(self.u8(what)? != 0)
    }

    /// Big-endian `i32`.
    pub fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    /// Big-endian `i64`.
    pub fn i64(&mut self, what: &str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    /// Big-endian IEEE-754 `f32`.
    pub fn f32(&mut self, what: &str) -> Result<f32> {
        Ok(f32::from_bits(u32::from_be_bytes(self.array(what)?)))
    }

    /// Big-endian IEEE-754 `f64`.
    pub fn f64(&mut self, what: &str) -> Result<f64> {
        Ok(f64::from_bits(u64::from_be_bytes(self.array(what)?)))
    }

    /// Unsigned LEB128, at most 5 bytes and 32 bits.
    pub fn uvarint(&mut self, what: &str) -> Result<u32> {
        let start = self.offset();
        let mut value: u32 = 0;
        for i in 0..5 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(TsFileError::Truncated {
                    what: format!("{what} (varint)"),
                    offset: start,
                    needed: i as u64 + 1,
                    available: i as u64,
                });
            };
            self.pos += 1;
            let payload = u32::from(b & 0x7f);
            if i == 4 && payload > 0x0f {
                return Err(TsFileError::corrupt(what, Some(start), "varint overflows 32 bits"));
            }
            value |= payload << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(TsFileError::corrupt(what, Some(start), "varint longer than 5 bytes"))
    }

    /// Zig-zag signed 32-bit varint.
    pub fn varint(&mut self, what: &str) -> Result<i32> {
        let u = self.uvarint(what)?;
        Ok(((u >> 1) as i32) ^ -((u & 1) as i32))
    }

    /// A length prefix: `-1` is null, other negatives are corrupt, and the length must fit.
    fn length(&mut self, len: i32, start: u64, what: &str) -> Result<Option<usize>> {
        match len {
            -1 => Ok(None),
            l if l < 0 => Err(TsFileError::corrupt(what, Some(start), format!("negative length {l}"))),
            l => {
                let n = l as usize;
                if n > self.remaining() {
                    return Err(TsFileError::Truncated {
                        what: what.to_string(),
                        offset: start,
                        needed: n as u64,
                        available: self.remaining() as u64,
                    });
                }
                Ok(Some(n))
            }
        }
    }

    fn utf8(bytes: &'a [u8], start: u64, what: &str) -> Result<&'a str> {
        std::str::from_utf8(bytes).map_err(|e| TsFileError::corrupt(what, Some(start), format!("invalid UTF-8: {e}")))
    }

    /// `VarInt` length + raw bytes; `None` for null.
    pub fn var_binary(&mut self, what: &str) -> Result<Option<&'a [u8]>> {
        let start = self.offset();
        let len = self.varint(what)?;
        match self.length(len, start, what)? {
            None => Ok(None),
            Some(n) => Ok(Some(self.bytes(n, what)?)),
        }
    }

    /// `VarString`: `VarInt` length + UTF-8; `None` for null.
    pub fn var_str(&mut self, what: &str) -> Result<Option<&'a str>> {
        let start = self.offset();
        match self.var_binary(what)? {
            None => Ok(None),
            Some(b) => Ok(Some(Self::utf8(b, start, what)?)),
        }
    }

    /// `VarString` as an owned `String`; `None` for null.
    pub fn var_string(&mut self, what: &str) -> Result<Option<String>> {
        Ok(self.var_str(what)?.map(str::to_owned))
    }

    /// A `VarString` that must not be null.
    pub fn var_string_required(&mut self, what: &str) -> Result<String> {
        let start = self.offset();
        self.var_string(what)?.ok_or_else(|| TsFileError::corrupt(what, Some(start), "unexpected null string"))
    }

    /// `Binary32`: `int32` length + raw bytes; `None` for null.
    pub fn binary32(&mut self, what: &str) -> Result<Option<&'a [u8]>> {
        let start = self.offset();
        let len = self.i32(what)?;
        match self.length(len, start, what)? {
            None => Ok(None),
            Some(n) => Ok(Some(self.bytes(n, what)?)),
        }
    }

    /// `String32`: `int32` length + UTF-8; `None` for null.
    pub fn string32(&mut self, what: &str) -> Result<Option<String>> {
        let start = self.offset();
        match self.binary32(what)? {
            None => Ok(None),
            Some(b) => Ok(Some(Self::utf8(b, start, what)?.to_owned())),
        }
    }

    /// Fail unless every byte was consumed.
    pub fn expect_end(&self, what: &str) -> Result<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(TsFileError::corrupt(what, Some(self.offset()), format!("{} unexpected trailing bytes", self.remaining())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_uvarint_values() {
        let cases: &[(&[u8], u32)] = &[
            (&[0x00], 0),
            (&[0x7f], 127),
            (&[0x80, 0x01], 128),
            (&[0xac, 0x02], 300),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], u32::MAX),
        ];
        for (bytes, want) in cases {
            let mut c = Cursor::new(bytes, 0);
            assert_eq!(c.uvarint("v").unwrap(), *want);
            assert!(c.is_empty());
        }
    }

    #[test]
    fn test_uvarint_overflow_and_overlong() {
        let mut c = Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0x1f], 10);
        let e = c.uvarint("v").unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        assert!(e.to_string().contains("offset 10"), "{e}");
        let mut c = Cursor::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], 0);
        assert!(c.uvarint("v").is_err());
    }

    #[test]
    fn test_uvarint_truncated() {
        let mut c = Cursor::new(&[0x80, 0x80], 5);
        match c.uvarint("count").unwrap_err() {
            TsFileError::Truncated { offset, .. } => assert_eq!(offset, 5),
            e => panic!("unexpected {e}"),
        }
    }

    #[test]
    fn test_varint_zigzag() {
        let cases: &[(&[u8], i32)] = &[
            (&[0x00], 0),
            (&[0x01], -1),
            (&[0x02], 1),
            (&[0x03], -2),
            (&[0xd8, 0x04], 300),
            (&[0xfe, 0xff, 0xff, 0xff, 0x0f], i32::MAX),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], i32::MIN),
        ];
        for (bytes, want) in cases {
            assert_eq!(Cursor::new(bytes, 0).varint("v").unwrap(), *want);
        }
    }

    #[test]
    fn test_var_string_null_empty_value() {
        let mut c = Cursor::new(&[0x01, 0x00, 0x04, b'h', b'i'], 0);
        assert_eq!(c.var_string("s").unwrap(), None);
        assert_eq!(c.var_string("s").unwrap().as_deref(), Some(""));
        assert_eq!(c.var_string("s").unwrap().as_deref(), Some("hi"));
    }

    #[test]
    fn test_var_string_negative_length() {
        // VarInt(-2) = 0x03
        let e = Cursor::new(&[0x03, 0x00], 7).var_string("s").unwrap_err();
        assert!(e.to_string().contains("negative length -2"), "{e}");
    }

    #[test]
    fn test_var_string_past_end() {
        let e = Cursor::new(&[0x08, b'a'], 0).var_string("s").unwrap_err();
        assert!(matches!(e, TsFileError::Truncated { needed: 4, available: 1, .. }), "{e}");
    }

    #[test]
    fn test_var_string_invalid_utf8() {
        let e = Cursor::new(&[0x02, 0xff], 3).var_string("name").unwrap_err();
        assert!(e.to_string().contains("invalid UTF-8"), "{e}");
    }

    #[test]
    fn test_var_binary_raw_bytes() {
        let mut c = Cursor::new(&[0x08, 0xff, 0xfe, 0x00, 0x80], 0);
        assert_eq!(c.var_binary("p").unwrap(), Some(&[0xff, 0xfe, 0x00, 0x80][..]));
    }

    #[test]
    fn test_string32_and_binary32() {
        let mut c = Cursor::new(&[0, 0, 0, 2, b'o', b'k', 0xff, 0xff, 0xff, 0xff], 0);
        assert_eq!(c.string32("s").unwrap().as_deref(), Some("ok"));
        assert_eq!(c.binary32("b").unwrap(), None);
        let e = Cursor::new(&[0xff, 0xff, 0xff, 0xfe], 0).binary32("b").unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
        let e = Cursor::new(&[0x7f, 0xff, 0xff, 0xff, 1], 0).binary32("b").unwrap_err();
        assert!(matches!(e, TsFileError::Truncated { .. }), "{e}");
    }

    #[test]
    fn test_fixed_width_big_endian() {
        let bytes = [
            0x80, 0, 0, 0, // i32::MIN
            0, 0, 0, 0, 0, 0, 0, 0x64, // 100i64
            0x3f, 0xc0, 0, 0, // 1.5f32
            0x3f, 0xf0, 0, 0, 0, 0, 0, 0, // 1.0f64
        ];
        let mut c = Cursor::new(&bytes, 0);
        assert_eq!(c.i32("a").unwrap(), i32::MIN);
        assert_eq!(c.i64("b").unwrap(), 100);
        assert_eq!(c.f32("c").unwrap(), 1.5);
        assert_eq!(c.f64("d").unwrap(), 1.0);
        assert!(c.i64("e").is_err());
    }

    #[test]
    fn test_expect_end_reports_trailing() {
        let mut c = Cursor::new(&[1, 2, 3], 100);
        c.u8("x").unwrap();
        let e = c.expect_end("record").unwrap_err();
        assert!(e.to_string().contains("offset 101"), "{e}");
    }
}
