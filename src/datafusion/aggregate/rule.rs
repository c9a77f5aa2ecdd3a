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
use datafusion::functions_aggregate::first_last::{FirstValue, LastValue};
use datafusion::functions_aggregate::min_max::{Max, Min};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::physical_expr::aggregate::AggregateFunctionExpr;
use datafusion::physical_expr::expressions::{CastExpr, Column, Literal, TryCastExpr};
use datafusion::physical_expr::{split_conjunction, ScalarFunctionExpr};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{ExecutionPlan, Partitioning, PhysicalExpr};

use super::exec::{StatisticsAggregateExec, StatisticsQuery};
use super::{AggSpec, Arg, Func, GroupCol};
use crate::arrow::schema::CATEGORY_KEY;
use crate::datafusion::session_options::TsFileSessionOptions;
use crate::datafusion::source::TsFileSource;
use crate::datafusion::time_bounds::time_bounds;
use crate::stats::{TimeBuckets, TimeRange};

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
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        if config.extensions.get::<TsFileSessionOptions>().is_some_and(|o| !o.statistics_aggregates) {
            return Ok(plan);
        }
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
    // A sorted aggregation (InputOrderMode other than Linear) is taken too: the node sorts
    // each partition's answer by the output ordering the aggregation promises.
    if !agg.group_expr().is_single() || agg.limit_options().is_some() || agg.filter_expr().iter().any(Option::is_some) {
        return None;
    }
    // The aggregation reads the scan, maybe through a filter on time and TAG columns, and a
    // partial one maybe through a round-robin repartition above or below that filter.
    let input = skip_round_robin(agg.input(), partial);
    let filter = input.downcast_ref::<FilterExec>();
    let scan_node = skip_round_robin(filter.map_or(input, |f| f.input()), partial);
    let scan = scan_node.downcast_ref::<DataSourceExec>()?;
    let (config, source) = scan.downcast_to_file_source::<TsFileSource>()?;
    if config.limit.is_some() || source.options().disable_statistics_aggregates {
        return None;
    }
    let table_schema = source.table_schema();
    let columns = ScanColumns {
        filter_projection: filter.and_then(|f| f.projection().as_ref().map(|p| p.iter().copied().collect())),
        projection: FileSource::projection(source),
        table_schema: table_schema.table_schema(),
        file_schema: table_schema.file_schema(),
    };
    let (range, tag_filter, conjuncts) = match filter {
        None => (TimeRange::all(), None, Vec::new()),
        Some(f) => columns.row_filter(f.predicate())?,
    };
    // A filter of the scan is tolerated when it is made of the filter's own conjuncts or
    // this aggregation's dynamic filter (DataFusion's min/max pushdown): it can then only
    // skip rows that cannot change the answer.
    if let Some(p) = source.predicate() {
        let own = node.dynamic_expressions_produced();
        let known = |c: &Arc<dyn PhysicalExpr>| {
            own.iter().any(|o| std::ptr::addr_eq(Arc::as_ptr(c), Arc::as_ptr(o)))
                || conjuncts.iter().any(|k| k.as_ref() == c.as_ref())
        };
        let whole = own.iter().any(|o| std::ptr::addr_eq(Arc::as_ptr(p), Arc::as_ptr(o)));
        if !whole && !split_conjunction(p).into_iter().all(known) {
            return None;
        }
    }
    let groups = agg.group_expr().expr().iter().map(|(e, _)| columns.group_column(e)).collect::<Option<Vec<GroupCol>>>()?;
    if groups.iter().filter(|g| matches!(g, GroupCol::Bucket(..))).count() > 1 {
        return None;
    }
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
        range,
        tag_filter,
        table_schema: Arc::new(columns.file_schema.clone()),
        file_groups: config.file_groups.iter().map(|g| g.files().to_vec()).collect(),
        store_url: config.object_store_url.clone(),
        options: source.options().clone(),
        cache: source.cache().clone(),
    };
    Some(Arc::new(StatisticsAggregateExec::new(query, node.clone())))
}

/// The input of `plan` when it is a round-robin repartition under a partial aggregation
/// (`partial`), else `plan`. Spreading batches over partitions changes no partial answer
/// that the final aggregation merges.
fn skip_round_robin(plan: &Arc<dyn ExecutionPlan>, partial: bool) -> &Arc<dyn ExecutionPlan> {
    match plan.downcast_ref::<RepartitionExec>() {
        Some(r) if partial && matches!(r.partitioning(), Partitioning::RoundRobinBatch(_)) => r.input(),
        _ => plan,
    }
}

