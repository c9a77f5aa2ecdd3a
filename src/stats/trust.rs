//! Trust rules: when a unit's statistics bound, or exactly give, the `min`/`max` of its values.
//!
//! Arrow and DataFusion compare floats by IEEE 754 *total order* (`f64::total_cmp`): -NaN <
//! -∞ < … < -0.0 < +0.0 < … < +∞ < NaN. Both `min`/`max` (`arrow::compute::min`, which uses
//! `is_lt`) and comparison predicates (`x > 32` is true for NaN) follow it. TsFile writers
//! compute statistics differently. What this module relies on (apache/tsfile Java
//! `FloatStatistics`/`DoubleStatistics`/`LongStatistics`/`IntegerStatistics`, the C++ writer
//! alike):
//!
//! * `min`/`max` start at the first value and are updated with IEEE `<`/`>`: a NaN never
//!   replaces them (but a NaN *first* value makes them NaN for good), and -0.0/+0.0 compare
//!   equal, so whichever zero came first stays;
//! * `sum` starts at the first value and adds every value with IEEE `+` in float64 (FLOAT
//!   values widened exactly; INT64 values converted to float64; INT32 summed in a 64-bit
//!   integer that wraps); merged chunk/series statistics add the unit sums;
//! * `first`/`last` are the values at the smallest/largest timestamp, stored bit for bit;
//! * BOOLEAN `true_count` counts the `true` values;
//! * STRING `min`/`max` compare bytes *unsigned* lexicographically (apache/tsfile's
//!   `Binary.compareTo` masks bytes with `0xff`), which is Rust's and Arrow's `Utf8` order. Very
//!   old IoTDB `Binary.compareTo` compared signed bytes; such writers did not have the STRING
//!   type (it came with TsFile v4), so STRING min/max are trusted.
//!
//! # The float rule
//!
//! A FLOAT/DOUBLE unit with `count > 0` has **trusted bounds** iff its `sum` is not NaN (and, as
//! a consistency check, `min` and `max` are not NaN and `min <= max`). Reason: NaN is absorbing
//! for `+`, so a NaN value anywhere makes the sum NaN; without NaN, IEEE `<` agrees with total
//! order on every pair of values except the two zeros. (A sum of ±∞ is fine: it means ±∞ or an
//! overflow, never a NaN; finiteness is not needed. A NaN sum may also come from +∞ and -∞
//! values or overflows in both directions: then we merely decline, which is safe.) The zeros are
//! handled by widening: a bound equal to zero covers both signs, so the lower bound becomes
//! -0.0 whenever `min == 0.0` and the upper bound +0.0 whenever `max == 0.0`.
//!
//! The **exact** `min` (what DataFusion's `min` returns) is `min` itself when the bounds are
//! trusted and `min` is not +0.0: a non-zero float has one bit pattern per value, and a stored
//! -0.0 is the total-order minimum because no value is IEEE-below zero. A stored +0.0 may hide
//! a -0.0: decode. Symmetrically the exact `max` is `max` unless `max` is -0.0.
//!
//! Integers, BOOLEAN and STRING bounds are always exact. TEXT has no min/max, BLOB/OBJECT no
//! values statistics: both [`UnitValue::Untrusted`] / [`ValueBounds::Unknown`]. Statistics of
//! another type than the one asked for (a caller error) are untrusted too.

use std::cmp::Ordering;

use crate::format::statistics::{Statistics, ValueStatistics};
use crate::format::{Encoding, TsDataType};

/// Where a unit's non-null values lie, under total order, as far as its statistics prove.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueBounds<T> {
    /// The unit holds no non-null value (`count == 0`).
    Empty,
    /// Every non-null value `v` satisfies `lo <= v <= hi` in total order.
    Within {
        /// A lower bound (not necessarily attained).
        lo: T,
        /// An upper bound (not necessarily attained).
        hi: T,
    },
    /// Nothing is proven: keep (and decode) the unit.
    Unknown,
}

/// One answer taken from a unit's statistics, when the statistics give it exactly.
#[derive(Debug, Clone, PartialEq)]
pub enum UnitValue<T> {
    /// The unit holds no non-null value.
    Empty,
    /// The exact answer over the unit's non-null values.
    Exact(T),
    /// The statistics cannot be trusted for this answer: decode the unit.
    Untrusted,
}

