//! Value pruning: can a unit hold a non-null value matching `x <op> c`, or do all match?
//!
//! Comparisons follow DataFusion's: total order for floats (so `NaN > 32` is true and
//! `-0.0 = 0.0` is false), unsigned bytes for strings. A unit is judged from its
//! [`ValueBounds`] (see [`crate::stats::trust`]), never from untrusted statistics. A null value
//! matches no comparison, so an all-null unit ([`ValueBounds::Empty`]) matches nothing.

use std::cmp::Ordering;

use crate::stats::trust::{StatValue, ValueBounds};

/// A comparison `x <op> c` between a column and a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `x > c`
    Gt,
    /// `x >= c`
    GtEq,
    /// `x < c`
    Lt,
    /// `x <= c`
    LtEq,
    /// `x = c`
    Eq,
    /// `x != c`
    NotEq,
}

impl Comparison {
    /// Whether `x <op> c` holds for one value, under [`StatValue::total_cmp`].
    pub fn holds<T: StatValue>(self, x: &T, c: &T) -> bool {
        let ord = x.total_cmp(c);
        match self {
            Comparison::Gt => ord == Ordering::Greater,
            Comparison::GtEq => ord != Ordering::Less,
            Comparison::Lt => ord == Ordering::Less,
            Comparison::LtEq => ord != Ordering::Greater,
            Comparison::Eq => ord == Ordering::Equal,
            Comparison::NotEq => ord != Ordering::Equal,
        }
    }
}

/// What a unit's bounds prove about `x <op> c` over its non-null values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueMatch {
    /// No value matches: skip the unit.
    NoValue,
    /// Every non-null value matches: the unit passes without evaluating the predicate (nulls
    /// still fail it).
    EveryValue,
    /// Some values may match: decode and filter.
    Maybe,
}

/// Judge `x <op> c` over a unit with the given bounds.
pub fn judge<T: StatValue>(bounds: &ValueBounds<T>, op: Comparison, c: &T) -> ValueMatch {
    match bounds {
        ValueBounds::Empty => ValueMatch::NoValue,
        ValueBounds::Unknown => ValueMatch::Maybe,
        ValueBounds::Within { lo, hi } => judge_within(lo, hi, op, c),
    }
}

/// [`judge`] for a unit whose values lie in `[lo, hi]`.
fn judge_within<T: StatValue>(lo: &T, hi: &T, op: Comparison, c: &T) -> ValueMatch {
    let (none, every) = match op {
        // No value matches when even the extreme fails; every value does when the other extreme passes.
        Comparison::Gt | Comparison::GtEq | Comparison::Lt | Comparison::LtEq => {
            (!op.holds(extreme_for(op, lo, hi), c), op.holds(other_extreme(op, lo, hi), c))
        }
        Comparison::Eq => (!Comparison::GtEq.holds(hi, c) || !Comparison::LtEq.holds(lo, c), same_point(lo, hi, c)),
        Comparison::NotEq => (same_point(lo, hi, c), Comparison::Gt.holds(lo, c) || Comparison::Lt.holds(hi, c)),
    };
    if none {
        ValueMatch::NoValue
    } else if every {
        ValueMatch::EveryValue
    } else {
        ValueMatch::Maybe
    }
}

/// The bound most favourable to an ordering comparison (`hi` for `>`/`>=`, `lo` for `<`/`<=`).
fn extreme_for<'a, T>(op: Comparison, lo: &'a T, hi: &'a T) -> &'a T {
    match op {
        Comparison::Gt | Comparison::GtEq => hi,
        _ => lo,
    }
}

/// The bound least favourable to an ordering comparison.
fn other_extreme<'a, T>(op: Comparison, lo: &'a T, hi: &'a T) -> &'a T {
    match op {
        Comparison::Gt | Comparison::GtEq => lo,
        _ => hi,
    }
}

/// True when `lo == hi == c`: every value equals `c`.
fn same_point<T: StatValue>(lo: &T, hi: &T, c: &T) -> bool {
    lo.total_cmp(c) == Ordering::Equal && hi.total_cmp(c) == Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(lo: f64, hi: f64) -> ValueBounds<f64> {
        ValueBounds::Within { lo, hi }
    }

    #[test]
    fn test_ordering_comparisons() {
        let b = within(10.0, 20.0);
        assert_eq!(judge(&b, Comparison::Gt, &20.0), ValueMatch::NoValue);
        assert_eq!(judge(&b, Comparison::GtEq, &20.0), ValueMatch::Maybe);
        assert_eq!(judge(&b, Comparison::Gt, &9.0), ValueMatch::EveryValue);
        assert_eq!(judge(&b, Comparison::Lt, &10.0), ValueMatch::NoValue);
        assert_eq!(judge(&b, Comparison::LtEq, &10.0), ValueMatch::Maybe);
        assert_eq!(judge(&b, Comparison::LtEq, &20.0), ValueMatch::EveryValue);
        assert_eq!(judge(&b, Comparison::Gt, &f64::NAN), ValueMatch::NoValue);
        assert_eq!(judge(&b, Comparison::Lt, &f64::NAN), ValueMatch::EveryValue);
    }

    #[test]
    fn test_equality() {
        assert_eq!(judge(&within(10.0, 20.0), Comparison::Eq, &21.0), ValueMatch::NoValue);
        assert_eq!(judge(&within(10.0, 20.0), Comparison::Eq, &15.0), ValueMatch::Maybe);
        assert_eq!(judge(&within(3.0, 3.0), Comparison::Eq, &3.0), ValueMatch::EveryValue);
        assert_eq!(judge(&within(3.0, 3.0), Comparison::NotEq, &3.0), ValueMatch::NoValue);
        assert_eq!(judge(&within(3.0, 4.0), Comparison::NotEq, &5.0), ValueMatch::EveryValue);
    }

    #[test]
    fn test_zero_signs_under_total_order() {
        // Widened bounds of a unit whose min = max = 0.0: it may hold -0.0 and +0.0.
        let b = within(-0.0, 0.0);
        assert_eq!(judge(&b, Comparison::Eq, &-0.0), ValueMatch::Maybe);
        assert_eq!(judge(&b, Comparison::Lt, &0.0), ValueMatch::Maybe);
        assert_eq!(judge(&within(0.0, 1.0), Comparison::Lt, &0.0), ValueMatch::NoValue);
        assert_eq!(judge(&within(-1.0, -0.0), Comparison::Eq, &0.0), ValueMatch::NoValue);
    }

    #[test]
    fn test_empty_and_unknown() {
        assert_eq!(judge(&ValueBounds::<i64>::Empty, Comparison::NotEq, &0), ValueMatch::NoValue);
        assert_eq!(judge(&ValueBounds::<i64>::Unknown, Comparison::Eq, &0), ValueMatch::Maybe);
    }
}
