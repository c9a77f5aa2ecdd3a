//! Statistics algebra: what a page's, chunk's or series' [`Statistics`] prove about its rows.
//!
//! Every TsFile unit (page, chunk, series) carries `count`, `start_time`, `end_time` and, per
//! type, `min`/`max`/`first`/`last`/`sum` (see [`crate::format::statistics`]). This module says
//! when those numbers may stand in for the rows, so a query decodes only the rest:
//!
//! * [`facts`] — the one converter of a unit's statistics into what may be trusted: counts,
//!   null counts, pruning bounds and exact min/max, refusing statistics that contradict
//!   themselves; pruning, planner statistics, statistics answers and the library use it;
//! * [`trust`] — when a unit's min/max bound its values under the *total order* Arrow and
//!   DataFusion use (NaN above +∞, -NaN below -∞, -0.0 < +0.0), and when they are the exact
//!   `min`/`max` answer;
//! * [`prune`] — whether a unit can hold a value matching `x > c`, `x >= c`, `x < c`,
//!   `x <= c`, `x = c`, `x != c`, or whether every value matches;
//! * [`window`] — a unit's time span against a query time range: outside, inside, straddling;
//! * [`bucket`] — fixed-stride `date_bin` buckets: the bucket of a timestamp (exactly as
//!   DataFusion 55 computes it), whether a unit lies inside one bucket;
//! * [`merge`] — accumulators of `count`, `min`/`max`, `min(time)`/`max(time)` over units and
//!   decoded values;
//! * [`sum`] — `sum` and `avg` with DataFusion's semantics (wrapping integer sums, float sums
//!   within a stated rounding bound);
//! * [`first_last`] — `first_value`/`last_value(x ORDER BY time)` over units, with ties and
//!   nulls.
//!
//! The unit-level protocol is the same everywhere: an accumulator is offered a unit's
//! statistics and answers [`Offer::Used`] (the statistics were folded in exactly) or
//! [`Offer::Decode`] (the caller must decode the unit and offer its values instead). No
//! DataFusion or Arrow here: the DataFusion layer and the library API build on it.
//!
//! [`Statistics`]: crate::format::Statistics

pub mod bucket;
pub mod facts;
pub mod first_last;
pub mod merge;
pub mod prune;
pub mod sum;
pub mod trust;
pub mod window;

#[cfg(test)]
mod proptests;

pub use bucket::{BucketPlacement, TimeBuckets};
pub use facts::{unit_facts, StatScalar, UnitFacts};
pub use first_last::{FirstLast, NullTreatment, Position};
pub use merge::{Count, Extremum, Merge, MinMax, Offer, TimeExtent};
pub use prune::{Comparison, ValueMatch};
pub use sum::{FloatSum, IntSum};
pub use trust::{StatValue, UnitValue, ValueBounds};
pub use window::{Placement, TimeRange, TimeSpan};
