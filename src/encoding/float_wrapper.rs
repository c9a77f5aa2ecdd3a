//! The scaled-integer float wrapper: how TS_2DIFF and RLE carry FLOAT/DOUBLE values as
//! INT32/INT64 integers. Written once per page, in front of the integer blocks/sections:
//!
//! ```text
//! Form 1: UVarInt mpn                                                  then integers
//! Form 2: UVarInt 0x7fffffff, UVarInt cnt, scaled_bm, UVarInt mpn,         integers
//! Form 3: UVarInt 0x7ffffffe, UVarInt cnt, scaled_bm, raw_bm, UVarInt mpn, integers
//! ```
//!
//! Bitmaps hold `cnt / 8 + 1` bytes, LSB-first, indexed by the value's position in the page.
//! A value whose raw bit is set is the IEEE bit pattern itself; otherwise, without a scaled
//! bitmap or with its scaled bit set, it is `x / 10^mpn` (in `f64`); otherwise `x` itself.

use crate::encoding::bits::PackedInt;
use crate::encoding::corrupt;
use crate::encoding::plain::read_uvarint;
use crate::error::Result;

/// A float type carried as scaled integers by the float wrapper.
pub(crate) trait ScaledFloat: Copy + 'static {
    /// The integer lane: `i32` for FLOAT, `i64` for DOUBLE.
    type Int: PackedInt;
    /// `x / scale`, computed in `f64`.
    fn scaled(x: Self::Int, scale: f64) -> Self;
    /// `x` itself (the writer rounded the value to an integer).
    fn unscaled(x: Self::Int) -> Self;
    /// `x` is the IEEE bit pattern.
    fn raw(x: Self::Int) -> Self;
}

impl ScaledFloat for f32 {
    type Int = i32;
    #[inline(always)]
    // why: narrowing the f64 quotient to FLOAT rounds (never wraps), as the Java reader's `(float)` does.
    #[allow(clippy::cast_possible_truncation)]
    fn scaled(x: i32, scale: f64) -> f32 {
        (f64::from(x) / scale) as f32
    }
    #[inline(always)]
    // why: rounds to the nearest FLOAT (never wraps), as the Java reader's `(float)` does.
    #[allow(clippy::cast_possible_truncation)]
    fn unscaled(x: i32) -> f32 {
        f64::from(x) as f32
    }
    #[inline(always)]
    fn raw(x: i32) -> f32 {
        f32::from_bits(x as u32)
    }
}

impl ScaledFloat for f64 {
    type Int = i64;
    #[inline(always)]
    fn scaled(x: i64, scale: f64) -> f64 {
        x as f64 / scale
    }
    #[inline(always)]
    fn unscaled(x: i64) -> f64 {
        x as f64
    }
    #[inline(always)]
    fn raw(x: i64) -> f64 {
        f64::from_bits(x as u64)
    }
}

/// Form 2 marker (`Integer.MAX_VALUE`): some values overflowed when scaled.
const FORM2_MAGIC: u32 = 0x7fff_ffff;
/// Form 3 marker (`Integer.MAX_VALUE - 1`): some values are stored as raw IEEE bits.
const FORM3_MAGIC: u32 = 0x7fff_fffe;

/// The page header of the scaled-integer float wrapper (TS_2DIFF and RLE on FLOAT/DOUBLE).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatWrapper<'a> {
    /// `10^mpn`, or 1 when `mpn <= 0` (as a Java `int`).
    pub(crate) scale: f64,
    /// Forms 2 and 3: bit `p` set means value `p` was scaled.
    scaled: Option<&'a [u8]>,
    /// Form 3: bit `p` set means value `p` is stored as its IEEE bit pattern.
    raw: Option<&'a [u8]>,
}

#[inline(always)]
fn lsb_bit(bitmap: &[u8], p: usize) -> bool {
    bitmap.get(p / 8).is_some_and(|b| b & (1 << (p % 8)) != 0)
}

impl<'a> FloatWrapper<'a> {
    /// Parse the header at the start of `data` for a page of `count` values. Returns the
    /// header and the position of the first integer block/section.
    pub(crate) fn parse(data: &'a [u8], count: usize, what: &str) -> Result<(Self, usize)> {
        let varint = |pos: usize, field: &str| {
            read_uvarint(data, pos).map_err(|e| corrupt(what, format!("float header {field} at byte {pos}: {e}")))
        };
        let (tag, mut pos) = varint(0, "tag")?;
        let mut scaled = None;
        let mut raw = None;
        let mpn = if tag == FORM2_MAGIC || tag == FORM3_MAGIC {
            let (cnt, p) = varint(pos, "value count")?;
            if usize::try_from(cnt).ok() != Some(count) {
                return Err(corrupt(what, format!("float header at byte {pos}: declares {cnt} values, the page has {count}")));
            }
            let bm_len = count / 8 + 1;
            let n_maps = if tag == FORM3_MAGIC { 2 } else { 1 };
            let Some(maps) = data.get(p..p + n_maps * bm_len) else {
                return Err(corrupt(what, format!("float header at byte {p}: {n_maps} bitmaps of {bm_len} bytes truncated")));
            };
            let (s, r) = maps.split_at(bm_len);
            scaled = Some(s);
            if tag == FORM3_MAGIC {
                raw = Some(r);
            }
            pos = p + n_maps * bm_len;
            let (mpn, p) = varint(pos, "max point number")?;
            pos = p;
            mpn
        } else {
            tag
        };
        Ok((FloatWrapper { scale: scale_for(mpn), scaled, raw }, pos))
    }

