//! One device's rows written more than once, resolved as IoTDB resolves them, and the
//! deletions of one file applied to its rows.
//!
//! [`merge_rows`] takes a device's rows from several inputs in ascending priority (the
//! files of a time partition, lowest first; within one input a later row is a later chunk
//! and wins over an earlier one at the same time) and returns one row per time, in time
//! order. Rows merge **per column**, as IoTDB merges aligned series: each column takes the
//! value of the highest-priority row at that time whose value is not null, so a null of the
//! winning row is filled from a row below it.
//!
//! [`apply_deletions`] removes the points a file's deletions name from that file's rows of one
//! device before they are merged: whole rows for a table deletion without measurements,
//! single columns (set to null) otherwise. Each file's deletions apply to its own rows only,
//! as IoTDB attaches a modification file to one data file.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType};
use arrow_array::{Array, BooleanArray, RecordBatch};
use arrow_buffer::BooleanBufferBuilder;
use arrow_schema::{DataType, TimeUnit as ArrowUnit};

use crate::error::{Result, TsFileError};
use crate::format::DeviceId;
use crate::iotdb::Deletion;

/// The time values of a time column (`Int64` or a timestamp), without copying.
pub fn time_values(column: &dyn Array) -> Result<&[i64]> {
    Ok(match column.data_type() {
        DataType::Int64 => column.as_primitive::<Int64Type>().values(),
        DataType::Timestamp(ArrowUnit::Millisecond, _) => column.as_primitive::<TimestampMillisecondType>().values(),
        DataType::Timestamp(ArrowUnit::Microsecond, _) => column.as_primitive::<TimestampMicrosecondType>().values(),
        DataType::Timestamp(ArrowUnit::Nanosecond, _) => column.as_primitive::<TimestampNanosecondType>().values(),
        other => return Err(TsFileError::unsupported(format!("time column of type {other}"))),
    })
}

/// Whether `times` strictly increase (no time repeats, nothing to merge).
pub fn strictly_increasing(times: &[i64]) -> bool {
    times.windows(2).all(|w| matches!(w, [a, b] if a < b))
}

/// One row per time from `inputs` (same schema, ascending priority; rows of one device),
/// per column the value of the highest-priority row whose value is not null; `time` is the
/// time column's index. Columns in `constant` (TAG columns: one value on every row of a
/// device) repeat their first row's value.
pub fn merge_rows(inputs: &[RecordBatch], time: usize, constant: &[usize]) -> Result<Option<RecordBatch>> {
    let Some(first) = inputs.first() else { return Ok(None) };
    let schema = first.schema();
    if inputs.iter().any(|b| b.schema().fields() != schema.fields()) {
        return Err(TsFileError::unsupported("merging rows of different schemas"));
    }
    let mut times: Vec<&[i64]> = Vec::with_capacity(inputs.len());
    for batch in inputs {
        let column = batch.columns().get(time).ok_or_else(|| TsFileError::unsupported("merge without a time column"))?;
        times.push(time_values(column.as_ref())?);
    }
    if inputs.len() > u32::MAX as usize || times.iter().any(|t| t.len() > u32::MAX as usize) {
        return Err(TsFileError::unsupported("more than 2^32 inputs or rows to merge"));
    }
    // (time, input, row): time ascending, then priority descending, so the first row of a
    // time is its winner.
    let order = if times.iter().all(|t| strictly_increasing(t)) { merge_sorted(&times) } else { sort_all(&times) };
    let mut starts: Vec<usize> = Vec::with_capacity(order.len());
    for (k, w) in order.iter().enumerate() {
        if k == 0 || order.get(k - 1).is_some_and(|p| p.0 != w.0) {
            starts.push(k);
        }
    }
    // The winning row of every time: all a column takes when no time repeats, and what the
    // time and TAG columns take always.
    let first: Vec<(usize, usize)> =
        starts.iter().filter_map(|&k| order.get(k)).map(|&(_, i, r)| (i as usize, r as usize)).collect();
    let repeats = starts.len() < order.len();
    let mut columns = Vec::with_capacity(schema.fields().len());
    let mut picks: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
    for c in 0..schema.fields().len() {
        let arrays: Vec<&dyn Array> = inputs.iter().filter_map(|b| b.columns().get(c)).map(|a| a.as_ref()).collect();
        if constant.contains(&c) {
            if let Some(a) = arrays.iter().find(|a| !a.is_empty()) {
                let zeros = arrow_array::UInt32Array::from(vec![0u32; first.len()]);
                columns.push(arrow_select::take::take(*a, &zeros, None)?);
                continue;
            }
        }
        if !repeats || c == time || arrays.iter().all(|a| a.null_count() == 0) {
            columns.push(arrow_select::interleave::interleave(&arrays, &first)?);
            continue;
        }
        picks.clear();
        for (g, &start) in starts.iter().enumerate() {
            let end = starts.get(g + 1).copied().unwrap_or(order.len());
            let group = order.get(start..end).unwrap_or_default();
            let winner = match group {
                [one] => Some(one),
                _ => group
                    .iter()
                    .find(|(_, i, r)| arrays.get(*i as usize).is_some_and(|a| a.is_valid(*r as usize)))
                    .or(group.first()),
            };
            if let Some(&(_, i, r)) = winner {
                picks.push((i as usize, r as usize));
            }
        }
        columns.push(arrow_select::interleave::interleave(&arrays, &picks)?);
    }
    Ok(Some(RecordBatch::try_new(schema, columns)?))
}

