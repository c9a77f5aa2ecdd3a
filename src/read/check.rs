//! Page statistics as a check on decoded values, and with them and the file's evidence the
//! choice between the Java and C++ writers' semantics where the same bytes mean different
//! values ([`WriterLayout`]).
//!
//! SPRINTZ on INT64/TIMESTAMP/DOUBLE and RLBE on FLOAT/DOUBLE are *writer-dependent*. With
//! [`WriterLayout::Java`] or [`WriterLayout::Cpp`] they are decoded that way, unchecked. With
//! [`WriterLayout::Auto`] (the default) the writer is decided **per file, never per page**
//! ([`crate::format::provenance`]): by the footer's signature, else by the pages whose
//! statistics decide. A page's statistics ([`ValueCheck`]) *accept* a reading when its first
//! and last values equal the statistics' bit for bit (any NaN equals any NaN: writers store
//! NaN statistics canonically), every value lies within `[min, max]` and both bounds are
//! reached (not required around NaN and infinities, where the writers' bounds are
//! unreliable). A page *decides* for a writer when its statistics accept that writer's
//! reading and not the other's.
//!
//! * **File decided** (its footer names the writer, or earlier pages decided): the page is
//!   decoded that writer's way. If the statistics accept it, done. Otherwise the other reading
//!   is tried: when the page decides for the other writer (or only the other reading's first
//!   and last values agree), the evidence contradicts itself and the page is an error naming
//!   `writer_layout`; when neither reading is accepted (pages with NaN or infinities, where a
//!   page cannot tell), the page follows the file's decision.
//! * **File undecided** (no signature, no deciding page yet): both readings are tried. A
//!   deciding page is recorded in the file's evidence and read its writer's way; a page whose
//!   two readings are the same values needs no decision; any other page is an error naming
//!   `writer_layout` — never a guess.
//!
//! Without statistics ([`PageCheck`] without values) a decided file's page is decoded its
//! writer's way; an undecided file's page is an error. Values appended before the page are
//! never touched.

use crate::encoding::{decode_f32, decode_f64, decode_i64, writer_dependent, DecodeOptions, WriterLayout};
use crate::error::{Result, TsFileError};
use crate::format::provenance::{WriterEvidence, WriterKind};
use crate::format::statistics::{Statistics, ValueStatistics};
use crate::format::{Encoding, TsDataType};
use crate::stats::trust::{StatValue, ValueBounds};

/// What a page's statistics say about its values, for the types whose decoding depends on
/// the writer: the first and last values, and the bounds where the statistics are trusted
/// for them ([`crate::stats::trust`]: integers whose `min <= max`, floats whose sum is not
/// NaN — a page with a NaN, or with both infinities, has no trusted bounds, and the C++
/// writer's `max` on such pages can miss values).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueCheck {
    /// INT64/TIMESTAMP.
    Int64 {
        /// Trusted `[min, max]`, if any.
        bounds: Option<(i64, i64)>,
        /// First value.
        first: i64,
        /// Last value.
        last: i64,
    },
    /// FLOAT.
    Float {
        /// Trusted `[min, max]` (a zero bound covers both zeros), if any.
        bounds: Option<(f32, f32)>,
        /// First value.
        first: f32,
        /// Last value.
        last: f32,
    },
    /// DOUBLE.
    Double {
        /// Trusted `[min, max]` (a zero bound covers both zeros), if any.
        bounds: Option<(f64, f64)>,
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
    /// Values outside the trusted bounds (NaN values are not counted; none without bounds).
    pub outside: usize,
    /// Both bounds are reached (or need not be: no trusted bounds, or an infinite bound or
    /// value).
    pub bounds: bool,
}

impl Verdict {
    /// Everything agrees.
    pub fn accepted(&self) -> bool {
        self.ends && self.outside == 0 && self.bounds
    }
}

