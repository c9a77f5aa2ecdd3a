//! Statistics → DataFusion pruning, at three levels: devices (series statistics and tag
//! values), chunk groups (chunk statistics) and pages (page statistics).
//!
//! Each level becomes a list of *containers*; for each container and column we know (maybe)
//! a min, a max, a null count and the row count. [`ContainerStats`] serves these to
//! DataFusion's `PruningPredicate`, which answers "can this container match?".
//!
//! What is trusted is decided in one place below DataFusion, the statistics converter
//! [`crate::stats::facts`] (with the rules of [`crate::stats::trust`]); this module only turns
//! its facts into scalars of the columns' Arrow types ([`value_facts`]). Trusted: time ranges
//! whose `start <= end`, integer/DATE/TIMESTAMP and STRING min/max when `min <= max` (STRING
//! byte order = Arrow's order), BOOLEAN via `true_count <= count`, TAG values, null counts
//! (rows − non-null count) when the count fits the rows, and FLOAT/DOUBLE min/max under the
//! float rule. Writers compute float min/max with IEEE `<`, which skips NaN and does not order
//! −0.0/+0.0, while Arrow and DataFusion order floats totally (NaN above +∞, so `x > 32` holds
//! for NaN; −0.0 < +0.0 in `min`/`max` and sorting, though DataFusion 55's comparison
//! operators treat the two zeros as equal). So a FLOAT/DOUBLE container gets a min/max only
//! when its statistics prove there is no NaN (`sum` not NaN, `min <= max`), and a bound equal
//! to zero is widened to cover both zeros (min −0.0, max +0.0): these are bounds, not
//! necessarily attained values. A FLOAT column keeps `f32` bounds; a FLOAT series read as a
//! DOUBLE column (a tree measurement typed both ways) gets them widened exactly to `f64`. The
//! exact total-order answers, for planner statistics that DataFusion may use to answer
//! `min`/`max`, come from the same facts. Statistics that contradict themselves (min > max,
//! a true count or a value count above the rows) never prune and are never `Exact`.
//!
//! One error policy, at every level ([`prune_or_keep`]), as in DataFusion's Parquet reader:
//! statistics are an optimisation only, so an error evaluating the pruning predicate never
//! fails the query and never prunes — every container of that evaluation is kept (read and
//! filtered row by row) — and is counted in the scan's `predicate_evaluation_errors` metric
//! (`EXPLAIN ANALYZE`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, UInt64Array};
use arrow_schema::{DataType, Schema};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, ScalarValue};
use datafusion::physical_optimizer::pruning::PruningPredicate;
use datafusion::physical_plan::metrics::Count;

use crate::arrow::array::date_to_days;
use crate::arrow::schema::TimeUnit;
use crate::format::Statistics;
use crate::plan::{Judgement, Pruner, Unit, UnitColumn};
use crate::stats::facts::{time_bounds, unit_facts, StatScalar};
use crate::stats::trust::without_lossy_values;

/// What is known of one column in one container.
#[derive(Debug, Clone, Default)]
pub struct ColumnStat {
    /// Minimum, if known.
    pub min: Option<ScalarValue>,
    /// Maximum, if known.
    pub max: Option<ScalarValue>,
    /// Null count, if known.
    pub nulls: Option<u64>,
}

/// A timestamp/int64 scalar in the column's Arrow type.
pub fn time_scalar(v: i64, ty: &DataType) -> Option<ScalarValue> {
    Some(match ty {
        DataType::Int64 => ScalarValue::Int64(Some(v)),
        DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, tz) => ScalarValue::TimestampMillisecond(Some(v), tz.clone()),
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, tz) => ScalarValue::TimestampMicrosecond(Some(v), tz.clone()),
        DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, tz) => ScalarValue::TimestampNanosecond(Some(v), tz.clone()),
        _ => return None,
    })
}

/// An exact `(min, max)` pair of a unit, `None` where the statistics do not give it.
pub type ExactMinMax = (Option<ScalarValue>, Option<ScalarValue>);

