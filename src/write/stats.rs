//! Statistics as the reference writers compute them (see `stats::trust`'s module doc):
//!
//! * a page's statistics come from its values in time order: `min`/`max` start at the first
//!   value and follow IEEE `<`/`>` (a NaN never replaces a bound, a NaN first value stays,
//!   the first zero's sign stays); `sum` starts at the first value and adds in float64
//!   (INT32: a wrapping 64-bit integer); `first`/`last` bit for bit; BOOLEAN `true_count`;
//!   STRING `min`/`max` by unsigned bytes; TEXT `first`/`last` only; BLOB none;
//! * chunk statistics merge the page statistics and series statistics merge the chunk
//!   statistics the same way (Java's `mergeStatistics`): bounds by the same comparisons in
//!   unit order, sums added unit by unit.
//!
//! `start_time`/`end_time` are the times of the first and last non-null value.

use crate::format::statistics::{Statistics, ValueStatistics};
use crate::format::TsDataType;
use crate::write::buffer::ValueSlice;

/// Statistics of a time column: count, first and last timestamp (`times` ascending).
pub fn time_statistics(times: &[i64]) -> Statistics {
    Statistics {
        count: times.len() as u64,
        start_time: times.first().copied().unwrap_or(i64::MAX),
        end_time: times.last().copied().unwrap_or(i64::MIN),
        values: ValueStatistics::None,
    }
}

fn min_max<T: Copy + PartialOrd>(values: &[T]) -> Option<(T, T)> {
    let (&first, rest) = values.split_first()?;
    let (mut min, mut max) = (first, first);
    for &v in rest {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
    }
    Some((min, max))
}

fn float_sum(values: impl Iterator<Item = f64>) -> f64 {
    let mut sum: Option<f64> = None;
    for v in values {
        sum = Some(sum.map_or(v, |s| s + v));
    }
    sum.unwrap_or(0.0)
}

/// Statistics of the non-null `values` of a page whose first and last value were taken at
/// `start_time` and `end_time`; `None` when there is no value.
pub fn value_statistics(data_type: TsDataType, values: ValueSlice<'_>, start_time: i64, end_time: i64) -> Option<Statistics> {
    let count = values.len() as u64;
    if count == 0 {
        return None;
    }
    let values = match values {
        ValueSlice::Boolean(v) => ValueStatistics::Boolean {
            first: v.first().copied().unwrap_or_default(),
            last: v.last().copied().unwrap_or_default(),
            true_count: v.iter().filter(|b| **b).count() as i64,
        },
        ValueSlice::Int32(v) => {
            let (min, max) = min_max(v)?;
            let sum = v.iter().fold(0i64, |s, &x| s.wrapping_add(i64::from(x)));
            ValueStatistics::Int32 { min, max, first: *v.first()?, last: *v.last()?, sum }
        }
        ValueSlice::Int64(v) => {
            let (min, max) = min_max(v)?;
            // why: Java adds each INT64 value to a double sum; the conversion is the point.
            #[allow(clippy::cast_precision_loss)]
            let sum = float_sum(v.iter().map(|&x| x as f64));
            ValueStatistics::Int64 { min, max, first: *v.first()?, last: *v.last()?, sum }
        }
        ValueSlice::Float(v) => {
            let (min, max) = min_max(v)?;
            ValueStatistics::Float { min, max, first: *v.first()?, last: *v.last()?, sum: float_sum(v.iter().map(|&x| f64::from(x))) }
        }
        ValueSlice::Double(v) => {
            let (min, max) = min_max(v)?;
            ValueStatistics::Double { min, max, first: *v.first()?, last: *v.last()?, sum: float_sum(v.iter().copied()) }
        }
        ValueSlice::Binary { .. } => {
            let n = values.len();
            let first = Some(Box::from(values.binary(0)));
            let last = Some(Box::from(values.binary(n - 1)));
            match data_type {
                TsDataType::String => {
                    let (mut min, mut max) = (values.binary(0), values.binary(0));
                    for i in 1..n {
                        let v = values.binary(i);
                        if v < min {
                            min = v;
                        }
                        if v > max {
                            max = v;
                        }
                    }
                    ValueStatistics::String { first, last, min: Some(Box::from(min)), max: Some(Box::from(max)) }
                }
                TsDataType::Text => ValueStatistics::Text { first, last },
                _ => ValueStatistics::None,
            }
        }
    };
    Some(Statistics { count, start_time, end_time, values })
}

fn lt_bytes(a: &Option<Box<[u8]>>, b: &Option<Box<[u8]>>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a < b)
}

