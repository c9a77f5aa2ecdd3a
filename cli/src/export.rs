//! `tsfile export`: TsFile tables to Parquet, streaming with bounded memory.
//!
//! * `--to out.parquet`: every input (files, directories, globs) into one Parquet file;
//! * `--to outdir/`: one Parquet file per input file (`<name>.parquet`, or
//!   `<name>.<table>.parquet` when a file holds several tables and `--table` is not given).
//!
//! Rows stream from the DataFusion scan straight into a Parquet writer (one row group in
//! memory at a time). Each output is written to `<out>.partial` and renamed when complete,
//! so an interrupted export never leaves a truncated file under the final name. On a
//! terminal a progress bar shows rows, bytes written, rate and ETA; a one-line summary per
//! output is printed in any case.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use datafusion::parquet::basic::Compression;
use datafusion::parquet::file::properties::WriterProperties;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_tsfile::datafusion::{
    count_rows, register_tsfile_format, register_tsfile_schema, write_parquet, TsFileReadOptions, TsFileTable,
};
use futures::TryStreamExt;
use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `tsfile export` flags.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// TsFiles to export: files, directories or globs, local or URLs (`s3://…`, `gs://…`,
    /// `http(s)://…`; credentials from the environment as for `tsfile sql`).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,

    /// Output: a `.parquet` file (all inputs into one file) or a directory (one Parquet
    /// file per input file, created if missing).
    #[arg(long, value_name = "OUT")]
    to: String,

    /// The TsFile table to export (needed for a single output when the files hold several).
    #[arg(long)]
    table: Option<String>,

    /// Keep only rows matching this SQL condition, e.g. "time >= '2024-01-02' AND device = 'ws-1'".
    #[arg(long = "where", value_name = "SQL")]
    filter: Option<String>,

    /// Parquet compression: snappy, zstd, zstd(LEVEL), gzip, gzip(LEVEL), lz4_raw, brotli,
    /// brotli(LEVEL) or uncompressed.
    #[arg(long, default_value = "snappy")]
    compression: String,

    /// Rows per Parquet row group (bounds the writer's memory).
    #[arg(long, default_value_t = 1 << 20)]
    row_group_rows: usize,

    /// A table option as KEY=VALUE (as in `OPTIONS (...)`: time_unit, pruning, …); repeatable.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,

    /// Replace outputs that already exist.
    #[arg(long)]
    force: bool,

    /// Key for encrypted TsFiles: 32 hex digits or 16 characters (the master key of legacy
    /// encryptLevel-2 files, or the KEK of the built-in Page-AEAD profile). Defaults to
    /// $TSFILE_MASTER_KEY, which is safer (a flag is visible in process lists).
    #[arg(long, value_name = "KEY", hide_default_value = true)]
    master_key: Option<String>,

    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

/// One Parquet file to write: the TsFile paths it reads and the table.
struct Job {
    inputs: Vec<String>,
    table: Option<String>,
    out: PathBuf,
}

/// Run `tsfile export`.
pub async fn run(args: ExportArgs) -> Result<(), String> {
    let compression = parse_compression(&args.compression)?;
    if args.row_group_rows == 0 {
        return Err("--row-group-rows must be at least 1".into());
    }
    let mut kv = HashMap::new();
    for o in &args.options {
        let (k, v) = o.split_once('=').ok_or_else(|| "--option: expected KEY=VALUE".to_string())?;
        kv.insert(k.trim().to_string(), v.trim().to_string());
    }
    if let Some(key) = crate::keys::master_key(args.master_key.as_deref()) {
        kv.insert("master_key".into(), key);
    }
    let options = TsFileReadOptions::default().apply(&kv).map_err(|e| e.to_string())?;
    let ctx = SessionContext::new_with_config(SessionConfig::new());
    register_tsfile_format(&ctx).map_err(|e| e.to_string())?;

    // Stores for URL inputs (S3, GCS, HTTP), built as `tsfile sql` builds them for URL tables.
    for input in &args.inputs {
        crate::stores::ensure_store(&ctx.state(), input).await.map_err(|e| format!("{input}: {e}"))?;
    }
    let jobs = plan_jobs(&ctx, &args, &options).await?;
    for job in &jobs {
        if job.out.exists() && !args.force {
            return Err(format!("{} exists; pass --force to replace it", job.out.display()));
        }
    }
    let props =
        WriterProperties::builder().set_compression(compression).set_max_row_group_row_count(Some(args.row_group_rows)).build();
    for job in jobs {
        export_one(&ctx, &job, &options, &args, props.clone()).await?;
    }
    Ok(())
}

