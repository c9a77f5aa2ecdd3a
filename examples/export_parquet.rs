//! Export a TsFile table to Parquet with DataFusion (streaming, bounded memory).
//!
//! ```sh
//! cargo run --release --features parquet --example export_parquet -- data/sample.tsfile /tmp/sample.parquet
//! ```

use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::prelude::SessionContext;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> datafusion::common::Result<()> {
    let mut args = std::env::args().skip(1);
    let input = args.next().unwrap_or_else(|| "data/sample.tsfile".into());
    let output = args.next().unwrap_or_else(|| "/tmp/sample.parquet".into());
    let ctx = SessionContext::new();
    register_tsfile(&ctx, "t", &[&input], TsFileReadOptions::default()).await?;

    // Either with SQL ...
    ctx.sql(&format!("COPY (SELECT * FROM t) TO '{output}' STORED AS PARQUET")).await?.collect().await?;
    // ... or with the DataFrame API (here: one device's rows).
    let df = ctx.sql("SELECT * FROM t WHERE device = 'ws-central-0-0'").await?;
    df.write_parquet(&format!("{output}.one_device.parquet"), DataFrameWriteOptions::new(), None).await?;

    let check = ctx.sql(&format!("SELECT count(*) FROM '{output}'")).await?.collect().await;
    println!("wrote {output}: {check:?}");
    Ok(())
}
