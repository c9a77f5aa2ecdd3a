//! Decoded column buffers → Arrow arrays, without copying primitive values.

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, DictionaryArray, Float32Array, Float64Array, Int32Array, Int64Array,
    StringArray, TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};

use crate::arrow::schema::TimeUnit;
use crate::error::{Result, TsFileError};
use crate::format::TsDataType;
use crate::read::column::ColumnValues;

/// An array of timestamps in `unit`.
pub fn time_array(times: Vec<i64>, unit: TimeUnit) -> ArrayRef {
    int64_as(times.into(), None, unit)
}

fn int64_as(values: ScalarBuffer<i64>, nulls: Option<NullBuffer>, unit: TimeUnit) -> ArrayRef {
    match unit {
        TimeUnit::Millisecond => Arc::new(TimestampMillisecondArray::new(values, nulls)),
        TimeUnit::Microsecond => Arc::new(TimestampMicrosecondArray::new(values, nulls)),
        TimeUnit::Nanosecond => Arc::new(TimestampNanosecondArray::new(values, nulls)),
        TimeUnit::Raw => Arc::new(Int64Array::new(values, nulls)),
    }
}

/// A TAG column of `rows` rows all holding `value` (null when `None`), as a dictionary.
pub fn tag_array(value: Option<&str>, rows: usize) -> ArrayRef {
    let Some(value) = value else {
        let keys = arrow_array::PrimitiveArray::<Int32Type>::new_null(rows);
        let values: ArrayRef = Arc::new(StringArray::from_iter_values(None::<&str>));
        return match DictionaryArray::<Int32Type>::try_new(keys, values) {
            Ok(d) => Arc::new(d),
            Err(_) => Arc::new(DictionaryArray::<Int32Type>::from_iter(std::iter::repeat_n(None::<&str>, rows))),
        };
    };
    let values: ArrayRef = Arc::new(StringArray::from_iter_values([value]));
    // All keys are 0: a slice of the thread's validated all-zero keys takes the one value
    // without checking every key again (a scan builds such a column per device and tag).
    match zero_keys(rows) {
        Some(zeros) => Arc::new(zeros.slice(0, rows).with_values(values)),
        None => Arc::new(DictionaryArray::<Int32Type>::from_iter(std::iter::repeat_n(Some(value), rows))),
    }
}

/// Longest all-zero key array kept per thread for [`tag_array`] (4 bytes a row).
const MAX_CACHED_KEYS: usize = 1 << 20;

thread_local! {
    /// A dictionary of one empty string with all-zero keys: the longest built so far.
    static ZERO_KEYS: std::cell::RefCell<Option<DictionaryArray<Int32Type>>> = const { std::cell::RefCell::new(None) };
}

/// A dictionary of at least `rows` all-zero keys over one value, validated when built. The
/// thread's is reused when at most twice as long (a slice holds the whole buffer, and memory
/// accounting counts it), a longer one replaces it.
fn zero_keys(rows: usize) -> Option<DictionaryArray<Int32Type>> {
    let cached = ZERO_KEYS.with(|c| c.borrow().as_ref().filter(|d| d.len() >= rows && d.len() / 2 <= rows).cloned());
    if cached.is_some() {
        return cached;
    }
    let keys = arrow_array::PrimitiveArray::<Int32Type>::new(vec![0i32; rows].into(), None);
    let values: ArrayRef = Arc::new(StringArray::from_iter_values([""]));
    let d = DictionaryArray::<Int32Type>::try_new(keys, values).ok()?;
    if rows <= MAX_CACHED_KEYS {
        ZERO_KEYS.with(|c| {
            let mut c = c.borrow_mut();
            if c.as_ref().is_none_or(|k| k.len() < rows) {
                *c = Some(d.clone());
            }
        });
    }
    Some(d)
}

