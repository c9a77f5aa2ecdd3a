//! Time windows: a unit's `[start_time, end_time]` against a query's time range.
//!
//! A unit wholly inside the range is answered from its statistics, one outside is skipped, one
//! straddling a range boundary is decoded and filtered row by row. Ranges are built from
//! [`std::ops::Bound`]s, so `time >= a AND time < b` (half open), `BETWEEN a AND b` (closed) and
//! unbounded sides are all expressed exactly; internally a range is the inclusive `[lo, hi]`
//! it denotes, or empty (e.g. `time > i64::MAX`).

use std::ops::Bound;

use crate::format::statistics::Statistics;

/// The inclusive time span `[start, end]` of a unit's rows or values (`start <= end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeSpan {
    start: i64,
    end: i64,
}

impl TimeSpan {
    /// The span `[start, end]`, or `None` when `start > end`.
    pub fn new(start: i64, end: i64) -> Option<TimeSpan> {
        (start <= end).then_some(TimeSpan { start, end })
    }

    /// The span a unit's statistics cover, or `None` for an empty unit (`count == 0`) or
    /// inconsistent statistics.
    pub fn of(stats: &Statistics) -> Option<TimeSpan> {
        if stats.count == 0 {
            return None;
        }
        TimeSpan::new(stats.start_time, stats.end_time)
    }

    /// The first timestamp (inclusive).
    pub fn start(self) -> i64 {
        self.start
    }

    /// The last timestamp (inclusive).
    pub fn end(self) -> i64 {
        self.end
    }
}

/// Where a unit lies relative to a time range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// No timestamp of the unit is in the range: skip it.
    Outside,
    /// Every timestamp of the unit is in the range: answer from statistics.
    Inside,
    /// The unit crosses a range boundary: decode and filter its rows.
    Straddles,
}

/// A query's time range; possibly empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// The inclusive `[lo, hi]`, `None` when the range is empty.
    inclusive: Option<(i64, i64)>,
}

impl TimeRange {
    /// The range between `lower` and `upper` (each included, excluded or unbounded).
    pub fn new(lower: Bound<i64>, upper: Bound<i64>) -> TimeRange {
        let lo = match lower {
            Bound::Included(t) => Some(t),
            Bound::Excluded(t) => t.checked_add(1),
            Bound::Unbounded => Some(i64::MIN),
        };
        let hi = match upper {
            Bound::Included(t) => Some(t),
            Bound::Excluded(t) => t.checked_sub(1),
            Bound::Unbounded => Some(i64::MAX),
        };
        let inclusive = match (lo, hi) {
            (Some(lo), Some(hi)) if lo <= hi => Some((lo, hi)),
            _ => None,
        };
        TimeRange { inclusive }
    }

    /// The closed range `[lo, hi]`.
    pub fn closed(lo: i64, hi: i64) -> TimeRange {
        TimeRange::new(Bound::Included(lo), Bound::Included(hi))
    }

    /// The half-open range `[lo, hi)`.
    pub fn half_open(lo: i64, hi: i64) -> TimeRange {
        TimeRange::new(Bound::Included(lo), Bound::Excluded(hi))
    }

    /// Every timestamp.
    pub fn all() -> TimeRange {
        TimeRange::new(Bound::Unbounded, Bound::Unbounded)
    }

    /// The inclusive `(lo, hi)` of the range, `None` when it is empty.
    pub fn inclusive(self) -> Option<(i64, i64)> {
        self.inclusive
    }

    /// True when no timestamp is in the range.
    pub fn is_empty(self) -> bool {
        self.inclusive.is_none()
    }

    /// True when `t` is in the range.
    pub fn contains(self, t: i64) -> bool {
        self.inclusive.is_some_and(|(lo, hi)| lo <= t && t <= hi)
    }

    /// Where `span` lies relative to the range.
    pub fn place(self, span: TimeSpan) -> Placement {
        match self.inclusive {
            None => Placement::Outside,
            Some((lo, hi)) if span.end < lo || span.start > hi => Placement::Outside,
            Some((lo, hi)) if lo <= span.start && span.end <= hi => Placement::Inside,
            Some(_) => Placement::Straddles,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(a: i64, b: i64) -> TimeSpan {
        TimeSpan::new(a, b).unwrap()
    }

    #[test]
    fn test_span_rejects_reversed_and_empty_units() {
        assert!(TimeSpan::new(2, 1).is_none());
        let s = Statistics { count: 0, start_time: 0, end_time: 5, values: crate::format::ValueStatistics::None };
        assert!(TimeSpan::of(&s).is_none());
        assert_eq!(TimeSpan::of(&Statistics { count: 1, ..s }), Some(span(0, 5)));
    }

    #[test]
    fn test_half_open_range_edges() {
        let r = TimeRange::half_open(10, 20);
        assert_eq!(r.place(span(0, 9)), Placement::Outside);
        assert_eq!(r.place(span(0, 10)), Placement::Straddles);
        assert_eq!(r.place(span(10, 19)), Placement::Inside);
        assert_eq!(r.place(span(10, 20)), Placement::Straddles);
        assert_eq!(r.place(span(20, 30)), Placement::Outside);
    }

    #[test]
    fn test_closed_range_edges() {
        let r = TimeRange::closed(10, 20);
        assert_eq!(r.place(span(10, 20)), Placement::Inside);
        assert_eq!(r.place(span(20, 20)), Placement::Inside);
        assert_eq!(r.place(span(21, 21)), Placement::Outside);
        assert_eq!(r.place(span(5, 25)), Placement::Straddles);
    }

    #[test]
    fn test_extreme_and_empty_ranges() {
        assert!(TimeRange::new(Bound::Excluded(i64::MAX), Bound::Unbounded).is_empty());
        assert!(TimeRange::new(Bound::Unbounded, Bound::Excluded(i64::MIN)).is_empty());
        assert!(TimeRange::half_open(5, 5).is_empty());
        assert_eq!(TimeRange::half_open(5, 5).place(span(5, 5)), Placement::Outside);
        let all = TimeRange::all();
        assert_eq!(all.place(span(i64::MIN, i64::MAX)), Placement::Inside);
        assert!(all.contains(i64::MIN) && all.contains(i64::MAX));
        assert_eq!(TimeRange::new(Bound::Excluded(i64::MIN), Bound::Unbounded).place(span(i64::MIN, 0)), Placement::Straddles);
    }
}
