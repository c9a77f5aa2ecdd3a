//! `push_scan_filters`: a scan planned for a host that runs no physical optimizer over it
//! (datafusion-python across datafusion-ffi) still prunes. The filters a `TableScan` gets,
//! pushed into the provider's own scan plan, give exactly the rows of the same query in a
//! session of our own, while decoding what that session decodes, not the whole table.

use std::sync::Arc;

use datafusion::catalog::TableProvider;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion_tsfile::datafusion::{push_scan_filters, register_tsfile_format, TsFileReadOptions, TsFileTable};
use serde_json::Value;

use crate::common::repo_path;
use crate::sql::{block_on, ctx, metric, rows_of, run};

/// The projection and filters DataFusion's logical optimizer hands the table's scan in `sql`.
async fn scan_args(c: &datafusion::prelude::SessionContext, sql: &str) -> (Option<Vec<usize>>, Vec<Expr>) {
    let plan = c.sql(sql).await.unwrap().into_optimized_plan().unwrap();
    let mut found = None;
    plan.apply(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            found = Some((scan.projection.clone(), scan.filters.clone()));
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    found.expect("a table scan")
}

fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by_key(|r| serde_json::to_string(r).unwrap());
    rows
}

#[test]
fn test_pushed_filters_prune_and_keep_the_rows() {
    let path = repo_path("data/sample.tsfile");
    let cases = [
        // TAG equality: one device of 300 is decoded.
        ("SELECT time, temperature FROM t WHERE device = 'ws-north-0-0' AND site = 'north-site-0'", 1),
        // A time range: chunks and pages outside it are skipped.
        ("SELECT region, humidity FROM t WHERE time >= '2024-01-02' AND time < '2024-01-02T06:00:00'", 300),
        // A FIELD threshold nothing reaches: nothing is decoded.
        ("SELECT temperature FROM t WHERE temperature > 1000", 0),
        // TAG list and a FIELD bound together.
        ("SELECT device, pressure FROM t WHERE region IN ('east', 'west') AND pressure < 1000", 299),
    ];
    block_on(async {
        let c = ctx(2);
        register_tsfile_format(&c).unwrap();
        let state = c.state();
        let table =
            Arc::new(TsFileTable::try_new(&state, &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap());
        c.register_table("t", table.clone()).unwrap();
        // Devices read at most (owned minus pruned: a TAG filter may build a view of only its
        // devices, or prune the others from the whole view).
        for (sql, max_devices_read) in cases {
            let (want, own_plan) = run(&c, sql).await;
            let (projection, filters) = scan_args(&c, sql).await;
            assert!(!filters.is_empty(), "{sql}");
            let bare = table.scan(&state, projection.as_ref(), &filters, None).await.unwrap();
            let pushed = push_scan_filters(bare.clone(), &filters, &state).unwrap();
            let got = collect(pushed.clone(), c.task_ctx()).await.unwrap();
            // The same rows (the projection of the scan may order columns differently: compare
            // the columns the query returns).
            let names: Vec<String> = own_plan.schema().fields().iter().map(|f| f.name().clone()).collect();
            let got: Vec<_> = got
                .iter()
                .map(|b| b.project(&names.iter().map(|n| b.schema().index_of(n).unwrap()).collect::<Vec<_>>()).unwrap())
                .collect();
            assert_eq!(sorted(rows_of(&got)), sorted(rows_of(&want)), "{sql}");
            // Decoded what our own session decodes, less than the bare scan.
            // (A scan plan's files are shared by the plans derived from it: run a new one.)
            let bare = table.scan(&state, projection.as_ref(), &filters, None).await.unwrap();
            let unpushed = collect(bare.clone(), c.task_ctx()).await.unwrap();
            assert_eq!(unpushed.iter().map(|b| b.num_rows()).sum::<usize>(), 1_006_239, "{sql}");
            assert_eq!(metric(&pushed, "rows_decoded"), metric(&own_plan, "rows_decoded"), "{sql}");
            assert!(metric(&pushed, "rows_decoded") < metric(&bare, "rows_decoded"), "{sql}");
            let read = metric(&pushed, "devices_total") - metric(&pushed, "devices_pruned");
            assert!(read <= max_devices_read, "{sql}: {read} devices read");
        }
    });
}

#[test]
fn test_nothing_to_push_returns_the_plan() {
    let path = repo_path("data/sample.tsfile");
    block_on(async {
        let c = ctx(1);
        register_tsfile_format(&c).unwrap();
        let state = c.state();
        let table = TsFileTable::try_new(&state, &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
        let plan: Arc<dyn ExecutionPlan> = table.scan(&state, Some(&vec![0, 4]), &[], None).await.unwrap();
        assert!(Arc::ptr_eq(&push_scan_filters(plan.clone(), &[], &state).unwrap(), &plan));
        // A filter on a column the scan does not output (a partition column the listing
        // answered) is left out rather than failing.
        let region = datafusion::prelude::col("region").eq(datafusion::prelude::lit("east"));
        assert!(Arc::ptr_eq(&push_scan_filters(plan.clone(), &[region], &state).unwrap(), &plan));
        // One that cannot be planned alone (an unbound parameter) is left out too.
        let unbound = datafusion::prelude::col("temperature").gt(datafusion::logical_expr::placeholder("$1"));
        assert!(Arc::ptr_eq(&push_scan_filters(plan.clone(), std::slice::from_ref(&unbound), &state).unwrap(), &plan));
        // With a plannable one beside it, that one is pushed.
        let hot = datafusion::prelude::col("temperature").gt(datafusion::prelude::lit(1000.0));
        let pushed = push_scan_filters(plan.clone(), &[unbound, hot], &state).unwrap();
        let text = datafusion::physical_plan::displayable(pushed.as_ref()).indent(true).to_string();
        assert!(text.contains("temperature@4 > 1000"), "{text}");
    });
}
