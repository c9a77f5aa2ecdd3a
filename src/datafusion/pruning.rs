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

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, UInt64Array};
use arrow_schema::{DataType, Schema};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, ScalarValue};

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

/// Unit of the time column of a table schema's first field.
pub fn unit_of(schema: &Schema) -> TimeUnit {
    match schema.fields().first().map(|f| f.data_type()) {
        Some(DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, _)) => TimeUnit::Microsecond,
        Some(DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, _)) => TimeUnit::Nanosecond,
        Some(DataType::Int64) => TimeUnit::Raw,
        _ => TimeUnit::Millisecond,
    }
}
