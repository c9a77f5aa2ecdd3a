//! Page statistics as a check on decoded values, and with it the choice between the Java and
//! C++ writers' semantics where the same bytes mean different values ([`WriterLayout`]).
//!
//! SPRINTZ on INT64/TIMESTAMP/DOUBLE and RLBE on FLOAT/DOUBLE are decoded the Java way first
//! (Java is the reference implementation, used by IoTDB). With [`WriterLayout::Auto`] and a
//! [`ValueCheck`] from the page's statistics, values that contradict the statistics are
//! decoded again the C++ way; if those contradict them too the page is corrupt. A wrong
//! reading is almost never consistent with the statistics: it drifts away from the written
//! values within a few values (RLBE) or as soon as the predictor overflows (SPRINTZ), so its
//! last value, minimum or maximum differ. Both readings agree when nothing distinguishes the
//! writers (for example a SPRINTZ page whose products never exceed 64 bits).
//!
//! A reading is accepted when its first and last values equal the statistics' bit for bit (any
//! NaN equals any NaN: writers store NaN statistics canonically), every value lies within
//! `[min, max]` and both bounds are reached (not required around NaN and infinities, where
//! the writers' bounds are unreliable). When neither reading is accepted outright (pages with
//! NaN or infinities), the one whose first and last values agree and that has fewer values out
//! of bounds or NaN wins (Java on a tie): a wrong reading turns into NaN or leaves the bounds
//! quickly. If neither's first and last values agree, the page is an error.

use crate::encoding::{decode_f32, decode_f64, decode_i64, writer_dependent, DecodeOptions, WriterLayout};
use crate::error::{Result, TsFileError};
use crate::format::statistics::{Statistics, ValueStatistics};
use crate::format::{Encoding, TsDataType};

/// What a page's statistics say about its values, for the types whose decoding depends on
/// the writer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueCheck {
    /// INT64/TIMESTAMP.
    Int64 {
        /// Minimum.
        min: i64,
        /// Maximum.
        max: i64,
        /// First value.
        first: i64,
        /// Last value.
        last: i64,
    },
    /// FLOAT.
    Float {
        /// Minimum.
        min: f32,
        /// Maximum.
        max: f32,
        /// First value.
        first: f32,
        /// Last value.
        last: f32,
    },
    /// DOUBLE.
    Double {
        /// Minimum.
        min: f64,
        /// Maximum.
        max: f64,
        /// First value.
        first: f64,
        /// Last value.
        last: f64,
    },
}

/// How far decoded values agree with a [`ValueCheck`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// First and last values equal the statistics' (NaN-aware).
    pub ends: bool,
    /// Values outside `[min, max]` (NaN values and NaN bounds are not counted).
    pub outside: usize,
    /// Both bounds are reached (or cannot be: a bound or a value is not finite).
    pub bounds: bool,
    /// NaN values (a wrong reading tends to produce them: NaN + x stays NaN).
    pub nans: usize,
}

impl Verdict {
    /// Everything agrees.
    pub fn accepted(&self) -> bool {
        self.ends && self.outside == 0 && self.bounds
    }

    /// Values that look wrong: out of bounds or NaN (lower is more plausible).
    fn suspicious(&self) -> usize {
        self.outside.saturating_add(self.nans)
    }
}

impl ValueCheck {
    /// The check of page (or single-page chunk) statistics, when they have one and cover
    /// at least one value.
    pub fn from_statistics(s: &Statistics) -> Option<ValueCheck> {
        if s.count == 0 {
            return None;
        }
        match s.values {
            ValueStatistics::Int64 { min, max, first, last, .. } => Some(ValueCheck::Int64 { min, max, first, last }),
            ValueStatistics::Float { min, max, first, last, .. } => Some(ValueCheck::Float { min, max, first, last }),
            ValueStatistics::Double { min, max, first, last, .. } => Some(ValueCheck::Double { min, max, first, last }),
            _ => None,
        }
    }

    /// How INT64 `values` agree with the statistics (nothing agrees for another type).
    pub fn verdict_i64(&self, values: &[i64]) -> Verdict {
        let ValueCheck::Int64 { min, max, first, last } = *self else { return REJECTED };
        let ends = values.first() == Some(&first) && values.last() == Some(&last);
        let (mut lo, mut hi, mut outside) = (false, false, 0usize);
        for &v in values {
            outside += usize::from(v < min || v > max);
            lo |= v == min;
            hi |= v == max;
        }
        Verdict { ends, outside, bounds: lo && hi, nans: 0 }
    }

