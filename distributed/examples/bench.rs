//! The benchmark workloads on an in-process Ballista cluster next to a local run.
//!
//! ```text
//! cargo run --release -p tsfile-ballista --example bench -- --tsfile bench-data/S.tsfile
//! ```
//!
//! Starts a scheduler and `--executors` executors (each with `--vcores` task slots) in this
//! process, registers the file locally and on the cluster, and runs each workload
//! (interleaved, `--warmup` + `--runs` times) on both, checking that the answers are equal
//! (row count and an order-independent digest). Prints a Markdown table of median wall
//! times; "ratio" = cluster / local.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use datafusion::arrow::array::{Array, RecordBatch, TimestampMillisecondArray};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{DataFusionError, Result};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_tsfile::crypto::EncryptionKeys;
use datafusion_tsfile::datafusion::{register_tsfile_format, TsFileReadOptions, TsFileTable};
use futures::TryStreamExt;

#[derive(Parser, Debug)]
struct Args {
    /// The benchmark TsFile (from tools/bench/gen_data.py), or a directory of them.
    #[arg(long)]
    tsfile: String,
    /// The device of `one_device`.
    #[arg(long, default_value = "dev-000042")]
    device: String,
    /// Executors in the cluster.
    #[arg(long, default_value_t = 2)]
    executors: usize,
    /// Task slots per executor.
    #[arg(long, default_value_t = 1)]
    vcores: usize,
    /// Target partitions of both the local and the cluster session.
    #[arg(long, default_value_t = 2)]
    partitions: usize,
    /// Counted runs per workload and system.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Uncounted warm-up runs.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
}

/// Rows and an order-independent digest (sum of FNV-1a hashes of the rows).
fn answer(batches: &[RecordBatch]) -> Result<(usize, u64)> {
    let (mut rows, mut digest) = (0usize, 0u64);
    for b in batches {
        let fields = b.schema().fields().iter().map(|f| SortField::new(f.data_type().clone())).collect();
        let converted = RowConverter::new(fields)?.convert_columns(b.columns())?;
        for r in converted.iter() {
            let h = r.as_ref().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3));
            digest = digest.wrapping_add(h);
        }
        rows += b.num_rows();
    }
    Ok((rows, digest))
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<(f64, (usize, u64))> {
    let started = Instant::now();
    let batches: Vec<RecordBatch> = ctx.sql(sql).await?.execute_stream().await?.try_collect().await?;
    let secs = started.elapsed().as_secs_f64();
    Ok((secs, answer(&batches)?))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

async fn bench(args: Args) -> Result<()> {
    let local = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(args.partitions));
    register_tsfile_format(&local)?;
    let table = TsFileTable::try_new(&local.state(), &[&args.tsfile], TsFileReadOptions::default()).await?;
    local.register_table("t", Arc::new(table))?;

    let cluster = tsfile_ballista::InProcessCluster::start(args.executors, args.vcores, EncryptionKeys::default()).await?;
    let config = tsfile_ballista::client_config().with_target_partitions(args.partitions);
    let remote = tsfile_ballista::connect_with(cluster.url(), config).await?;
    let table = TsFileTable::try_new(&remote.state(), &[&args.tsfile], TsFileReadOptions::default()).await?;
    remote.register_table("t", Arc::new(table))?;

    // The time window of the baseline: 1% of the span from its middle.
    let b = local.sql("SELECT min(time), max(time) FROM t").await?.collect().await?;
    let col = |i: usize| -> Result<i64> {
        let a = b.first().map(|b| b.column(i).clone()).ok_or_else(|| DataFusionError::Execution("no time range".into()))?;
        let a = a
            .as_any()
            .downcast_ref::<TimestampMillisecondArray>()
            .ok_or_else(|| DataFusionError::Execution("time is not in ms".into()))?;
        if a.is_null(0) {
            return Err(DataFusionError::Execution("empty table".into()));
        }
        Ok(a.value(0))
    };
    let (tmin, tmax) = (col(0)?, col(1)?);
    let lo = tmin + (tmax - tmin).div_euclid(2);
    let hi = lo + (tmax - tmin).div_euclid(100) - 1;
    let workloads = [
        ("scan_all", "SELECT * FROM t".to_string()),
        ("one_field", "SELECT time, temperature FROM t".to_string()),
        ("time_range", format!("SELECT * FROM t WHERE time BETWEEN to_timestamp_millis({lo}) AND to_timestamp_millis({hi})")),
        ("one_device", format!("SELECT * FROM t WHERE device = '{}'", args.device)),
        ("agg_global", "SELECT count(*), round(avg(temperature), 6), max(reading) FROM t".to_string()),
        ("agg_by_device", "SELECT device, count(*), round(avg(temperature), 6), max(reading) FROM t GROUP BY device".to_string()),
        ("agg_stats", "SELECT count(*), min(time), max(reading) FROM t".to_string()),
    ];
    println!(
        "{} executors x {} task slots, {} target partitions; {} counted runs after {} warm-up, median wall time\n",
        args.executors, args.vcores, args.partitions, args.runs, args.warmup
    );
    println!("| workload | rows out | local (s) | cluster (s) | ratio cluster/local | answers |");
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    for (name, sql) in &workloads {
        let (mut lt, mut ct) = (Vec::new(), Vec::new());
        let mut rows = 0;
        for i in 0..args.warmup + args.runs {
            let (l, la) = run(&local, sql).await?;
            let (c, ca) = run(&remote, sql).await?;
            if la != ca {
                return Err(DataFusionError::Execution(format!("{name}: local {la:?} != cluster {ca:?}")));
            }
            rows = la.0;
            if i >= args.warmup {
                lt.push(l);
                ct.push(c);
            }
        }
        let (l, c) = (median(&mut lt), median(&mut ct));
        println!("| {name} | {rows} | {l:.3} | {c:.3} | {:.2} | equal |", c / l);
    }
    for (i, e) in cluster.executors().iter().enumerate() {
        println!("\nexecutor {i}: {} file footers cached", e.cache.len());
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match bench(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