/// A value type whose unit statistics this module interprets: `bool` (BOOLEAN), `i32` (INT32,
/// DATE), `i64` (INT64, TIMESTAMP), `f32` (FLOAT), `f64` (DOUBLE), `Vec<u8>` (TEXT, STRING).
pub trait StatValue: Clone + std::fmt::Debug {
    /// The order DataFusion compares values by (total order for floats, unsigned bytes for
    /// strings).
    fn total_cmp(&self, other: &Self) -> Ordering;
    /// Bounds of the unit's non-null values, safe for pruning.
    fn bounds(stats: &Statistics) -> ValueBounds<Self>;
    /// The exact `min` over the unit's non-null values.
    fn exact_min(stats: &Statistics) -> UnitValue<Self>;
    /// The exact `max` over the unit's non-null values.
    fn exact_max(stats: &Statistics) -> UnitValue<Self>;
    /// The first and last non-null values (by time), bit for bit.
    fn first_last(stats: &Statistics) -> UnitValue<(Self, Self)>;
}

/// True when `a` and `b` are equal under [`StatValue::total_cmp`].
pub fn same_value<T: StatValue>(a: &T, b: &T) -> bool {
    a.total_cmp(b) == Ordering::Equal
}

/// Bounds from an exact `(min, max)` pair.
fn exact_bounds<T>(count: u64, min_max: Option<(T, T)>) -> ValueBounds<T> {
    match (count, min_max) {
        (0, _) => ValueBounds::Empty,
        (_, Some((lo, hi))) => ValueBounds::Within { lo, hi },
        (_, None) => ValueBounds::Unknown,
    }
}

/// The lower bound of exact bounds as the exact minimum.
fn lower_bound<T>(bounds: ValueBounds<T>) -> UnitValue<T> {
    match bounds {
        ValueBounds::Empty => UnitValue::Empty,
        ValueBounds::Within { lo, .. } => UnitValue::Exact(lo),
        ValueBounds::Unknown => UnitValue::Untrusted,
    }
}

/// The upper bound of exact bounds as the exact maximum.
fn upper_bound<T>(bounds: ValueBounds<T>) -> UnitValue<T> {
    match bounds {
        ValueBounds::Empty => UnitValue::Empty,
        ValueBounds::Within { hi, .. } => UnitValue::Exact(hi),
        ValueBounds::Unknown => UnitValue::Untrusted,
    }
}

/// One side of an exact `(min, max)` pair.
fn exact_side<T>(count: u64, value: Option<T>) -> UnitValue<T> {
    match (count, value) {
        (0, _) => UnitValue::Empty,
        (_, Some(v)) => UnitValue::Exact(v),
        (_, None) => UnitValue::Untrusted,
    }
}

/// True when FLOAT/DOUBLE values stored with encoding id `encoding` may read back other than
/// the values the writer's statistics saw: only PLAIN, GORILLA (both versions), CHIMP and
/// SPRINTZ are lossless for floats. TS_2DIFF and RLE store floats rounded to a number of
/// decimals (the statistics are computed before rounding), RLBE adds in float arithmetic, and
/// an unknown id is not trusted. Such a column's `count` still holds; its min, max, sum, first
/// and last describe other values than the reader returns.
pub fn lossy_float_encoding(data_type: TsDataType, encoding: u8) -> bool {
    let lossless = [Encoding::Plain, Encoding::Gorilla, Encoding::GorillaV1, Encoding::Chimp, Encoding::Sprintz];
    matches!(data_type, TsDataType::Float | TsDataType::Double) && !lossless.iter().any(|e| *e as u8 == encoding)
}

/// `stats` without its values part when it is FLOAT/DOUBLE statistics of a column stored
/// lossily ([`lossy_float_encoding`]): its count and time range stay, nothing about values.
pub fn without_lossy_values(stats: &Statistics, lossy: bool) -> std::borrow::Cow<'_, Statistics> {
    let float = matches!(stats.values, ValueStatistics::Float { .. } | ValueStatistics::Double { .. });
    if lossy && float {
        std::borrow::Cow::Owned(Statistics { values: ValueStatistics::None, ..stats.clone() })
    } else {
        std::borrow::Cow::Borrowed(stats)
    }
}