/// Columns of the scan's output traced back to the table: the scan may compute
/// expressions (DataFusion pushes projections such as a common `CAST(x AS Float64)` into
/// it), so a column of its output is the projection's expression over the table schema.
struct ScanColumns<'a> {
    /// The filter's own projection (its output column `i` is its input column `p[i]`).
    filter_projection: Option<Vec<usize>>,
    projection: Option<&'a ProjectionExprs>,
    table_schema: &'a Schema,
    file_schema: &'a Schema,
}

impl ScanColumns<'_> {
    /// The expression over the table schema that column expression `e` of the
    /// aggregation's input stands for (`e` itself for an expression that is not a column).
    fn resolve(&self, e: &Arc<dyn PhysicalExpr>) -> Option<Arc<dyn PhysicalExpr>> {
        let Some(c) = e.downcast_ref::<Column>() else { return Some(e.clone()) };
        let index = match &self.filter_projection {
            Some(p) => *p.get(c.index())?,
            None => c.index(),
        };
        self.resolve_scan_column(index, e)
    }

    /// Column `index` of the scan's output over the table schema (`e` when no projection).
    fn resolve_scan_column(&self, index: usize, e: &Arc<dyn PhysicalExpr>) -> Option<Arc<dyn PhysicalExpr>> {
        match self.projection {
            Some(p) => p.as_ref().get(index).map(|pe| pe.expr.clone()),
            None => match e.downcast_ref::<Column>() {
                Some(c) if c.index() == index => Some(e.clone()),
                _ => {
                    self.table_schema.fields().get(index).map(|f| Arc::new(Column::new(f.name(), index)) as Arc<dyn PhysicalExpr>)
                }
            },
        }
    }

    /// A predicate over the scan's output rewritten over the table schema.
    fn resolve_predicate(&self, e: &Arc<dyn PhysicalExpr>) -> Option<Arc<dyn PhysicalExpr>> {
        let mut ok = true;
        let out = e
            .clone()
            .transform_up(|node| {
                if let Some(c) = node.downcast_ref::<Column>() {
                    match self.resolve_scan_column(c.index(), &node) {
                        Some(r) => return Ok(Transformed::yes(r)),
                        None => ok = false,
                    }
                }
                Ok(Transformed::no(node))
            })
            .data()
            .ok()?;
        ok.then_some(out)
    }

    /// A filter the statistics can answer under: a conjunction of comparisons of the time
    /// column with literals and of predicates over TAG columns only. Gives the time range,
    /// the TAG predicate (over the table schema) and every conjunct (over the table schema).
    #[allow(clippy::type_complexity)]
    fn row_filter(
        &self,
        predicate: &Arc<dyn PhysicalExpr>,
    ) -> Option<(TimeRange, Option<Arc<dyn PhysicalExpr>>, Vec<Arc<dyn PhysicalExpr>>)> {
        let predicate = self.resolve_predicate(predicate)?;
        let time = self.file_schema.fields().first()?;
        let mut tags: Vec<Arc<dyn PhysicalExpr>> = Vec::new();
        let conjuncts: Vec<Arc<dyn PhysicalExpr>> = split_conjunction(&predicate).into_iter().cloned().collect();
        for c in &conjuncts {
            if self.only_tags(c) {
                tags.push(c.clone());
            } else if time_bounds(c, time.name(), time.data_type()).is_none() || !is_time_comparison(c) {
                return None;
            }
        }
        let range = match time_bounds(&predicate, time.name(), time.data_type()) {
            None => TimeRange::all(),
            Some((lo, hi)) => TimeRange::closed(lo, hi),
        };
        let tag_filter = tags.into_iter().reduce(|a, b| {
            Arc::new(datafusion::physical_expr::expressions::BinaryExpr::new(a, datafusion::logical_expr::Operator::And, b))
                as Arc<dyn PhysicalExpr>
        });
        Some((range, tag_filter, conjuncts))
    }

    /// True when `e` reads columns and every one is a TAG column of the files.
    fn only_tags(&self, e: &Arc<dyn PhysicalExpr>) -> bool {
        let cols = datafusion::physical_expr::utils::collect_columns(e);
        !cols.is_empty()
            && cols.iter().all(|c| {
                let col: Arc<dyn PhysicalExpr> = Arc::new(c.clone());
                self.file_field(&col).is_some_and(|(i, f)| i > 0 && category(f) == Some("TAG"))
            })
    }

    /// A GROUP BY expression: a TAG column or `date_bin(<interval>, time[, <origin>])`.
    fn group_column(&self, e: &Arc<dyn PhysicalExpr>) -> Option<GroupCol> {
        if let Some(name) = self.tag_column(e) {
            return Some(GroupCol::Tag(name));
        }
        let f = e.downcast_ref::<ScalarFunctionExpr>()?;
        if f.name() != "date_bin" {
            return None;
        }
        let (interval, source, origin) = match f.args() {
            [i, s] => (i, s, None),
            [i, s, o] => (i, s, Some(o)),
            _ => return None,
        };
        let (index, field) = self.file_field(&self.resolve(source)?)?;
        if index != 0 {
            return None;
        }
        let ty = field.data_type().clone();
        let ns_per_unit = match &ty {
            DataType::Timestamp(unit, None) => match unit {
                arrow_schema::TimeUnit::Second => 1_000_000_000,
                arrow_schema::TimeUnit::Millisecond => 1_000_000,
                arrow_schema::TimeUnit::Microsecond => 1_000,
                arrow_schema::TimeUnit::Nanosecond => 1,
            },
            _ => return None,
        };
        let stride_ns = interval_nanos(interval.downcast_ref::<Literal>()?.value())?;
        let origin_ns = match origin {
            None => 0,
            Some(o) => match o.downcast_ref::<Literal>()?.value() {
                datafusion::common::ScalarValue::TimestampNanosecond(Some(v), _) => *v,
                _ => return None,
            },
        };
        if f.return_type() != &ty {
            return None;
        }
        let buckets = TimeBuckets::with_unit(stride_ns, origin_ns, ns_per_unit).ok()?;
        Some(GroupCol::Bucket(buckets, ty))
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

/// The stride of a `date_bin` interval literal in nanoseconds: positive, without months.
fn interval_nanos(v: &datafusion::common::ScalarValue) -> Option<i64> {
    use datafusion::common::ScalarValue;
    let nanos = match v {
        ScalarValue::IntervalMonthDayNano(Some(i)) if i.months == 0 => {
            i64::from(i.days).checked_mul(86_400_000_000_000)?.checked_add(i.nanoseconds)?
        }
        ScalarValue::IntervalDayTime(Some(i)) => {
            i64::from(i.days).checked_mul(86_400_000_000_000)?.checked_add(i64::from(i.milliseconds).checked_mul(1_000_000)?)?
        }
        _ => return None,
    };
    (nanos > 0).then_some(nanos)
}

/// True when `e` is a comparison of a column with a literal (what `time_bounds` reads).
fn is_time_comparison(e: &Arc<dyn PhysicalExpr>) -> bool {
    use datafusion::logical_expr::Operator;
    let Some(b) = e.downcast_ref::<datafusion::physical_expr::expressions::BinaryExpr>() else { return false };
    matches!(b.op(), Operator::Eq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq)
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
    if a.is_distinct() {
        return None;
    }
    let inner = a.fun().inner();
    let positioned = |last: bool| -> Option<Func> {
        // `first_value`/`last_value(x ORDER BY time [ASC|DESC])`: one ordering, the time column.
        let [order] = a.order_bys() else { return None };
        let (index, _) = columns.file_field(&columns.resolve(&order.expr)?)?;
        if index != 0 {
            return None;
        }
        let last = last != order.options.descending;
        let ignore_nulls = a.ignore_nulls();
        Some(if last { Func::Last { ignore_nulls } } else { Func::First { ignore_nulls } })
    };
    let func = if inner.downcast_ref::<FirstValue>().is_some() {
        positioned(false)?
    } else if inner.downcast_ref::<LastValue>().is_some() {
        positioned(true)?
    } else if !a.order_bys().is_empty() {
        return None;
    } else if inner.downcast_ref::<Count>().is_some() {
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
    let value_type = |t: &DataType| {
        matches!(
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
        (Func::Min | Func::Max, Arg::Field(..), Some(t)) => arg_type == *t && value_type(t),
        (Func::First { .. } | Func::Last { .. }, Arg::Field(..), Some(t)) => arg_type == *t && value_type(t),
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
    // The layouts the output produces: count Int64; sum Int64/Float64; avg [UInt64, Float64]
    // (final Float64); min/max the column's type; first/last [value, time, is_set] (final
    // the value).
    let time_type = columns.file_schema.fields().first()?.data_type().clone();
    let expected: Vec<DataType> = match func {
        Func::Count => vec![DataType::Int64],
        Func::Sum => vec![arg_type.clone()],
        Func::Avg if partial => vec![DataType::UInt64, DataType::Float64],
        Func::Avg => vec![DataType::Float64],
        Func::Min | Func::Max => vec![column_type?],
        Func::First { .. } | Func::Last { .. } if partial => vec![column_type?, time_type, DataType::Boolean],
        Func::First { .. } | Func::Last { .. } => vec![column_type?],
    };
    (types == expected).then_some(AggSpec { func, arg, types })
}
