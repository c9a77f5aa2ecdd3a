//! Quick start: read a TsFile with the library API, then query it with SQL.
//!
//! ```sh
//! cargo run --release --example quickstart [-- path/to/file.tsfile]
//! ```

use datafusion::prelude::SessionContext;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use datafusion_tsfile::{TableRead, TsFile};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "data/sample.tsfile".into());

    // 1. The library API: no DataFusion needed.
    let file = TsFile::open(&path)?;
    for table in file.table_names() {
        let devices = file.devices(&table)?;
        println!("table {table}: {} devices, schema:", devices.len());
        for f in file.arrow_schema(&table)?.fields() {
            println!("  {:<20} {}", f.name(), f.data_type());
        }
        let first = file.read_table(&table, TableRead::default().with_batch_size(5))?.next().transpose()?;
        if let Some(batch) = first {
            println!("{}", datafusion::arrow::util::pretty::pretty_format_batches(&[batch])?);
        }
    }

    // 2. SQL through DataFusion.
    let ctx = SessionContext::new();
    let table = file.table_names().into_iter().next().ok_or("the file has no table")?;
    register_tsfile(&ctx, "t", &[&path], TsFileReadOptions::default().with_table(table)).await?;
    let df = ctx.sql("SELECT count(*) AS rows, min(time) AS first, max(time) AS last FROM t").await?;
    df.show().await?;
    Ok(())
}
