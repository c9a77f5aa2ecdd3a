//! Tree-model TsFiles as SQL tables, in IoTDB's "align by device" shape.
//!
//! A tree-model file has no table schema; its device index has one key per DeviceID segment
//! 0 (`root.plant1` for `root.plant1.line3`, `root.a.b` for `root.a.b.c.d`). Each such key
//! is one SQL table:
//!
//! | column | Arrow type | content |
//! | --- | --- | --- |
//! | `time` | time unit of the `time_unit` option | the union of the device's timestamps |
//! | `device` | `Dictionary(Int32, Utf8)`, not null | the full path, segments joined with `.` |
//! | `level0` .. `level{k-1}` | `Dictionary(Int32, Utf8)`, nullable | option `tree_levels`: the path's nodes (`root`, `plant1`, ...); null past a shorter path's end |
//! | one per measurement, sorted by name | from the series' TsFile type | null where the series has no point |
//!
//! Rows: per device, one row per distinct timestamp of any of its series (non-aligned), or per
//! row of its time column (aligned tree devices), whatever the projection, so `count(*)` does
//! not depend on the columns read. The measurements are the union over the key's devices and
//! files; a device lacking one reads it as null. A measurement typed differently on two
//! devices is an error naming both, unless `tree_mixed_types = coerce` reads it as `DOUBLE`
//! (every type numeric) or `STRING`.
//!
//! This module holds the per-file view of a key's devices ([`TreeView`]), the schema, and the
//! statistics used by `infer_stats` and pruning; the scan is in `tree_scan`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, DataFusionError, ScalarValue, Statistics};

use crate::arrow::schema::{measurement_field, tag_field, time_field, CATEGORY_KEY};
use crate::datafusion::options::{TreeMixedTypes, TsFileReadOptions};
use crate::datafusion::pruning::{merge_bound, tag_column_stat, time_scalar, value_facts, ColumnStat};
use crate::error::Result;
use crate::format::TsDataType;
use crate::plan::{TreeDevice, TreeView};
use crate::stats::trust::without_lossy_values;

/// Name of the column holding a tree device's path.
pub const DEVICE_COLUMN: &str = "device";

/// Name of path level column `i` (`level0` is the path's first node, usually `root`).
pub fn level_column(i: usize) -> String {
    format!("level{i}")
}

/// Types whose values read identically (same Arrow type and conversion) count as one.
fn type_class(t: TsDataType) -> TsDataType {
    match t {
        TsDataType::Text => TsDataType::String,
        TsDataType::Object => TsDataType::Blob,
        t => t,
    }
}

fn is_numeric(t: TsDataType) -> bool {
    matches!(t, TsDataType::Int32 | TsDataType::Int64 | TsDataType::Float | TsDataType::Double)
}