    /// How FLOAT `values` agree with the statistics (nothing agrees for another type).
    pub fn verdict_f32(&self, values: &[f32]) -> Verdict {
        let ValueCheck::Float { min, max, first, last } = *self else { return REJECTED };
        verdict_float(values, [min, max, first, last], |v| v.to_bits().into(), f32::is_finite)
    }

    /// How DOUBLE `values` agree with the statistics (nothing agrees for another type).
    pub fn verdict_f64(&self, values: &[f64]) -> Verdict {
        let ValueCheck::Double { min, max, first, last } = *self else { return REJECTED };
        verdict_float(values, [min, max, first, last], f64::to_bits, f64::is_finite)
    }
}

const REJECTED: Verdict = Verdict { ends: false, outside: usize::MAX, bounds: false, nans: usize::MAX };

fn verdict_float<T: Copy + PartialOrd>(
    values: &[T],
    [min, max, first, last]: [T; 4],
    bits: impl Fn(T) -> u64,
    finite: impl Fn(T) -> bool,
) -> Verdict {
    let nan = |v: T| v.partial_cmp(&v).is_none();
    let same = |a: Option<&T>, b: T| a.is_some_and(|&a| bits(a) == bits(b) || (nan(a) && nan(b)));
    let ends = same(values.first(), first) && same(values.last(), last);
    let nans = values.iter().filter(|&&v| nan(v)).count();
    if nan(min) || nan(max) {
        return Verdict { ends, outside: 0, bounds: true, nans };
    }
    // Writers' bounds around infinities are not reliable enough to require them reached.
    let (mut lo, mut hi, mut outside, mut all_finite) = (false, false, 0usize, finite(min) && finite(max) && nans == 0);
    for &v in values {
        if nan(v) {
            continue;
        }
        all_finite &= finite(v);
        outside += usize::from(v < min || v > max);
        lo |= v == min;
        hi |= v == max;
    }
    Verdict { ends, outside, bounds: !all_finite || (lo && hi), nans }
}

/// Decode with the layout `opts` names, or, for [`WriterLayout::Auto`] with a check on a
/// writer-dependent encoding: the Java reading if the check accepts it, else the C++ one if
/// the check accepts that; when neither is accepted outright, the reading whose first and last
/// values agree and that has fewer values outside `[min, max]` or NaN (Java on a tie); an
/// error when neither reading's first and last values agree.
fn resolve<T>(
    encoding: Encoding,
    data_type: TsDataType,
    out: &mut Vec<T>,
    opts: &DecodeOptions,
    check: Option<&ValueCheck>,
    verdict: impl Fn(&ValueCheck, &[T]) -> Verdict,
    decode: impl Fn(&mut Vec<T>, &DecodeOptions) -> Result<()>,
) -> Result<()> {
    let check = match check {
        Some(c) if opts.writer_layout == WriterLayout::Auto && writer_dependent(encoding, data_type) => c,
        _ => return decode(out, opts),
    };
    let java = DecodeOptions { writer_layout: WriterLayout::Java, ..*opts };
    let cpp = DecodeOptions { writer_layout: WriterLayout::Cpp, ..*opts };
    let start = out.len();
    decode(out, &java)?;
    let vj = verdict(check, out.get(start..).unwrap_or(&[]));
    if vj.accepted() {
        return Ok(());
    }
    out.truncate(start);
    decode(out, &cpp)?;
    let vc = verdict(check, out.get(start..).unwrap_or(&[]));
    if vc.accepted() || (vc.ends && (!vj.ends || vc.suspicious() < vj.suspicious())) {
        return Ok(());
    }
    out.truncate(start);
    if vj.ends {
        return decode(out, &java);
    }
    Err(TsFileError::corrupt(
        format!("{encoding} {data_type} stream"),
        None,
        "the first and last values contradict the page statistics under both the Java and the \
         C++ writer's semantics; option writer_layout = java or cpp reads them unchecked",
    ))
}

/// [`decode_i64`] with the writer's semantics chosen by `check` (see the module doc).
pub fn decode_i64_checked(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<i64>,
    opts: &DecodeOptions,
    check: Option<&ValueCheck>,
) -> Result<()> {
    resolve(encoding, TsDataType::Int64, out, opts, check, ValueCheck::verdict_i64, |o, op| {
        decode_i64(encoding, data, count, o, op)
    })
}

