//! `sum(x)` and `avg(x)` over units and decoded values, with DataFusion 55's semantics.
//!
//! # Integers: exact, wrapping like DataFusion
//!
//! DataFusion's `sum(Int32)` casts to Int64, and `sum(Int64)` returns Int64; both add with
//! `add_wrapping` (`SumAccumulator` and the groups accumulator in
//! `datafusion-functions-aggregate` 55.2 `sum.rs`, over `arrow::compute::sum`, which wraps
//! too). Overflow therefore **wraps modulo 2^64, without an error**. Wrapping addition is
//! associative and commutative, so [`IntSum`] adds unit sums and decoded values with
//! `wrapping_add` and gets DataFusion's result exactly, in any order, overflow or not.
//!
//! * INT32 units: the writer's `int64` sum is the Java `long` sum, itself wrapping modulo
//!   2^64: always usable.
//! * INT64 units: the writer's sum is a float64 (each value converted, then added). It is the
//!   exact integer sum when `count * max(|min|, |max|) <= 2^53`: every value and every partial
//!   sum is then an integer of magnitude at most 2^53, represented and added exactly. Larger
//!   units are decoded.
//!
//! # Floats: within a stated rounding bound
//!
//! `sum(FLOAT)`/`sum(DOUBLE)` and every `avg` are float64: DataFusion casts FLOAT, INT32 and
//! INT64 to Float64 and adds the values in an order of its own (`arrow::compute::sum` uses
//! several lanes; batch and partition boundaries add more); `avg` is that sum divided by the
//! count of non-null values. The writer added each unit's values in time order; [`FloatSum`]
//! adds those unit sums and decoded values. Both are summations of the same `n` float64 terms in
//! different orders, so when no partial sum overflows and no term is NaN or infinite:
//!
//! ```text
//! |ours - DataFusion's| <= 2 * γ(n-1) * Σ|x_i|,    γ(k) = k·u / (1 - k·u),  u = 2^-53
//! ```
//!
//! ([`float_sum_tolerance`]; each result is within `γ(n-1)·Σ|x_i|` of the real sum.) With a
//! NaN term both are NaN; with infinities of one sign both are that infinity; with both signs
//! both are NaN. DataFusion's own result differs by the same bound between batch sizes, so this
//! is as exact as the query itself. INT32 unit sums are converted from the exact `int64` once
//! (a rounding within the bound) and only when the writer's sum cannot have wrapped.

use crate::format::statistics::{Statistics, ValueStatistics};
use crate::stats::merge::Offer;

/// 2^53: integers up to this magnitude are exact in float64.
const F64_EXACT_INT: u128 = 1 << 53;

/// `sum(x)` of INT32/INT64 columns as DataFusion computes it (Int64, wrapping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntSum {
    sum: i64,
    seen: bool,
}

impl IntSum {
    /// An empty sum (NULL until a value arrives).
    pub fn new() -> IntSum {
        IntSum::default()
    }

    /// Fold in a unit's sum, or ask for decoding (INT64 units whose float64 sum may be inexact,
    /// statistics of another type).
    pub fn offer_unit(&mut self, stats: &Statistics) -> Offer {
        if stats.count == 0 {
            return Offer::Used;
        }
        let exact = match stats.values {
            ValueStatistics::Int32 { sum, .. } => Some(sum),
            ValueStatistics::Int64 { min, max, sum, .. } => exact_int64_sum(stats.count, min, max, sum),
            _ => None,
        };
        match exact {
            Some(s) => {
                self.offer_value(s);
                Offer::Used
            }
            None => Offer::Decode,
        }
    }

    /// Fold in one decoded non-null value (INT32 values widened).
    pub fn offer_value(&mut self, v: i64) {
        self.sum = self.sum.wrapping_add(v);
        self.seen = true;
    }

    /// The answer: `None` is SQL NULL (no non-null value).
    pub fn finish(self) -> Option<i64> {
        self.seen.then_some(self.sum)
    }
}

/// The exact integer sum of an INT64 unit from its float64 `sum`, when `count * max(|min|,
/// |max|) <= 2^53` guarantees the writer added exactly.
pub fn exact_int64_sum(count: u64, min: i64, max: i64, sum: f64) -> Option<i64> {
    let magnitude = u128::from(min.unsigned_abs().max(max.unsigned_abs()));
    let bound = u128::from(count).checked_mul(magnitude)?;
    let exact = bound <= F64_EXACT_INT && sum.is_finite() && sum.trunc() == sum && sum.abs() <= F64_EXACT_INT as f64;
    exact.then_some(sum as i64)
}

/// `sum(x)` and `avg(x)` in float64 (FLOAT, DOUBLE; `avg` of INT32/INT64 too).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FloatSum {
    sum: f64,
    count: u64,
}

impl FloatSum {
    /// An empty sum (NULL until a value arrives).
    pub fn new() -> FloatSum {
        FloatSum::default()
    }

    /// Fold in a unit's sum and count, or ask for decoding (INT32 units whose `int64` sum may
    /// have wrapped, BOOLEAN, TEXT, STRING, BLOB).
    pub fn offer_unit(&mut self, stats: &Statistics) -> Offer {
        if stats.count == 0 {
            return Offer::Used;
        }
        let unit_sum = match stats.values {
            ValueStatistics::Float { sum, .. } | ValueStatistics::Double { sum, .. } | ValueStatistics::Int64 { sum, .. } => {
                Some(sum)
            }
            ValueStatistics::Int32 { min, max, sum, .. } => int32_sum_unwrapped(stats.count, min, max, sum).map(|s| s as f64),
            _ => None,
        };
        match (unit_sum, self.count.checked_add(stats.count)) {
            (Some(s), Some(count)) => {
                self.sum += s;
                self.count = count;
                Offer::Used
            }
            _ => Offer::Decode,
        }
    }

