//! Shows how statistics pruning skips devices, chunk groups and pages: runs a few queries
//! over the bundled sample with `EXPLAIN ANALYZE` and prints the TsFile scan metrics.
//!
//! ```sh
//! cargo run --release --example pruning [-- path/to/file.tsfile "SQL over table t"]
//! ```

use datafusion::prelude::SessionContext;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> datafusion::common::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).cloned().unwrap_or_else(|| "data/sample.tsfile".into());
    let ctx = SessionContext::new();
    register_tsfile(&ctx, "t", &[&path], TsFileReadOptions::default()).await?;
    let queries: Vec<String> = match args.get(2) {
        Some(q) => vec![q.clone()],
        None => vec![
            "SELECT count(*) FROM t WHERE device = 'ws-central-0-0'".into(),
            "SELECT count(*) FROM t WHERE time BETWEEN TIMESTAMP '2024-01-02T00:00:00' AND TIMESTAMP '2024-01-02T00:30:00'"
                .into(),
            "SELECT count(*) FROM t WHERE region = 'north' AND energy_wh > 9000000".into(),
        ],
    };
    for q in queries {
        println!("\n{q}");
        let batches = ctx.sql(&format!("EXPLAIN ANALYZE {q}")).await?.collect().await?;
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
        for line in text.lines().filter(|l| l.contains("DataSourceExec") || l.contains("FilterExec")) {
            println!("{}", line.trim_matches(|c| c == '|' || c == ' '));
        }
        let rows = ctx.sql(&q).await?.collect().await?;
        println!("{}", datafusion::arrow::util::pretty::pretty_format_batches(&rows)?);
    }
    Ok(())
}
