//! The answers of the summary layer as DataFusion values: final values
//! (`AggregateMode::Single`) or the partial states DataFusion's final aggregate merges
//! (`AggregateMode::Partial`), and the output columns they become.

use arrow_array::ArrayRef;
use arrow_schema::DataType;
use datafusion::common::{DataFusionError, Result, ScalarValue};

use super::{AggSpec, Func};
use crate::arrow::array::date_to_days;
use crate::datafusion::pruning::time_scalar;
use crate::summary::{Answer, Cell};

/// `cell` as a scalar of Arrow type `ty` (DATE from `YYYYMMDD`, timestamps in file units).
pub(crate) fn cell_scalar(cell: Cell, ty: &DataType) -> Result<ScalarValue> {
    let v = match cell {
        Cell::Null => return ScalarValue::try_from(ty),
        Cell::Boolean(b) => ScalarValue::Boolean(Some(b)),
        Cell::Int32(v) if *ty == DataType::Date32 => ScalarValue::Date32(Some(
            date_to_days(v).ok_or_else(|| DataFusionError::Execution(format!("DATE statistic {v} is not a valid date")))?,
        )),
        Cell::Int32(v) => ScalarValue::Int32(Some(v)),
        Cell::Int64(v) => time_scalar(v, ty).unwrap_or(ScalarValue::Int64(Some(v))),
        Cell::Float(v) => ScalarValue::Float32(Some(v)),
        Cell::Double(v) => ScalarValue::Float64(Some(v)),
        Cell::Bytes(b) => ScalarValue::Utf8(Some(
            String::from_utf8(b).map_err(|_| DataFusionError::Execution("a STRING/TEXT value is not valid UTF-8".into()))?,
        )),
    };
    cast_scalar(v, ty)
}

/// The output values of one aggregate: its final value, or its partial state fields.
pub(crate) fn values(spec: &AggSpec, answer: Answer, partial: bool) -> Result<Vec<ScalarValue>> {
    let first = spec.types.first().ok_or_else(|| internal("an aggregate has at least one output column"))?;
    Ok(match (answer, partial) {
        (Answer::Count(n), _) => {
            let n = i64::try_from(n).map_err(|_| DataFusionError::Execution("count from statistics overflows Int64".into()))?;
            vec![cast_scalar(ScalarValue::Int64(Some(n)), first)?]
        }
        (Answer::Value(cell), _) => vec![cell_scalar(cell, first)?],
        (Answer::Mean { count, sum }, true) => {
            // No values: both null, as DataFusion's own partial average emits them (a zero
            // count would mark the group as seen and average to 0/0 = NaN).
            let [count_ty, sum_ty] = spec.types.as_slice() else { return Err(internal("avg state: expected [count, sum]")) };
            let seen = count > 0;
            vec![
                cast_scalar(ScalarValue::UInt64(seen.then_some(count)), count_ty)?,
                cast_scalar(ScalarValue::Float64(seen.then_some(sum)), sum_ty)?,
            ]
        }
        (Answer::Mean { count, sum }, false) => {
            vec![cast_scalar(ScalarValue::Float64((count > 0).then(|| sum / count as f64)), first)?]
        }
        (Answer::Positioned(best), false) => vec![cell_scalar(best.map_or(Cell::Null, |(_, v)| v), first)?],
        (Answer::Positioned(best), true) => {
            let [value_ty, time_ty, set_ty] = spec.types.as_slice() else {
                return Err(internal("first/last state: expected [value, time, is_set]"));
            };
            let is_set = best.is_some();
            let (time, value) = match best {
                Some((t, v)) => (cell_scalar(Cell::Int64(t), time_ty)?, cell_scalar(v, value_ty)?),
                None => (ScalarValue::try_from(time_ty)?, ScalarValue::try_from(value_ty)?),
            };
            vec![value, time, cast_scalar(ScalarValue::Boolean(Some(is_set)), set_ty)?]
        }
    })
}

/// The answer of `count(NULL)`, which counts no row whatever the data.
pub(crate) fn nothing_counted(spec: &AggSpec) -> Answer {
    debug_assert_eq!(spec.func, Func::Count);
    Answer::Count(0)
}