/// Trusted bounds as a pair.
fn within<T>(b: ValueBounds<T>) -> Option<(T, T)> {
    match b {
        ValueBounds::Within { lo, hi } => Some((lo, hi)),
        ValueBounds::Empty | ValueBounds::Unknown => None,
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
            ValueStatistics::Int64 { first, last, .. } => Some(ValueCheck::Int64 { bounds: within(i64::bounds(s)), first, last }),
            ValueStatistics::Float { first, last, .. } => Some(ValueCheck::Float { bounds: within(f32::bounds(s)), first, last }),
            ValueStatistics::Double { first, last, .. } => Some(ValueCheck::Double { bounds: within(f64::bounds(s)), first, last }),
            _ => None,
        }
    }

    /// How INT64 `values` agree with the statistics (nothing agrees for another type).
    pub fn verdict_i64(&self, values: &[i64]) -> Verdict {
        let ValueCheck::Int64 { bounds, first, last } = *self else { return REJECTED };
        let ends = values.first() == Some(&first) && values.last() == Some(&last);
        let Some((min, max)) = bounds else { return Verdict { ends, outside: 0, bounds: true } };
        let (mut lo, mut hi, mut outside) = (false, false, 0usize);
        for &v in values {
            outside += usize::from(v < min || v > max);
            lo |= v == min;
            hi |= v == max;
        }
        Verdict { ends, outside, bounds: lo && hi }
    }

    /// How FLOAT `values` agree with the statistics (nothing agrees for another type).
    pub fn verdict_f32(&self, values: &[f32]) -> Verdict {
        let ValueCheck::Float { bounds, first, last } = *self else { return REJECTED };
        verdict_float(values, bounds, [first, last], |v| v.to_bits().into(), f32::is_finite)
    }

    /// How DOUBLE `values` agree with the statistics (nothing agrees for another type).
    pub fn verdict_f64(&self, values: &[f64]) -> Verdict {
        let ValueCheck::Double { bounds, first, last } = *self else { return REJECTED };
        verdict_float(values, bounds, [first, last], f64::to_bits, f64::is_finite)
    }
}

const REJECTED: Verdict = Verdict { ends: false, outside: usize::MAX, bounds: false };

fn verdict_float<T: Copy + PartialOrd>(
    values: &[T],
    bounds: Option<(T, T)>,
    [first, last]: [T; 2],
    bits: impl Fn(T) -> u64,
    finite: impl Fn(T) -> bool,
) -> Verdict {
    let nan = |v: T| v.partial_cmp(&v).is_none();
    let same = |a: Option<&T>, b: T| a.is_some_and(|&a| bits(a) == bits(b) || (nan(a) && nan(b)));
    let ends = same(values.first(), first) && same(values.last(), last);
    let Some((min, max)) = bounds else { return Verdict { ends, outside: 0, bounds: true } };
    // Writers' bounds around infinities are not reliable enough to require them reached.
    let (mut lo, mut hi, mut outside, mut all_finite) = (false, false, 0usize, finite(min) && finite(max));
    for &v in values {
        if nan(v) {
            continue;
        }
        all_finite &= finite(v);
        outside += usize::from(v < min || v > max);
        lo |= v == min;
        hi |= v == max;
    }
    Verdict { ends, outside, bounds: !all_finite || (lo && hi) }
}

/// What a writer-dependent page is checked against: its statistics (or its single-page
/// chunk's) and the evidence about the file's writer ([`WriterEvidence`], from
/// `FileReader::writer_evidence`). The default checks nothing: an undecided page is then an
/// error under [`WriterLayout::Auto`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PageCheck<'a> {
    /// The page's statistics, when it has some covering at least one value.
    pub values: Option<ValueCheck>,
    /// The file's writer evidence, shared by the readers of the file.
    pub writer: Option<&'a WriterEvidence>,
}

impl<'a> PageCheck<'a> {
    /// A check of a time page: its timestamps ascend from `start_time` to `end_time`.
    pub fn time(stats: &Statistics, writer: Option<&'a WriterEvidence>) -> Self {
        let (start, end) = (stats.start_time, stats.end_time);
        let values = (stats.count > 0).then_some(ValueCheck::Int64 { bounds: (start <= end).then_some((start, end)), first: start, last: end });
        PageCheck { values, writer }
    }