/// The trusted, zero-widened float64 bounds of a FLOAT/DOUBLE unit (module doc: the float
/// rule), or `None` when the statistics may hide a NaN or are inconsistent.
pub fn float_bounds(min: f64, max: f64, sum: f64) -> Option<(f64, f64)> {
    if sum.is_nan() || min.is_nan() || max.is_nan() || min > max {
        return None;
    }
    let lo = if min == 0.0 { -0.0 } else { min };
    let hi = if max == 0.0 { 0.0 } else { max };
    Some((lo, hi))
}

/// The exact total-order `min` of a FLOAT/DOUBLE unit, or `None` (a NaN may hide, or a +0.0
/// minimum may hide a -0.0).
pub fn float_exact_min(min: f64, max: f64, sum: f64) -> Option<f64> {
    float_bounds(min, max, sum)?;
    (min.to_bits() != 0.0f64.to_bits()).then_some(min)
}

/// The exact total-order `max` of a FLOAT/DOUBLE unit, or `None` (a NaN may hide, or a -0.0
/// maximum may hide a +0.0).
pub fn float_exact_max(min: f64, max: f64, sum: f64) -> Option<f64> {
    float_bounds(min, max, sum)?;
    (max.to_bits() != (-0.0f64).to_bits()).then_some(max)
}

/// A FLOAT unit's `(min, max, sum)` widened to float64 (exact: every `f32` is an `f64`).
fn float32_fields(values: &ValueStatistics) -> Option<(f64, f64, f64)> {
    match *values {
        ValueStatistics::Float { min, max, sum, .. } => Some((f64::from(min), f64::from(max), sum)),
        _ => None,
    }
}

impl StatValue for f64 {
    fn total_cmp(&self, other: &Self) -> Ordering {
        f64::total_cmp(self, other)
    }
    fn bounds(stats: &Statistics) -> ValueBounds<Self> {
        match &stats.values {
            ValueStatistics::Double { min, max, sum, .. } => exact_bounds(stats.count, float_bounds(*min, *max, *sum)),
            _ => exact_bounds(stats.count, None),
        }
    }
    fn exact_min(stats: &Statistics) -> UnitValue<Self> {
        match &stats.values {
            ValueStatistics::Double { min, max, sum, .. } => exact_side(stats.count, float_exact_min(*min, *max, *sum)),
            _ => exact_side(stats.count, None),
        }
    }
    fn exact_max(stats: &Statistics) -> UnitValue<Self> {
        match &stats.values {
            ValueStatistics::Double { min, max, sum, .. } => exact_side(stats.count, float_exact_max(*min, *max, *sum)),
            _ => exact_side(stats.count, None),
        }
    }
    fn first_last(stats: &Statistics) -> UnitValue<(Self, Self)> {
        match &stats.values {
            ValueStatistics::Double { first, last, .. } => exact_side(stats.count, exact_floats(*first, *last)),
            _ => exact_side(stats.count, None),
        }
    }
}

/// A FLOAT unit's float64 result narrowed back to `f32` (exact: it was an `f32`).
/// A unit's stored `first`/`last` floats, unless one is a NaN: writers do not keep a NaN's
/// sign and payload in statistics (the C++ corpus stores +NaN where the page holds -NaN),
/// and total order tells them apart.
fn exact_floats<T: Copy + Into<f64>>(first: T, last: T) -> Option<(T, T)> {
    (!first.into().is_nan() && !last.into().is_nan()).then_some((first, last))
}

fn narrow(v: f64) -> f32 {
    v as f32
}

impl StatValue for f32 {
    fn total_cmp(&self, other: &Self) -> Ordering {
        f32::total_cmp(self, other)
    }
    fn bounds(stats: &Statistics) -> ValueBounds<Self> {
        let fields = float32_fields(&stats.values);
        let bounds = fields.and_then(|(min, max, sum)| float_bounds(min, max, sum));
        exact_bounds(stats.count, bounds.map(|(lo, hi)| (narrow(lo), narrow(hi))))
    }
    fn exact_min(stats: &Statistics) -> UnitValue<Self> {
        let fields = float32_fields(&stats.values);
        exact_side(stats.count, fields.and_then(|(min, max, sum)| float_exact_min(min, max, sum)).map(narrow))
    }
    fn exact_max(stats: &Statistics) -> UnitValue<Self> {
        let fields = float32_fields(&stats.values);
        exact_side(stats.count, fields.and_then(|(min, max, sum)| float_exact_max(min, max, sum)).map(narrow))
    }
    fn first_last(stats: &Statistics) -> UnitValue<(Self, Self)> {
        match &stats.values {
            ValueStatistics::Float { first, last, .. } => exact_side(stats.count, exact_floats(*first, *last)),
            _ => exact_side(stats.count, None),
        }
    }
}

