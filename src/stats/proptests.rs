//! Property tests of the statistics algebra against row-by-row answers.
//!
//! Random rows (strictly increasing times; values with NaN, -NaN, ±∞, ±0.0 and nulls) are split
//! into random units, each summarised as a TsFile writer does (IEEE `<`/`>` min/max from the
//! first value, float64 sum in time order, first/last non-null, the non-null values' span).
//! Each aggregate takes a unit's statistics when the algebra accepts them and the unit's rows
//! otherwise (or when the test forces decoding), and must equal the row-by-row answer computed
//! with total-order comparisons, as DataFusion computes it.

use proptest::prelude::*;

use crate::format::statistics::{Statistics, ValueStatistics};
use crate::stats::bucket::{BucketPlacement, TimeBuckets};
use crate::stats::first_last::{FirstLast, NullTreatment, Position};
use crate::stats::merge::{Count, Extremum, Merge, MinMax, Offer};
use crate::stats::prune::{judge, Comparison, ValueMatch};
use crate::stats::sum::{float_sum_tolerance, FloatSum, IntSum};
use crate::stats::trust::StatValue;
use crate::stats::window::{Placement, TimeRange, TimeSpan};

/// One row: its time and its value (`None` = NULL).
type Row<T> = (i64, Option<T>);

/// A unit: its rows and whether the test decodes it regardless of its statistics.
#[derive(Debug, Clone)]
struct Unit<T> {
    rows: Vec<Row<T>>,
    force_decode: bool,
}

fn special_or_plain_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(f64::NAN),
        1 => Just(-f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        2 => Just(0.0),
        2 => Just(-0.0),
        4 => (-5i32..5).prop_map(f64::from),
        6 => -1.0e6..1.0e6f64,
    ]
}

fn value_f64() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![1 => Just(None), 4 => special_or_plain_f64().prop_map(Some)]
}

/// Mostly zeros of both signs: units whose IEEE min/max hide the other zero.
fn zero_heavy_f64() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![1 => Just(None), 4 => Just(Some(0.0)), 4 => Just(Some(-0.0)), 1 => Just(Some(1.0)), 1 => Just(Some(-1.0))]
}

fn value_i64() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![1 => Just(None), 3 => (-1000i64..1000).prop_map(Some), 1 => any::<i64>().prop_map(Some)]
}

/// Rows with strictly increasing times from `start`, cut into units.
fn units<T: std::fmt::Debug + Clone>(values: impl Strategy<Value = Option<T>>) -> impl Strategy<Value = Vec<Unit<T>>> {
    let rows = prop::collection::vec((1i64..50, values, any::<bool>(), prop::bool::weighted(0.2)), 0..60);
    (-1_000_000i64..1_000_000, rows).prop_map(|(start, rows)| {
        let mut out: Vec<Unit<T>> = Vec::new();
        let mut time = start;
        let mut cut = true;
        for (step, value, cut_after, force_decode) in rows {
            time += step;
            if cut {
                out.push(Unit { rows: Vec::new(), force_decode });
            }
            out.last_mut().unwrap().rows.push((time, value));
            cut = cut_after;
        }
        out
    })
}

fn non_null<T: Clone>(rows: &[Row<T>]) -> Vec<(i64, T)> {
    rows.iter().filter_map(|(t, v)| v.clone().map(|v| (*t, v))).collect()
}

fn row_span<T>(rows: &[Row<T>]) -> Option<TimeSpan> {
    TimeSpan::new(rows.first()?.0, rows.last()?.0)
}

/// DOUBLE statistics as the Java writer computes them.
fn double_stats(rows: &[Row<f64>]) -> Statistics {
    let values = non_null(rows);
    let Some(&(start_time, first)) = values.first() else {
        return Statistics {
            count: 0,
            start_time: 0,
            end_time: 0,
            values: ValueStatistics::Double { min: 0.0, max: 0.0, first: 0.0, last: 0.0, sum: 0.0 },
        };
    };
    let (mut min, mut max, mut sum) = (first, first, first);
    for &(_, v) in &values[1..] {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
        sum += v;
    }
    let &(end_time, last) = values.last().unwrap();
    Statistics {
        count: values.len() as u64,
        start_time,
        end_time,
        values: ValueStatistics::Double { min, max, first, last, sum },
    }
}

