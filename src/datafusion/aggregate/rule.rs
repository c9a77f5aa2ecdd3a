//! `TsFileStatisticsAggregate`: the physical optimizer rule that finds aggregations over
//! TsFile scans that statistics can answer and puts a [`StatisticsAggregateExec`] in their
//! place. Everything the plan decides is checked here; what the files hold is checked when
//! the node runs.

use std::sync::Arc;

use arrow_schema::{DataType, Schema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::Result;
use datafusion::datasource::physical_plan::FileSource;
use datafusion::datasource::source::DataSourceExec;
use datafusion::functions_aggregate::average::Avg;
use datafusion::functions_aggregate::count::Count;
use datafusion::functions_aggregate::min_max::{Max, Min};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::physical_expr::aggregate::AggregateFunctionExpr;
use datafusion::physical_expr::expressions::{CastExpr, Column, Literal, TryCastExpr};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::{ExecutionPlan, InputOrderMode, PhysicalExpr};

use super::accumulate::Func;
use super::exec::{StatisticsAggregateExec, StatisticsQuery};
use super::{AggSpec, Arg};
use crate::arrow::schema::CATEGORY_KEY;
use crate::datafusion::source::TsFileSource;

/// Physical optimizer rule answering aggregations over TsFile scans from statistics.
///
/// [`register_tsfile_format`](crate::datafusion::register_tsfile_format) (and so every
/// `register_tsfile*` helper) adds it to the session; with a `SessionStateBuilder`, add it
/// yourself with `.with_physical_optimizer_rule(Arc::new(TsFileStatisticsAggregate))`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TsFileStatisticsAggregate;

impl TsFileStatisticsAggregate {
    /// The rule's name (as listed among the session's physical optimizer rules).
    pub const NAME: &'static str = "tsfile_statistics_aggregate";
}

impl PhysicalOptimizerRule for TsFileStatisticsAggregate {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, _config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_down(|node| {
            Ok(match rewrite(&node) {
                Some(new) => Transformed::yes(new),
                None => Transformed::no(node),
            })
        })
        .data()
    }

    fn name(&self) -> &str {
        Self::NAME
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// The replacement of `node`, when it is an aggregation statistics can answer.
fn rewrite(node: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    let agg = node.downcast_ref::<AggregateExec>()?;
    let partial = match agg.mode() {
        AggregateMode::Partial => true,
        AggregateMode::Single => false,
        _ => return None,
    };
    if !agg.group_expr().is_single()
        || agg.limit_options().is_some()
        || agg.filter_expr().iter().any(Option::is_some)
        || *agg.input_order_mode() != InputOrderMode::Linear
    {
        return None;
    }
    let scan = agg.input().downcast_ref::<DataSourceExec>()?;
    let (config, source) = scan.downcast_to_file_source::<TsFileSource>()?;
    if config.limit.is_some() || source.options().disable_statistics_aggregates {
        return None;
    }
    // A filter of the scan is only tolerated when it is this aggregation's own dynamic
    // filter (DataFusion's min/max pushdown): it can only skip rows that cannot change
    // the answer.
    if let Some(p) = source.predicate() {
        let own = node.dynamic_expressions_produced();
        if !own.iter().any(|o| std::ptr::addr_eq(Arc::as_ptr(p), Arc::as_ptr(o))) {
            return None;
        }
    }
    let table_schema = source.table_schema();
    let columns = ScanColumns {
        projection: FileSource::projection(source),
        table_schema: table_schema.table_schema(),
        file_schema: table_schema.file_schema(),
    };
    let groups = agg.group_expr().expr().iter().map(|(e, _)| columns.tag_column(e)).collect::<Option<Vec<String>>>()?;
    let aggregates = agg.aggr_expr().iter().map(|a| aggregate_spec(a, partial, &columns)).collect::<Option<Vec<AggSpec>>>()?;
    // The output must be exactly group columns then value or state columns.
    let produced = groups.len() + aggregates.iter().map(|a| a.types.len()).sum::<usize>();
    if produced != agg.schema().fields().len() {
        return None;
    }
    let query = StatisticsQuery {
        groups,
        aggregates,
        partial,
        file_groups: config.file_groups.iter().map(|g| g.files().to_vec()).collect(),
        store_url: config.object_store_url.clone(),
        options: source.options().clone(),
        cache: source.cache().clone(),
    };
    Some(Arc::new(StatisticsAggregateExec::new(query, node.clone())))
}

/// Columns of the scan's output traced back to the table: the scan may compute
/// expressions (DataFusion pushes projections such as a common `CAST(x AS Float64)` into
/// it), so a column of its output is the projection's expression over the table schema.
struct ScanColumns<'a> {
    projection: Option<&'a ProjectionExprs>,
    table_schema: &'a Schema,
    file_schema: &'a Schema,
}

impl ScanColumns<'_> {
    /// The expression over the table schema that column expression `e` of the scan's
    /// output stands for (`e` itself for an expression that is not a column).
    fn resolve(&self, e: &Arc<dyn PhysicalExpr>) -> Option<Arc<dyn PhysicalExpr>> {
        let Some(c) = e.downcast_ref::<Column>() else { return Some(e.clone()) };
        match self.projection {
            Some(p) => p.as_ref().get(c.index()).map(|pe| pe.expr.clone()),
            None => Some(e.clone()),
        }
    }

    /// The file column (index, field) that a column of the table schema is; partition
    /// columns are not file columns.
    fn file_field(&self, e: &Arc<dyn PhysicalExpr>) -> Option<(usize, &arrow_schema::Field)> {
        let c = e.downcast_ref::<Column>()?;
        let f = self.file_schema.fields().get(c.index())?;
        let t = self.table_schema.fields().get(c.index())?;
        (f.name() == c.name() && f == t).then_some((c.index(), f.as_ref()))
    }

    /// A GROUP BY expression that is a TAG column.
    fn tag_column(&self, e: &Arc<dyn PhysicalExpr>) -> Option<String> {
        let (i, f) = self.file_field(&self.resolve(e)?)?;
        (i > 0 && category(f) == Some("TAG")).then(|| f.name().clone())
    }

    /// The argument of an aggregate: a literal, the time column or a FIELD column, maybe
    /// under the cast type coercion adds (`avg(int)` reads `CAST(x AS Float64)`); with
    /// the type the aggregate sees.
    fn argument(&self, e: &Arc<dyn PhysicalExpr>) -> Option<(Arg, DataType)> {
        // The cast is either the aggregate's own (over a scan column) or was pushed into
        // the scan (the scan column is the cast); one cast at most.
        let (e, outer_cast) = match split_cast(e) {
            (inner, Some(to)) => (self.resolve(&inner)?, Some(to)),
            (e, None) => (self.resolve(&e)?, None),
        };
        if let Some(l) = e.downcast_ref::<Literal>() {
            let arg = if l.value().is_null() { Arg::Nothing } else { Arg::Rows };
            return Some((arg, outer_cast.unwrap_or_else(|| l.value().data_type())));
        }
        let (inner, cast_to) = match (split_cast(&e), outer_cast) {
            ((inner, Some(to)), None) => (inner, Some(to)),
            ((inner, None), outer) => (inner, outer),
            ((_, Some(_)), Some(_)) => return None,
        };
        let (i, f) = self.file_field(&inner)?;
        let ty = f.data_type().clone();
        // Only the widening casts of numbers that coercion inserts: exact per value, or
        // the same rounding DataFusion applies before summing.
        if let Some(to) = &cast_to {
            let numeric = matches!(ty, DataType::Int32 | DataType::Int64 | DataType::Float32 | DataType::Float64);
            if !numeric || !matches!(to, DataType::Int64 | DataType::Float64) || (ty.is_floating() && to.is_integer()) {
                return None;
            }
        }
        let arg = match category(f) {
            _ if i == 0 => Arg::Time(f.name().clone(), ty.clone()),
            Some("TAG") | Some("ATTRIBUTE") => return None,
            _ => Arg::Field(f.name().clone(), ty.clone()),
        };
        Some((arg, cast_to.unwrap_or(ty)))
    }
}