/// Implements [`StatValue`] for an integer type whose statistics are exact.
macro_rules! exact_integer {
    ($t:ty, $variant:ident) => {
        impl StatValue for $t {
            fn total_cmp(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            fn bounds(stats: &Statistics) -> ValueBounds<Self> {
                match &stats.values {
                    ValueStatistics::$variant { min, max, .. } if min <= max => exact_bounds(stats.count, Some((*min, *max))),
                    _ => exact_bounds(stats.count, None),
                }
            }
            fn exact_min(stats: &Statistics) -> UnitValue<Self> {
                lower_bound(Self::bounds(stats))
            }
            fn exact_max(stats: &Statistics) -> UnitValue<Self> {
                upper_bound(Self::bounds(stats))
            }
            fn first_last(stats: &Statistics) -> UnitValue<(Self, Self)> {
                match &stats.values {
                    ValueStatistics::$variant { first, last, .. } => exact_side(stats.count, Some((*first, *last))),
                    _ => exact_side(stats.count, None),
                }
            }
        }
    };
}

exact_integer!(i32, Int32);
exact_integer!(i64, Int64);

/// BOOLEAN `(min, max)` from `true_count` (`false < true`), `None` when inconsistent.
fn bool_min_max(count: u64, true_count: i64) -> Option<(bool, bool)> {
    let trues = u64::try_from(true_count).ok().filter(|t| *t <= count)?;
    Some((trues == count, trues > 0))
}

impl StatValue for bool {
    fn total_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn bounds(stats: &Statistics) -> ValueBounds<Self> {
        match &stats.values {
            ValueStatistics::Boolean { true_count, .. } => exact_bounds(stats.count, bool_min_max(stats.count, *true_count)),
            _ => exact_bounds(stats.count, None),
        }
    }
    fn exact_min(stats: &Statistics) -> UnitValue<Self> {
        lower_bound(Self::bounds(stats))
    }
    fn exact_max(stats: &Statistics) -> UnitValue<Self> {
        upper_bound(Self::bounds(stats))
    }
    fn first_last(stats: &Statistics) -> UnitValue<(Self, Self)> {
        match &stats.values {
            ValueStatistics::Boolean { first, last, .. } => exact_side(stats.count, Some((*first, *last))),
            _ => exact_side(stats.count, None),
        }
    }
}

/// STRING `(min, max)`, `None` when absent or inconsistent.
fn string_min_max(min: &Option<Box<[u8]>>, max: &Option<Box<[u8]>>) -> Option<(Vec<u8>, Vec<u8>)> {
    match (min, max) {
        (Some(lo), Some(hi)) if lo <= hi => Some((lo.to_vec(), hi.to_vec())),
        _ => None,
    }
}

/// TEXT/STRING `(first, last)`, `None` when either is absent.
fn bytes_first_last(first: &Option<Box<[u8]>>, last: &Option<Box<[u8]>>) -> Option<(Vec<u8>, Vec<u8>)> {
    Some((first.as_deref()?.to_vec(), last.as_deref()?.to_vec()))
}

impl StatValue for Vec<u8> {
    fn total_cmp(&self, other: &Self) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
    fn bounds(stats: &Statistics) -> ValueBounds<Self> {
        match &stats.values {
            ValueStatistics::String { min, max, .. } => exact_bounds(stats.count, string_min_max(min, max)),
            _ => exact_bounds(stats.count, None),
        }
    }
    fn exact_min(stats: &Statistics) -> UnitValue<Self> {
        lower_bound(Self::bounds(stats))
    }
    fn exact_max(stats: &Statistics) -> UnitValue<Self> {
        upper_bound(Self::bounds(stats))
    }
    fn first_last(stats: &Statistics) -> UnitValue<(Self, Self)> {
        match &stats.values {
            ValueStatistics::String { first, last, .. } | ValueStatistics::Text { first, last } => {
                exact_side(stats.count, bytes_first_last(first, last))
            }
            _ => exact_side(stats.count, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(count: u64, min: f64, max: f64, sum: f64) -> Statistics {
        Statistics { count, start_time: 0, end_time: 0, values: ValueStatistics::Double { min, max, first: min, last: max, sum } }
    }

    fn float(count: u64, min: f32, max: f32, sum: f64) -> Statistics {
        Statistics { count, start_time: 0, end_time: 0, values: ValueStatistics::Float { min, max, first: min, last: max, sum } }
    }

    fn bits(b: ValueBounds<f64>) -> Option<(u64, u64)> {
        match b {
            ValueBounds::Within { lo, hi } => Some((lo.to_bits(), hi.to_bits())),
            _ => None,
        }
    }

    #[test]
    fn test_float_bounds_plain_values_are_trusted() {
        assert_eq!(f64::bounds(&double(3, -1.5, 7.0, 4.0)), ValueBounds::Within { lo: -1.5, hi: 7.0 });
        assert_eq!(f64::exact_min(&double(3, -1.5, 7.0, 4.0)), UnitValue::Exact(-1.5));
        assert_eq!(f64::exact_max(&double(3, -1.5, 7.0, 4.0)), UnitValue::Exact(7.0));
    }

    #[test]
    fn test_float_nan_sum_is_untrusted() {
        assert_eq!(f64::bounds(&double(3, 1.0, 2.0, f64::NAN)), ValueBounds::Unknown);
        assert_eq!(f64::exact_min(&double(3, 1.0, 2.0, f64::NAN)), UnitValue::Untrusted);
        assert_eq!(f64::exact_max(&double(3, 1.0, 2.0, -f64::NAN)), UnitValue::Untrusted);
        assert_eq!(f32::bounds(&float(3, 1.0, 2.0, f64::NAN)), ValueBounds::Unknown);
    }

    #[test]
    fn test_float_nan_min_max_is_untrusted() {
        // A NaN first value: min = max = NaN stay, sum NaN; also guard inconsistent stats.
        assert_eq!(f64::bounds(&double(2, f64::NAN, f64::NAN, 3.0)), ValueBounds::Unknown);
        assert_eq!(f64::bounds(&double(2, 5.0, 1.0, 3.0)), ValueBounds::Unknown);
    }

    #[test]
    fn test_float_infinities_are_trusted() {
        let s = double(2, f64::NEG_INFINITY, 1.0, f64::NEG_INFINITY);
        assert_eq!(f64::bounds(&s), ValueBounds::Within { lo: f64::NEG_INFINITY, hi: 1.0 });
        assert_eq!(f64::exact_min(&s), UnitValue::Exact(f64::NEG_INFINITY));
        let s = double(2, 1.0, f64::INFINITY, f64::INFINITY);
        assert_eq!(f64::exact_max(&s), UnitValue::Exact(f64::INFINITY));
        // +inf and -inf together: sum NaN, untrusted (safe).
        assert_eq!(f64::bounds(&double(2, f64::NEG_INFINITY, f64::INFINITY, f64::NAN)), ValueBounds::Unknown);
    }

    #[test]
    fn test_float_zero_bounds_are_widened() {
        assert_eq!(bits(f64::bounds(&double(2, 0.0, 0.0, 0.0))), Some(((-0.0f64).to_bits(), 0.0f64.to_bits())));
        assert_eq!(bits(f64::bounds(&double(2, -0.0, -0.0, -0.0))), Some(((-0.0f64).to_bits(), 0.0f64.to_bits())));
        assert_eq!(bits(f64::bounds(&double(2, -3.0, -0.0, -3.0))), Some(((-3.0f64).to_bits(), 0.0f64.to_bits())));
        match f32::bounds(&float(2, 0.0, 0.0, 0.0)) {
            ValueBounds::Within { lo, hi } => assert_eq!((lo.to_bits(), hi.to_bits()), ((-0.0f32).to_bits(), 0.0f32.to_bits())),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn test_float_exact_min_max_with_zero_signs() {
        // min +0.0 may hide -0.0; min -0.0 is exact.
        assert_eq!(f64::exact_min(&double(2, 0.0, 1.0, 1.0)), UnitValue::Untrusted);
        match f64::exact_min(&double(2, -0.0, 1.0, 1.0)) {
            UnitValue::Exact(v) => assert_eq!(v.to_bits(), (-0.0f64).to_bits()),
            other => panic!("{other:?}"),
        }
        // max -0.0 may hide +0.0; max +0.0 is exact.
        assert_eq!(f64::exact_max(&double(2, -1.0, -0.0, -1.0)), UnitValue::Untrusted);
        match f64::exact_max(&double(2, -1.0, 0.0, -1.0)) {
            UnitValue::Exact(v) => assert_eq!(v.to_bits(), 0.0f64.to_bits()),
            other => panic!("{other:?}"),
        }
        assert_eq!(f32::exact_min(&float(2, 0.0, 1.0, 1.0)), UnitValue::Untrusted);
        assert_eq!(f32::exact_max(&float(2, 0.5, 1.5, 2.0)), UnitValue::Exact(1.5));
    }

    #[test]
    fn test_empty_units() {
        assert_eq!(f64::bounds(&double(0, 0.0, 0.0, 0.0)), ValueBounds::Empty);
        assert_eq!(f64::exact_min(&double(0, f64::NAN, 0.0, f64::NAN)), UnitValue::Empty);
        assert_eq!(
            i64::first_last(&Statistics { count: 0, start_time: 0, end_time: 0, values: ValueStatistics::None }),
            UnitValue::Empty
        );
    }

    #[test]
    fn test_wrong_type_is_untrusted() {
        assert_eq!(f32::bounds(&double(1, 1.0, 1.0, 1.0)), ValueBounds::Unknown);
        assert_eq!(i64::exact_min(&double(1, 1.0, 1.0, 1.0)), UnitValue::Untrusted);
    }

    #[test]
    fn test_nan_first_or_last_is_untrusted() {
        let s = |first: f64, last: f64| Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::Double { min: 1.0, max: 1.0, first, last, sum: f64::NAN },
        };
        assert_eq!(f64::first_last(&s(f64::NAN, 1.0)), UnitValue::Untrusted);
        assert_eq!(f64::first_last(&s(1.0, -f64::NAN)), UnitValue::Untrusted);
        assert_eq!(f64::first_last(&s(1.0, 2.0)), UnitValue::Exact((1.0, 2.0)));
    }

    #[test]
    fn test_integers_are_exact() {
        let s = Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::Int32 { min: i32::MIN, max: 4, first: 4, last: i32::MIN, sum: 0 },
        };
        assert_eq!(i32::exact_min(&s), UnitValue::Exact(i32::MIN));
        assert_eq!(i32::exact_max(&s), UnitValue::Exact(4));
        assert_eq!(i32::first_last(&s), UnitValue::Exact((4, i32::MIN)));
    }

    #[test]
    fn test_boolean_from_true_count() {
        let b = |count, true_count| Statistics {
            count,
            start_time: 0,
            end_time: 0,
            values: ValueStatistics::Boolean { first: true, last: false, true_count },
        };
        assert_eq!(bool::bounds(&b(3, 0)), ValueBounds::Within { lo: false, hi: false });
        assert_eq!(bool::bounds(&b(3, 3)), ValueBounds::Within { lo: true, hi: true });
        assert_eq!(bool::bounds(&b(3, 1)), ValueBounds::Within { lo: false, hi: true });
        assert_eq!(bool::bounds(&b(3, 4)), ValueBounds::Unknown);
        assert_eq!(bool::bounds(&b(3, -1)), ValueBounds::Unknown);
    }

    #[test]
    fn test_string_min_max_and_text_has_none() {
        let s = Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::String {
                first: Some(Box::from(&b"b"[..])),
                last: Some(Box::from("é".as_bytes())),
                min: Some(Box::from(&b"b"[..])),
                max: Some(Box::from("é".as_bytes())),
            },
        };
        assert_eq!(Vec::<u8>::exact_max(&s), UnitValue::Exact("é".as_bytes().to_vec()));
        let t = Statistics { values: ValueStatistics::Text { first: Some(Box::from(&b"b"[..])), last: None }, ..s };
        assert_eq!(Vec::<u8>::bounds(&t), ValueBounds::Unknown);
        assert_eq!(Vec::<u8>::first_last(&t), UnitValue::Untrusted);
    }
}