/// A column of `rows` nulls of type Utf8 (ATTRIBUTE columns).
pub fn null_utf8_array(rows: usize) -> ArrayRef {
    Arc::new(StringArray::new_null(rows))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Convert a `YYYYMMDD` integer to days since the epoch; `None` for an impossible date.
pub fn date_to_days(v: i32) -> Option<i32> {
    let v = i64::from(v);
    let (y, m, d) = (v / 10_000, (v / 100) % 100, v % 100);
    if v < 0 || !(1..=12).contains(&m) || d < 1 {
        return None;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let dim = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if d > dim {
        return None;
    }
    i32::try_from(days_from_civil(y, m, d)).ok()
}

fn binary_parts(v: crate::encoding::BinaryValues) -> (OffsetBuffer<i32>, Buffer) {
    let offsets = OffsetBuffer::new(ScalarBuffer::from(v.offsets));
    (offsets, Buffer::from_vec(v.data))
}

/// Build the Arrow array of a column of TsFile type `data_type`; `column` names it in errors.
pub fn build_array(
    values: ColumnValues,
    nulls: Option<NullBuffer>,
    data_type: TsDataType,
    unit: TimeUnit,
    column: &str,
) -> Result<ArrayRef> {
    let mismatch = || TsFileError::corrupt("column", None, format!("internal: buffer/type mismatch for '{column}'"));
    Ok(match (data_type, values) {
        (TsDataType::Boolean, ColumnValues::Boolean(mut b)) => Arc::new(BooleanArray::new(b.finish(), nulls)),
        (TsDataType::Int32, ColumnValues::Int32(v)) => Arc::new(Int32Array::new(v.into(), nulls)),
        (TsDataType::Date, ColumnValues::Int32(v)) => {
            let mut days = Vec::with_capacity(v.len());
            for (i, x) in v.iter().enumerate() {
                let valid = nulls.as_ref().is_none_or(|n| n.is_valid(i));
                if !valid {
                    days.push(0);
                    continue;
                }
                match date_to_days(*x) {
                    Some(d) => days.push(d),
                    None => {
                        return Err(TsFileError::corrupt(
                            "DATE value",
                            None,
                            format!("column '{column}' row {i}: {x} is not a valid YYYYMMDD date"),
                        ))
                    }
                }
            }
            Arc::new(Date32Array::new(days.into(), nulls))
        }
        (TsDataType::Int64, ColumnValues::Int64(v)) => Arc::new(Int64Array::new(v.into(), nulls)),
        (TsDataType::Timestamp, ColumnValues::Int64(v)) => int64_as(v.into(), nulls, unit),
        (TsDataType::Float, ColumnValues::Float(v)) => Arc::new(Float32Array::new(v.into(), nulls)),
        (TsDataType::Double, ColumnValues::Double(v)) => Arc::new(Float64Array::new(v.into(), nulls)),
        (TsDataType::Text | TsDataType::String, ColumnValues::Binary(v)) => {
            let (offsets, data) = binary_parts(v);
            let a = StringArray::try_new(offsets, data, nulls)
                .map_err(|e| TsFileError::corrupt("string value", None, format!("column '{column}': {e}")))?;
            Arc::new(a)
        }
        (TsDataType::Blob | TsDataType::Object, ColumnValues::Binary(v)) => {
            let (offsets, data) = binary_parts(v);
            Arc::new(BinaryArray::try_new(offsets, data, nulls)?)
        }
        _ => return Err(mismatch()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_date_to_days() {
        assert_eq!(date_to_days(19700101), Some(0));
        assert_eq!(date_to_days(20000229), Some(11016));
        assert_eq!(date_to_days(19691231), Some(-1));
        assert_eq!(date_to_days(20240102), Some(19724));
        assert_eq!(date_to_days(10101), Some(-719162)); // 0001-01-01
        assert_eq!(date_to_days(20230229), None);
        assert_eq!(date_to_days(20231301), None);
        assert_eq!(date_to_days(20230100), None);
        assert_eq!(date_to_days(0), None);
        assert_eq!(date_to_days(-20230101), None);
    }

    #[test]
    fn test_tag_array_value_and_null() {
        use arrow_array::cast::AsArray;
        use arrow_array::Array;
        // Lengths that build, reuse (at most twice as long) and replace the thread's keys.
        for (value, rows) in [("x", 3), ("yy", 8192), ("z", 10_000), ("u", 5_000), ("t", 4_999), ("w", 0), ("v", 1)] {
            let a = tag_array(Some(value), rows);
            assert_eq!((a.len(), a.null_count()), (rows, 0));
            let d = a.as_dictionary::<Int32Type>();
            assert_eq!(d.values().len(), 1);
            assert_eq!(d.values().as_string::<i32>().value(0), value);
            assert!(d.keys().values().iter().all(|k| *k == 0));
            assert_eq!(d.keys().values().len(), rows);
            d.to_data().validate_full().unwrap();
            // A short column holds no long buffer.
            let held: usize = d.keys().to_data().buffers().iter().map(|b| b.capacity()).sum();
            assert!(held <= 8 * rows.max(16), "{rows} rows hold {held} bytes of keys");
        }
        let n = tag_array(None, 2);
        assert_eq!((n.len(), n.null_count()), (2, 2));
        n.to_data().validate_full().unwrap();
    }

    #[test]
    fn test_build_string_rejects_invalid_utf8() {
        let mut v = crate::encoding::BinaryValues::new();
        v.push(&[0xff]).unwrap();
        let e = build_array(ColumnValues::Binary(v), None, TsDataType::String, TimeUnit::Millisecond, "s").unwrap_err();
        assert!(e.to_string().contains("column 's'"), "{e}");
    }
}