/// [`decode_f32`] with the writer's semantics chosen by `check` (see the module doc).
pub fn decode_f32_checked(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<f32>,
    opts: &DecodeOptions,
    check: Option<&ValueCheck>,
) -> Result<()> {
    resolve(encoding, TsDataType::Float, out, opts, check, ValueCheck::verdict_f32, |o, op| {
        decode_f32(encoding, data, count, o, op)
    })
}

/// [`decode_f64`] with the writer's semantics chosen by `check` (see the module doc).
pub fn decode_f64_checked(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<f64>,
    opts: &DecodeOptions,
    check: Option<&ValueCheck>,
) -> Result<()> {
    resolve(encoding, TsDataType::Double, out, opts, check, ValueCheck::verdict_f64, |o, op| {
        decode_f64(encoding, data, count, o, op)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::rlbe::encode::{encode_f64, encode_f64_java};

    fn check_of(v: &[f64]) -> ValueCheck {
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        ValueCheck::Double { min, max, first: v[0], last: v[v.len() - 1] }
    }

    fn read(data: &[u8], n: usize, layout: WriterLayout, check: Option<&ValueCheck>) -> Result<Vec<f64>> {
        let opts = DecodeOptions { writer_layout: layout, ..Default::default() };
        let mut out = vec![-1.0];
        decode_f64_checked(Encoding::Rlbe, data, n, &mut out, &opts, check)?;
        assert_eq!(out[0], -1.0, "values before the page are kept");
        Ok(out.split_off(1))
    }

    #[test]
    fn test_verdicts() {
        let c = ValueCheck::Int64 { min: -5, max: 9, first: 1, last: 2 };
        assert!(c.verdict_i64(&[1, -5, 9, 2]).accepted());
        assert_eq!(c.verdict_i64(&[1, -5, 10, 2]), Verdict { ends: true, outside: 1, bounds: false, nans: 0 });
        assert!(!c.verdict_i64(&[1, 9, 2]).accepted(), "minimum not reached");
        assert!(!c.verdict_i64(&[]).ends);
        assert!(!c.verdict_f64(&[1.0]).ends, "another type never agrees");
        let f = ValueCheck::Float { min: f32::NAN, max: f32::NAN, first: f32::NAN, last: 3.0 };
        assert!(f.verdict_f32(&[f32::from_bits(0x7fc0_0001), 100.0, 3.0]).accepted(), "NaN bounds, any NaN first");
        let d = ValueCheck::Double { min: -1.0, max: f64::INFINITY, first: -0.0, last: 2.0 };
        assert!(!d.verdict_f64(&[0.0, 2.0]).ends, "-0.0 and 0.0 differ");
        assert!(d.verdict_f64(&[-0.0, f64::INFINITY, 2.0]).accepted(), "bounds not required around infinities");
    }

    #[test]
    fn test_auto_picks_the_writer_the_statistics_agree_with() {
        let vals: Vec<f64> = (0..50).map(|i| f64::from(i % 7) * 1.5 - 4.0).collect();
        let want: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
        let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let check = check_of(&vals);
        for data in [encode_f64_java(&vals, 10_000), encode_f64(&vals)] {
            assert_eq!(bits(read(&data, 50, WriterLayout::Auto, Some(&check)).unwrap()), want);
        }
        // Without statistics Auto is Java; Java/Cpp are unchecked.
        let cpp = encode_f64(&vals);
        assert_ne!(bits(read(&cpp, 50, WriterLayout::Auto, None).unwrap()), want);
        assert_ne!(bits(read(&cpp, 50, WriterLayout::Java, Some(&check)).unwrap()), want);
        assert_eq!(bits(read(&cpp, 50, WriterLayout::Cpp, None).unwrap()), want);
        // Statistics that fit neither reading: an error, not garbage.
        let wrong = ValueCheck::Double { min: -4.0, max: 5.0, first: 7.0, last: 7.0 };
        let err = read(&cpp, 50, WriterLayout::Auto, Some(&wrong)).unwrap_err().to_string();
        assert!(err.contains("RLBE DOUBLE stream") && err.contains("writer_layout"), "{err}");
        // Encodings that do not depend on the writer are not checked.
        let opts = DecodeOptions::default();
        let mut out = Vec::new();
        let plain = crate::encoding::plain::encode::f64(&vals);
        decode_f64_checked(Encoding::Plain, &plain, 50, &mut out, &opts, Some(&wrong)).unwrap();
        assert_eq!(out.len(), 50);
    }
}
