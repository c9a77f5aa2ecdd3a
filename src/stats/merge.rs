//! Accumulators of `count`, `min`/`max` and `min(time)`/`max(time)` over units and decoded
//! values.
//!
//! Each accumulator is offered units' [`Statistics`]; it answers [`Offer::Used`] when it
//! folded the statistics in exactly, or [`Offer::Decode`] when the caller must decode that
//! unit and offer its values one by one instead. The final answer is then exactly what
//! DataFusion computes over the rows. Units offered must not overlap in rows (each row counted
//! once): the caller offers a unit's statistics *or* its decoded values, never both.
//!
//! * `count(x)` = the value column's `count` (non-null values), always exact;
//!   `count(*)` = the time column's `count` (rows).
//! * `min(x)`/`max(x)`: integers, BOOLEAN and STRING exact; FLOAT/DOUBLE by the trust rule of
//!   [`crate::stats::trust`] (total order, NaN and zero signs); TEXT, BLOB: decode.
//! * `min(time)`/`max(time)`: the time column's `start_time`/`end_time`, always exact.

use std::cmp::Ordering;

use crate::format::statistics::Statistics;
use crate::stats::trust::{StatValue, UnitValue};

/// What an accumulator did with a unit's statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Folded in exactly: the unit needs no decoding for this aggregate.
    Used,
    /// Not usable: decode the unit and offer its values.
    Decode,
}

/// A final answer from statistics, or the need to let DataFusion compute it over decoded rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Merge<T> {
    /// The exact answer DataFusion gives over the rows.
    Exact(T),
    /// The statistics cannot decide (e.g. two rows tie on the ordering time with different
    /// values, where DataFusion's choice is unspecified): compute over decoded rows.
    NeedDecode,
}

/// `count(x)` (offer value-column statistics) or `count(*)` (offer time-column statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    count: u64,
}

impl Count {
    /// An empty count.
    pub fn new() -> Count {
        Count::default()
    }

    /// Add a unit's `count` (always usable).
    pub fn offer_unit(&mut self, stats: &Statistics) -> Offer {
        self.offer_values(stats.count)
    }

    /// Add `n` decoded non-null values (or rows).
    pub fn offer_values(&mut self, n: u64) -> Offer {
        match self.count.checked_add(n) {
            Some(c) => {
                self.count = c;
                Offer::Used
            }
            None => Offer::Decode,
        }
    }

    /// The count so far.
    pub fn value(self) -> u64 {
        self.count
    }
}

/// Which extreme a [`MinMax`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extremum {
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
}

/// `min(x)` or `max(x)` under DataFusion's order ([`StatValue::total_cmp`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MinMax<T> {
    which: Extremum,
    best: Option<T>,
}

impl<T: StatValue> MinMax<T> {
    /// An empty accumulator (its answer is NULL until a value arrives).
    pub fn new(which: Extremum) -> MinMax<T> {
        MinMax { which, best: None }
    }

    /// Fold in a unit's exact extreme, or ask for decoding.
    pub fn offer_unit(&mut self, stats: &Statistics) -> Offer {
        let extreme = match self.which {
            Extremum::Min => T::exact_min(stats),
            Extremum::Max => T::exact_max(stats),
        };
        match extreme {
            UnitValue::Empty => Offer::Used,
            UnitValue::Exact(v) => {
                self.offer_value(v);
                Offer::Used
            }
            UnitValue::Untrusted => Offer::Decode,
        }
    }

    /// Fold in one decoded non-null value.
    pub fn offer_value(&mut self, v: T) {
        let wanted = match self.which {
            Extremum::Min => Ordering::Less,
            Extremum::Max => Ordering::Greater,
        };
        let replace = self.best.as_ref().is_none_or(|b| v.total_cmp(b) == wanted);
        if replace {
            self.best = Some(v);
        }
    }

    /// The answer: `None` is SQL NULL (no non-null value).
    pub fn finish(self) -> Option<T> {
        self.best
    }

    /// Which extreme this accumulator keeps.
    pub fn which(&self) -> Extremum {
        self.which
    }
}

