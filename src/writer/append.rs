//! Arrow arrays → `ColumnBuffer`s: one match on the array type per run of rows, then a
//! monomorphic loop (no per-value dispatch or allocation).

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray};
use arrow_schema::DataType;

use crate::error::{Result, TsFileError};
use crate::write::{ColumnBuffer, ValueBuffer};

/// A column of one batch, with dictionaries resolved once per batch.
pub enum BatchColumn<'a> {
    /// A plain array.
    Plain(&'a dyn Array),
    /// A dictionary: per row the value index (`None` = null) into `values`.
    Dict {
        /// Value index per row.
        keys: Vec<Option<usize>>,
        /// The dictionary values.
        values: ArrayRef,
    },
}

impl<'a> BatchColumn<'a> {
    /// Resolve `array` (a dictionary's keys are normalized once).
    pub fn new(array: &'a dyn Array) -> Self {
        match array.as_any_dictionary_opt() {
            Some(d) => BatchColumn::Dict { keys: dictionary_keys(array), values: d.values().clone() },
            None => BatchColumn::Plain(array),
        }
    }
}

/// The value index of each row of a dictionary array (`None` for a null row, a key outside
/// the values, or any row of a dictionary without values); empty for other arrays.
pub fn dictionary_keys(array: &dyn Array) -> Vec<Option<usize>> {
    let Some(d) = array.as_any_dictionary_opt() else { return Vec::new() };
    let n_values = d.values().len();
    if n_values == 0 {
        // Arrow's `normalized_keys` requires values; every row is then null.
        return vec![None; array.len()];
    }
    let nulls = array.logical_nulls();
    d.normalized_keys()
        .into_iter()
        .enumerate()
        .map(|(i, k)| (nulls.as_ref().is_none_or(|n| n.is_valid(i)) && k < n_values).then_some(k))
        .collect()
}

/// Days since 1970-01-01 → `YYYYMMDD` (proleptic Gregorian), for years 0 to 9999.
pub fn days_to_yyyymmdd(days: i64) -> Option<i32> {
    let z = days.checked_add(719_468)?;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    if !(0..=9999).contains(&y) {
        return None;
    }
    i32::try_from(y * 10_000 + m * 100 + d).ok()
}

fn nulls_in(array: &dyn Array, rows: &Range<usize>) -> bool {
    array.nulls().is_some_and(|n| n.slice(rows.start, rows.len()).null_count() > 0)
}

/// Append rows `rows` of a primitive array, converting each value with `f` (an error names
/// the bad value).
fn primitive<T: ArrowPrimitiveType, U>(
    array: &dyn Array,
    rows: &Range<usize>,
    present: &mut Vec<bool>,
    out: &mut Vec<U>,
    f: impl Fn(T::Native) -> Option<U>,
    what: &str,
) -> Result<()> {
    let a: &PrimitiveArray<T> =
        array.as_primitive_opt::<T>().ok_or_else(|| TsFileError::InvalidArgument(format!("expected {what}")))?;
    let values = a.values().get(rows.clone()).unwrap_or_default();
    let bad = |v: T::Native| TsFileError::InvalidArgument(format!("{what} value {v:?} cannot be stored"));
    if nulls_in(array, rows) {
        for (i, &v) in rows.clone().zip(values) {
            let ok = a.is_valid(i);
            present.push(ok);
            if ok {
                out.push(f(v).ok_or_else(|| bad(v))?);
            }
        }
    } else {
        present.extend(std::iter::repeat_n(true, values.len()));
        out.reserve(values.len());
        for &v in values {
            out.push(f(v).ok_or_else(|| bad(v))?);
        }
    }
    Ok(())
}