/// A statistics value of the unit's physical type as a scalar of Arrow type `ty`: DATE as
/// days, INT64 as the time column's type, FLOAT widened exactly when read as DOUBLE, STRING
/// only when it is UTF-8. `None` when it does not convert.
fn scalar(v: &StatScalar, ty: &DataType) -> Option<ScalarValue> {
    Some(match (v, ty) {
        (StatScalar::Boolean(b), DataType::Boolean) => ScalarValue::Boolean(Some(*b)),
        (StatScalar::Int32(i), DataType::Int32) => ScalarValue::Int32(Some(*i)),
        (StatScalar::Int32(i), DataType::Date32) => ScalarValue::Date32(Some(date_to_days(*i)?)),
        (StatScalar::Int64(i), t) => return time_scalar(*i, t),
        (StatScalar::Float32(f), DataType::Float32) => ScalarValue::Float32(Some(*f)),
        (StatScalar::Float32(f), DataType::Float64) => ScalarValue::Float64(Some(f64::from(*f))),
        (StatScalar::Float64(f), DataType::Float64) => ScalarValue::Float64(Some(*f)),
        (StatScalar::Bytes(b), DataType::Utf8) => ScalarValue::Utf8(Some(std::str::from_utf8(b).ok()?.to_string())),
        _ => return None,
    })
}

/// Both sides, or neither.
fn pair(lo: Option<ScalarValue>, hi: Option<ScalarValue>) -> (Option<ScalarValue>, Option<ScalarValue>) {
    match (lo, hi) {
        (Some(lo), Some(hi)) => (Some(lo), Some(hi)),
        _ => (None, None),
    }
}

/// What value statistics `s` of a unit of `rows` rows (`None`: not known) prove, as scalars
/// of Arrow type `ty` — all of it from the one statistics converter
/// ([`crate::stats::facts::unit_facts`]): the pruning container's bounds and null count, and
/// the exact `min`/`max` (what DataFusion's `min(x)`/`max(x)` return over the unit), which
/// differ from the bounds only for floats (a NaN may hide, a zero bound may hide the other
/// zero: [`crate::stats::trust`]). Inconsistent statistics give neither.
pub fn value_facts(s: &Statistics, rows: Option<u64>, ty: &DataType) -> (ColumnStat, ExactMinMax) {
    let f = unit_facts(s, rows);
    let (min, max) = match &f.bounds {
        Some((lo, hi)) => pair(scalar(lo, ty), scalar(hi, ty)),
        None => (None, None),
    };
    let exact = (f.min.as_ref().and_then(|v| scalar(v, ty)), f.max.as_ref().and_then(|v| scalar(v, ty)));
    (ColumnStat { min, max, nulls: f.nulls }, exact)
}

/// Statistics of a value column in a container of `rows` rows: `None` = column absent
/// (all null).
pub fn value_column_stat(s: Option<&Statistics>, rows: u64, ty: &DataType) -> ColumnStat {
    match s {
        None => ColumnStat { min: None, max: None, nulls: Some(rows) },
        Some(s) => value_facts(s, Some(rows), ty).0,
    }
}

/// Merge a container's bound `new` (attained by one of its values when `new_exact`) into the
/// running bound `cur` of several containers (file statistics): `new` replaces it when it
/// compares `wins` against it (`Less` for minima, `Greater` for maxima); on a tie the merged
/// bound is attained when either is. A merged bound that is attained is the exact extreme:
/// every container's values lie within its own bounds, hence within the merged ones
/// (`ScalarValue` compares floats by total order). False when the two do not compare.
pub fn merge_bound(
    cur: &mut Option<ScalarValue>,
    exact: &mut bool,
    new: ScalarValue,
    new_exact: bool,
    wins: std::cmp::Ordering,
) -> bool {
    let Some(c) = cur.as_ref() else {
        *cur = Some(new);
        *exact = new_exact;
        return true;
    };
    match new.partial_cmp(c) {
        Some(o) if o == wins => {
            *cur = Some(new);
            *exact = new_exact;
        }
        Some(std::cmp::Ordering::Equal) => *exact |= new_exact,
        Some(_) => {}
        None => return false,
    }
    true
}

/// Statistics of the time column (no bounds where the time statistics do not hold together:
/// [`crate::stats::facts::time_bounds`]).
pub fn time_column_stat(s: &Statistics, ty: &DataType) -> ColumnStat {
    let (min, max) = match time_bounds(s) {
        Some((lo, hi)) => pair(time_scalar(lo, ty), time_scalar(hi, ty)),
        None => (None, None),
    };
    ColumnStat { min, max, nulls: Some(0) }
}

