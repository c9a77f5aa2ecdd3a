//! One unit's statistics turned into the facts every consumer uses: the one converter from
//! [`Statistics`] to trusted bounds, counts and exact extremes (as arrow-rs's statistics
//! converter is for Parquet).
//!
//! Pruning containers, the file statistics given to DataFusion's planner, the statistics
//! aggregates and the library all take what a unit proves from here, so a statistic that
//! one of them refuses is refused by all: it never prunes and is never `Exact`.
//!
//! | fact | trusted when |
//! | --- | --- |
//! | the unit's rows (time column) | `count == 0`, or `start_time <= end_time` |
//! | a value column's count, and its null count `rows − count` | `count <= rows` |
//! | bounds (pruning) and exact min/max | the count fits, and the type's rule of [`crate::stats::trust`]: integers and STRING `min <= max`, BOOLEAN `true_count <= count`, FLOAT/DOUBLE the float rule (sum not NaN, `min <= max`) |
//!
//! A value column whose count exceeds its unit's rows contradicts itself: every fact of it
//! is unknown (its unit is decoded), never a guess.

use crate::format::statistics::{Statistics, ValueStatistics};
use crate::stats::trust::{StatValue, UnitValue, ValueBounds};

/// A statistics value in its unit's physical type (INT32 also for DATE, INT64 also for
/// TIMESTAMP, bytes for STRING); callers turn it into their own value type.
#[derive(Debug, Clone, PartialEq)]
pub enum StatScalar {
    /// BOOLEAN.
    Boolean(bool),
    /// INT32, DATE.
    Int32(i32),
    /// INT64, TIMESTAMP.
    Int64(i64),
    /// FLOAT.
    Float32(f32),
    /// DOUBLE.
    Float64(f64),
    /// STRING (bytes, ordered unsigned as Arrow orders UTF-8).
    Bytes(Vec<u8>),
}

/// What a value column's statistics prove about its non-null values in one unit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnitFacts {
    /// Non-null values, when the count fits the unit's rows.
    pub count: Option<u64>,
    /// Null rows (`rows − count`), when the unit's rows are known and the count fits them.
    pub nulls: Option<u64>,
    /// Bounds of the non-null values under total order, safe for pruning (not necessarily
    /// attained: a float zero bound covers both zeros).
    pub bounds: Option<(StatScalar, StatScalar)>,
    /// The exact minimum (attained; what `min(x)` returns over the unit).
    pub min: Option<StatScalar>,
    /// The exact maximum.
    pub max: Option<StatScalar>,
}

/// True when a unit's time statistics hold together: no rows, or `start_time <= end_time`.
pub fn time_consistent(rows: &Statistics) -> bool {
    rows.count == 0 || rows.start_time <= rows.end_time
}

/// The time range `[start_time, end_time]` of a unit with rows whose time statistics hold
/// together.
pub fn time_bounds(rows: &Statistics) -> Option<(i64, i64)> {
    (rows.count > 0 && time_consistent(rows)).then_some((rows.start_time, rows.end_time))
}

/// True when a value column's statistics fit a unit of `rows` rows (`None`: not known).
pub fn count_fits(values: &Statistics, rows: Option<u64>) -> bool {
    rows.is_none_or(|r| values.count <= r)
}

/// The facts of value statistics `s` of a unit of `rows` rows (`None` when the caller does
/// not know them; then no null count is given).
pub fn unit_facts(s: &Statistics, rows: Option<u64>) -> UnitFacts {
    if !count_fits(s, rows) {
        return UnitFacts::default();
    }
    let nulls = rows.map(|r| r - s.count);
    let (bounds, min, max) = match &s.values {
        ValueStatistics::Boolean { .. } => typed::<bool>(s, StatScalar::Boolean),
        ValueStatistics::Int32 { .. } => typed::<i32>(s, StatScalar::Int32),
        ValueStatistics::Int64 { .. } => typed::<i64>(s, StatScalar::Int64),
        ValueStatistics::Float { .. } => typed::<f32>(s, StatScalar::Float32),
        ValueStatistics::Double { .. } => typed::<f64>(s, StatScalar::Float64),
        ValueStatistics::String { .. } => typed::<Vec<u8>>(s, StatScalar::Bytes),
        ValueStatistics::Text { .. } | ValueStatistics::None => (None, None, None),
    };
    UnitFacts { count: Some(s.count), nulls, bounds, min, max }
}