/// The Arrow schema of a tree-model key over several files (`(meta, file location)`).
pub fn tree_schema(parts: &[(Arc<TreeView>, String)], options: &TsFileReadOptions) -> datafusion::common::Result<SchemaRef> {
    let unit = options.time_unit;
    let depth = if options.tree_levels { parts.iter().map(|(m, _)| m.depth).max().unwrap_or(0) } else { 0 };
    let mut fields = vec![time_field("time", unit), tag_field(DEVICE_COLUMN, false)];
    let mut reserved: Vec<String> = vec!["time".into(), DEVICE_COLUMN.into()];
    for i in 0..depth {
        fields.push(tag_field(&level_column(i), true));
        reserved.push(level_column(i));
    }
    // Measurement -> every distinct type with where it was first seen.
    let mut merged: BTreeMap<&str, Vec<(TsDataType, String)>> = BTreeMap::new();
    for (meta, location) in parts {
        for (name, types) in &meta.measurements {
            let seen = merged.entry(name.as_str()).or_default();
            for (t, device) in types {
                if !seen.iter().any(|(s, _)| s == t) {
                    seen.push((*t, format!("device {device} in {location}")));
                }
            }
        }
    }
    for (name, types) in merged {
        let Some((first, first_at)) = types.first() else { continue };
        if reserved.iter().any(|r| r == name) {
            return Err(DataFusionError::Plan(format!(
                "measurement '{name}' of {first_at} has the name of a column of the tree table ({})",
                reserved.join(", ")
            )));
        }
        let ty = match types.iter().find(|(t, _)| type_class(*t) != type_class(*first)) {
            None if types.len() == 1 => *first,
            None => type_class(*first),
            Some((other, other_at)) => {
                let common = if types.iter().all(|(t, _)| is_numeric(*t)) { TsDataType::Double } else { TsDataType::String };
                if options.tree_mixed_types == TreeMixedTypes::Error {
                    return Err(DataFusionError::Plan(format!(
                        "measurement '{name}' is {first} on {first_at} but {other} on {other_at}; \
                         OPTIONS ('tree_mixed_types' 'coerce') reads it as {common}"
                    )));
                }
                common
            }
        };
        fields.push(
            measurement_field(name, ty, unit)
                .map_err(|e| DataFusionError::Plan(format!("measurement '{name}' of {first_at}: {e}")))?,
        );
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// What a column of a tree table holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeRole {
    /// The time column.
    Time,
    /// The device path.
    Device,
    /// Path level `i`.
    Level(usize),
    /// A measurement, by name.
    Measurement(String),
}

/// The role of every column of a tree table's schema.
pub fn tree_roles(schema: &Schema) -> Vec<TreeRole> {
    schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let tag = f.metadata().get(CATEGORY_KEY).map(String::as_str) == Some("TAG");
            match f.name().as_str() {
                _ if i == 0 => TreeRole::Time,
                DEVICE_COLUMN if tag => TreeRole::Device,
                n if tag => match n.strip_prefix("level").and_then(|l| l.parse().ok()) {
                    Some(l) => TreeRole::Level(l),
                    None => TreeRole::Measurement(n.to_string()),
                },
                n => TreeRole::Measurement(n.to_string()),
            }
        })
        .collect()
}

/// Statistics of the time column over `[lo, hi]`.
pub fn time_stat(range: Option<(i64, i64)>, ty: &DataType) -> ColumnStat {
    match range {
        Some((lo, hi)) => ColumnStat { min: time_scalar(lo, ty), max: time_scalar(hi, ty), nulls: Some(0) },
        None => ColumnStat { min: None, max: None, nulls: Some(0) },
    }
}

/// Statistics of one container of device `d` (the device, a chunk group, a chunk or a page)
/// for every column: `rows` rows, `time` for the time column, the device's path and levels,
/// and `measurement(name, type)` for the measurements.
pub fn container(
    d: &TreeDevice,
    roles: &[TreeRole],
    schema: &Schema,
    rows: u64,
    time: &ColumnStat,
    measurement: impl Fn(&str, &DataType) -> ColumnStat,
) -> Vec<ColumnStat> {
    roles
        .iter()
        .zip(schema.fields())
        .map(|(role, f)| match role {
            TreeRole::Time => time.clone(),
            TreeRole::Device => tag_column_stat(Some(&d.path), rows),
            TreeRole::Level(i) => tag_column_stat(d.levels.get(*i).map(String::as_str), rows),
            TreeRole::Measurement(name) => measurement(name, f.data_type()),
        })
        .collect()
}

/// Statistics of a whole device: `(rows, per column)`. Rows is [`TreeDevice::rows_bound`];
/// a measurement the device lacks is all null; a present one has its series' min/max, and a
/// null count only where it is known (aligned devices, single-series devices).
pub fn device_container(d: &TreeDevice, roles: &[TreeRole], schema: &Schema) -> (u64, Vec<ColumnStat>) {
    let rows = d.rows_bound();
    let time = time_stat(d.time_range(), schema.field(0).data_type());
    let exact = d.rows_exact();
    let stats = container(d, roles, schema, rows, &time, |name, ty| match d.series(name) {
        None => ColumnStat { min: None, max: None, nulls: Some(rows) },
        Some(s) => value_facts(&without_lossy_values(&s.statistics, true), exact, ty).0,
    });
    (rows, stats)
}