/// Statistics of a TAG column of a device.
pub fn tag_column_stat(value: Option<&str>, rows: u64) -> ColumnStat {
    match value {
        Some(v) => {
            let s = ScalarValue::Utf8(Some(v.to_string()));
            ColumnStat { min: Some(s.clone()), max: Some(s), nulls: Some(0) }
        }
        None => ColumnStat { min: None, max: None, nulls: Some(rows) },
    }
}

pub use crate::plan::{column_roles, ColumnRole};

/// Column statistics of a list of containers, served to `PruningPredicate`.
#[derive(Debug)]
pub struct ContainerStats {
    schema: Arc<Schema>,
    rows: Vec<u64>,
    /// Per column name: one entry per container.
    columns: HashMap<String, Vec<ColumnStat>>,
}

impl ContainerStats {
    /// Empty statistics for containers of a table with `schema`.
    pub fn new(schema: Arc<Schema>) -> Self {
        ContainerStats { schema, rows: Vec::new(), columns: HashMap::new() }
    }

    /// Add one container: its row count and one stat per column of the schema.
    pub fn push(&mut self, rows: u64, stats: Vec<ColumnStat>) {
        for (f, s) in self.schema.fields().iter().zip(stats) {
            self.columns.entry(f.name().clone()).or_default().push(s);
        }
        self.rows.push(rows);
    }

    fn scalars(&self, column: &Column, pick: impl Fn(&ColumnStat) -> Option<ScalarValue>) -> Option<ArrayRef> {
        let f = self.schema.field_with_name(&column.name).ok()?;
        let ty = match f.data_type() {
            DataType::Dictionary(_, v) => v.as_ref().clone(),
            t => t.clone(),
        };
        let stats = self.columns.get(&column.name)?;
        if stats.iter().all(|s| pick(s).is_none()) {
            return None;
        }
        let null = ScalarValue::try_from(&ty).ok()?;
        let values: Vec<ScalarValue> = stats.iter().map(|s| pick(s).unwrap_or_else(|| null.clone())).collect();
        ScalarValue::iter_to_array(values).ok()
    }
}

impl PruningStatistics for ContainerStats {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.scalars(column, |s| s.min.clone())
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.scalars(column, |s| s.max.clone())
    }

    fn num_containers(&self) -> usize {
        self.rows.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        let stats = self.columns.get(&column.name)?;
        Some(Arc::new(stats.iter().map(|s| s.nulls).collect::<UInt64Array>()))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        Some(Arc::new(UInt64Array::from(self.rows.clone())))
    }

    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}

/// Which of the containers of `stats` may hold matching rows under `predicate`.
///
/// The one pruning-error policy of the scans: when the predicate cannot be evaluated
/// against the statistics (or answers for the wrong number of containers), every container
/// is kept — never pruned, never an error — and the failure is counted in `errors` (the
/// `predicate_evaluation_errors` metric).
pub fn prune_or_keep<S: PruningStatistics + ?Sized>(predicate: &PruningPredicate, stats: &S, errors: &Count) -> Vec<bool> {
    let n = stats.num_containers();
    match predicate.prune(stats) {
        Ok(keep) if keep.len() == n => keep,
        _ => {
            errors.add(1);
            vec![true; n]
        }
    }
}

/// The scan's pruning predicate as the access plan's [`Pruner`]: each unit's statistics
/// become a container's column statistics in the columns' Arrow types, and the predicate
/// is evaluated over a whole set of units at once ([`prune_or_keep`]'s error policy).
#[derive(Debug)]
pub struct PredicatePruner {
    predicate: Arc<PruningPredicate>,
    schema: Arc<Schema>,
    /// Per column of `schema`: whether the predicate names it.
    named: Vec<bool>,
    errors: Count,
}

