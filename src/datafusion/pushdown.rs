//! Filters pushed into a scan plan that no physical optimizer will see.
//!
//! A [`TsFileTable`](crate::datafusion::TsFileTable) prunes devices, chunks and pages with
//! the predicate that DataFusion's `FilterPushdown` physical optimizer hands its scan: the
//! `filters` given to `TableProvider::scan` are only used to prune files. A scan planned for
//! a host that optimizes its own plan around an opaque node — a datafusion-python session
//! receiving the scan across `datafusion-ffi` — never gets that predicate, and would decode
//! every row. [`push_scan_filters`] does the optimizer's part at `scan` time: it puts the
//! filters in a `FilterExec` over the scan and lets `FilterPushdown` move what the scan
//! accepts into it. What remains is filtered there (the host filters again, as it does
//! for any `Inexact` pushdown), so the rows are the same either way.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr_rewriter::unnormalize_col;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{Expr, Operator};
use datafusion::physical_expr::create_physical_expr;
use datafusion::physical_expr::expressions::BinaryExpr;
use datafusion::physical_optimizer::filter_pushdown::FilterPushdown;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::ExecutionPlan;

/// `plan` (a table scan) with `filters` (the ones `scan` received) pushed into it as the
/// physical optimizer would. Filters on columns the plan does not output (partition
/// columns answered by file listing) and filters that cannot be planned on their own are
/// left out (the host applies every filter anyway); `plan` is returned unchanged when none
/// remain.
pub fn push_scan_filters(plan: Arc<dyn ExecutionPlan>, filters: &[Expr], state: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
    let schema = plan.schema();
    let outputs: HashSet<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let df_schema = DFSchema::try_from(Arc::clone(&schema))?;
    // Planned here, not by `state`: a host's session may hand back its own (foreign)
    // expressions, opaque to the scan's pruning.
    let planning = PhysicalPlanningContext::default();
    let usable = filters
        .iter()
        .map(|f| unnormalize_col(f.clone()))
        .filter(|f| f.column_refs().iter().all(|c| outputs.contains(c.name.as_str())))
        .filter_map(|f| create_physical_expr(&f, &df_schema, state.execution_props(), &planning).ok());
    let Some(predicate) = usable.reduce(|a, b| Arc::new(BinaryExpr::new(a, Operator::And, b))) else {
        return Ok(plan);
    };
    let filtered: Arc<dyn ExecutionPlan> = Arc::new(FilterExec::try_new(predicate, plan)?);
    FilterPushdown::new().optimize(filtered, state.config_options())
}