fn parse_compression(text: &str) -> Result<Compression, String> {
    let spelled = match text.to_ascii_lowercase().as_str() {
        "zstd" => "zstd(3)".to_string(),
        "gzip" => "gzip(6)".to_string(),
        "brotli" => "brotli(4)".to_string(),
        "none" => "uncompressed".to_string(),
        other => other.to_string(),
    };
    Compression::from_str(&spelled).map_err(|e| format!("--compression '{text}': {e} (snappy, zstd, zstd(1..22), gzip, gzip(0..9), lz4_raw, brotli, brotli(0..11), uncompressed)"))
}

/// The outputs: one file for `--to x.parquet`, else one per input file (and table).
async fn plan_jobs(ctx: &SessionContext, args: &ExportArgs, options: &TsFileReadOptions) -> Result<Vec<Job>, String> {
    if args.to.to_ascii_lowercase().ends_with(".parquet") {
        return Ok(vec![Job { inputs: args.inputs.clone(), table: args.table.clone(), out: PathBuf::from(&args.to) }]);
    }
    let dir = PathBuf::from(&args.to);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
    let mut jobs: Vec<Job> = Vec::new();
    for file in list_inputs(ctx, &args.inputs).await? {
        let stem = Path::new(&file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let tables = match &args.table {
            Some(t) => vec![t.clone()],
            // The file's tables (tree-model prefixes included), from its footer alone.
            None => register_tsfile_schema(ctx, "__tsfile_export_tables", &file, options.clone())
                .await
                .map_err(|e| format!("{file}: {e}"))?,
        };
        let several = tables.len() > 1;
        for t in tables {
            let name = if several { format!("{stem}.{t}.parquet") } else { format!("{stem}.parquet") };
            let out = dir.join(name);
            if jobs.iter().any(|j| j.out == out) {
                return Err(format!("two inputs would both be exported to {}; export them separately", out.display()));
            }
            jobs.push(Job { inputs: vec![file.clone()], table: Some(t), out });
        }
    }
    Ok(jobs)
}

/// Expand files, directories and globs (local or URLs) to the TsFiles they name (sorted,
/// deduplicated): local files as absolute paths, others as URLs.
async fn list_inputs(ctx: &SessionContext, inputs: &[String]) -> Result<Vec<String>, String> {
    let state = ctx.state();
    let mut files = Vec::new();
    for input in inputs {
        let (url, store) = crate::stores::ensure_store(&state, input).await.map_err(|e| format!("{input}: {e}"))?;
        let base = url.object_store();
        let found: Vec<_> = url
            .list_all_files(&state, store.as_ref(), "tsfile")
            .await
            .map_err(|e| format!("{input}: {e}"))?
            .try_collect()
            .await
            .map_err(|e| format!("{input}: {e}"))?;
        if found.is_empty() {
            return Err(format!("{input}: no .tsfile file found"));
        }
        let local = url.scheme() == "file";
        files.extend(found.into_iter().map(|m| {
            if local {
                format!("/{}", m.location)
            } else {
                format!("{}{}", base.as_str(), m.location)
            }
        }));
    }
    files.sort();
    files.dedup();
    Ok(files)
}

async fn export_one(
    ctx: &SessionContext,
    job: &Job,
    options: &TsFileReadOptions,
    args: &ExportArgs,
    props: WriterProperties,
) -> Result<(), String> {
    let start = Instant::now();
    let what = job.inputs.join(", ");
    let fail = |e: &dyn std::fmt::Display| format!("exporting {what}: {e}");
    let mut opts = options.clone();
    if let Some(t) = &job.table {
        opts = opts.with_table(t.clone());
    }
    let paths: Vec<&str> = job.inputs.iter().map(String::as_str).collect();
    let table = TsFileTable::try_new(&ctx.state(), &paths, opts).await.map_err(|e| fail(&e))?;
    let name = "__tsfile_export";
    ctx.deregister_table(name).map_err(|e| fail(&e))?;
    ctx.register_table(name, Arc::new(table)).map_err(|e| fail(&e))?;

    // The total (from statistics, no data read) drives the ETA when no filter is given.
    let total = match &args.filter {
        Some(_) => None,
        None => count_rows(ctx, name).await.map_err(|e| fail(&e))?,
    };
    let sql = match &args.filter {
        Some(w) => format!("SELECT * FROM {name} WHERE {w}"),
        None => format!("SELECT * FROM {name}"),
    };
    let df = ctx.sql(&sql).await.map_err(|e| fail(&e))?;
    let bar = progress_bar(total, args.quiet);
    let rows = write_parquet(df, &job.out, props, total, |p| {
        bar.set_position(p.rows);
        bar.set_message(format!("{} written", HumanBytes(p.bytes)));
        Ok(())
    })
    .await
    .map_err(|e| fail(&e))?;
    bar.finish_and_clear();
    let bytes = std::fs::metadata(&job.out).map(|m| m.len()).unwrap_or(0);
    let secs = start.elapsed().as_secs_f64();
    if !args.quiet {
        let table = job.table.as_deref().map(|t| format!(" (table {t})")).unwrap_or_default();
        let rate = if secs > 0.0 { rows as f64 / secs } else { 0.0 };
        println!(
            "exported {} rows{table} from {} to {}: {} in {secs:.1} s ({} rows/s)",
            HumanCount(rows),
            plural(job.inputs.len(), "file"),
            job.out.display(),
            HumanBytes(bytes),
            HumanCount(rate as u64)
        );
    }
    Ok(())
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// A progress bar on a terminal (stderr), hidden otherwise.
pub(crate) fn progress_bar(total: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} rows, {msg} ({rows_per_sec}, ETA {eta})",
            )
            .map(with_rate)
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {human_pos} rows, {msg} ({rows_per_sec})")
                .map(with_rate)
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The `{rows_per_sec}` key: whole rows per second with thousands separators
/// (`2,971,402 rows/s`; indicatif's own `{per_sec}` prints four decimals).
fn with_rate(style: ProgressStyle) -> ProgressStyle {
    style.with_key("rows_per_sec", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
        let _ = write!(w, "{}", rate_text(state.per_sec()));
    })
}