    /// The file's writer as decided so far (module doc).
    pub fn decision(&self) -> Option<WriterKind> {
        self.writer.and_then(WriterEvidence::decision)
    }
}

/// The options that decode `writer`'s way.
fn as_writer(opts: &DecodeOptions, writer: WriterKind) -> DecodeOptions {
    DecodeOptions { writer_layout: WriterLayout::from(writer), ..*opts }
}

/// What a page is called in errors raised here (the read layer adds where it is).
fn page_name(encoding: Encoding, data_type: TsDataType) -> String {
    format!("{encoding} {data_type} page")
}

/// Decode with the layout `opts` names, or for [`WriterLayout::Auto`] on a writer-dependent
/// encoding with the file's writer as decided by `check` (module doc).
#[allow(clippy::too_many_arguments)]
fn resolve<T: Copy>(
    encoding: Encoding,
    data_type: TsDataType,
    out: &mut Vec<T>,
    opts: &DecodeOptions,
    check: PageCheck<'_>,
    verdict: impl Fn(&ValueCheck, &[T]) -> Verdict,
    same: impl Fn(&[T], &[T]) -> bool,
    decode: impl Fn(&mut Vec<T>, &DecodeOptions) -> Result<()>,
) -> Result<()> {
    if opts.writer_layout != WriterLayout::Auto || !writer_dependent(encoding, data_type) {
        return decode(out, opts);
    }
    let start = out.len();
    let decided = check.decision();
    let Some(values) = check.values else {
        return match decided {
            Some(w) => decode(out, &as_writer(opts, w)),
            None => Err(undecided(encoding, data_type, "it has no statistics to decide with")),
        };
    };
    let mut other = Vec::new();
    if let Some(w) = decided {
        decode(out, &as_writer(opts, w))?;
        let vw = verdict(&values, out.get(start..).unwrap_or(&[]));
        if vw.accepted() {
            return Ok(());
        }
        // A reading that does not decode at all fits nothing.
        let vo = match decode(&mut other, &as_writer(opts, w.other())) {
            Ok(()) => verdict(&values, &other),
            Err(_) => REJECTED,
        };
        if vo.accepted() || (vo.ends && !vw.ends) {
            out.truncate(start);
            let page = page_name(encoding, data_type);
            return Err(match check.writer {
                Some(e) => e.contradiction(w, w.other(), &page),
                None => TsFileError::corrupt(page, None, "internal: a decision without evidence"),
            });
        }
        if vw.ends {
            // Neither reading is accepted outright (NaN, infinities): the page cannot tell,
            // so it follows the file.
            return Ok(());
        }
        out.truncate(start);
        return Err(TsFileError::corrupt(
            format!("{encoding} {data_type} stream"),
            None,
            "the first and last values contradict the page statistics under both the Java and the C++ writer's \
             semantics; option writer_layout = java or cpp reads them unchecked",
        ));
    }
    let java_read = decode(out, &as_writer(opts, WriterKind::Java));
    let cpp_read = decode(&mut other, &as_writer(opts, WriterKind::Cpp));
    let java = out.get(start..).unwrap_or(&[]);
    let (vj, vc) = match (java_read.is_ok(), cpp_read.is_ok()) {
        (false, false) => {
            out.truncate(start);
            return java_read;
        }
        (true, true) if same(java, &other) => return Ok(()),
        (true, true) => (verdict(&values, java), verdict(&values, &other)),
        (true, false) => (verdict(&values, java), REJECTED),
        (false, true) => (REJECTED, verdict(&values, &other)),
    };
    let page = page_name(encoding, data_type);
    match (vj.accepted(), vc.accepted()) {
        (true, false) => check.writer.map_or(Ok(()), |e| e.record_page(WriterKind::Java, &page)),
        (false, true) => {
            out.truncate(start);
            out.extend_from_slice(&other);
            check.writer.map_or(Ok(()), |e| e.record_page(WriterKind::Cpp, &page))
        }
        _ => {
            out.truncate(start);
            Err(undecided(encoding, data_type, "its statistics do not tell the Java and C++ readings apart"))
        }
    }
}

