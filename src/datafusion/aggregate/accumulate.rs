//! Running aggregates of one group, fed with what each device's series statistics say, and
//! the output columns they become: final values (`AggregateMode::Single`) or the partial
//! states DataFusion's final aggregate merges (`AggregateMode::Partial`).

use arrow_array::ArrayRef;
use arrow_schema::DataType;
use datafusion::common::{DataFusionError, Result, ScalarValue};

/// An aggregate function answered from statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    /// `count(x)`, `count(*)`.
    Count,
    /// `sum(x)`.
    Sum,
    /// `avg(x)`.
    Avg,
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
}

impl Func {
    /// The function's name as DataFusion spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Func::Count => "count",
            Func::Sum => "sum",
            Func::Avg => "avg",
            Func::Min => "min",
            Func::Max => "max",
        }
    }
}

/// What one device's statistics say about one aggregate's argument.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    /// Non-null values.
    pub count: u64,
    /// Exact integer sum (integer `sum`).
    pub int_sum: i64,
    /// Floating sum (`avg`, floating `sum`).
    pub float_sum: f64,
    /// Minimum or maximum (`min`/`max`; `None` when there are no values).
    pub extreme: Option<ScalarValue>,
}

impl Part {
    /// A part with `count` values and nothing else.
    pub(crate) fn count(count: u64) -> Part {
        Part { count, int_sum: 0, float_sum: 0.0, extreme: None }
    }
}

/// The running state of one aggregate of one group.
#[derive(Debug, Clone, Default)]
pub(crate) struct Acc {
    count: u64,
    int_sum: i64,
    float_sum: f64,
    extreme: Option<ScalarValue>,
}

impl Acc {
    /// Add a device's part. `false` when the result cannot be exact (an integer sum
    /// overflows, or extremes of different types).
    pub(crate) fn add(&mut self, func: Func, part: Part) -> bool {
        self.count = match self.count.checked_add(part.count) {
            Some(c) => c,
            None => return false,
        };
        match func {
            Func::Count => true,
            Func::Sum | Func::Avg => {
                self.float_sum += part.float_sum;
                match self.int_sum.checked_add(part.int_sum) {
                    Some(s) => {
                        self.int_sum = s;
                        true
                    }
                    None => false,
                }
            }
            Func::Min | Func::Max => {
                let Some(v) = part.extreme else { return true };
                let keep_current = match &self.extreme {
                    None => false,
                    Some(cur) => match cur.partial_cmp(&v) {
                        Some(std::cmp::Ordering::Less) => func == Func::Min,
                        Some(std::cmp::Ordering::Greater) => func == Func::Max,
                        Some(std::cmp::Ordering::Equal) => true,
                        None => return false,
                    },
                };
                if !keep_current {
                    self.extreme = Some(v);
                }
                true
            }
        }
    }

    /// Whether the result is exact: a floating minimum or maximum of zero is not, since
    /// statistics keep whichever of −0.0 and 0.0 came first while DataFusion orders
    /// −0.0 below 0.0 (a zero extreme of one device that is not the overall one is fine).
    pub(crate) fn is_exact(&self) -> bool {
        match self.extreme {
            Some(ScalarValue::Float32(Some(v))) => v != 0.0,
            Some(ScalarValue::Float64(Some(v))) => v != 0.0,
            _ => true,
        }
    }

    /// The final value, of type `ty`.
    pub(crate) fn value(&self, func: Func, ty: &DataType) -> Result<ScalarValue> {
        let v = match func {
            Func::Count => ScalarValue::Int64(Some(i64::try_from(self.count).map_err(|_| overflow())?)),
            Func::Sum if self.count == 0 => ScalarValue::try_from(ty)?,
            Func::Sum if ty.is_integer() => ScalarValue::Int64(Some(self.int_sum)),
            Func::Sum => ScalarValue::Float64(Some(self.float_sum)),
            Func::Avg if self.count == 0 => ScalarValue::Float64(None),
            Func::Avg => ScalarValue::Float64(Some(self.float_sum / self.count as f64)),
            Func::Min | Func::Max => match &self.extreme {
                Some(v) => v.clone(),
                None => ScalarValue::try_from(ty)?,
            },
        };
        cast_scalar(v, ty)
    }

