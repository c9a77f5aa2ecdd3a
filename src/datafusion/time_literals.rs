//! IoTDB's way of writing times: an integer compared with a TsFile time column is an epoch
//! value in the column's unit (`WHERE time > 1704067200000` on a millisecond table).
//!
//! DataFusion refuses to compare `Timestamp(ms)` with `Int64`. [`EpochLiterals`] is a
//! [`FunctionRewrite`], run by the analyzer on every expression before type coercion: an
//! integer literal on the other side of `=`, `<>`, `<`, `<=`, `>`, `>=` (either order),
//! in `BETWEEN` bounds or in an `IN` list whose tested expression is a time column (a
//! column marked `TIME` in its field metadata, [`CATEGORY_KEY`]) becomes a timestamp literal
//! of that column's unit and zone. The filter then is a plain timestamp comparison, so
//! pruning by time statistics works as for `time > TIMESTAMP '…'`. Other columns, and
//! integers compared with anything else, are left alone.

use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, DFSchema, Result, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::{Between, InList};
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};

use arrow_schema::{DataType, TimeUnit};

use crate::arrow::schema::CATEGORY_KEY;

/// The rewrite (module doc); [`register_tsfile_format`](crate::datafusion::register_tsfile_format)
/// registers it.
#[derive(Debug, Default, Clone, Copy)]
pub struct EpochLiterals;

impl EpochLiterals {
    /// The rewrite's name, as the analyzer lists it.
    pub const NAME: &'static str = "tsfile_epoch_literals";
}

/// Add the rewrite to `state`'s analyzer, once.
pub(crate) fn register(state: &mut datafusion::execution::SessionState) -> Result<()> {
    use datafusion::execution::FunctionRegistry;
    if state.analyzer().function_rewrites().iter().any(|r| r.name() == EpochLiterals::NAME) {
        return Ok(());
    }
    state.register_function_rewrite(std::sync::Arc::new(EpochLiterals))
}

/// The unit and zone of `e` when it is a TsFile time column of `schema`.
fn time_column(e: &Expr, schema: &DFSchema) -> Option<(TimeUnit, Option<std::sync::Arc<str>>)> {
    let Expr::Column(c) = e else { return None };
    let field = field_of(c, schema)?;
    if field.metadata().get(CATEGORY_KEY).map(String::as_str) != Some("TIME") {
        return None;
    }
    match field.data_type() {
        DataType::Timestamp(unit, tz) => Some((*unit, tz.clone())),
        _ => None,
    }
}

fn field_of<'a>(c: &Column, schema: &'a DFSchema) -> Option<&'a arrow_schema::Field> {
    schema.qualified_field_from_column(c).ok().map(|(_, f)| f.as_ref())
}

/// The integer value of a literal (`5`, `-5`), if it is one.
fn integer(e: &Expr) -> Option<i64> {
    match e {
        Expr::Literal(v, _) => match v {
            ScalarValue::Int64(Some(v)) => Some(*v),
            ScalarValue::Int32(Some(v)) => Some(i64::from(*v)),
            ScalarValue::Int16(Some(v)) => Some(i64::from(*v)),
            ScalarValue::Int8(Some(v)) => Some(i64::from(*v)),
            ScalarValue::UInt32(Some(v)) => Some(i64::from(*v)),
            ScalarValue::UInt16(Some(v)) => Some(i64::from(*v)),
            ScalarValue::UInt8(Some(v)) => Some(i64::from(*v)),
            ScalarValue::UInt64(Some(v)) => i64::try_from(*v).ok(),
            _ => None,
        },
        Expr::Negative(inner) => integer(inner).and_then(i64::checked_neg),
        _ => None,
    }
}

/// `e` as a timestamp literal of `unit` / `tz` when it is an integer literal.
fn as_timestamp(e: &Expr, (unit, tz): &(TimeUnit, Option<std::sync::Arc<str>>)) -> Option<Expr> {
    let v = Some(integer(e)?);
    let tz = tz.clone();
    let value = match unit {
        TimeUnit::Second => ScalarValue::TimestampSecond(v, tz),
        TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(v, tz),
        TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(v, tz),
        TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(v, tz),
    };
    Some(Expr::Literal(value, None))
}

fn comparison(op: Operator) -> bool {
    matches!(op, Operator::Eq | Operator::NotEq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq)
}