/// `rate` rows per second as whole rows with thousands separators.
fn rate_text(rate: f64) -> String {
    let whole = if rate.is_finite() && rate > 0.0 { rate.round() as u64 } else { 0 };
    format!("{} rows/s", HumanCount(whole))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn compression_spellings() {
        assert_eq!(parse_compression("snappy"), Ok(Compression::SNAPPY));
        assert_eq!(parse_compression("none"), Ok(Compression::UNCOMPRESSED));
        assert!(matches!(parse_compression("zstd"), Ok(Compression::ZSTD(_))));
        assert!(matches!(parse_compression("ZSTD(9)"), Ok(Compression::ZSTD(_))));
        assert!(matches!(parse_compression("gzip"), Ok(Compression::GZIP(_))));
        let e = parse_compression("zip").unwrap_err();
        assert!(e.contains("--compression 'zip'") && e.contains("snappy"), "{e}");
    }

    #[test]
    fn rates_are_whole_rows() {
        assert_eq!(rate_text(2_971_402.164_2), "2,971,402 rows/s");
        assert_eq!(rate_text(0.4), "0 rows/s");
        assert_eq!(rate_text(f64::NAN), "0 rows/s");
        assert_eq!(rate_text(f64::INFINITY), "0 rows/s");
    }
}