type Typed = (Option<(StatScalar, StatScalar)>, Option<StatScalar>, Option<StatScalar>);

fn typed<T: StatValue>(s: &Statistics, wrap: fn(T) -> StatScalar) -> Typed {
    let bounds = match T::bounds(s) {
        ValueBounds::Within { lo, hi } => Some((wrap(lo), wrap(hi))),
        ValueBounds::Empty | ValueBounds::Unknown => None,
    };
    let exact = |v: UnitValue<T>| match v {
        UnitValue::Exact(v) => Some(wrap(v)),
        UnitValue::Empty | UnitValue::Untrusted => None,
    };
    (bounds, exact(T::exact_min(s)), exact(T::exact_max(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(count: u64, values: ValueStatistics) -> Statistics {
        Statistics { count, start_time: 0, end_time: 9, values }
    }

    #[test]
    fn test_consistent_units_give_every_fact() {
        let f = unit_facts(&st(3, ValueStatistics::Int64 { min: -2, max: 7, first: 7, last: -2, sum: 5.0 }), Some(5));
        assert_eq!(f.count, Some(3));
        assert_eq!(f.nulls, Some(2));
        assert_eq!(f.bounds, Some((StatScalar::Int64(-2), StatScalar::Int64(7))));
        assert_eq!((f.min, f.max), (Some(StatScalar::Int64(-2)), Some(StatScalar::Int64(7))));
        let b = unit_facts(&st(4, ValueStatistics::Boolean { first: true, last: false, true_count: 1 }), None);
        assert_eq!(b.bounds, Some((StatScalar::Boolean(false), StatScalar::Boolean(true))));
        assert_eq!(b.nulls, None, "rows unknown");
    }

    #[test]
    fn test_inconsistent_statistics_give_nothing() {
        // min > max (integers, strings), true_count > count, count > rows: never bounds,
        // never exact; a count above the rows loses its null count and count too.
        let ints = unit_facts(&st(3, ValueStatistics::Int32 { min: 9, max: 1, first: 9, last: 1, sum: 10 }), Some(3));
        assert_eq!((ints.bounds, ints.min, ints.max), (None, None, None));
        assert_eq!(ints.nulls, Some(0), "the count itself still fits");
        let s = |a: &[u8]| Some(Box::<[u8]>::from(a));
        let strings =
            unit_facts(&st(2, ValueStatistics::String { first: s(b"b"), last: s(b"a"), min: s(b"b"), max: s(b"a") }), Some(2));
        assert_eq!((strings.bounds, strings.min), (None, None));
        let bools = unit_facts(&st(2, ValueStatistics::Boolean { first: true, last: true, true_count: 3 }), Some(2));
        assert_eq!((bools.bounds, bools.max), (None, None));
        let over = unit_facts(&st(6, ValueStatistics::Int64 { min: 1, max: 2, first: 1, last: 2, sum: 9.0 }), Some(5));
        assert_eq!(over, UnitFacts::default());
        let nan =
            unit_facts(&st(2, ValueStatistics::Double { min: 1.0, max: 2.0, first: 1.0, last: 2.0, sum: f64::NAN }), Some(2));
        assert_eq!((nan.bounds, nan.min, nan.count), (None, None, Some(2)));
    }

    #[test]
    fn test_time_facts() {
        assert_eq!(time_bounds(&st(2, ValueStatistics::None)), Some((0, 9)));
        assert_eq!(time_bounds(&Statistics { start_time: 10, ..st(2, ValueStatistics::None) }), None);
        assert!(time_consistent(&Statistics { start_time: 10, ..st(0, ValueStatistics::None) }));
        assert_eq!(time_bounds(&st(0, ValueStatistics::None)), None);
    }
}
