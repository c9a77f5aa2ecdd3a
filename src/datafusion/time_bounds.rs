//! The time range a scan's predicate implies: `time >= a AND time < b AND …` (any
//! conjunction of comparisons between the time column and a literal of its type) gives the
//! inclusive raw range `[a, b − 1]`. The scan then decodes and emits only the rows of each
//! page within it, instead of every row of every page that overlaps it; DataFusion still
//! applies the whole predicate to what is emitted.

use std::sync::Arc;

use arrow_schema::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, Literal};
use datafusion::physical_plan::PhysicalExpr;

/// The inclusive raw time range `predicate` guarantees for column `time` of type
/// `time_type` (`None`: no bound found). An impossible predicate gives an empty range
/// (`lo > hi`).
pub fn time_bounds(predicate: &Arc<dyn PhysicalExpr>, time: &str, time_type: &DataType) -> Option<(i64, i64)> {
    let mut range = (i64::MIN, i64::MAX);
    collect(predicate, time, time_type, &mut range);
    (range != (i64::MIN, i64::MAX)).then_some(range)
}

fn collect(e: &Arc<dyn PhysicalExpr>, time: &str, ty: &DataType, range: &mut (i64, i64)) {
    let Some(b) = e.downcast_ref::<BinaryExpr>() else { return };
    if *b.op() == Operator::And {
        collect(b.left(), time, ty, range);
        collect(b.right(), time, ty, range);
        return;
    }
    // `time op literal`, or `literal op time` read with the operator swapped.
    let (op, value) = match (column_name(b.left()), literal(b.right(), ty), literal(b.left(), ty), column_name(b.right())) {
        (Some(c), Some(v), _, _) if c == time => (*b.op(), v),
        (_, _, Some(v), Some(c)) if c == time => match b.op().swap() {
            Some(op) => (op, v),
            None => return,
        },
        _ => return,
    };
    let (lo, hi) = range;
    match op {
        Operator::Eq => {
            *lo = (*lo).max(value);
            *hi = (*hi).min(value);
        }
        Operator::GtEq => *lo = (*lo).max(value),
        Operator::Gt => match value.checked_add(1) {
            Some(v) => *lo = (*lo).max(v),
            // Nothing is above i64::MAX: an empty range.
            None => (*lo, *hi) = (i64::MAX, i64::MIN),
        },
        Operator::LtEq => *hi = (*hi).min(value),
        Operator::Lt => match value.checked_sub(1) {
            Some(v) => *hi = (*hi).min(v),
            None => (*lo, *hi) = (i64::MAX, i64::MIN),
        },
        _ => {}
    }
}

fn column_name(e: &Arc<dyn PhysicalExpr>) -> Option<&str> {
    e.downcast_ref::<Column>().map(|c| c.name())
}

/// The raw value of a non-null literal of exactly the column's type (so units agree).
fn literal(e: &Arc<dyn PhysicalExpr>, ty: &DataType) -> Option<i64> {
    let v = e.downcast_ref::<Literal>()?.value();
    if v.data_type() != *ty {
        return None;
    }
    match v {
        ScalarValue::Int64(Some(x))
        | ScalarValue::TimestampSecond(Some(x), _)
        | ScalarValue::TimestampMillisecond(Some(x), _)
        | ScalarValue::TimestampMicrosecond(Some(x), _)
        | ScalarValue::TimestampNanosecond(Some(x), _) => Some(*x),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{Field, Schema, TimeUnit};
    use datafusion::physical_expr::expressions::{col, lit};

    fn ts(v: i64) -> ScalarValue {
        ScalarValue::TimestampMillisecond(Some(v), None)
    }

    fn bin(l: Arc<dyn PhysicalExpr>, op: Operator, r: Arc<dyn PhysicalExpr>) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(l, op, r))
    }

    #[test]
    fn test_bounds_of_conjunctions() {
        let ty = DataType::Timestamp(TimeUnit::Millisecond, None);
        let schema = Schema::new(vec![Field::new("time", ty.clone(), false), Field::new("v", DataType::Int64, true)]);
        let t = col("time", &schema).unwrap();
        let v = col("v", &schema).unwrap();
        let between =
            bin(bin(t.clone(), Operator::GtEq, lit(ts(10))), Operator::And, bin(t.clone(), Operator::LtEq, lit(ts(20))));
        assert_eq!(time_bounds(&between, "time", &ty), Some((10, 20)));
        // Strict bounds, a literal on the left, other conjuncts ignored.
        let e = bin(
            bin(lit(ts(10)), Operator::Lt, t.clone()),
            Operator::And,
            bin(bin(t.clone(), Operator::Lt, lit(ts(20))), Operator::And, bin(v.clone(), Operator::Gt, lit(5i64))),
        );
        assert_eq!(time_bounds(&e, "time", &ty), Some((11, 19)));
        assert_eq!(time_bounds(&bin(t.clone(), Operator::Eq, lit(ts(7))), "time", &ty), Some((7, 7)));
        // OR, other columns and literals of another type give no bound.
        let or = bin(bin(t.clone(), Operator::GtEq, lit(ts(10))), Operator::Or, bin(v.clone(), Operator::Gt, lit(5i64)));
        assert_eq!(time_bounds(&or, "time", &ty), None);
        assert_eq!(time_bounds(&bin(t.clone(), Operator::GtEq, lit(10i64)), "time", &ty), None);
        assert_eq!(time_bounds(&bin(v, Operator::GtEq, lit(10i64)), "time", &ty), None);
        // Contradictions give an empty range; extremes do not overflow.
        let empty = bin(bin(t.clone(), Operator::Gt, lit(ts(20))), Operator::And, bin(t.clone(), Operator::Lt, lit(ts(10))));
        let (lo, hi) = time_bounds(&empty, "time", &ty).unwrap();
        assert!(lo > hi);
        let (lo, hi) = time_bounds(&bin(t.clone(), Operator::Gt, lit(ts(i64::MAX))), "time", &ty).unwrap();
        assert!(lo > hi);
        let (lo, hi) = time_bounds(&bin(t, Operator::Lt, lit(ts(i64::MIN))), "time", &ty).unwrap();
        assert!(lo > hi);
    }
}
