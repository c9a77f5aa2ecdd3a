//! `tsfile convert`: Parquet or CSV files into one TsFile, streaming with progress.
//!
//! The inputs (files, directories or globs, local or URLs) are read by DataFusion's Parquet or
//! CSV reader (format from `--format` or the first input's extension), optionally filtered
//! with `--where`, and written by the library's TsFile writer: rows are buffered per device
//! (the `--tags` columns) and flushed as chunk groups when `memory_limit` is reached. The
//! output appears only when complete (written to a temporary name, then renamed). On a
//! terminal a progress bar shows rows, bytes written, rate and ETA (the total comes from the
//! Parquet footers; CSV shows a counter).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions, SessionConfig, SessionContext};
use datafusion_tsfile::datafusion::{register_tsfile_format, write_tsfile};
use datafusion_tsfile::TsFileWriterOptions;
use indicatif::{HumanBytes, HumanCount};

/// `tsfile convert` flags.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Parquet or CSV inputs: files, directories or globs, local or URLs.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,

    /// The TsFile to write (replaced only with --force).
    #[arg(long, value_name = "OUT")]
    to: PathBuf,

    /// Input format: parquet or csv (default: from the first input's extension, else parquet).
    #[arg(long)]
    format: Option<String>,

    /// The table name (default: the output's file stem).
    #[arg(long)]
    table: Option<String>,

    /// Comma-separated TAG columns: the device identifiers (default: dictionary-encoded string
    /// columns; none makes the whole table one device).
    #[arg(long)]
    tags: Option<String>,

    /// The time column: Timestamp (any unit, stored as is) or Int64.
    #[arg(long, default_value = "time")]
    time_column: String,

    /// Keep only rows matching this SQL condition.
    #[arg(long = "where", value_name = "SQL")]
    filter: Option<String>,

    /// A write option as KEY=VALUE (memory_limit, compression, encoding.<column>,
    /// compression.<column>, page_max_points, page_max_bytes); repeatable.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,

    /// Replace the output if it exists.
    #[arg(long)]
    force: bool,

    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

fn is_csv(args: &ConvertArgs) -> Result<bool, String> {
    match args.format.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => Ok(true),
        Some("parquet") => Ok(false),
        Some(other) => Err(format!("--format '{other}': expected parquet or csv")),
        None => Ok(args.inputs.first().is_some_and(|i| i.to_ascii_lowercase().trim_end_matches(".gz").ends_with(".csv"))),
    }
}

/// Run `tsfile convert`.
pub async fn run(args: ConvertArgs) -> Result<(), String> {
    let start = Instant::now();
    let mut options = TsFileWriterOptions::default();
    let mut kv: HashMap<String, String> = HashMap::new();
    for o in &args.options {
        let (k, v) = o.split_once('=').ok_or_else(|| "--option: expected KEY=VALUE".to_string())?;
        kv.insert(k.trim().to_string(), v.trim().to_string());
    }
    for (k, v) in &kv {
        options.set(k, v).map_err(|e| e.to_string())?;
    }
    if let Some(t) = &args.table {
        options.table = Some(t.clone());
    }
    if let Some(t) = &args.tags {
        options.set("tags", t).map_err(|e| e.to_string())?;
    }
    options.time_column = args.time_column.clone();
    if args.to.exists() && !args.force {
        return Err(format!("{} exists; pass --force to replace it", args.to.display()));
    }
    let csv = is_csv(&args)?;
    let ctx = SessionContext::new_with_config(SessionConfig::new());
    register_tsfile_format(&ctx).map_err(|e| e.to_string())?;
    let mut selects = Vec::new();
    for (i, input) in args.inputs.iter().enumerate() {
        crate::stores::ensure_store(&ctx.state(), input).await.map_err(|e| format!("{input}: {e}"))?;
        let name = format!("__convert_{i}");
        let registered = if csv {
            ctx.register_csv(&name, input, CsvReadOptions::new()).await
        } else {
            ctx.register_parquet(&name, input, ParquetReadOptions::default()).await
        };
        registered.map_err(|e| format!("{input}: {e}"))?;
        selects.push(match &args.filter {
            Some(w) => format!("SELECT * FROM {name} WHERE {w}"),
            None => format!("SELECT * FROM {name}"),
        });
    }
    let sql = selects.join(" UNION ALL ");
    // The total (Parquet: from the footers) drives the ETA when no filter is given.
    let total = if csv || args.filter.is_some() {
        None
    } else {
        let counts = ctx.sql(&format!("SELECT count(*) FROM ({sql})")).await.map_err(|e| e.to_string())?;
        let batches = counts.collect().await.map_err(|e| e.to_string())?;
        batches
            .first()
            .and_then(|b| b.column(0).as_any().downcast_ref::<datafusion::arrow::array::Int64Array>().map(|a| a.value(0)))
            .and_then(|n| u64::try_from(n).ok())
    };
    let df = ctx.sql(&sql).await.map_err(|e| e.to_string())?;
    let bar = crate::export::progress_bar(total, args.quiet);
    let rows = write_tsfile(df, &args.to, &options, |p| {
        bar.set_position(p.rows);
        bar.set_message(format!("{} written", HumanBytes(p.bytes)));
        Ok(())
    })
    .await
    .map_err(|e| format!("converting to {}: {e}", args.to.display()))?;
    bar.finish_and_clear();
    if !args.quiet {
        let bytes = std::fs::metadata(&args.to).map(|m| m.len()).unwrap_or(0);
        let secs = start.elapsed().as_secs_f64();
        println!(
            "converted {} rows from {} input(s) to {}: {} in {secs:.1} s",
            HumanCount(rows),
            args.inputs.len(),
            args.to.display(),
            HumanBytes(bytes)
        );
    }
    Ok(())
}
