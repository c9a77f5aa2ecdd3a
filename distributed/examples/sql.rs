//! Run SQL over a directory of TsFiles on a Ballista cluster.
//!
//! Start a cluster (see distributed/README.md), then from the repository root:
//!
//! ```text
//! cargo run -p tsfile-ballista --example sql -- --scheduler df://localhost:50050 \
//!     --table weather --path "$PWD/data/" \
//!     "SELECT region, count(*) FROM weather GROUP BY region ORDER BY region"
//! ```
//!
//! With `--in-process N` it starts its own scheduler and N executors instead; `--set
//! s3.endpoint=http://…` (repeatable) sets session settings, which travel with each job.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use datafusion_tsfile::crypto::EncryptionKeys;
use datafusion_tsfile::datafusion::{TsFileReadOptions, TsFileTable};

#[derive(Parser, Debug)]
struct Args {
    /// The scheduler, `df://host:port`.
    #[arg(long, default_value = "df://localhost:50050")]
    scheduler: String,
    /// Start a scheduler and this many executors in this process instead.
    #[arg(long)]
    in_process: Option<usize>,
    /// Name of the SQL table over `--path`.
    #[arg(long, default_value = "t")]
    table: String,
    /// TsFiles: a file, a directory (ending in `/`) or a glob; every cluster process must
    /// reach it under this path.
    #[arg(long)]
    path: String,
    /// Which TsFile table of the files (when they hold several).
    #[arg(long)]
    tsfile_table: Option<String>,
    /// Session settings `key=value` (e.g. `s3.endpoint=http://127.0.0.1:9000`), repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    settings: Vec<String>,
    /// Statements to run, in order.
    #[arg(required = true)]
    sql: Vec<String>,
}

async fn run(args: Args) -> datafusion::common::Result<()> {
    let cluster = match args.in_process {
        Some(n) => Some(tsfile_ballista::InProcessCluster::start(n, 2, EncryptionKeys::default()).await?),
        None => None,
    };
    let url = cluster.as_ref().map(|c| c.url().to_string()).unwrap_or(args.scheduler);
    let mut config = tsfile_ballista::client_config();
    for kv in &args.settings {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| datafusion::common::DataFusionError::Configuration(format!("--set '{kv}': expected KEY=VALUE")))?;
        config.options_mut().set(k, v)?;
    }
    let ctx = tsfile_ballista::connect_with(&url, config).await?;
    let mut options = TsFileReadOptions::default();
    if let Some(t) = args.tsfile_table {
        options = options.with_table(t);
    }
    let table = TsFileTable::try_new(&ctx.state(), &[&args.path], options).await?;
    ctx.register_table(args.table.as_str(), Arc::new(table))?;
    for sql in &args.sql {
        let started = std::time::Instant::now();
        ctx.sql(sql).await?.show().await?;
        eprintln!("({:.3} s on {url})", started.elapsed().as_secs_f64());
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