    /// Fold in one decoded non-null value (converted to float64).
    pub fn offer_value(&mut self, v: f64) {
        self.sum += v;
        self.count = self.count.saturating_add(1);
    }

    /// The number of non-null values folded in.
    pub fn count(self) -> u64 {
        self.count
    }

    /// `sum(x)`: `None` is SQL NULL (no non-null value).
    pub fn sum(self) -> Option<f64> {
        (self.count > 0).then_some(self.sum)
    }

    /// `avg(x)` = sum / count: `None` is SQL NULL (no non-null value).
    pub fn avg(self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

/// An INT32 unit's `int64` sum when it cannot have wrapped (`count * max(|min|, |max|) <=
/// i64::MAX`).
fn int32_sum_unwrapped(count: u64, min: i32, max: i32, sum: i64) -> Option<i64> {
    let magnitude = u128::from(min.unsigned_abs().max(max.unsigned_abs()));
    let bound = u128::from(count).checked_mul(magnitude)?;
    (bound <= i64::MAX as u128).then_some(sum)
}

/// The bound on the difference between two float64 summations of the same `n` finite terms
/// with `Σ|x_i| = abs_sum`, in any orders, without overflow: `2·γ(n-1)·abs_sum`.
pub fn float_sum_tolerance(n: u64, abs_sum: f64) -> f64 {
    let ku = n.saturating_sub(1) as f64 * f64::EPSILON / 2.0;
    if ku >= 1.0 {
        return f64::INFINITY;
    }
    2.0 * ku / (1.0 - ku) * abs_sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int64(count: u64, min: i64, max: i64, sum: f64) -> Statistics {
        Statistics { count, start_time: 0, end_time: 1, values: ValueStatistics::Int64 { min, max, first: min, last: max, sum } }
    }

    fn int32(count: u64, min: i32, max: i32, sum: i64) -> Statistics {
        Statistics { count, start_time: 0, end_time: 1, values: ValueStatistics::Int32 { min, max, first: min, last: max, sum } }
    }

    #[test]
    fn test_int_sum_wraps_like_datafusion() {
        let mut s = IntSum::new();
        s.offer_value(i64::MAX);
        s.offer_value(1);
        assert_eq!(s.finish(), Some(i64::MIN));
        let mut s = IntSum::new();
        assert_eq!(s.offer_unit(&int32(2, i32::MAX, i32::MAX, 2 * i64::from(i32::MAX))), Offer::Used);
        assert_eq!(s.finish(), Some(4_294_967_294));
        assert_eq!(IntSum::new().finish(), None);
    }

    #[test]
    fn test_int64_float_sum_exactness_rule() {
        let mut s = IntSum::new();
        assert_eq!(s.offer_unit(&int64(3, -5, 10, 12.0)), Offer::Used);
        assert_eq!(s.finish(), Some(12));
        // 2 * 2^52 = 2^53: still exact.
        assert_eq!(exact_int64_sum(2, 0, 1 << 52, (1u64 << 53) as f64), Some(1 << 53));
        // Large values: the float sum may have rounded.
        assert_eq!(IntSum::new().offer_unit(&int64(2, 0, 1 << 53, (1u64 << 53) as f64)), Offer::Decode);
        assert_eq!(exact_int64_sum(1, i64::MIN, 0, -9.223372036854776e18), None);
        assert_eq!(exact_int64_sum(1, 1, 1, 1.5), None);
        assert_eq!(exact_int64_sum(u64::MAX, 1, 1, 1.0), None);
    }

    #[test]
    fn test_empty_units_and_wrong_types() {
        let mut s = IntSum::new();
        assert_eq!(s.offer_unit(&int64(0, 0, 0, f64::NAN)), Offer::Used);
        assert_eq!(s.finish(), None);
        let b = Statistics {
            count: 1,
            start_time: 0,
            end_time: 0,
            values: ValueStatistics::Boolean { first: true, last: true, true_count: 1 },
        };
        assert_eq!(s.offer_unit(&b), Offer::Decode);
        assert_eq!(FloatSum::new().offer_unit(&b), Offer::Decode);
    }

    #[test]
    fn test_float_sum_and_avg() {
        let mut s = FloatSum::new();
        let d = Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::Double { min: 1.0, max: 2.0, first: 1.0, last: 2.0, sum: 3.0 },
        };
        assert_eq!(s.offer_unit(&d), Offer::Used);
        s.offer_value(3.0);
        assert_eq!((s.sum(), s.avg(), s.count()), (Some(6.0), Some(2.0), 3));
        assert_eq!(FloatSum::new().avg(), None);
        s.offer_value(f64::NAN);
        assert!(s.sum().unwrap().is_nan());
    }

    #[test]
    fn test_float_sum_of_int_units() {
        let mut s = FloatSum::new();
        assert_eq!(s.offer_unit(&int32(4, 1, 4, 10)), Offer::Used);
        assert_eq!(s.offer_unit(&int64(1, 5, 5, 5.0)), Offer::Used);
        assert_eq!(s.avg(), Some(3.0));
        // An INT32 unit whose int64 sum may have wrapped.
        assert_eq!(s.offer_unit(&int32(u64::MAX, i32::MIN, 0, 0)), Offer::Decode);
    }

    #[test]
    fn test_tolerance() {
        assert_eq!(float_sum_tolerance(1, 5.0), 0.0);
        assert_eq!(float_sum_tolerance(0, 5.0), 0.0);
        assert!((float_sum_tolerance(3, 1.0) - 2.0 * f64::EPSILON).abs() < 1e-30);
        assert_eq!(float_sum_tolerance(u64::MAX, 1.0), f64::INFINITY);
    }
}