impl FunctionRewrite for EpochLiterals {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn rewrite(&self, expr: Expr, schema: &DFSchema, _config: &ConfigOptions) -> Result<Transformed<Expr>> {
        Ok(match expr {
            Expr::BinaryExpr(b) if comparison(b.op) => {
                if let Some(unit) = time_column(&b.left, schema) {
                    match as_timestamp(&b.right, &unit) {
                        Some(lit) => Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(b.left, b.op, Box::new(lit)))),
                        None => Transformed::no(Expr::BinaryExpr(b)),
                    }
                } else if let Some(unit) = time_column(&b.right, schema) {
                    match as_timestamp(&b.left, &unit) {
                        Some(lit) => Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(Box::new(lit), b.op, b.right))),
                        None => Transformed::no(Expr::BinaryExpr(b)),
                    }
                } else {
                    Transformed::no(Expr::BinaryExpr(b))
                }
            }
            Expr::Between(b) => match time_column(&b.expr, schema) {
                Some(unit) => {
                    let low = as_timestamp(&b.low, &unit);
                    let high = as_timestamp(&b.high, &unit);
                    if low.is_none() && high.is_none() {
                        Transformed::no(Expr::Between(b))
                    } else {
                        let low = low.map_or(b.low, Box::new);
                        let high = high.map_or(b.high, Box::new);
                        Transformed::yes(Expr::Between(Between::new(b.expr, b.negated, low, high)))
                    }
                }
                None => Transformed::no(Expr::Between(b)),
            },
            Expr::InList(l) => match time_column(&l.expr, schema) {
                Some(unit) if l.list.iter().any(|e| integer(e).is_some()) => {
                    let list = l.list.into_iter().map(|e| as_timestamp(&e, &unit).unwrap_or(e)).collect();
                    Transformed::yes(Expr::InList(InList::new(l.expr, list, l.negated)))
                }
                _ => Transformed::no(Expr::InList(l)),
            },
            other => Transformed::no(other),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use arrow_schema::{Field, Schema};
    use datafusion::logical_expr::{col, lit};

    fn schema() -> DFSchema {
        let time = Field::new("time", DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())), false)
            .with_metadata(HashMap::from([(CATEGORY_KEY.to_string(), "TIME".to_string())]));
        let other = Field::new("stamp", DataType::Timestamp(TimeUnit::Millisecond, None), true);
        let n = Field::new("n", DataType::Int64, true);
        DFSchema::try_from(Schema::new(vec![time, other, n])).unwrap()
    }

    fn rewrite(e: Expr) -> Transformed<Expr> {
        EpochLiterals.rewrite(e, &schema(), &ConfigOptions::default()).unwrap()
    }

    fn us(v: i64) -> Expr {
        Expr::Literal(ScalarValue::TimestampMicrosecond(Some(v), Some("+00:00".into())), None)
    }

    #[test]
    fn test_integers_compared_with_the_time_column_become_timestamps_of_its_unit() {
        for op in [Operator::Eq, Operator::NotEq, Operator::Lt, Operator::LtEq, Operator::Gt, Operator::GtEq] {
            let e = rewrite(Expr::BinaryExpr(BinaryExpr::new(Box::new(col("time")), op, Box::new(lit(5i64)))));
            assert!(e.transformed);
            assert_eq!(e.data, Expr::BinaryExpr(BinaryExpr::new(Box::new(col("time")), op, Box::new(us(5)))));
            // Literal first.
            let e = rewrite(Expr::BinaryExpr(BinaryExpr::new(Box::new(lit(7i32)), op, Box::new(col("time")))));
            assert_eq!(e.data, Expr::BinaryExpr(BinaryExpr::new(Box::new(us(7)), op, Box::new(col("time")))));
        }
        // Negative, boundary values.
        assert_eq!(rewrite(col("time").gt(-lit(3i64))).data, col("time").gt(us(-3)));
        assert_eq!(rewrite(col("time").lt(lit(i64::MAX))).data, col("time").lt(us(i64::MAX)));
        assert_eq!(rewrite(col("time").lt(lit(i64::MIN))).data, col("time").lt(us(i64::MIN)));
        // A u64 beyond i64 is left for the type checker to refuse.
        assert!(!rewrite(col("time").lt(lit(u64::MAX))).transformed);
        // BETWEEN (one bound may already be a timestamp), IN lists (mixed).
        assert_eq!(rewrite(col("time").between(lit(1i64), lit(2i64))).data, col("time").between(us(1), us(2)));
        assert_eq!(rewrite(col("time").not_between(lit(1i64), us(2))).data, col("time").not_between(us(1), us(2)));
        assert_eq!(
            rewrite(col("time").in_list(vec![lit(1i64), us(9)], false)).data,
            col("time").in_list(vec![us(1), us(9)], false)
        );
        assert_eq!(rewrite(col("time").in_list(vec![lit(1i64)], true)).data, col("time").in_list(vec![us(1)], true));
    }

    #[test]
    fn test_other_columns_and_other_literals_are_left_alone() {
        for e in [
            col("stamp").gt(lit(5i64)),              // a timestamp column that is not the TsFile time column
            col("n").gt(lit(5i64)),                  // an integer column
            col("time").gt(lit("2024-01-01")),       // a string: DataFusion's own coercion
            col("time").gt(lit(1.5f64)),             // a float
            col("time").gt(us(3)),                   // already a timestamp
            (col("time") + lit(1i64)).gt(lit(5i64)), // an expression of the column
            col("time").in_list(vec![us(1)], false), // nothing to convert
            col("nope").gt(lit(5i64)),               // unknown column
            col("time").between(us(1), us(2)),
            Expr::Literal(ScalarValue::Int64(None), None),
        ] {
            let r = rewrite(e.clone());
            assert!(!r.transformed, "{e}");
            assert_eq!(r.data, e);
        }
        // A null integer is not an epoch value.
        assert!(!rewrite(col("time").gt(Expr::Literal(ScalarValue::Int64(None), None))).transformed);
    }
}
