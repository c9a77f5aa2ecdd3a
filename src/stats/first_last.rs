//! `first_value(x ORDER BY time)` and `last_value(x ORDER BY time)` over units and decoded rows.
//!
//! DataFusion returns the value of the row with the smallest (largest) time, **including a
//! NULL** there, unless `IGNORE NULLS`, which takes the first (last) non-null value. Value
//! statistics describe only non-null values: `first`/`last` are the values at the value
//! column's `start_time`/`end_time`, the times of its first/last *non-null* value. So a unit
//! is described by two things ([`FirstLast::offer_unit`]):
//!
//! * `rows`: the span of the unit's rows in the query's row set (an aligned page or chunk:
//!   its time column's statistics; a non-aligned series, whose every row has a value: the
//!   value statistics' own span);
//! * `values`: the value column's statistics over the same rows.
//!
//! For `first` with nulls respected, the candidate row is at `rows.start`: its value is
//! `values.first` when `values.start_time == rows.start`, NULL when the value column starts
//! later (or is empty), and the unit is decoded when the statistics are inconsistent
//! (`values.start_time < rows.start`). With `IGNORE NULLS` the candidate is
//! `(values.start_time, values.first)`. `last` mirrors this with the ends.
//!
//! Ties: several candidates at the same extreme time (overlapping chunks of one device,
//! duplicate timestamps) with *different* values leave DataFusion's answer unspecified (it
//! depends on its sort): [`Merge::NeedDecode`]. Equal values (total order; NULL = NULL) are no
//! ambiguity. Candidates are rows here, so the caller may also skip units that cannot reach the
//! current best ([`FirstLast::can_skip`]).

use std::cmp::Ordering;

use crate::format::statistics::Statistics;
use crate::stats::merge::{Merge, Offer};
use crate::stats::trust::{StatValue, UnitValue};
use crate::stats::window::TimeSpan;

/// Which end of the time order is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// `first_value(x ORDER BY time)`: the smallest time.
    First,
    /// `last_value(x ORDER BY time)`: the largest time.
    Last,
}

/// Whether a NULL at the extreme time is the answer (`RESPECT NULLS`, the default) or skipped
/// (`IGNORE NULLS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullTreatment {
    /// The row at the extreme time decides, even when its value is NULL.
    Respect,
    /// Only non-null values count.
    Ignore,
}

/// The best row so far and whether another row ties with it on time with a different value.
#[derive(Debug, Clone, PartialEq)]
struct Candidate<T> {
    time: i64,
    value: Option<T>,
    tied: bool,
}

/// `first_value`/`last_value(x ORDER BY time)` accumulator.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstLast<T> {
    position: Position,
    nulls: NullTreatment,
    best: Option<Candidate<T>>,
}

impl<T: StatValue> FirstLast<T> {
    /// An empty accumulator (its answer is NULL until a row arrives).
    pub fn new(position: Position, nulls: NullTreatment) -> FirstLast<T> {
        FirstLast { position, nulls, best: None }
    }

    /// Which end of the time order this accumulator keeps.
    pub fn position(&self) -> Position {
        self.position
    }

    /// Whether a NULL at the extreme time is the answer.
    pub fn null_treatment(&self) -> NullTreatment {
        self.nulls
    }

    /// Fold in a unit from its row span (`None`: the unit has no rows) and value statistics,
    /// or ask for decoding.
    pub fn offer_unit(&mut self, rows: Option<TimeSpan>, values: &Statistics) -> Offer {
        match self.unit_candidate(rows, values) {
            Some(Some((time, value))) => {
                self.offer_row(time, value);
                Offer::Used
            }
            Some(None) => Offer::Used,
            None => Offer::Decode,
        }
    }

