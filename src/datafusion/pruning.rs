//! Statistics → DataFusion pruning, at three levels: devices (series statistics and tag
//! values), chunk groups (chunk statistics) and pages (page statistics).
//!
//! Each level becomes a list of *containers*; for each container and column we know (maybe)
//! a min, a max, a null count and the row count. [`ContainerStats`] serves these to
//! DataFusion's `PruningPredicate`, which answers "can this container match?".
//!
//! What is trusted: time ranges, integer/DATE/TIMESTAMP min/max, STRING min/max (byte order
//! = Arrow's order), BOOLEAN via `true_count`, TAG values, null counts of aligned columns
//! (rows − non-null count). FLOAT/DOUBLE min/max are **not** used: writers compute them with
//! IEEE comparisons that ignore NaN and −0.0, while Arrow orders floats totally, so using
//! them could drop matching rows.
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
use crate::arrow::schema::{TimeUnit, CATEGORY_KEY};
use crate::format::{Statistics, ValueStatistics};

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

/// Min/max of value statistics as scalars of Arrow type `ty` (None where not trusted).
pub fn value_min_max(s: &Statistics, ty: &DataType) -> (Option<ScalarValue>, Option<ScalarValue>) {
    if s.count == 0 {
        return (None, None);
    }
    match (&s.values, ty) {
        (ValueStatistics::Int32 { min, max, .. }, DataType::Int32) => {
            (Some(ScalarValue::Int32(Some(*min))), Some(ScalarValue::Int32(Some(*max))))
        }
        (ValueStatistics::Int32 { min, max, .. }, DataType::Date32) => match (date_to_days(*min), date_to_days(*max)) {
            (Some(a), Some(b)) => (Some(ScalarValue::Date32(Some(a))), Some(ScalarValue::Date32(Some(b)))),
            _ => (None, None),
        },
        (ValueStatistics::Int64 { min, max, .. }, t) => (time_scalar(*min, t), time_scalar(*max, t)),
        (ValueStatistics::Boolean { true_count, .. }, DataType::Boolean) => {
            let count = i64::try_from(s.count).unwrap_or(i64::MAX);
            let min = *true_count >= count;
            let max = *true_count > 0;
            (Some(ScalarValue::Boolean(Some(min))), Some(ScalarValue::Boolean(Some(max))))
        }
        (ValueStatistics::String { min: Some(a), max: Some(b), .. }, DataType::Utf8) => {
            match (std::str::from_utf8(a), std::str::from_utf8(b)) {
                (Ok(a), Ok(b)) => (Some(ScalarValue::Utf8(Some(a.to_string()))), Some(ScalarValue::Utf8(Some(b.to_string())))),
                _ => (None, None),
            }
        }
        _ => (None, None),
    }
}

/// Statistics of a value column in a container of `rows` rows: `None` = column absent
/// (all null).
pub fn value_column_stat(s: Option<&Statistics>, rows: u64, ty: &DataType) -> ColumnStat {
    match s {
        None => ColumnStat { min: None, max: None, nulls: Some(rows) },
        Some(s) => {
            let (min, max) = value_min_max(s, ty);
            ColumnStat { min, max, nulls: Some(rows.saturating_sub(s.count)) }
        }
    }
}

/// Statistics of the time column.
pub fn time_column_stat(s: &Statistics, ty: &DataType) -> ColumnStat {
    if s.count == 0 {
        return ColumnStat { min: None, max: None, nulls: Some(0) };
    }
    ColumnStat { min: time_scalar(s.start_time, ty), max: time_scalar(s.end_time, ty), nulls: Some(0) }
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

/// The role of each column of the table schema, for building container statistics.
#[derive(Debug, Clone)]
pub enum ColumnRole {
    /// The time column.
    Time,
    /// TAG column: DeviceID segment index.
    Tag(usize),
    /// ATTRIBUTE column (always null).
    Attribute,
    /// FIELD column (measurement name).
    Field(String),
    /// A column this file does not have (all null).
    Missing,
}

/// Roles of the columns of `schema` (the table's merged file schema).
pub fn column_roles(schema: &Schema, tag_order: &[String], fields_in_file: &HashSet<String>) -> Vec<ColumnRole> {
    schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let cat = f.metadata().get(CATEGORY_KEY).map(String::as_str);
            match cat {
                _ if i == 0 => ColumnRole::Time,
                Some("TAG") => match tag_order.iter().position(|t| t == f.name()) {
                    Some(p) => ColumnRole::Tag(p + 1),
                    None => ColumnRole::Missing,
                },
                Some("ATTRIBUTE") => ColumnRole::Attribute,
                _ if fields_in_file.contains(f.name()) => ColumnRole::Field(f.name().clone()),
                _ => ColumnRole::Missing,
            }
        })
        .collect()
}

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