    /// The partial state, one value per state field (types `tys`): `count` → `[count]`,
    /// `sum` → `[sum]`, `avg` → `[count, sum]`, `min`/`max` → `[value]`.
    pub(crate) fn state(&self, func: Func, tys: &[DataType]) -> Result<Vec<ScalarValue>> {
        match (func, tys) {
            (Func::Avg, [count_ty, sum_ty]) => {
                // No values: both null, as DataFusion's own partial average emits them (a
                // zero count would mark the group as seen and average to 0/0 = NaN).
                let seen = self.count > 0;
                let count = ScalarValue::UInt64(seen.then_some(self.count));
                let sum = ScalarValue::Float64(seen.then_some(self.float_sum));
                Ok(vec![cast_scalar(count, count_ty)?, cast_scalar(sum, sum_ty)?])
            }
            (Func::Avg, _) => Err(DataFusionError::Internal("avg state: expected [count, sum]".into())),
            (_, [ty]) => Ok(vec![self.value(func, ty)?]),
            (f, _) => Err(DataFusionError::Internal(format!("{} state: expected one field", f.name()))),
        }
    }
}

fn overflow() -> DataFusionError {
    DataFusionError::Execution("count from statistics overflows Int64".into())
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

    fn float(count: u64, sum: f64) -> Part {
        Part { count, int_sum: 0, float_sum: sum, extreme: None }
    }

    #[test]
    fn test_avg_state_has_null_sum_without_values() {
        let acc = Acc::default();
        let s = acc.state(Func::Avg, &[DataType::UInt64, DataType::Float64]).unwrap();
        assert_eq!(s, vec![ScalarValue::UInt64(None), ScalarValue::Float64(None)]);
        assert_eq!(acc.value(Func::Avg, &DataType::Float64).unwrap(), ScalarValue::Float64(None));
    }

    #[test]
    fn test_avg_over_devices() {
        let mut acc = Acc::default();
        assert!(acc.add(Func::Avg, float(2, 3.0)));
        assert!(acc.add(Func::Avg, float(0, 0.0)));
        assert!(acc.add(Func::Avg, float(1, 6.0)));
        assert_eq!(acc.value(Func::Avg, &DataType::Float64).unwrap(), ScalarValue::Float64(Some(3.0)));
        let s = acc.state(Func::Avg, &[DataType::UInt64, DataType::Float64]).unwrap();
        assert_eq!(s, vec![ScalarValue::UInt64(Some(3)), ScalarValue::Float64(Some(9.0))]);
    }

    #[test]
    fn test_zero_extreme_is_not_exact() {
        let part = |v: f64| Part { count: 1, int_sum: 0, float_sum: v, extreme: Some(ScalarValue::Float64(Some(v))) };
        let mut max = Acc::default();
        assert!(max.add(Func::Max, part(-0.0)));
        assert!(!max.is_exact());
        assert!(max.add(Func::Max, part(2.5)));
        assert!(max.is_exact());
        let mut min = Acc::default();
        assert!(min.add(Func::Min, part(0.0)));
        assert!(min.add(Func::Min, part(2.5)));
        assert!(!min.is_exact());
    }

    #[test]
    fn test_integer_sum_overflow_is_refused() {
        let mut acc = Acc::default();
        assert!(acc.add(Func::Sum, Part { count: 1, int_sum: i64::MAX, float_sum: 0.0, extreme: None }));
        assert!(!acc.add(Func::Sum, Part { count: 1, int_sum: 1, float_sum: 0.0, extreme: None }));
    }

    #[test]
    fn test_sum_without_values_is_null() {
        let acc = Acc::default();
        assert_eq!(acc.value(Func::Sum, &DataType::Int64).unwrap(), ScalarValue::Int64(None));
        assert_eq!(acc.value(Func::Count, &DataType::Int64).unwrap(), ScalarValue::Int64(Some(0)));
    }

    #[test]
    fn test_min_max_keep_extremes_and_skip_empty_parts() {
        let mut lo = Acc::default();
        let mut hi = Acc::default();
        for v in [5, -3, 9] {
            let p = Part { count: 1, int_sum: 0, float_sum: 0.0, extreme: Some(ScalarValue::Int32(Some(v))) };
            assert!(lo.add(Func::Min, p.clone()));
            assert!(hi.add(Func::Max, p));
        }
        assert!(lo.add(Func::Min, Part::count(0)));
        assert_eq!(lo.value(Func::Min, &DataType::Int32).unwrap(), ScalarValue::Int32(Some(-3)));
        assert_eq!(hi.value(Func::Max, &DataType::Int32).unwrap(), ScalarValue::Int32(Some(9)));
        // Extremes of different types cannot be compared: refused, not guessed.
        assert!(
            !lo.add(Func::Min, Part { count: 1, int_sum: 0, float_sum: 0.0, extreme: Some(ScalarValue::Utf8(Some("a".into()))) })
        );
    }
}