    /// The unit's candidate row: `Some(None)` when it has none, `None` when the statistics
    /// cannot tell.
    fn unit_candidate(&self, rows: Option<TimeSpan>, values: &Statistics) -> Option<Option<(i64, Option<T>)>> {
        let value_span = TimeSpan::of(values);
        match (rows, value_span) {
            (Some(r), Some(v)) if v.start() < r.start() || v.end() > r.end() => return None,
            (None, Some(_)) => return None,
            _ => {}
        }
        let first_last = match T::first_last(values) {
            UnitValue::Exact(pair) => Some(pair),
            UnitValue::Empty => None,
            UnitValue::Untrusted => return None,
        };
        let non_null = value_span.zip(first_last).map(|(span, (first, last))| match self.position {
            Position::First => (span.start(), first),
            Position::Last => (span.end(), last),
        });
        Some(match self.nulls {
            NullTreatment::Ignore => non_null.map(|(t, v)| (t, Some(v))),
            NullTreatment::Respect => rows.map(|r| self.row_at_extreme(r, non_null)),
        })
    }

    /// The row at the unit's extreme time: the extreme non-null value when it is at that time,
    /// NULL otherwise.
    fn row_at_extreme(&self, rows: TimeSpan, non_null: Option<(i64, T)>) -> (i64, Option<T>) {
        let time = match self.position {
            Position::First => rows.start(),
            Position::Last => rows.end(),
        };
        match non_null {
            Some((t, v)) if t == time => (time, Some(v)),
            _ => (time, None),
        }
    }

    /// Fold in one decoded row (`value` `None` = NULL; ignored with `IGNORE NULLS`).
    pub fn offer_row(&mut self, time: i64, value: Option<T>) {
        if self.nulls == NullTreatment::Ignore && value.is_none() {
            return;
        }
        let order = match &self.best {
            None => Ordering::Less,
            Some(best) => self.compare_time(time, best.time),
        };
        match (order, &mut self.best) {
            (Ordering::Less, _) | (_, None) => self.best = Some(Candidate { time, value, tied: false }),
            (Ordering::Equal, Some(best)) => best.tied |= !same_cell(&best.value, &value),
            (Ordering::Greater, Some(_)) => {}
        }
    }

    /// `Less` when `time` is better than `than` (earlier for first, later for last).
    fn compare_time(&self, time: i64, than: i64) -> Ordering {
        match self.position {
            Position::First => time.cmp(&than),
            Position::Last => than.cmp(&time),
        }
    }

    /// True when a unit whose rows span `rows` cannot change the answer (all its rows are
    /// strictly worse than the best so far), so it need neither statistics nor decoding.
    pub fn can_skip(&self, rows: TimeSpan) -> bool {
        let Some(best) = &self.best else { return false };
        let nearest = match self.position {
            Position::First => rows.start(),
            Position::Last => rows.end(),
        };
        self.compare_time(nearest, best.time) == Ordering::Greater
    }

    /// The answer: `Exact(None)` is SQL NULL; `NeedDecode` on an ambiguous tie.
    pub fn finish(self) -> Merge<Option<T>> {
        match self.finish_with_time() {
            Merge::Exact(best) => Merge::Exact(best.and_then(|(_, v)| v)),
            Merge::NeedDecode => Merge::NeedDecode,
        }
    }

    /// The answer with the time of its row (`Exact(None)`: no row at all), as DataFusion's
    /// partial `first_value`/`last_value` state carries it; `NeedDecode` on an ambiguous tie.
    pub fn finish_with_time(self) -> Merge<Option<(i64, Option<T>)>> {
        match self.best {
            None => Merge::Exact(None),
            Some(best) if best.tied => Merge::NeedDecode,
            Some(best) => Merge::Exact(Some((best.time, best.value))),
        }
    }
}