/// `min(time)` and `max(time)` over units (time-column statistics) and decoded timestamps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeExtent {
    extent: Option<(i64, i64)>,
}

impl TimeExtent {
    /// An empty extent.
    pub fn new() -> TimeExtent {
        TimeExtent::default()
    }

    /// Fold in a unit's `[start_time, end_time]` (empty units add nothing).
    pub fn offer_unit(&mut self, stats: &Statistics) -> Offer {
        if stats.count == 0 {
            return Offer::Used;
        }
        if stats.start_time > stats.end_time {
            return Offer::Decode;
        }
        self.offer_time(stats.start_time);
        self.offer_time(stats.end_time);
        Offer::Used
    }

    /// Fold in one decoded timestamp.
    pub fn offer_time(&mut self, t: i64) {
        self.extent = Some(match self.extent {
            None => (t, t),
            Some((lo, hi)) => (lo.min(t), hi.max(t)),
        });
    }

    /// `min(time)`, `None` when no row was seen.
    pub fn min(self) -> Option<i64> {
        self.extent.map(|(lo, _)| lo)
    }

    /// `max(time)`, `None` when no row was seen.
    pub fn max(self) -> Option<i64> {
        self.extent.map(|(_, hi)| hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::statistics::ValueStatistics;

    fn double(count: u64, min: f64, max: f64, sum: f64) -> Statistics {
        Statistics { count, start_time: 0, end_time: 9, values: ValueStatistics::Double { min, max, first: min, last: max, sum } }
    }

    #[test]
    fn test_count_values_and_rows() {
        let mut c = Count::new();
        assert_eq!(c.offer_unit(&double(3, 0.0, 1.0, 1.0)), Offer::Used);
        assert_eq!(c.offer_unit(&double(0, 0.0, 0.0, 0.0)), Offer::Used);
        assert_eq!(c.offer_values(2), Offer::Used);
        assert_eq!(c.value(), 5);
        assert_eq!(c.offer_values(u64::MAX), Offer::Decode);
    }

    #[test]
    fn test_min_max_floats_decode_untrusted_units() {
        let mut min = MinMax::<f64>::new(Extremum::Min);
        assert_eq!(min.offer_unit(&double(2, 1.0, 2.0, 3.0)), Offer::Used);
        assert_eq!(min.offer_unit(&double(2, 5.0, 6.0, f64::NAN)), Offer::Decode);
        min.offer_value(-f64::NAN);
        assert!(min.clone().finish().unwrap().is_nan());
        let mut max = MinMax::<f64>::new(Extremum::Max);
        assert_eq!(max.offer_unit(&double(2, -1.0, -0.0, -1.0)), Offer::Decode);
        max.offer_value(-0.0);
        max.offer_value(0.0);
        assert_eq!(max.finish().unwrap().to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn test_min_max_empty_is_null() {
        let mut m = MinMax::<i64>::new(Extremum::Max);
        let s = Statistics {
            count: 0,
            start_time: 0,
            end_time: 0,
            values: ValueStatistics::Int64 { min: 0, max: 0, first: 0, last: 0, sum: 0.0 },
        };
        assert_eq!(m.offer_unit(&s), Offer::Used);
        assert_eq!(m.finish(), None);
    }

    #[test]
    fn test_min_max_zero_signs() {
        let mut min = MinMax::<f64>::new(Extremum::Min);
        min.offer_value(0.0);
        min.offer_value(-0.0);
        assert_eq!(min.finish().unwrap().to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn test_time_extent() {
        let mut t = TimeExtent::new();
        assert_eq!(t.min(), None);
        let s = |count, start_time, end_time| Statistics { count, start_time, end_time, values: ValueStatistics::None };
        assert_eq!(t.offer_unit(&s(0, -100, 100)), Offer::Used);
        assert_eq!(t.offer_unit(&s(2, i64::MIN, 5)), Offer::Used);
        assert_eq!(t.offer_unit(&s(2, 9, 5)), Offer::Decode);
        t.offer_time(i64::MAX);
        assert_eq!((t.min(), t.max()), (Some(i64::MIN), Some(i64::MAX)));
    }
}