/// (time, input, row) of inputs whose times strictly increase, merged: time ascending, a
/// higher input first at equal times (O(rows × inputs), inputs being few).
fn merge_sorted(times: &[&[i64]]) -> Vec<(i64, u32, u32)> {
    let mut out = Vec::with_capacity(times.iter().map(|t| t.len()).sum());
    let mut at = vec![0usize; times.len()];
    loop {
        let mut best: Option<(i64, usize)> = None;
        for (i, t) in times.iter().enumerate().rev() {
            if let Some(&v) = at.get(i).and_then(|&k| t.get(k)) {
                if best.is_none_or(|(b, _)| v < b) {
                    best = Some((v, i));
                }
            }
        }
        let Some((v, i)) = best else { return out };
        let Some(k) = at.get_mut(i) else { return out };
        out.push((v, i as u32, *k as u32));
        *k += 1;
    }
}

/// (time, input, row) of any inputs, sorted: time ascending, then input and row descending.
fn sort_all(times: &[&[i64]]) -> Vec<(i64, u32, u32)> {
    let mut out: Vec<(i64, u32, u32)> = Vec::with_capacity(times.iter().map(|t| t.len()).sum());
    for (i, t) in times.iter().enumerate() {
        out.extend(t.iter().enumerate().map(|(r, &v)| (v, i as u32, r as u32)));
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
    out
}

/// `batch` (rows of `device`, times in column `time`) without what `deletions` delete: rows
/// deleted whole are removed, deleted columns set to null. `columns` names each column's
/// measurement (`None` for the time and TAG columns, which only whole-row deletions touch).
pub fn apply_deletions(
    batch: RecordBatch,
    time: usize,
    device: &DeviceId,
    deletions: &[&Deletion],
    columns: &[Option<&str>],
) -> Result<RecordBatch> {
    if deletions.is_empty() || batch.num_rows() == 0 {
        return Ok(batch);
    }
    let times =
        batch.columns().get(time).cloned().ok_or_else(|| TsFileError::unsupported("deletions on rows without a time column"))?;
    let times = time_values(times.as_ref())?.to_vec();
    let mut out = batch.columns().to_vec();
    for (c, name) in columns.iter().enumerate() {
        let Some(name) = name else { continue };
        let hit: Vec<&&Deletion> = deletions.iter().filter(|d| is_column_deletion(d) && d.matches(device, name)).collect();
        if hit.is_empty() {
            continue;
        }
        let mask = mask_of(&times, &hit, true);
        if let Some(slot) = out.get_mut(c) {
            *slot = arrow_select::nullif::nullif(slot.as_ref(), &mask)?;
        }
    }
    let rows: Vec<&&Deletion> = deletions.iter().filter(|d| !is_column_deletion(d) && d.matches(device, "")).collect();
    let batch = RecordBatch::try_new(batch.schema(), out)?;
    if rows.is_empty() {
        return Ok(batch);
    }
    let keep = mask_of(&times, &rows, false);
    Ok(arrow_select::filter::filter_record_batch(&batch, &keep)?)
}

/// Whether a deletion removes single columns (a tree pattern or a table deletion naming
/// measurements) rather than whole rows.
fn is_column_deletion(d: &Deletion) -> bool {
    match &d.target {
        crate::iotdb::DeletionTarget::Tree(_) => true,
        crate::iotdb::DeletionTarget::Table { measurements, .. } => !measurements.is_empty(),
    }
}

/// Per time, whether it lies in one of the deletions' ranges (`deleted = true`) or in none
/// of them (`deleted = false`).
fn mask_of(times: &[i64], deletions: &[&&Deletion], deleted: bool) -> BooleanArray {
    let mut bits = BooleanBufferBuilder::new(times.len());
    for &t in times {
        bits.append(deletions.iter().any(|d| d.start <= t && t <= d.end) == deleted);
    }
    BooleanArray::new(bits.finish(), None)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;
    use crate::iotdb::{DeletionTarget, TagPredicate};

    fn batch(rows: &[(i64, Option<i64>, Option<&str>)]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("time", DataType::Int64, false),
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let t = Int64Array::from(rows.iter().map(|r| r.0).collect::<Vec<_>>());
        let a = Int64Array::from(rows.iter().map(|r| r.1).collect::<Vec<_>>());
        let s = StringArray::from(rows.iter().map(|r| r.2).collect::<Vec<_>>());
        RecordBatch::try_new(schema, vec![Arc::new(t), Arc::new(a), Arc::new(s)]).unwrap()
    }

    fn rows(b: &RecordBatch) -> Vec<(i64, Option<i64>, Option<String>)> {
        let t = b.column(0).as_primitive::<Int64Type>();
        let a = b.column(1).as_primitive::<Int64Type>();
        let s = b.column(2).as_string::<i32>();
        (0..b.num_rows())
            .map(|i| (t.value(i), a.is_valid(i).then(|| a.value(i)), s.is_valid(i).then(|| s.value(i).to_string())))
            .collect()
    }

    #[test]
    fn higher_priority_wins_per_column_and_later_rows_win_within_an_input() {
        let low = batch(&[(1, Some(10), Some("low")), (2, Some(20), None), (4, Some(40), Some("x"))]);
        // Time 2 twice in one input (two chunks): the later row wins, its null is filled below.
        let high = batch(&[(2, Some(21), None), (3, None, Some("h3")), (2, None, Some("later")), (4, None, None)]);
        let m = merge_rows(&[low, high], 0, &[]).unwrap().unwrap();
        assert_eq!(
            rows(&m),
            vec![
                (1, Some(10), Some("low".into())),
                (2, Some(21), Some("later".into())),
                (3, None, Some("h3".into())),
                (4, Some(40), Some("x".into())),
            ]
        );
        assert!(merge_rows(&[], 0, &[]).unwrap().is_none());
        let one = batch(&[(5, Some(1), None)]);
        assert_eq!(rows(&merge_rows(&[one], 0, &[]).unwrap().unwrap()), vec![(5, Some(1), None)]);
    }

    #[test]
    fn deletions_remove_rows_or_null_columns_inside_their_bounds_only() {
        let d = DeviceId::from_strs(&["t", "d1"]);
        let other = DeviceId::from_strs(&["t", "d2"]);
        let del = |tags, measurements: &[&str], start, end| Deletion {
            target: DeletionTarget::Table {
                table: "t".into(),
                tags,
                measurements: measurements.iter().map(|m| m.to_string()).collect(),
            },
            start,
            end,
            file_offset: None,
        };
        let b = batch(&[(1, Some(1), Some("a")), (2, Some(2), Some("b")), (3, Some(3), Some("c")), (4, Some(4), Some("d"))]);
        let rows_gone = del(TagPredicate::Device(d.clone()), &[], 2, 3);
        let a_gone = del(TagPredicate::All, &["a"], 4, 4);
        let elsewhere = del(TagPredicate::Device(other), &[], 1, 4);
        let names = [None, Some("a"), Some("s")];
        // `elsewhere` names another device and deletes nothing here.
        let out = apply_deletions(b.clone(), 0, &d, &[&rows_gone, &a_gone, &elsewhere], &names).unwrap();
        assert_eq!(rows(&out), vec![(1, Some(1), Some("a".into())), (4, None, Some("d".into()))]);
        assert_eq!(apply_deletions(b.clone(), 0, &d, &[], &names).unwrap().num_rows(), 4);
        let bounds = del(TagPredicate::All, &[], i64::MIN, 1);
        assert_eq!(rows(&apply_deletions(b, 0, &d, &[&bounds], &names).unwrap()).first().map(|r| r.0), Some(2));
    }

    #[test]
    fn merging_sorted_inputs_equals_sorting_them() {
        let a: &[i64] = &[1, 3, 5, 9];
        let b: &[i64] = &[2, 3, 9, 10];
        let c: &[i64] = &[];
        let d: &[i64] = &[i64::MIN, 3, i64::MAX];
        for inputs in [vec![a, b], vec![b, a], vec![a, c, b, d], vec![c], vec![d, d]] {
            assert_eq!(merge_sorted(&inputs), sort_all(&inputs), "{inputs:?}");
        }
    }

    #[test]
    fn strictly_increasing_times() {
        assert!(strictly_increasing(&[]));
        assert!(strictly_increasing(&[i64::MIN, 0, i64::MAX]));
        assert!(!strictly_increasing(&[1, 1]));
        assert!(!strictly_increasing(&[2, 1]));
    }
}