/// INT64 statistics as the Java writer computes them (float64 sum).
fn int64_stats(rows: &[Row<i64>]) -> Statistics {
    let values = non_null(rows);
    let Some(&(start_time, first)) = values.first() else {
        return Statistics {
            count: 0,
            start_time: 0,
            end_time: 0,
            values: ValueStatistics::Int64 { min: 0, max: 0, first: 0, last: 0, sum: 0.0 },
        };
    };
    let (mut min, mut max, mut sum) = (first, first, first as f64);
    for &(_, v) in &values[1..] {
        min = min.min(v);
        max = max.max(v);
        sum += v as f64;
    }
    let &(end_time, last) = values.last().unwrap();
    Statistics { count: values.len() as u64, start_time, end_time, values: ValueStatistics::Int64 { min, max, first, last, sum } }
}

fn same_f64(a: Option<f64>, b: Option<f64>) -> bool {
    a.map(f64::to_bits) == b.map(f64::to_bits)
}

/// The total-order extreme of the non-null values, as DataFusion's `min`/`max`.
fn reference_extreme<T: StatValue>(units: &[Unit<T>], which: Extremum) -> Option<T> {
    let all = units.iter().flat_map(|u| non_null(&u.rows)).map(|(_, v)| v);
    match which {
        Extremum::Min => all.min_by(|a, b| a.total_cmp(b)),
        Extremum::Max => all.max_by(|a, b| a.total_cmp(b)),
    }
}

fn merged_extreme<T: StatValue>(units: &[Unit<T>], stats: impl Fn(&[Row<T>]) -> Statistics, which: Extremum) -> Option<T> {
    let mut acc = MinMax::new(which);
    for u in units {
        if u.force_decode || acc.offer_unit(&stats(&u.rows)) == Offer::Decode {
            non_null(&u.rows).into_iter().for_each(|(_, v)| acc.offer_value(v));
        }
    }
    acc.finish()
}

fn reference_first_last<T: Clone>(units: &[Unit<T>], position: Position, nulls: NullTreatment) -> Option<T> {
    let rows: Vec<Row<T>> = units.iter().flat_map(|u| u.rows.iter().cloned()).collect();
    let rows: Vec<Row<T>> = match nulls {
        NullTreatment::Respect => rows,
        NullTreatment::Ignore => rows.into_iter().filter(|(_, v)| v.is_some()).collect(),
    };
    let row = match position {
        Position::First => rows.first(),
        Position::Last => rows.last(),
    };
    row.and_then(|(_, v)| v.clone())
}

fn merged_first_last<T: StatValue>(
    units: &[Unit<T>],
    stats: impl Fn(&[Row<T>]) -> Statistics,
    position: Position,
    nulls: NullTreatment,
) -> Merge<Option<T>> {
    let mut acc = FirstLast::new(position, nulls);
    for u in units {
        if u.force_decode || acc.offer_unit(row_span(&u.rows), &stats(&u.rows)) == Offer::Decode {
            u.rows.iter().cloned().for_each(|(t, v)| acc.offer_row(t, v));
        }
    }
    acc.finish()
}