/// The error for a page of a file whose writer is not decided that cannot decide either.
fn undecided(encoding: Encoding, data_type: TsDataType, why: &str) -> TsFileError {
    TsFileError::corrupt(
        page_name(encoding, data_type),
        None,
        format!(
            "the Java and C++ writers give these bytes different values; the file's footer does not name its writer, no \
             page read so far decided, and {why}: option writer_layout = java or cpp reads the file one way"
        ),
    )
}

fn same_ints(a: &[i64], b: &[i64]) -> bool {
    a == b
}

fn same_bits<T: Copy>(bits: impl Fn(T) -> u64) -> impl Fn(&[T], &[T]) -> bool {
    move |a, b| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| bits(*x) == bits(*y))
}

/// [`decode_i64`] with the writer's semantics decided as in the module doc.
pub fn decode_i64_checked(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<i64>,
    opts: &DecodeOptions,
    check: PageCheck<'_>,
) -> Result<()> {
    resolve(encoding, TsDataType::Int64, out, opts, check, ValueCheck::verdict_i64, same_ints, |o, op| {
        decode_i64(encoding, data, count, o, op)
    })
}

/// [`decode_f32`] with the writer's semantics decided as in the module doc.
pub fn decode_f32_checked(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<f32>,
    opts: &DecodeOptions,
    check: PageCheck<'_>,
) -> Result<()> {
    resolve(encoding, TsDataType::Float, out, opts, check, ValueCheck::verdict_f32, same_bits(|v: f32| v.to_bits().into()), |o, op| {
        decode_f32(encoding, data, count, o, op)
    })
}

