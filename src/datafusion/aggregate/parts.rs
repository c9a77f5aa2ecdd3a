//! What one device's series statistics contribute to one aggregate, or `None` when they
//! cannot answer it exactly.

use arrow_schema::DataType;
use datafusion::common::ScalarValue;

use super::accumulate::{Func, Part};
use super::Arg;
use crate::datafusion::metadata::DeviceMeta;
use crate::datafusion::pruning::{time_scalar, value_min_max};
use crate::format::{Statistics, ValueStatistics};

/// Largest integer magnitude up to which every float64 sum of integers is exact.
const EXACT_F64_INTEGER: u128 = 1 << 53;

/// The part of device `d` for `func(arg)`.
pub(crate) fn device_part(func: Func, arg: &Arg, d: &DeviceMeta) -> Option<Part> {
    let rows = d.rows();
    match arg {
        Arg::Rows => Some(Part::count(rows)),
        Arg::Nothing => Some(Part::count(0)),
        Arg::Time(_, ty) => match func {
            Func::Count => Some(Part::count(rows)),
            Func::Min | Func::Max if rows == 0 => Some(Part::count(0)),
            Func::Min => extreme(rows, time_scalar(d.time.statistics.start_time, ty)?),
            Func::Max => extreme(rows, time_scalar(d.time.statistics.end_time, ty)?),
            Func::Sum | Func::Avg => None,
        },
        // A field without a series in this device is null on every row.
        Arg::Field(name, ty) => match d.fields.get(name) {
            None => Some(Part::count(0)),
            Some(series) => field_part(func, &series.statistics, ty),
        },
    }
}

fn extreme(count: u64, v: ScalarValue) -> Option<Part> {
    Some(Part { extreme: Some(v), ..Part::count(count) })
}

/// The part of a field series with statistics `s` read as Arrow type `ty`.
fn field_part(func: Func, s: &Statistics, ty: &DataType) -> Option<Part> {
    if s.count == 0 {
        return Some(Part::count(0));
    }
    let count = s.count;
    match func {
        Func::Count => Some(Part::count(count)),
        Func::Sum | Func::Avg => {
            let (int_sum, float_sum) = match &s.values {
                ValueStatistics::Int32 { sum, .. } => (Some(*sum), *sum as f64),
                ValueStatistics::Int64 { min, max, sum, .. } => (exact_integer_sum(*min, *max, count, *sum), *sum),
                ValueStatistics::Float { sum, .. } | ValueStatistics::Double { sum, .. } if sum.is_finite() => (None, *sum),
                _ => return None,
            };
            // An integer `sum` needs the exact sum; `avg` and float sums use the float one.
            let int_sum = match (func, ty.is_integer()) {
                (Func::Sum, true) => int_sum?,
                _ => 0,
            };
            Some(Part { count, int_sum, float_sum, extreme: None })
        }
        Func::Min | Func::Max => {
            let want_min = func == Func::Min;
            let v = match (&s.values, ty) {
                (ValueStatistics::Float { min, max, sum, .. }, DataType::Float32) => {
                    let v = if want_min { *min } else { *max };
                    if !sum.is_finite() {
                        return None;
                    }
                    ScalarValue::Float32(Some(v))
                }
                (ValueStatistics::Double { min, max, sum, .. }, DataType::Float64) => {
                    let v = if want_min { *min } else { *max };
                    if !sum.is_finite() {
                        return None;
                    }
                    ScalarValue::Float64(Some(v))
                }
                (ValueStatistics::Float { .. } | ValueStatistics::Double { .. }, _) => return None,
                _ => {
                    let (lo, hi) = value_min_max(s, ty);
                    if want_min {
                        lo?
                    } else {
                        hi?
                    }
                }
            };
            extreme(count, v)
        }
    }
}

/// The INT64 sum as an integer when its float64 form is provably exact: every partial sum
/// is bounded by `count × max(|min|, |max|)`, and integers up to 2^53 add exactly in
/// float64.
fn exact_integer_sum(min: i64, max: i64, count: u64, sum: f64) -> Option<i64> {
    let bound = u128::from(min.unsigned_abs().max(max.unsigned_abs())).checked_mul(u128::from(count))?;
    if bound > EXACT_F64_INTEGER || sum.fract() != 0.0 {
        return None;
    }
    Some(sum as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(count: u64, values: ValueStatistics) -> Statistics {
        Statistics { count, start_time: 0, end_time: 9, values }
    }

    fn double(min: f64, max: f64, sum: f64) -> ValueStatistics {
        ValueStatistics::Double { min, max, first: min, last: max, sum }
    }

    #[test]
    fn test_float_extremes_refused_with_nan_or_infinity() {
        let ok = stats(3, double(-1.5, 2.5, 1.0));
        assert_eq!(field_part(Func::Max, &ok, &DataType::Float64).unwrap().extreme, Some(ScalarValue::Float64(Some(2.5))));
        assert_eq!(field_part(Func::Min, &ok, &DataType::Float64).unwrap().extreme, Some(ScalarValue::Float64(Some(-1.5))));
        for bad in [double(-1.0, 2.0, f64::NAN), double(-1.0, 2.0, f64::INFINITY), double(-1.0, 2.0, f64::NEG_INFINITY)] {
            let s = stats(3, bad);
            let refused = field_part(Func::Min, &s, &DataType::Float64).is_none()
                || field_part(Func::Max, &s, &DataType::Float64).is_none();
            assert!(refused, "{s:?}");
        }
        // Sums and averages of a NaN series are not answered either.
        assert!(field_part(Func::Avg, &stats(3, double(-1.0, 2.0, f64::NAN)), &DataType::Float64).is_none());
    }

    #[test]
    fn test_int64_sum_only_when_provably_exact() {
        let small = ValueStatistics::Int64 { min: -5, max: 7, first: 0, last: 0, sum: 12.0 };
        assert_eq!(field_part(Func::Sum, &stats(4, small), &DataType::Int64).unwrap().int_sum, 12);
        let big = ValueStatistics::Int64 { min: 0, max: 1 << 52, first: 0, last: 0, sum: 9007199254740992.0 };
        assert!(field_part(Func::Sum, &stats(4, big.clone()), &DataType::Int64).is_none());
        // The average of the same series uses the float sum, as DataFusion does.
        assert_eq!(field_part(Func::Avg, &stats(4, big), &DataType::Float64).unwrap().float_sum, 9007199254740992.0);
    }

    #[test]
    fn test_int32_sum_is_exact_and_empty_series_count_zero() {
        let s = ValueStatistics::Int32 { min: i32::MIN, max: i32::MAX, first: 0, last: 0, sum: -1 };
        let p = field_part(Func::Sum, &stats(2, s.clone()), &DataType::Int64).unwrap();
        assert_eq!((p.count, p.int_sum), (2, -1));
        assert_eq!(field_part(Func::Max, &stats(0, s), &DataType::Int32).unwrap(), Part::count(0));
    }

    #[test]
    fn test_text_has_no_extremes() {
        let s = stats(2, ValueStatistics::Text { first: Some(b"a".to_vec()), last: Some(b"b".to_vec()) });
        assert!(field_part(Func::Max, &s, &DataType::Utf8).is_none());
        assert_eq!(field_part(Func::Count, &s, &DataType::Utf8).unwrap().count, 2);
    }
}