/// Table-level statistics of one file's devices of a tree key, for `schema` (the merged
/// schema): exact time and path bounds; measurement bounds exact where the statistics give
/// the exact answer, inexact where they only bound the values (floats, see
/// [`value_facts`]); the row count is exact only when every device's is. Measurements
/// `wanted` rejects get no statistics (the query does not use them).
pub fn tree_file_statistics(meta: &TreeView, schema: &Schema, wanted: &dyn Fn(&str) -> bool) -> Statistics {
    let roles = tree_roles(schema);
    let devices: Vec<&TreeDevice> = meta.devices.iter().filter(|d| d.rows_bound() > 0).collect();
    let exact: Option<u64> = devices.iter().try_fold(0u64, |a, d| d.rows_exact().map(|r| a.saturating_add(r)));
    let bound = devices.iter().fold(0u64, |a, d| a.saturating_add(d.rows_bound()));
    let to_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let num_rows = match exact {
        Some(n) => Precision::Exact(to_usize(n)),
        None => Precision::Inexact(to_usize(bound)),
    };
    let column_statistics = roles
        .iter()
        .zip(schema.fields())
        .map(|(role, field)| {
            let ty = field.data_type();
            if matches!(role, TreeRole::Measurement(name) if !wanted(name)) {
                return ColumnStatistics::new_unknown();
            }
            // Per device: (min, max) of the column's values and whether each is the exact
            // answer (float statistics give bounds that may not be attained), None = unknown.
            let exact_pair = |lo: ScalarValue, hi: ScalarValue| Some((lo, hi, true, true));
            let per_device: Vec<Option<(ScalarValue, ScalarValue, bool, bool)>> = devices
                .iter()
                .filter_map(|d| match role {
                    TreeRole::Time => {
                        Some(d.time_range().and_then(|(lo, hi)| exact_pair(time_scalar(lo, ty)?, time_scalar(hi, ty)?)))
                    }
                    TreeRole::Device => {
                        Some(exact_pair(ScalarValue::Utf8(Some(d.path.clone())), ScalarValue::Utf8(Some(d.path.clone()))))
                    }
                    TreeRole::Level(i) => d
                        .levels
                        .get(*i)
                        .map(|l| exact_pair(ScalarValue::Utf8(Some(l.clone())), ScalarValue::Utf8(Some(l.clone())))),
                    TreeRole::Measurement(name) => d.series(name).filter(|s| s.statistics.count > 0).map(|s| {
                        let st = without_lossy_values(&s.statistics, true);
                        let (ColumnStat { min: lo, max: hi, .. }, (exact_lo, exact_hi)) = value_facts(&st, d.rows_exact(), ty);
                        // `ScalarValue` equality compares floats by bits (-0.0 is not +0.0).
                        let (lo_exact, hi_exact) = (exact_lo == lo, exact_hi == hi);
                        lo.zip(hi).map(|(lo, hi)| (lo, hi, lo_exact, hi_exact))
                    }),
                })
                .collect();
            // Merged bounds (None when a device's are unknown); attained when a device with
            // the merged bound attains it (see `merge_bound`).
            let mut bounds: Option<(Option<ScalarValue>, Option<ScalarValue>, bool, bool)> = Some((None, None, true, true));
            for b in per_device {
                let (Some((lo, hi, lo_exact, hi_exact)), Some((a, z, a_exact, z_exact))) = (b, bounds.as_mut()) else {
                    bounds = None;
                    break;
                };
                if !merge_bound(a, a_exact, lo, lo_exact, std::cmp::Ordering::Less)
                    || !merge_bound(z, z_exact, hi, hi_exact, std::cmp::Ordering::Greater)
                {
                    bounds = None;
                    break;
                }
            }
            // Exact only when it is the exact answer: DataFusion answers `min(x)`/`max(x)` from
            // exact statistics; a bound that may not be attained is inexact.
            let precision_of = |v: ScalarValue, exact: bool| match v.cast_to(ty) {
                Ok(s) if exact => Precision::Exact(s),
                Ok(s) => Precision::Inexact(s),
                Err(_) => Precision::Absent,
            };
            let (min_value, max_value) = match bounds {
                Some((Some(lo), Some(hi), lo_exact, hi_exact)) => (precision_of(lo, lo_exact), precision_of(hi, hi_exact)),
                _ => (Precision::Absent, Precision::Absent),
            };
            let null_count = match role {
                TreeRole::Time | TreeRole::Device => Precision::Exact(0),
                _ => Precision::Absent,
            };
            ColumnStatistics {
                null_count,
                max_value,
                min_value,
                sum_value: Precision::Absent,
                distinct_count: Precision::Absent,
                byte_size: Precision::Absent,
            }
        })
        .collect();
    Statistics { num_rows, total_byte_size: Precision::Absent, column_statistics }
}

