//! Aggregates answered from statistics.
//!
//! Every TsFile series, chunk and page carries statistics (count, time range, min, max,
//! first, last, sum). [`TsFileStatisticsAggregate`], a physical optimizer rule, replaces the
//! first aggregation step over a TsFile scan (DataFusion's `AggregateExec` in mode `Single`,
//! or `Partial` below the final merge) with a [`StatisticsAggregateExec`] that answers it from
//! those statistics through the summary layer ([`crate::summary`]) and decodes only the pages
//! they cannot answer.
//!
//! Taken when every part of the aggregation can be answered exactly:
//! * the scan has no limit; a filter between the aggregation and the scan is a conjunction
//!   of comparisons of the time column with literals (a time range) and of predicates that
//!   read TAG columns only (evaluated once per device);
//! * the groups are TAG columns and at most one `date_bin(<interval>, time[, <origin>])` with
//!   a literal interval without months over a time column without time zone, or there is no
//!   GROUP BY;
//! * the aggregates are `count`, `sum`, `avg`, `min`, `max` without DISTINCT, FILTER or
//!   ORDER BY, over `*`, a literal (count), the time column or a FIELD column, and
//!   `first_value`/`last_value(x ORDER BY time)` of a FIELD column;
//! * per function and type: `count` of anything; `sum` of INT32/INT64 (Int64, wrapping as
//!   DataFusion's) and FLOAT/DOUBLE; `avg` of INT32, INT64, FLOAT, DOUBLE; `min`/`max` of the
//!   time column and of INT32, INT64, DATE, TIMESTAMP, BOOLEAN, STRING/TEXT, FLOAT, DOUBLE;
//!   `first_value`/`last_value` of the same types.
//!
//! Whether a statistic may stand for its rows is decided per unit when the query runs
//! ([`crate::stats`]): a unit is folded in from statistics only when every aggregate is
//! exact on it, otherwise its pages are decoded. Where statistics cannot decide at all (a
//! tree-model table, `first_value`/`last_value` rows tying on time with different values)
//! every partition runs the original aggregation instead, so the answer is always the one
//! decoding gives (floating sums and averages up to summation order, as between DataFusion's
//! own plans with different partition counts). Turn the rule off per table with option
//! `statistics_aggregates = false`, or for a session with
//! `SET tsfile.statistics_aggregates = false`.

mod exec;
mod output;
mod rule;

pub use exec::StatisticsAggregateExec;
pub use rule::TsFileStatisticsAggregate;

use arrow_schema::DataType;

use crate::stats::TimeBuckets;

/// An aggregate function answered from statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    /// `count(x)`, `count(*)`.
    Count,
    /// `sum(x)`.
    Sum,
    /// `avg(x)`.
    Avg,
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
    /// `first_value(x ORDER BY time)` (or `last_value(x ORDER BY time DESC)`).
    First {
        /// `IGNORE NULLS`.
        ignore_nulls: bool,
    },
    /// `last_value(x ORDER BY time)` (or `first_value(x ORDER BY time DESC)`).
    Last {
        /// `IGNORE NULLS`.
        ignore_nulls: bool,
    },
}

impl Func {
    /// The function's name as DataFusion spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Func::Count => "count",
            Func::Sum => "sum",
            Func::Avg => "avg",
            Func::Min => "min",
            Func::Max => "max",
            Func::First { .. } => "first_value",
            Func::Last { .. } => "last_value",
        }
    }
}

/// A GROUP BY column of the replaced aggregation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GroupCol {
    /// A TAG column, by name.
    Tag(String),
    /// `date_bin(<stride>, time[, <origin>])`: the buckets and the time column's type.
    Bucket(TimeBuckets, DataType),
}

/// What an aggregate's argument is, for the statistics.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    /// A non-null literal (`count(*)`, `count(1)`): every row.
    Rows,
    /// A null literal: no row.
    Nothing,
    /// The time column: name and Arrow type.
    Time(String, DataType),
    /// A FIELD column: name and Arrow type.
    Field(String, DataType),
}

/// One aggregate of the replaced `AggregateExec`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AggSpec {
    /// The function.
    pub func: Func,
    /// Its argument.
    pub arg: Arg,
    /// Types of its output columns: the final value, or the partial state fields.
    pub types: Vec<DataType>,
}

impl AggSpec {
    /// `func(arg)` for display.
    fn display(&self) -> String {
        let arg = match &self.arg {
            Arg::Rows => "*".to_string(),
            Arg::Nothing => "NULL".to_string(),
            Arg::Time(n, _) | Arg::Field(n, _) => n.clone(),
        };
        match self.func {
            Func::First { .. } | Func::Last { .. } => format!("{}({arg} ORDER BY time)", self.func.name()),
            _ => format!("{}({arg})", self.func.name()),
        }
    }
}