/// Equality of two cells: both NULL, or equal values under total order.
fn same_cell<T: StatValue>(a: &Option<T>, b: &Option<T>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => x.total_cmp(y) == Ordering::Equal,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::statistics::ValueStatistics;

    fn values(count: u64, start_time: i64, end_time: i64, first: i64, last: i64) -> Statistics {
        Statistics { count, start_time, end_time, values: ValueStatistics::Int64 { min: 0, max: 0, first, last, sum: 0.0 } }
    }

    fn rows(a: i64, b: i64) -> Option<TimeSpan> {
        TimeSpan::new(a, b)
    }

    #[test]
    fn test_last_with_non_null_last_row_is_exact() {
        let mut acc = FirstLast::<i64>::new(Position::Last, NullTreatment::Respect);
        assert_eq!(acc.offer_unit(rows(0, 9), &values(5, 0, 9, 1, 7)), Offer::Used);
        assert_eq!(acc.offer_unit(rows(10, 19), &values(5, 10, 19, 2, 8)), Offer::Used);
        assert_eq!(acc.finish(), Merge::Exact(Some(8)));
    }

    #[test]
    fn test_last_with_null_last_row_is_null() {
        let mut acc = FirstLast::<i64>::new(Position::Last, NullTreatment::Respect);
        assert_eq!(acc.offer_unit(rows(0, 19), &values(5, 0, 15, 1, 7)), Offer::Used);
        assert_eq!(acc.clone().finish(), Merge::Exact(None));
        let mut ignore = FirstLast::<i64>::new(Position::Last, NullTreatment::Ignore);
        assert_eq!(ignore.offer_unit(rows(0, 19), &values(5, 0, 15, 1, 7)), Offer::Used);
        assert_eq!(ignore.finish(), Merge::Exact(Some(7)));
    }

    #[test]
    fn test_first_with_null_first_row_and_all_null_unit() {
        let mut acc = FirstLast::<i64>::new(Position::First, NullTreatment::Respect);
        assert_eq!(acc.offer_unit(rows(0, 9), &values(0, 0, 0, 0, 0)), Offer::Used);
        assert_eq!(acc.offer_unit(rows(5, 9), &values(2, 5, 9, 3, 4)), Offer::Used);
        assert_eq!(acc.finish(), Merge::Exact(None));
        let mut ignore = FirstLast::<i64>::new(Position::First, NullTreatment::Ignore);
        assert_eq!(ignore.offer_unit(rows(0, 9), &values(0, 0, 0, 0, 0)), Offer::Used);
        assert_eq!(ignore.offer_unit(rows(5, 9), &values(2, 6, 9, 3, 4)), Offer::Used);
        assert_eq!(ignore.finish(), Merge::Exact(Some(3)));
    }

    #[test]
    fn test_ties_on_time() {
        let mut acc = FirstLast::<i64>::new(Position::Last, NullTreatment::Respect);
        acc.offer_unit(rows(0, 9), &values(5, 0, 9, 1, 7));
        acc.offer_unit(rows(3, 9), &values(5, 3, 9, 1, 7));
        assert_eq!(acc.clone().finish(), Merge::Exact(Some(7)));
        acc.offer_row(9, Some(8));
        assert_eq!(acc.clone().finish(), Merge::NeedDecode);
        // A later row resolves the tie.
        acc.offer_row(10, None);
        assert_eq!(acc.finish(), Merge::Exact(None));
    }

    #[test]
    fn test_inconsistent_statistics_decode() {
        let mut acc = FirstLast::<i64>::new(Position::First, NullTreatment::Respect);
        assert_eq!(acc.offer_unit(rows(5, 9), &values(2, 4, 9, 3, 4)), Offer::Decode);
        let wrong_type = Statistics { count: 1, start_time: 0, end_time: 0, values: ValueStatistics::None };
        assert_eq!(acc.offer_unit(rows(0, 0), &wrong_type), Offer::Decode);
        assert_eq!(acc.finish(), Merge::Exact(None));
    }

    #[test]
    fn test_can_skip() {
        let mut acc = FirstLast::<i64>::new(Position::First, NullTreatment::Respect);
        assert!(!acc.can_skip(TimeSpan::new(0, 1).unwrap()));
        acc.offer_row(10, Some(1));
        assert!(acc.can_skip(TimeSpan::new(11, 20).unwrap()));
        assert!(!acc.can_skip(TimeSpan::new(10, 20).unwrap()));
        let mut last = FirstLast::<i64>::new(Position::Last, NullTreatment::Respect);
        last.offer_row(i64::MAX, None);
        assert!(last.can_skip(TimeSpan::new(0, i64::MAX - 1).unwrap()));
    }

    #[test]
    fn test_float_ties_compare_by_bits() {
        let mut acc = FirstLast::<f64>::new(Position::First, NullTreatment::Respect);
        acc.offer_row(1, Some(f64::NAN));
        acc.offer_row(1, Some(f64::NAN));
        assert!(matches!(acc.clone().finish(), Merge::Exact(Some(v)) if v.is_nan()));
        acc.offer_row(1, Some(-0.0));
        assert_eq!(acc.finish(), Merge::NeedDecode);
    }
}