/// The field a measurement column of `schema` takes when it is read from a series of type
/// `series_type`: `None` when no conversion is needed, else the source field (the array
/// is then cast to the column's type).
pub fn source_field(target: &Field, series_type: TsDataType, unit: crate::arrow::schema::TimeUnit) -> Result<Option<Field>> {
    let source = measurement_field(target.name(), series_type, unit)?;
    Ok(if source.data_type() == target.data_type() { None } else { Some(source) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tm(devs: &[(&str, &[(&str, TsDataType)])]) -> TreeView {
        let mut measurements: BTreeMap<String, Vec<(TsDataType, String)>> = BTreeMap::new();
        for (path, ms) in devs {
            for (m, t) in *ms {
                let v = measurements.entry(m.to_string()).or_default();
                if !v.iter().any(|(x, _)| x == t) {
                    v.push((*t, path.to_string()));
                }
            }
        }
        TreeView { key: "root.sg".into(), devices: Vec::new(), measurements, depth: 4 }
    }

    #[test]
    fn test_tree_schema_shape_and_levels() {
        let m = Arc::new(tm(&[
            ("root.sg.d1", &[("s2", TsDataType::Int32), ("s1", TsDataType::Text)]),
            ("root.sg.d2", &[("s1", TsDataType::String)]),
        ]));
        let s = tree_schema(&[(m.clone(), "a".into())], &TsFileReadOptions::default().with_tree_levels(true)).unwrap();
        let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, vec!["time", "device", "level0", "level1", "level2", "level3", "s1", "s2"]);
        assert_eq!(s.field(6).data_type(), &DataType::Utf8);
        let roles = tree_roles(&s);
        assert_eq!(roles[1], TreeRole::Device);
        assert_eq!(roles[3], TreeRole::Level(1));
        assert_eq!(roles[7], TreeRole::Measurement("s2".into()));
        let s = tree_schema(&[(m, "a".into())], &TsFileReadOptions::default()).unwrap();
        assert_eq!(s.fields().len(), 4);
    }

    #[test]
    fn test_tree_schema_mixed_types() {
        let a = Arc::new(tm(&[("root.sg.d1", &[("s", TsDataType::Int32), ("t", TsDataType::Boolean)])]));
        let b = Arc::new(tm(&[("root.sg.d2", &[("s", TsDataType::Float), ("t", TsDataType::Int64)])]));
        let parts = [(a, "a.tsfile".to_string()), (b, "b.tsfile".to_string())];
        let e = tree_schema(&parts, &TsFileReadOptions::default()).unwrap_err().to_string();
        assert!(e.contains("'s' is INT32 on device root.sg.d1 in a.tsfile but FLOAT on device root.sg.d2 in b.tsfile"), "{e}");
        let s = tree_schema(&parts, &TsFileReadOptions::default().with_tree_mixed_types(TreeMixedTypes::Coerce)).unwrap();
        assert_eq!(s.field_with_name("s").unwrap().data_type(), &DataType::Float64);
        assert_eq!(s.field_with_name("t").unwrap().data_type(), &DataType::Utf8);
    }

    #[test]
    fn test_tree_schema_reserved_name() {
        let m = Arc::new(tm(&[("root.sg.d1", &[("device", TsDataType::Int32)])]));
        let e = tree_schema(&[(m, "a".into())], &TsFileReadOptions::default()).unwrap_err().to_string();
        assert!(e.contains("'device'") && e.contains("root.sg.d1"), "{e}");
    }
}