    /// True for Form 1: every value is `x / scale`.
    pub(crate) fn is_form1(&self) -> bool {
        self.scaled.is_none() && self.raw.is_none()
    }

    /// The float for integer `x` at page position `p`.
    #[inline(always)]
    pub(crate) fn value<F: ScaledFloat>(&self, p: usize, x: F::Int) -> F {
        if self.raw.is_some_and(|bm| lsb_bit(bm, p)) {
            F::raw(x)
        } else if self.scaled.is_none_or(|bm| lsb_bit(bm, p)) {
            F::scaled(x, self.scale)
        } else {
            F::unscaled(x)
        }
    }
}

/// `10^mpn` like Java's `Math.pow(10, mpn)`; `mpn` is read as a Java `int`, and values `<= 0`
/// mean no scaling.
fn scale_for(mpn: u32) -> f64 {
    match i32::try_from(mpn) {
        Ok(m) if m > 0 => 10f64.powf(f64::from(m)),
        _ => 1.0,
    }
}

/// Test-only float wrapper encoders (feature `test-util`), Java `FloatEncoder` style.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::plain::encode::uvarint;

    /// How the writer stored one float.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Scaled,
        Unscaled,
        Raw,
    }

    /// The float wrapper header (ending with `mpn`) for `kinds`, Java `FloatEncoder` style.
    fn header(kinds: &[Kind], mpn: u32) -> Vec<u8> {
        let mut out = Vec::new();
        if kinds.iter().any(|&k| k != Kind::Scaled) {
            let has_raw = kinds.contains(&Kind::Raw);
            uvarint(if has_raw { 0x7fff_fffe } else { 0x7fff_ffff }, &mut out);
            uvarint(kinds.len() as u32, &mut out);
            let bitmap = |kind: Kind| {
                let mut bm = vec![0u8; kinds.len() / 8 + 1];
                for (p, _) in kinds.iter().enumerate().filter(|(_, &k)| k == kind) {
                    bm[p / 8] |= 1 << (p % 8);
                }
                bm
            };
            out.extend(bitmap(Kind::Scaled));
            if has_raw {
                out.extend(bitmap(Kind::Raw));
            }
        }
        uvarint(mpn, &mut out);
        out
    }

    fn scale(mpn: u32) -> f64 {
        if mpn == 0 {
            1.0
        } else {
            10f64.powf(f64::from(mpn))
        }
    }

    /// FLOAT → (wrapper header, integers), following Java's `FloatEncoder` (NaN payloads
    /// are kept, like the C++ writer).
    pub fn float_wrapper_f32(values: &[f32], mpn: u32) -> (Vec<u8>, Vec<i32>) {
        let s = scale(mpn);
        let (kinds, ints): (Vec<Kind>, Vec<i32>) = values
            .iter()
            .map(|&v| {
                let scaled = f64::from(v) * s;
                if scaled > f64::from(i32::MAX) || scaled < f64::from(i32::MIN) {
                    if v > i32::MAX as f32 || v < i32::MIN as f32 {
                        (Kind::Raw, v.to_bits() as i32)
                    } else {
                        (Kind::Unscaled, (f64::from(v) + 0.5).floor() as i32)
                    }
                } else if v.is_nan() {
                    (Kind::Raw, v.to_bits() as i32)
                } else {
                    (Kind::Scaled, (scaled + 0.5).floor() as i64 as i32)
                }
            })
            .unzip();
        (header(&kinds, mpn), ints)
    }

    /// DOUBLE → (wrapper header, integers), following Java's `FloatEncoder`.
    pub fn float_wrapper_f64(values: &[f64], mpn: u32) -> (Vec<u8>, Vec<i64>) {
        let s = scale(mpn);
        let (kinds, ints): (Vec<Kind>, Vec<i64>) = values
            .iter()
            .map(|&v| {
                let scaled = v * s;
                if scaled > i64::MAX as f64 || scaled < i64::MIN as f64 {
                    if v > i64::MAX as f64 || v < i64::MIN as f64 {
                        (Kind::Raw, v.to_bits() as i64)
                    } else {
                        (Kind::Unscaled, (v + 0.5).floor() as i64)
                    }
                } else if v.is_nan() {
                    (Kind::Raw, v.to_bits() as i64)
                } else {
                    (Kind::Scaled, (scaled + 0.5).floor() as i64)
                }
            })
            .unzip();
        (header(&kinds, mpn), ints)
    }
}