/// `CAST(x AS t)` or `TRY_CAST(x AS t)` as `(x, Some(t))`; anything else as `(e, None)`.
fn split_cast(e: &Arc<dyn PhysicalExpr>) -> (Arc<dyn PhysicalExpr>, Option<DataType>) {
    if let Some(c) = e.downcast_ref::<CastExpr>() {
        (c.expr().clone(), Some(c.cast_type().clone()))
    } else if let Some(c) = e.downcast_ref::<TryCastExpr>() {
        (c.expr().clone(), Some(c.cast_type().clone()))
    } else {
        (e.clone(), None)
    }
}

fn category(f: &arrow_schema::Field) -> Option<&str> {
    f.metadata().get(CATEGORY_KEY).map(String::as_str)
}

/// The statistics form of one aggregate, when its function, argument and output types are
/// ones statistics answer.
fn aggregate_spec(a: &AggregateFunctionExpr, partial: bool, columns: &ScanColumns<'_>) -> Option<AggSpec> {
    if a.is_distinct() || !a.order_bys().is_empty() {
        return None;
    }
    let inner = a.fun().inner();
    let func = if inner.downcast_ref::<Count>().is_some() {
        Func::Count
    } else if inner.downcast_ref::<Sum>().is_some() {
        Func::Sum
    } else if inner.downcast_ref::<Avg>().is_some() {
        Func::Avg
    } else if inner.downcast_ref::<Min>().is_some() {
        Func::Min
    } else if inner.downcast_ref::<Max>().is_some() {
        Func::Max
    } else {
        return None;
    };
    let [e] = a.expressions().try_into().ok()?;
    let (arg, arg_type) = columns.argument(&e)?;
    let column_type = match &arg {
        Arg::Rows | Arg::Nothing => None,
        Arg::Time(_, t) | Arg::Field(_, t) => Some(t.clone()),
    };
    let supported = match (func, &arg, column_type.as_ref()) {
        (Func::Count, _, _) => true,
        (_, Arg::Rows | Arg::Nothing, _) => false,
        (Func::Sum, Arg::Field(..), Some(t)) => {
            matches!(
                (t, &arg_type),
                (DataType::Int32 | DataType::Int64, DataType::Int64) | (DataType::Float32 | DataType::Float64, DataType::Float64)
            )
        }
        (Func::Avg, Arg::Field(..), Some(t)) => {
            matches!(t, DataType::Int32 | DataType::Int64 | DataType::Float32 | DataType::Float64)
                && arg_type == DataType::Float64
        }
        (Func::Min | Func::Max, Arg::Time(..), _) => true,
        (Func::Min | Func::Max, Arg::Field(..), Some(t)) => {
            arg_type == *t
                && matches!(
                    t,
                    DataType::Int32
                        | DataType::Int64
                        | DataType::Float32
                        | DataType::Float64
                        | DataType::Date32
                        | DataType::Boolean
                        | DataType::Utf8
                        | DataType::Timestamp(..)
                )
        }
        _ => false,
    };
    if !supported {
        return None;
    }
    let types: Vec<DataType> = if partial {
        a.state_fields().ok()?.iter().map(|f| f.data_type().clone()).collect()
    } else {
        vec![a.field().data_type().clone()]
    };
    // The layouts `Acc` produces: count Int64; sum Int64/Float64; avg [UInt64, Float64]
    // (final Float64); min/max the column's type.
    let expected: Vec<DataType> = match func {
        Func::Count => vec![DataType::Int64],
        Func::Sum => vec![arg_type.clone()],
        Func::Avg if partial => vec![DataType::UInt64, DataType::Float64],
        Func::Avg => vec![DataType::Float64],
        Func::Min | Func::Max => vec![column_type?],
    };
    (types == expected).then_some(AggSpec { func, arg, types })
}