impl PredicatePruner {
    /// A pruner of `predicate` over `schema` (the table's file schema), counting failed
    /// evaluations in `errors`.
    pub fn new(predicate: Arc<PruningPredicate>, schema: Arc<Schema>, errors: Count) -> Self {
        let names: HashSet<String> = datafusion::physical_expr::utils::collect_columns(predicate.orig_expr())
            .into_iter()
            .map(|c| c.name().to_string())
            .collect();
        let named = schema.fields().iter().map(|f| names.contains(f.name())).collect();
        PredicatePruner { predicate, schema, named, errors }
    }

    /// The statistics of one unit's column in the column's Arrow type.
    fn column_stat(&self, i: usize, rows: u64, c: &UnitColumn<'_>) -> ColumnStat {
        let Some(field) = self.schema.fields().get(i) else { return ColumnStat::default() };
        match c {
            UnitColumn::Unused => ColumnStat::default(),
            UnitColumn::Time(s) => time_column_stat(s, field.data_type()),
            UnitColumn::Tag(v) => tag_column_stat(*v, rows),
            UnitColumn::Null => ColumnStat { min: None, max: None, nulls: Some(rows) },
            UnitColumn::Field { stats, lossy } => {
                value_column_stat(Some(&without_lossy_values(stats, *lossy)), rows, field.data_type())
            }
        }
    }
}

impl Pruner for PredicatePruner {
    fn names(&self, i: usize) -> bool {
        self.named.get(i).copied().unwrap_or(false)
    }

    fn judge(&self) -> Box<dyn Judgement + '_> {
        Box::new(PredicateJudgement { pruner: self, stats: ContainerStats::new(self.schema.clone()) })
    }
}

/// Units being gathered for one evaluation of a [`PredicatePruner`].
struct PredicateJudgement<'p> {
    pruner: &'p PredicatePruner,
    stats: ContainerStats,
}

impl Judgement for PredicateJudgement<'_> {
    fn push(&mut self, unit: Unit<'_>) {
        let rows = unit.rows;
        let columns = (0..self.pruner.schema.fields().len())
            .map(|i| unit.columns.get(i).map_or_else(ColumnStat::default, |c| self.pruner.column_stat(i, rows, c)))
            .collect();
        self.stats.push(rows, columns);
    }

    fn keep(self: Box<Self>) -> Vec<bool> {
        prune_or_keep(&self.pruner.predicate, &self.stats, &self.pruner.errors)
    }
}