const COMPARISONS: [Comparison; 6] =
    [Comparison::Gt, Comparison::GtEq, Comparison::Lt, Comparison::LtEq, Comparison::Eq, Comparison::NotEq];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn prop_double_min_max_match_total_order(units in units(value_f64())) {
        for which in [Extremum::Min, Extremum::Max] {
            let merged = merged_extreme(&units, double_stats, which);
            let reference = reference_extreme(&units, which);
            prop_assert!(same_f64(merged, reference), "{which:?}: {merged:?} vs {reference:?}");
        }
    }

    #[test]
    fn prop_double_min_max_with_signed_zeros(units in units(zero_heavy_f64())) {
        for which in [Extremum::Min, Extremum::Max] {
            let merged = merged_extreme(&units, double_stats, which);
            let reference = reference_extreme(&units, which);
            prop_assert!(same_f64(merged, reference), "{which:?}: {merged:?} vs {reference:?}");
        }
    }

    #[test]
    fn prop_int64_min_max_and_wrapping_sum(units in units(value_i64())) {
        for which in [Extremum::Min, Extremum::Max] {
            prop_assert_eq!(merged_extreme(&units, int64_stats, which), reference_extreme(&units, which));
        }
        let mut sum = IntSum::new();
        for u in &units {
            if u.force_decode || sum.offer_unit(&int64_stats(&u.rows)) == Offer::Decode {
                non_null(&u.rows).into_iter().for_each(|(_, v)| sum.offer_value(v));
            }
        }
        let values: Vec<i64> = units.iter().flat_map(|u| non_null(&u.rows)).map(|(_, v)| v).collect();
        let reference = (!values.is_empty()).then(|| values.iter().fold(0i64, |a, v| a.wrapping_add(*v)));
        prop_assert_eq!(sum.finish(), reference);
    }

    #[test]
    fn prop_double_count_sum_avg_within_tolerance(units in units(value_f64())) {
        let mut count = Count::new();
        let mut sum = FloatSum::new();
        for u in &units {
            let stats = double_stats(&u.rows);
            prop_assert_eq!(count.offer_unit(&stats), Offer::Used);
            if u.force_decode || sum.offer_unit(&stats) == Offer::Decode {
                non_null(&u.rows).into_iter().for_each(|(_, v)| sum.offer_value(v));
            }
        }
        let values: Vec<f64> = units.iter().flat_map(|u| non_null(&u.rows)).map(|(_, v)| v).collect();
        prop_assert_eq!(count.value(), values.len() as u64);
        prop_assert_eq!(sum.count(), values.len() as u64);
        let reference = values.iter().fold(0.0, |a, v| a + v);
        match sum.sum() {
            None => prop_assert!(values.is_empty()),
            Some(s) if reference.is_nan() => prop_assert!(s.is_nan()),
            Some(s) if reference.is_infinite() => prop_assert_eq!(s, reference),
            Some(s) => {
                let abs_sum: f64 = values.iter().map(|v| v.abs()).sum();
                let tol = float_sum_tolerance(values.len() as u64, abs_sum);
                prop_assert!((s - reference).abs() <= tol, "{s} vs {reference}, tolerance {tol}");
                let avg = sum.avg().unwrap();
                let n = values.len() as f64;
                prop_assert!((avg - reference / n).abs() <= tol / n + f64::EPSILON * (reference / n).abs());
            }
        }
    }

    #[test]
    fn prop_first_last_match_rows(units in units(value_f64())) {
        for position in [Position::First, Position::Last] {
            for nulls in [NullTreatment::Respect, NullTreatment::Ignore] {
                let merged = merged_first_last(&units, double_stats, position, nulls);
                let reference = reference_first_last(&units, position, nulls);
                match merged {
                    Merge::Exact(v) => prop_assert!(same_f64(v, reference), "{position:?} {nulls:?}: {v:?} vs {reference:?}"),
                    Merge::NeedDecode => prop_assert!(false, "unique times never tie"),
                }
            }
        }
    }

    #[test]
    fn prop_first_last_duplicated_unit_ties_without_ambiguity(units in units(value_i64())) {
        // The same rows twice (an overlapping copy): every tie has equal values.
        let copy: Vec<Unit<i64>> = units.iter().map(|u| Unit { rows: u.rows.clone(), force_decode: !u.force_decode }).collect();
        let doubled: Vec<Unit<i64>> = units.into_iter().chain(copy).collect();
        for position in [Position::First, Position::Last] {
            for nulls in [NullTreatment::Respect, NullTreatment::Ignore] {
                let merged = merged_first_last(&doubled, int64_stats, position, nulls);
                prop_assert_eq!(merged, Merge::Exact(reference_first_last(&doubled, position, nulls)));
            }
        }
    }

    #[test]
    fn prop_pruning_never_drops_a_matching_row(units in units(value_f64()), c in special_or_plain_f64()) {
        for u in &units {
            let bounds = f64::bounds(&double_stats(&u.rows));
            let values: Vec<f64> = non_null(&u.rows).into_iter().map(|(_, v)| v).collect();
            for op in COMPARISONS {
                match judge(&bounds, op, &c) {
                    ValueMatch::NoValue => prop_assert!(!values.iter().any(|v| op.holds(v, &c)), "{op:?} {c}: {values:?}"),
                    ValueMatch::EveryValue => prop_assert!(values.iter().all(|v| op.holds(v, &c)), "{op:?} {c}: {values:?}"),
                    ValueMatch::Maybe => {}
                }
            }
        }
    }

    #[test]
    fn prop_time_range_count_and_min(units in units(value_f64()), lo in -1_000_000i64..1_002_000, len in 0i64..2_000) {
        let range = TimeRange::half_open(lo, lo + len);
        let mut count = Count::new();
        let mut min = MinMax::<f64>::new(Extremum::Min);
        for u in &units {
            let span = row_span(&u.rows).unwrap();
            let in_range = || non_null(&u.rows).into_iter().filter(|(t, _)| range.contains(*t));
            match range.place(span) {
                Placement::Outside => prop_assert!(in_range().next().is_none() && !u.rows.iter().any(|(t, _)| range.contains(*t))),
                Placement::Inside => {
                    prop_assert!(u.rows.iter().all(|(t, _)| range.contains(*t)));
                    let stats = double_stats(&u.rows);
                    count.offer_unit(&stats);
                    if min.offer_unit(&stats) == Offer::Decode {
                        in_range().for_each(|(_, v)| min.offer_value(v));
                    }
                }
                Placement::Straddles => {
                    prop_assert!(!range.contains(span.start()) || !range.contains(span.end()));
                    let values: Vec<f64> = in_range().map(|(_, v)| v).collect();
                    count.offer_values(values.len() as u64);
                    values.into_iter().for_each(|v| min.offer_value(v));
                }
            }
        }
        let reference: Vec<f64> = units.iter().flat_map(|u| non_null(&u.rows)).filter(|(t, _)| range.contains(*t)).map(|(_, v)| v).collect();
        prop_assert_eq!(count.value(), reference.len() as u64);
        prop_assert!(same_f64(min.finish(), reference.into_iter().min_by(f64::total_cmp)));
    }

    #[test]
    fn prop_bucket_start_is_floor_division(t in any::<i64>(), origin in any::<i64>(), stride in prop_oneof![1i64..100, 1i64..=i64::MAX]) {
        let buckets = TimeBuckets::new(stride, origin).unwrap();
        let (t, o, s) = (i128::from(t), i128::from(origin), i128::from(stride));
        let diff = t - o;
        let delta = diff.div_euclid(s) * s;
        let fits = |x: i128| i64::try_from(x).is_ok();
        // DataFusion's checked steps: t - origin, the distance, origin + distance.
        let expected = (fits(diff) && fits(delta) && fits(o + delta)).then(|| (o + delta) as i64);
        prop_assert_eq!(buckets.bucket_start(t as i64), expected);
    }

    #[test]
    fn prop_unit_in_one_bucket_iff_rows_are(units in units(Just(Some(0i64))), origin in -5_000i64..5_000, stride in 1i64..400) {
        let buckets = TimeBuckets::new(stride, origin).unwrap();
        let floor = |t: i64| origin + (t - origin).div_euclid(stride) * stride;
        for u in &units {
            let bucket_of_rows: Vec<i64> = u.rows.iter().map(|(t, _)| floor(*t)).collect();
            match buckets.place(row_span(&u.rows).unwrap()) {
                BucketPlacement::OneBucket(b) => prop_assert!(bucket_of_rows.iter().all(|x| *x == b)),
                BucketPlacement::Several { first, last } => {
                    prop_assert!(first < last);
                    prop_assert_eq!(Some(&first), bucket_of_rows.first());
                    prop_assert_eq!(Some(&last), bucket_of_rows.last());
                }
                BucketPlacement::Unrepresentable => prop_assert!(false, "small times always bin"),
            }
        }
    }
}