/// Merge `unit` (which follows everything already in `acc` in time) into `acc`.
pub fn merge(acc: &mut Option<Statistics>, unit: &Statistics) {
    let Some(a) = acc else {
        *acc = Some(unit.clone());
        return;
    };
    a.count += unit.count;
    a.start_time = a.start_time.min(unit.start_time);
    a.end_time = a.end_time.max(unit.end_time);
    match (&mut a.values, &unit.values) {
        (ValueStatistics::Boolean { last, true_count, .. }, ValueStatistics::Boolean { last: l, true_count: t, .. }) => {
            *last = *l;
            *true_count += t;
        }
        (ValueStatistics::Int32 { min, max, last, sum, .. }, ValueStatistics::Int32 { min: mn, max: mx, last: l, sum: s, .. }) => {
            *min = (*min).min(*mn);
            *max = (*max).max(*mx);
            *last = *l;
            *sum = sum.wrapping_add(*s);
        }
        (ValueStatistics::Int64 { min, max, last, sum, .. }, ValueStatistics::Int64 { min: mn, max: mx, last: l, sum: s, .. }) => {
            *min = (*min).min(*mn);
            *max = (*max).max(*mx);
            *last = *l;
            *sum += s;
        }
        (ValueStatistics::Float { min, max, last, sum, .. }, ValueStatistics::Float { min: mn, max: mx, last: l, sum: s, .. }) => {
            if mn < min {
                *min = *mn;
            }
            if mx > max {
                *max = *mx;
            }
            *last = *l;
            *sum += s;
        }
        (ValueStatistics::Double { min, max, last, sum, .. }, ValueStatistics::Double { min: mn, max: mx, last: l, sum: s, .. }) => {
            if mn < min {
                *min = *mn;
            }
            if mx > max {
                *max = *mx;
            }
            *last = *l;
            *sum += s;
        }
        (ValueStatistics::Text { last, .. }, ValueStatistics::Text { last: l, .. }) => last.clone_from(l),
        (ValueStatistics::String { last, min, max, .. }, ValueStatistics::String { last: l, min: mn, max: mx, .. }) => {
            last.clone_from(l);
            if lt_bytes(mn, min) {
                min.clone_from(mn);
            }
            if lt_bytes(max, mx) {
                max.clone_from(mx);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doubles(v: &[f64]) -> Statistics {
        value_statistics(TsDataType::Double, ValueSlice::Double(v), 1, 2).unwrap()
    }

    #[test]
    fn test_float_bounds_follow_ieee_from_the_first_value() {
        let s = doubles(&[f64::NAN, 1.0, -3.0]);
        let ValueStatistics::Double { min, max, first, sum, .. } = s.values else { panic!() };
        assert!(min.is_nan() && max.is_nan() && first.is_nan() && sum.is_nan());
        let ValueStatistics::Double { min, max, sum, .. } = doubles(&[0.0, -0.0, f64::NAN, 2.0]).values else { panic!() };
        assert_eq!((min.to_bits(), max), (0.0f64.to_bits(), 2.0));
        assert!(sum.is_nan());
        let ValueStatistics::Double { min, max, .. } = doubles(&[-0.0, 0.0, f64::NEG_INFINITY]).values else { panic!() };
        assert_eq!((min, max.to_bits()), (f64::NEG_INFINITY, (-0.0f64).to_bits()));
    }

    #[test]
    fn test_merge_equals_the_java_unit_by_unit_fold() {
        let a = doubles(&[3.0, f64::NAN]);
        let b = doubles(&[-1.0, 10.0]);
        let mut acc = None;
        merge(&mut acc, &a);
        merge(&mut acc, &b);
        let s = acc.unwrap();
        assert_eq!(s.count, 4);
        let ValueStatistics::Double { min, max, first, last, sum } = s.values else { panic!() };
        assert_eq!((min, max, first, last), (-1.0, 10.0, 3.0, 10.0));
        assert!(sum.is_nan());
        let strs = |v: &[&str], t| {
            let data: Vec<u8> = v.concat().into_bytes();
            let mut offsets = vec![0];
            for s in v {
                offsets.push(offsets.last().unwrap() + s.len());
            }
            value_statistics(TsDataType::String, ValueSlice::Binary { offsets: &offsets, data: &data }, t, t).unwrap()
        };
        let mut acc = None;
        merge(&mut acc, &strs(&["b", "\u{e9}"], 1));
        merge(&mut acc, &strs(&["a"], 2));
        let ValueStatistics::String { first, last, min, max } = acc.unwrap().values else { panic!() };
        assert_eq!(
            (&*first.unwrap(), &*last.unwrap(), &*min.unwrap(), &*max.unwrap()),
            (&b"b"[..], &b"a"[..], &b"a"[..], "\u{e9}".as_bytes())
        );
        let ints = value_statistics(TsDataType::Int32, ValueSlice::Int32(&[i32::MAX, i32::MAX]), 0, 1).unwrap();
        assert!(matches!(ints.values, ValueStatistics::Int32 { sum: 4_294_967_294, .. }));
        assert!(value_statistics(TsDataType::Int32, ValueSlice::Int32(&[]), 0, 0).is_none());
    }
}