/// Unit of the time column of a table schema's first field.
pub fn unit_of(schema: &Schema) -> TimeUnit {
    match schema.fields().first().map(|f| f.data_type()) {
        Some(DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, _)) => TimeUnit::Microsecond,
        Some(DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, _)) => TimeUnit::Nanosecond,
        Some(DataType::Int64) => TimeUnit::Raw,
        _ => TimeUnit::Millisecond,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::format::ValueStatistics;

    /// The exact min/max of a unit of `count` rows.
    fn value_exact_min_max(s: &Statistics, ty: &DataType) -> ExactMinMax {
        value_facts(s, Some(s.count), ty).1
    }

    use arrow_array::{BinaryArray, Int32Array};
    use arrow_schema::Field;
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{col, lit, BinaryExpr};
    use datafusion::physical_optimizer::pruning::PruningPredicateBuilder;
    use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;

    use crate::datafusion::metrics::TsFileScanMetrics;

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]))
    }

    /// `a > 5` as a pruning predicate.
    fn a_gt_5() -> Arc<PruningPredicate> {
        let s = schema();
        let e = Arc::new(BinaryExpr::new(col("a", &s).unwrap(), Operator::Gt, lit(5i32)));
        PruningPredicateBuilder::new().with_file_schema(s).build(e).unwrap()
    }

    /// Statistics of two containers whose `a` minima/maxima cannot be read as Int32 (binary
    /// values, which do not cast) or are the wrong number of values, so evaluating fails.
    struct Broken {
        wrong_length: bool,
    }

    impl PruningStatistics for Broken {
        fn min_values(&self, _column: &Column) -> Option<ArrayRef> {
            if self.wrong_length {
                Some(Arc::new(Int32Array::from(vec![1])))
            } else {
                Some(Arc::new(BinaryArray::from(vec![&b"x"[..], &b"y"[..]])))
            }
        }
        fn max_values(&self, column: &Column) -> Option<ArrayRef> {
            self.min_values(column)
        }
        fn num_containers(&self) -> usize {
            2
        }
        fn null_counts(&self, _column: &Column) -> Option<ArrayRef> {
            None
        }
        fn row_counts(&self) -> Option<ArrayRef> {
            None
        }
        fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
            None
        }
    }

    fn double(count: u64, min: f64, max: f64, sum: f64) -> Statistics {
        Statistics { count, start_time: 0, end_time: 9, values: ValueStatistics::Double { min, max, first: min, last: max, sum } }
    }

    fn float(count: u64, min: f32, max: f32, sum: f64) -> Statistics {
        Statistics { count, start_time: 0, end_time: 9, values: ValueStatistics::Float { min, max, first: min, last: max, sum } }
    }

    /// The bits of a Float64 scalar (so -0.0 and +0.0 differ); None for no scalar.
    fn bits64(v: &Option<ScalarValue>) -> Option<u64> {
        match v {
            Some(ScalarValue::Float64(Some(x))) => Some(x.to_bits()),
            None => None,
            other => panic!("not a Float64: {other:?}"),
        }
    }

    fn bits32(v: &Option<ScalarValue>) -> Option<u32> {
        match v {
            Some(ScalarValue::Float32(Some(x))) => Some(x.to_bits()),
            None => None,
            other => panic!("not a Float32: {other:?}"),
        }
    }

    #[test]
    fn test_float_column_stat_ordinary_and_infinite_sums() {
        let st = value_column_stat(Some(&double(3, -1.5, 2.5, 1.0)), 5, &DataType::Float64);
        assert_eq!((bits64(&st.min), bits64(&st.max), st.nulls), (Some((-1.5f64).to_bits()), Some(2.5f64.to_bits()), Some(2)));
        // A sum of ±inf is an infinite value or an overflow, never a NaN: the bounds stand.
        for (lo, hi, sum) in
            [(1.0, f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, 3.0, f64::NEG_INFINITY), (1.0, f64::MAX, f64::INFINITY)]
        {
            let st = value_column_stat(Some(&double(4, lo, hi, sum)), 4, &DataType::Float64);
            assert_eq!((bits64(&st.min), bits64(&st.max)), (Some(lo.to_bits()), Some(hi.to_bits())), "{lo} {hi} {sum}");
        }
        let st = value_column_stat(Some(&float(2, -0.5, f32::INFINITY, f64::INFINITY)), 2, &DataType::Float32);
        assert_eq!((bits32(&st.min), bits32(&st.max)), (Some((-0.5f32).to_bits()), Some(f32::INFINITY.to_bits())));
        // FLOAT statistics read as a DOUBLE column (a tree measurement typed both ways): widened exactly.
        let st = value_column_stat(Some(&float(2, 0.1, 0.2, 0.3)), 2, &DataType::Float64);
        assert_eq!((bits64(&st.min), bits64(&st.max)), (Some(f64::from(0.1f32).to_bits()), Some(f64::from(0.2f32).to_bits())));
        // DOUBLE statistics never serve a Float32 column.
        let st = value_column_stat(Some(&double(2, 0.5, 1.0, 1.5)), 2, &DataType::Float32);
        assert!(st.min.is_none() && st.max.is_none());
    }

    #[test]
    fn test_float_column_stat_refuses_nan_sums_and_inconsistent_bounds() {
        for s in [
            double(3, -1.0, 2.0, f64::NAN),
            double(3, f64::NAN, f64::NAN, f64::NAN),
            // A NaN first value leaves min/max NaN even if the sum were not.
            double(3, f64::NAN, 2.0, 1.0),
            double(3, 1.0, f64::NAN, 1.0),
            double(3, 2.0, 1.0, 3.0),
            // +inf and -inf values sum to NaN: declined.
            double(2, f64::NEG_INFINITY, f64::INFINITY, f64::NAN),
        ] {
            let st = value_column_stat(Some(&s), s.count, &DataType::Float64);
            assert!(st.min.is_none() && st.max.is_none(), "{s:?}");
            assert_eq!(st.nulls, Some(0));
            assert_eq!(value_exact_min_max(&s, &DataType::Float64), (None, None), "{s:?}");
        }
        let st = value_column_stat(Some(&float(3, -1.0, 2.0, f64::NAN)), 3, &DataType::Float32);
        assert!(st.min.is_none() && st.max.is_none());
    }

    #[test]
    fn test_float_column_stat_widens_zero_bounds() {
        // Whatever zero the writer kept, a zero bound covers both zeros.
        for (min, max) in [(0.0, 0.0), (-0.0, -0.0), (-0.0, 0.0), (0.0, -0.0)] {
            let st = value_column_stat(Some(&double(2, min, max, 0.0)), 2, &DataType::Float64);
            assert_eq!((bits64(&st.min), bits64(&st.max)), (Some((-0.0f64).to_bits()), Some(0.0f64.to_bits())), "{min} {max}");
            let st = value_column_stat(Some(&float(2, min as f32, max as f32, 0.0)), 2, &DataType::Float32);
            assert_eq!((bits32(&st.min), bits32(&st.max)), (Some((-0.0f32).to_bits()), Some(0.0f32.to_bits())), "{min} {max}");
        }
        let st = value_column_stat(Some(&double(2, 0.0, 7.0, 7.0)), 2, &DataType::Float64);
        assert_eq!((bits64(&st.min), bits64(&st.max)), (Some((-0.0f64).to_bits()), Some(7.0f64.to_bits())));
        let st = value_column_stat(Some(&double(2, -7.0, -0.0, -7.0)), 2, &DataType::Float64);
        assert_eq!((bits64(&st.min), bits64(&st.max)), (Some((-7.0f64).to_bits()), Some(0.0f64.to_bits())));
    }

    #[test]
    fn test_float_exact_min_max_refuses_unattained_zeros() {
        let f64s = |s: &Statistics| {
            let (a, b) = value_exact_min_max(s, &DataType::Float64);
            (bits64(&a), bits64(&b))
        };
        // +0.0 min may hide a -0.0; -0.0 max may hide a +0.0.
        assert_eq!(f64s(&double(2, 0.0, 5.0, 5.0)), (None, Some(5.0f64.to_bits())));
        assert_eq!(f64s(&double(2, -5.0, -0.0, -5.0)), (Some((-5.0f64).to_bits()), None));
        // A stored -0.0 minimum and +0.0 maximum are the total-order extremes.
        assert_eq!(f64s(&double(2, -0.0, 0.0, 0.0)), (Some((-0.0f64).to_bits()), Some(0.0f64.to_bits())));
        assert_eq!(
            f64s(&double(2, -1.0, f64::INFINITY, f64::INFINITY)),
            (Some((-1.0f64).to_bits()), Some(f64::INFINITY.to_bits()))
        );
        let (a, b) = value_exact_min_max(&float(2, 0.0, -0.0, 0.0), &DataType::Float32);
        assert_eq!((a, b), (None, None));
        // Other types: the same as the bounds.
        let ints = Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::Int32 { min: 0, max: 3, first: 0, last: 3, sum: 3 },
        };
        let st = value_column_stat(Some(&ints), 2, &DataType::Int32);
        assert_eq!(value_exact_min_max(&ints, &DataType::Int32), (st.min, st.max));
    }

    #[test]
    fn test_inconsistent_statistics_never_prune_and_are_never_exact() {
        let int = |min, max, count| Statistics {
            count,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::Int64 { min, max, first: min, last: max, sum: 0.0 },
        };
        // min > max: no bounds, no exact values (the null count still fits).
        let (st, exact) = value_facts(&int(9, 1, 2), Some(2), &DataType::Int64);
        assert_eq!((st.min, st.max, st.nulls, exact), (None, None, Some(0), (None, None)));
        // A count above the container's rows: nothing, not even a null count.
        let (st, exact) = value_facts(&int(1, 9, 5), Some(4), &DataType::Int64);
        assert_eq!((st.min, st.max, st.nulls, exact), (None, None, None, (None, None)));
        // true_count above count.
        let b = Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::Boolean { first: true, last: true, true_count: 3 },
        };
        let st = value_column_stat(Some(&b), 2, &DataType::Boolean);
        assert_eq!((st.min, st.max), (None, None));
        // STRING min > max.
        let text = |v: &[u8]| Some(Box::<[u8]>::from(v));
        let s = Statistics {
            count: 2,
            start_time: 0,
            end_time: 1,
            values: ValueStatistics::String { first: text(b"z"), last: text(b"a"), min: text(b"z"), max: text(b"a") },
        };
        assert_eq!(value_column_stat(Some(&s), 2, &DataType::Utf8).min, None);
        // Time statistics with start > end: no bounds.
        let t = Statistics { count: 2, start_time: 9, end_time: 1, values: ValueStatistics::None };
        let st = time_column_stat(&t, &DataType::Int64);
        assert_eq!((st.min, st.max), (None, None));
    }

    #[test]
    fn test_float_column_stat_of_empty_units() {
        // count 0: nothing but the null count (the unit holds no value, whatever min/max say).
        for s in
            [double(0, f64::INFINITY, f64::NEG_INFINITY, 0.0), double(0, 0.0, 0.0, 0.0), double(0, f64::NAN, f64::NAN, f64::NAN)]
        {
            let st = value_column_stat(Some(&s), 4, &DataType::Float64);
            assert!(st.min.is_none() && st.max.is_none());
            assert_eq!(st.nulls, Some(4));
            assert_eq!(value_exact_min_max(&s, &DataType::Float64), (None, None));
        }
        let st = value_column_stat(Some(&float(0, 1.0, 2.0, 3.0)), 4, &DataType::Float32);
        assert!(st.min.is_none() && st.max.is_none());
        // An absent column: all null.
        let st = value_column_stat(None, 4, &DataType::Float32);
        assert!(st.min.is_none() && st.max.is_none());
        assert_eq!(st.nulls, Some(4));
    }

    /// Float64 units (statistics as a writer computes them: `min`/`max` from the first value
    /// with IEEE `<`, `sum` with IEEE `+`) with the values each holds.
    fn float_units() -> Vec<(Statistics, Vec<f64>)> {
        let unit = |values: Vec<f64>| {
            let (mut min, mut max, mut sum) = (values[0], values[0], values[0]);
            for &v in &values[1..] {
                if v < min {
                    min = v;
                }
                if v > max {
                    max = v;
                }
                sum += v;
            }
            (double(values.len() as u64, min, max, sum), values)
        };
        vec![
            unit(vec![1.0, 2.0, 1.5]),
            unit(vec![1.0, f64::NAN, 2.0]),
            unit(vec![f64::NAN, 1.0]),
            unit(vec![1.0, -f64::NAN]),
            unit(vec![0.0, -0.0]),
            unit(vec![-0.0, 0.0]),
            unit(vec![-0.0]),
            unit(vec![0.0]),
            unit(vec![-0.0, 3.0]),
            unit(vec![5.0, f64::INFINITY]),
            unit(vec![f64::NEG_INFINITY, -5.0]),
            unit(vec![f64::NEG_INFINITY, f64::INFINITY]),
            unit(vec![f64::MAX, f64::MIN_POSITIVE, 5e-324]),
            unit(vec![3.0, 3.0]),
        ]
    }

    /// For `x <op> c` over [`float_units`]: which units the statistics keep, and which hold a
    /// value for which DataFusion evaluates the predicate to true.
    fn keep_and_match(op: Operator, c: f64) -> (Vec<bool>, Vec<bool>) {
        use arrow_array::{Array, Float64Array, RecordBatch};
        let s = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, true)]));
        let e: Arc<dyn datafusion::physical_expr::PhysicalExpr> = Arc::new(BinaryExpr::new(col("x", &s).unwrap(), op, lit(c)));
        let pp = PruningPredicateBuilder::new().with_file_schema(s.clone()).build(e.clone()).unwrap();
        let mut stats = ContainerStats::new(s.clone());
        let mut matches = Vec::new();
        for (u, values) in float_units() {
            stats.push(u.count, vec![value_column_stat(Some(&u), u.count, &DataType::Float64)]);
            let batch = RecordBatch::try_new(s.clone(), vec![Arc::new(Float64Array::from(values))]).unwrap();
            let out = e.evaluate(&batch).unwrap().into_array(batch.num_rows()).unwrap();
            let out = out.as_any().downcast_ref::<BooleanArray>().unwrap().clone();
            matches.push(out.iter().any(|v| v == Some(true)));
        }
        let metrics = TsFileScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0, "f");
        let keep = prune_or_keep(&pp, &stats, &metrics.predicate_evaluation_errors);
        assert_eq!(metrics.predicate_evaluation_errors.value(), 0);
        (keep, matches)
    }

    #[test]
    fn test_float_pruning_never_drops_a_matching_unit() {
        let ops = [Operator::Gt, Operator::GtEq, Operator::Lt, Operator::LtEq, Operator::Eq, Operator::NotEq];
        let cs = [0.0, -0.0, 1.5, 3.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MAX, 5e-324, 1e300];
        let mut pruned = 0;
        for op in ops {
            for c in cs {
                let (keep, matches) = keep_and_match(op, c);
                for (i, (k, m)) in keep.iter().zip(&matches).enumerate() {
                    assert!(*k || !*m, "x {op} {c}: unit {i} pruned but holds a match");
                }
                pruned += keep.iter().filter(|k| !**k).count();
            }
        }
        assert!(pruned > 100, "only {pruned} units pruned");
        // NaN is above every number: `x > 3` keeps the NaN units (1, 2, 3) and the infinite ones.
        let (keep, _) = keep_and_match(Operator::Gt, 3.0);
        assert_eq!(keep, [false, true, true, true, false, false, false, false, false, true, false, true, true, false]);
    }

    #[test]
    fn test_merge_bound_is_exact_only_when_the_merged_bound_is_attained() {
        use std::cmp::Ordering::Less;
        let f = |v: f64| ScalarValue::Float64(Some(v));
        // Minima of three containers: (bound, attained).
        let merge = |parts: &[(f64, bool)]| {
            let (mut cur, mut exact) = (None, true);
            for (v, e) in parts {
                assert!(merge_bound(&mut cur, &mut exact, f(*v), *e, Less));
            }
            (cur.map(|c| bits64(&Some(c))), exact)
        };
        let b = |v: f64| Some(Some(v.to_bits()));
        // A widened -0.0 (values +0.0) below an attained 1.0: a bound, not the minimum.
        assert_eq!(merge(&[(-0.0, false), (1.0, true)]), (b(-0.0), false));
        assert_eq!(merge(&[(1.0, true), (-0.0, false)]), (b(-0.0), false));
        // An attained -0.0 ties with the widened one: the minimum.
        assert_eq!(merge(&[(-0.0, false), (-0.0, true), (2.0, true)]), (b(-0.0), true));
        // -0.0 is below +0.0 in total order.
        assert_eq!(merge(&[(0.0, true), (-0.0, false)]), (b(-0.0), false));
        assert_eq!(merge(&[(-5.0, true), (-0.0, false)]), (b(-5.0), true));
        // Values that do not compare (another type) are refused.
        let (mut cur, mut exact) = (Some(f(1.0)), true);
        assert!(!merge_bound(&mut cur, &mut exact, ScalarValue::Int32(Some(1)), true, Less));
    }

    #[test]
    fn test_prune_or_keep_prunes_by_statistics() {
        let metrics = TsFileScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0, "f");
        let mut stats = ContainerStats::new(schema());
        for (lo, hi) in [(0, 3), (4, 9), (10, 20)] {
            let stat =
                ColumnStat { min: Some(ScalarValue::Int32(Some(lo))), max: Some(ScalarValue::Int32(Some(hi))), nulls: Some(0) };
            stats.push(5, vec![stat]);
        }
        let keep = prune_or_keep(&a_gt_5(), &stats, &metrics.predicate_evaluation_errors);
        assert_eq!(keep, vec![false, true, true]);
        assert_eq!(metrics.predicate_evaluation_errors.value(), 0);
    }

    #[test]
    fn test_prune_or_keep_keeps_every_container_on_an_evaluation_error_and_counts_it() {
        let metrics = TsFileScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0, "f");
        let pp = a_gt_5();
        for wrong_length in [false, true] {
            let broken = Broken { wrong_length };
            assert!(pp.prune(&broken).is_err(), "the statistics make evaluation fail (wrong_length {wrong_length})");
            assert_eq!(prune_or_keep(&pp, &broken, &metrics.predicate_evaluation_errors), vec![true, true]);
        }
        assert_eq!(metrics.predicate_evaluation_errors.value(), 2);
    }
}