fn internal(what: &str) -> DataFusionError {
    DataFusionError::Internal(format!("statistics aggregate: {what}"))
}

/// `v` as type `ty` (no-op when it already is).
fn cast_scalar(v: ScalarValue, ty: &DataType) -> Result<ScalarValue> {
    if &v.data_type() == ty {
        Ok(v)
    } else {
        v.cast_to(ty)
    }
}

/// One output column of `ty` from per-group scalars.
pub(crate) fn column(values: Vec<ScalarValue>, ty: &DataType) -> Result<ArrayRef> {
    if values.is_empty() {
        return Ok(arrow_array::new_empty_array(ty));
    }
    let array = ScalarValue::iter_to_array(values)?;
    if array.data_type() == ty {
        Ok(array)
    } else {
        Ok(datafusion::arrow::compute::cast(&array, ty)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datafusion::aggregate::Arg;

    fn spec(func: Func, types: Vec<DataType>) -> AggSpec {
        AggSpec { func, arg: Arg::Field("x".into(), DataType::Float64), types }
    }

    #[test]
    fn test_avg_state_has_null_sum_without_values() {
        let s = spec(Func::Avg, vec![DataType::UInt64, DataType::Float64]);
        let v = values(&s, Answer::Mean { count: 0, sum: 0.0 }, true).unwrap();
        assert_eq!(v, vec![ScalarValue::UInt64(None), ScalarValue::Float64(None)]);
        let v = values(&s, Answer::Mean { count: 3, sum: 9.0 }, true).unwrap();
        assert_eq!(v, vec![ScalarValue::UInt64(Some(3)), ScalarValue::Float64(Some(9.0))]);
        let f = spec(Func::Avg, vec![DataType::Float64]);
        assert_eq!(values(&f, Answer::Mean { count: 3, sum: 9.0 }, false).unwrap(), vec![ScalarValue::Float64(Some(3.0))]);
        assert_eq!(values(&f, Answer::Mean { count: 0, sum: 0.0 }, false).unwrap(), vec![ScalarValue::Float64(None)]);
    }

    #[test]
    fn test_positioned_state_carries_time_and_is_set() {
        let ts = DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None);
        let s = spec(Func::Last { ignore_nulls: false }, vec![DataType::Float64, ts.clone(), DataType::Boolean]);
        let v = values(&s, Answer::Positioned(Some((7, Cell::Null))), true).unwrap();
        assert_eq!(
            v,
            vec![ScalarValue::Float64(None), ScalarValue::TimestampMillisecond(Some(7), None), ScalarValue::Boolean(Some(true))]
        );
        let v = values(&s, Answer::Positioned(None), true).unwrap();
        assert_eq!(
            v,
            vec![ScalarValue::Float64(None), ScalarValue::TimestampMillisecond(None, None), ScalarValue::Boolean(Some(false))]
        );
        let f = spec(Func::Last { ignore_nulls: false }, vec![DataType::Float64]);
        assert_eq!(
            values(&f, Answer::Positioned(Some((7, Cell::Double(2.5)))), false).unwrap(),
            vec![ScalarValue::Float64(Some(2.5))]
        );
    }

    #[test]
    fn test_cells_become_the_column_type() {
        assert_eq!(cell_scalar(Cell::Int32(20240229), &DataType::Date32).unwrap(), ScalarValue::Date32(Some(19782)));
        assert!(cell_scalar(Cell::Int32(20240230), &DataType::Date32).is_err());
        assert_eq!(cell_scalar(Cell::Int64(5), &DataType::Int64).unwrap(), ScalarValue::Int64(Some(5)));
        assert_eq!(cell_scalar(Cell::Bytes(b"ab".to_vec()), &DataType::Utf8).unwrap(), ScalarValue::Utf8(Some("ab".into())));
        assert_eq!(cell_scalar(Cell::Null, &DataType::Int32).unwrap(), ScalarValue::Int32(None));
        assert_eq!(
            values(&spec(Func::Count, vec![DataType::Int64]), Answer::Count(4), false).unwrap(),
            vec![ScalarValue::Int64(Some(4))]
        );
    }
}