/// Append binary values: for each entry of `rows`, `None` (a null) or the index of a value
/// `get(i)`.
fn binary<'b>(
    rows: impl Iterator<Item = Option<usize>>,
    get: impl Fn(usize) -> &'b [u8],
    present: &mut Vec<bool>,
    offsets: &mut Vec<usize>,
    data: &mut Vec<u8>,
) -> Result<()> {
    for i in rows {
        present.push(i.is_some());
        if let Some(i) = i {
            let v = get(i);
            if i32::try_from(v.len()).is_err() {
                return Err(TsFileError::InvalidArgument(format!("a value of {} bytes is too long to store", v.len())));
            }
            data.extend_from_slice(v);
            offsets.push(data.len());
        }
    }
    Ok(())
}

/// Append the binary (string or bytes) values of `array` at `rows` (indices into `array`,
/// `None` for a null); one match on the type, then a typed loop.
fn binary_array(
    array: &dyn Array,
    rows: impl Iterator<Item = Option<usize>>,
    present: &mut Vec<bool>,
    offsets: &mut Vec<usize>,
    data: &mut Vec<u8>,
) -> Result<()> {
    let len = array.len();
    // Indices come from Arrow (row numbers or normalized dictionary keys), so they are in
    // bounds; a value past the end is treated as a null rather than risking a panic.
    let rows = rows.map(|i| i.filter(|&i| i < len));
    match array.data_type() {
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            binary(rows, |i| a.value(i).as_bytes(), present, offsets, data)
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            binary(rows, |i| a.value(i).as_bytes(), present, offsets, data)
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            binary(rows, |i| a.value(i).as_bytes(), present, offsets, data)
        }
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            binary(rows, |i| a.value(i), present, offsets, data)
        }
        DataType::LargeBinary => {
            let a = array.as_binary::<i64>();
            binary(rows, |i| a.value(i), present, offsets, data)
        }
        DataType::BinaryView => {
            let a = array.as_binary_view();
            binary(rows, |i| a.value(i), present, offsets, data)
        }
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            binary(rows, |i| a.value(i), present, offsets, data)
        }
        other => Err(TsFileError::unsupported(format!("binary values of Arrow type {other}"))),
    }
}