/// [`decode_f64`] with the writer's semantics decided as in the module doc.
pub fn decode_f64_checked(
    encoding: Encoding,
    data: &[u8],
    count: usize,
    out: &mut Vec<f64>,
    opts: &DecodeOptions,
    check: PageCheck<'_>,
) -> Result<()> {
    resolve(encoding, TsDataType::Double, out, opts, check, ValueCheck::verdict_f64, same_bits(f64::to_bits), |o, op| {
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
        ValueCheck::Double { bounds: Some((min, max)), first: v[0], last: v[v.len() - 1] }
    }

    fn read(data: &[u8], n: usize, layout: WriterLayout, check: PageCheck<'_>) -> Result<Vec<f64>> {
        let opts = DecodeOptions { writer_layout: layout, ..Default::default() };
        let mut out = vec![-1.0];
        let r = decode_f64_checked(Encoding::Rlbe, data, n, &mut out, &opts, check);
        assert_eq!(out[0], -1.0, "values before the page are kept");
        r?;
        Ok(out.split_off(1))
    }

    fn evidence(writer: Option<WriterKind>) -> WriterEvidence {
        WriterEvidence::new(crate::format::FooterSignature { writer, evidence: "test" })
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn test_verdicts() {
        let c = ValueCheck::Int64 { bounds: Some((-5, 9)), first: 1, last: 2 };
        assert!(c.verdict_i64(&[1, -5, 9, 2]).accepted());
        assert_eq!(c.verdict_i64(&[1, -5, 10, 2]), Verdict { ends: true, outside: 1, bounds: false });
        assert!(!c.verdict_i64(&[1, 9, 2]).accepted(), "minimum not reached");
        assert!(!c.verdict_i64(&[]).ends);
        assert!(!c.verdict_f64(&[1.0]).ends, "another type never agrees");
        let f = ValueCheck::Float { bounds: None, first: f32::NAN, last: 3.0 };
        assert!(f.verdict_f32(&[f32::from_bits(0x7fc0_0001), 100.0, 3.0]).accepted(), "no bounds, any NaN first");
        let d = ValueCheck::Double { bounds: Some((-1.0, f64::INFINITY)), first: -0.0, last: 2.0 };
        assert!(!d.verdict_f64(&[0.0, 2.0]).ends, "-0.0 and 0.0 differ");
        assert!(d.verdict_f64(&[-0.0, f64::INFINITY, 2.0]).accepted(), "bounds not required around infinities");
    }

    #[test]
    fn test_checks_take_bounds_only_where_the_statistics_are_trusted() {
        let double = |min, max, sum| Statistics {
            count: 4,
            start_time: 0,
            end_time: 3,
            values: crate::format::ValueStatistics::Double { min, max, first: 1.0, last: 2.0, sum },
        };
        let trusted = ValueCheck::from_statistics(&double(-1.0, 9.0, 8.0)).unwrap();
        assert_eq!(trusted, ValueCheck::Double { bounds: Some((-1.0, 9.0)), first: 1.0, last: 2.0 });
        // A page with a NaN (sum NaN): the C++ writer's max can miss values (seen on pages
        // holding NaN, MAX and +inf), so its bounds are not checked.
        let untrusted = ValueCheck::from_statistics(&double(-1.0, 1.5, f64::NAN)).unwrap();
        assert_eq!(untrusted, ValueCheck::Double { bounds: None, first: 1.0, last: 2.0 });
        assert!(untrusted.verdict_f64(&[1.0, f64::NAN, f64::MAX, f64::INFINITY, 2.0]).accepted());
        assert!(!trusted.verdict_f64(&[1.0, f64::NAN, f64::MAX, 2.0]).accepted());
        // Integer bounds with min > max are not trusted either.
        let int = Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: crate::format::ValueStatistics::Int64 { min: 9, max: 1, first: 3, last: 4, sum: 7.0 },
        };
        assert_eq!(ValueCheck::from_statistics(&int), Some(ValueCheck::Int64 { bounds: None, first: 3, last: 4 }));
        let time = Statistics { count: 2, start_time: 9, end_time: 1, values: crate::format::ValueStatistics::None };
        assert_eq!(PageCheck::time(&time, None).values, Some(ValueCheck::Int64 { bounds: None, first: 9, last: 1 }));
    }

    #[test]
    fn test_pages_decide_a_file_without_signature() {
        let vals: Vec<f64> = (0..50).map(|i| f64::from(i % 7) * 1.5 - 4.0).collect();
        let check = check_of(&vals);
        let (java, cpp) = (encode_f64_java(&vals, 10_000), encode_f64(&vals));
        // Each writer's page decides for its writer in a file without signature.
        for (data, kind) in [(&java, WriterKind::Java), (&cpp, WriterKind::Cpp)] {
            let e = evidence(None);
            let got = read(data, 50, WriterLayout::Auto, PageCheck { values: Some(check), writer: Some(&e) }).unwrap();
            assert_eq!(bits(&got), bits(&vals));
            assert_eq!(e.decision(), Some(kind));
        }
        // A page deciding against the earlier pages is an error naming writer_layout.
        let e = evidence(None);
        read(&java, 50, WriterLayout::Auto, PageCheck { values: Some(check), writer: Some(&e) }).unwrap();
        let err = read(&cpp, 50, WriterLayout::Auto, PageCheck { values: Some(check), writer: Some(&e) }).unwrap_err().to_string();
        assert!(err.contains("RLBE DOUBLE page") && err.contains("writer_layout") && err.contains("earlier pages"), "{err}");
        // Forced layouts are unchecked.
        assert_ne!(bits(&read(&cpp, 50, WriterLayout::Java, PageCheck { values: Some(check), writer: None }).unwrap()), bits(&vals));
        assert_eq!(bits(&read(&cpp, 50, WriterLayout::Cpp, PageCheck::default()).unwrap()), bits(&vals));
    }

    #[test]
    fn test_undecided_without_statistics_or_evidence_is_an_error() {
        let vals: Vec<f64> = (0..50).map(|i| f64::from(i % 7) * 1.5 - 4.0).collect();
        let cpp = encode_f64(&vals);
        let err = read(&cpp, 50, WriterLayout::Auto, PageCheck::default()).unwrap_err().to_string();
        assert!(err.contains("no statistics") && err.contains("writer_layout"), "{err}");
        // With the file decided, a page without statistics follows the file.
        let e = evidence(Some(WriterKind::Cpp));
        assert_eq!(bits(&read(&cpp, 50, WriterLayout::Auto, PageCheck { values: None, writer: Some(&e) }).unwrap()), bits(&vals));
        // Statistics that accept neither reading in an undecided file: an error, never a guess.
        let neither = ValueCheck::Double { bounds: Some((-4.0, 4.0)), first: vals[0], last: vals[49] };
        let err = read(&cpp, 50, WriterLayout::Auto, PageCheck { values: Some(neither), writer: Some(&evidence(None)) })
            .unwrap_err()
            .to_string();
        assert!(err.contains("do not tell the Java and C++ readings apart"), "{err}");
    }

    #[test]
    fn test_decided_file_follows_its_writer_where_a_page_cannot_tell() {
        // C++ bytes whose statistics accept neither reading outright but whose first and last
        // values agree with the C++ reading (as on pages with NaN or infinities).
        let vals: Vec<f64> = vec![1.0, f64::INFINITY, -3.5, f64::NAN, 2.0, f64::NEG_INFINITY, 7.25];
        let cpp = encode_f64(&vals);
        let check = ValueCheck::Double { bounds: Some((-1.0, 3.0)), first: 1.0, last: 7.25 };
        let e = evidence(Some(WriterKind::Cpp));
        let got = read(&cpp, vals.len(), WriterLayout::Auto, PageCheck { values: Some(check), writer: Some(&e) }).unwrap();
        assert_eq!(bits(&got), bits(&vals));
        assert_eq!(e.deciding_pages(), (0, 0), "a page that cannot tell is not counted");
        // The same bytes in a file whose footer names Java: the C++ reading's ends agree and
        // the Java reading's do not, so the evidence contradicts itself.
        let j = evidence(Some(WriterKind::Java));
        let java_reading = read(&cpp, vals.len(), WriterLayout::Java, PageCheck::default()).unwrap();
        assert_ne!(java_reading.last().map(|v| v.to_bits()), Some(7.25f64.to_bits()), "the test needs readings that differ");
        let err = read(&cpp, vals.len(), WriterLayout::Auto, PageCheck { values: Some(check), writer: Some(&j) })
            .unwrap_err()
            .to_string();
        assert!(err.contains("fit only the C++ writer's reading") && err.contains("test") && err.contains("writer_layout"), "{err}");
        // Statistics whose ends fit neither reading: corrupt, in a decided file too.
        let wrong = ValueCheck::Double { bounds: Some((-4.0, 5.0)), first: 7.0, last: 7.0 };
        let err = read(&cpp, vals.len(), WriterLayout::Auto, PageCheck { values: Some(wrong), writer: Some(&e) })
            .unwrap_err()
            .to_string();
        assert!(err.contains("RLBE DOUBLE stream") && err.contains("writer_layout"), "{err}");
    }

    #[test]
    fn test_time_checks_and_independent_encodings() {
        let stats = Statistics { count: 3, start_time: 5, end_time: 9, values: crate::format::ValueStatistics::None };
        assert_eq!(PageCheck::time(&stats, None).values, Some(ValueCheck::Int64 { bounds: Some((5, 9)), first: 5, last: 9 }));
        assert_eq!(PageCheck::time(&Statistics { count: 0, ..stats }, None).values, None);
        // Encodings that do not depend on the writer are neither checked nor decided.
        let vals: Vec<f64> = (0..50).map(f64::from).collect();
        let wrong = ValueCheck::Double { bounds: Some((-4.0, 5.0)), first: 7.0, last: 7.0 };
        let mut out = Vec::new();
        let plain = crate::encoding::plain::encode::f64(&vals);
        decode_f64_checked(Encoding::Plain, &plain, 50, &mut out, &DecodeOptions::default(), PageCheck { values: Some(wrong), writer: None })
            .unwrap();
        assert_eq!(bits(&out), bits(&vals));
    }
}