/// Append rows `rows` of `column` to `out` (whose value type was planned from the same Arrow
/// type).
pub fn append_column(column: &BatchColumn<'_>, rows: Range<usize>, out: &mut ColumnBuffer) -> Result<()> {
    let present = &mut out.present;
    match (column, &mut out.values) {
        (BatchColumn::Dict { keys, values }, ValueBuffer::Binary { offsets, data }) => {
            let keys = keys.get(rows).unwrap_or_default();
            binary_array(values.as_ref(), keys.iter().copied(), present, offsets, data)
        }
        (BatchColumn::Dict { .. }, _) => Err(TsFileError::unsupported("dictionaries of non-binary values")),
        (BatchColumn::Plain(a), ValueBuffer::Binary { offsets, data }) => {
            let nulls = a.nulls();
            binary_array(*a, rows.map(|i| nulls.is_none_or(|n| n.is_valid(i)).then_some(i)), present, offsets, data)
        }
        (BatchColumn::Plain(a), ValueBuffer::Boolean(out)) => {
            let b = a.as_boolean_opt().ok_or_else(|| TsFileError::InvalidArgument("expected booleans".into()))?;
            for i in rows {
                let ok = b.is_valid(i);
                present.push(ok);
                if ok {
                    out.push(b.value(i));
                }
            }
            Ok(())
        }
        (BatchColumn::Plain(a), ValueBuffer::Int32(out)) => match a.data_type() {
            DataType::Int32 => primitive::<Int32Type, _>(*a, &rows, present, out, Some, "Int32"),
            DataType::Int16 => primitive::<Int16Type, _>(*a, &rows, present, out, |v| Some(i32::from(v)), "Int16"),
            DataType::Int8 => primitive::<Int8Type, _>(*a, &rows, present, out, |v| Some(i32::from(v)), "Int8"),
            DataType::UInt16 => primitive::<UInt16Type, _>(*a, &rows, present, out, |v| Some(i32::from(v)), "UInt16"),
            DataType::UInt8 => primitive::<UInt8Type, _>(*a, &rows, present, out, |v| Some(i32::from(v)), "UInt8"),
            DataType::Date32 => primitive::<Date32Type, _>(*a, &rows, present, out, |d| days_to_yyyymmdd(i64::from(d)), "Date32"),
            DataType::Date64 => {
                primitive::<Date64Type, _>(*a, &rows, present, out, |ms| days_to_yyyymmdd(ms.div_euclid(86_400_000)), "Date64")
            }
            other => Err(TsFileError::unsupported(format!("INT32 values from Arrow type {other}"))),
        },
        (BatchColumn::Plain(a), ValueBuffer::Int64(out)) => match a.data_type() {
            DataType::Int64 => primitive::<Int64Type, _>(*a, &rows, present, out, Some, "Int64"),
            DataType::UInt32 => primitive::<UInt32Type, _>(*a, &rows, present, out, |v| Some(i64::from(v)), "UInt32"),
            DataType::UInt64 => primitive::<UInt64Type, _>(*a, &rows, present, out, |v| i64::try_from(v).ok(), "UInt64"),
            DataType::Timestamp(..) => {
                let a = timestamps(*a)?;
                primitive::<Int64Type, _>(&a, &rows, present, out, Some, "Timestamp")
            }
            other => Err(TsFileError::unsupported(format!("INT64 values from Arrow type {other}"))),
        },
        (BatchColumn::Plain(a), ValueBuffer::Float(out)) => match a.data_type() {
            DataType::Float32 => primitive::<Float32Type, _>(*a, &rows, present, out, Some, "Float32"),
            DataType::Float16 => primitive::<Float16Type, _>(*a, &rows, present, out, |v| Some(v.to_f32()), "Float16"),
            other => Err(TsFileError::unsupported(format!("FLOAT values from Arrow type {other}"))),
        },
        (BatchColumn::Plain(a), ValueBuffer::Double(out)) => {
            primitive::<Float64Type, _>(*a, &rows, present, out, Some, "Float64")
        }
    }
}

/// A timestamp array of any unit as `Int64` values (the same buffer, no copy).
pub fn timestamps(array: &dyn Array) -> Result<PrimitiveArray<Int64Type>> {
    use arrow_array::types::{TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType};
    use arrow_schema::TimeUnit;
    let (values, nulls) = match array.data_type() {
        DataType::Int64 => {
            let a = array.as_primitive::<Int64Type>();
            (a.values().clone(), a.nulls().cloned())
        }
        DataType::Timestamp(TimeUnit::Second, _) => {
            let a = array.as_primitive::<TimestampSecondType>();
            (a.values().clone(), a.nulls().cloned())
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            let a = array.as_primitive::<TimestampMillisecondType>();
            (a.values().clone(), a.nulls().cloned())
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            let a = array.as_primitive::<TimestampMicrosecondType>();
            (a.values().clone(), a.nulls().cloned())
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            let a = array.as_primitive::<TimestampNanosecondType>();
            (a.values().clone(), a.nulls().cloned())
        }
        other => return Err(TsFileError::unsupported(format!("time values of Arrow type {other}"))),
    };
    Ok(PrimitiveArray::<Int64Type>::new(values, nulls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::array::date_to_days;

    #[test]
    fn test_days_to_yyyymmdd_inverts_the_reader() {
        for days in [-719_528i64, -1, 0, 1, 59, 60, 365, 11_016, 2_932_896] {
            let v = days_to_yyyymmdd(days).unwrap();
            assert_eq!(date_to_days(v).map(i64::from), Some(days), "{days} -> {v}");
        }
        assert_eq!(days_to_yyyymmdd(0), Some(19_700_101));
        assert_eq!(days_to_yyyymmdd(-719_529), None, "year -1");
        assert_eq!(days_to_yyyymmdd(2_932_897), None, "year 10000");
    }
}
