//! `tsfile sql`: datafusion-cli with the TsFile format built in.
//!
//! The flags are datafusion-cli's own and mean the same (`-c`, `-f`, `-r`, `--format`,
//! `-q`, `--maxrows`, `-m`, `-d`, `-b`, `-p`, `--color`, …). On top of what datafusion-cli
//! offers, the session knows `STORED AS TSFILE`, treats `'x.tsfile'`, directories and globs
//! of TsFiles as tables, and has the `tsfile_metadata('path')` table function.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Arc;

use clap::Args;
use datafusion::config::ConfigOptions;
use datafusion::error::Result;
use datafusion::execution::context::SessionConfig;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::memory_pool::{FairSpillPool, GreedyMemoryPool, MemoryPool, TrackConsumersPool};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::logical_expr::ExplainFormat;
use datafusion::prelude::SessionContext;
use datafusion_cli::catalog::DynamicObjectStoreCatalog;
use datafusion_cli::functions::{ListFilesCacheFunc, MetadataCacheFunc, ParquetMetadataFunc, StatisticsCacheFunc};
use datafusion_cli::object_storage::instrumented::{InstrumentedObjectStoreMode, InstrumentedObjectStoreRegistry};
use datafusion_cli::pool_type::PoolType;
use datafusion_cli::print_format::PrintFormat;
use datafusion_cli::print_options::{MaxRows, PrintOptions};
use datafusion_cli::{exec, DATAFUSION_CLI_VERSION};
use datafusion_tsfile::datafusion::register_tsfile_format;

use crate::size::parse_size;

/// datafusion-cli's flags.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// Path to your data, default to current directory
    #[arg(short = 'p', long, value_parser = parse_valid_data_dir)]
    data_path: Option<String>,

    /// The batch size of each query, or use DataFusion default
    #[arg(short = 'b', long, value_parser = parse_batch_size)]
    batch_size: Option<usize>,

    /// Execute the given command string(s), then exit. Commands are expected to be non empty.
    #[arg(short = 'c', long, num_args = 0.., value_parser = parse_command)]
    command: Vec<String>,

    /// The memory pool limitation (e.g. '10g'), default to None (no limit)
    #[arg(short = 'm', long, value_parser = |s: &str| parse_size(s, "memory pool size"))]
    memory_limit: Option<usize>,

    /// Execute commands from file(s), then exit. Every statement runs even after one fails
    /// (its error is printed); the exit code is 1 if any statement failed
    #[arg(short, long, num_args = 0.., value_parser = parse_valid_file)]
    file: Vec<String>,

    /// Run the provided files on startup instead of ~/.datafusionrc
    #[arg(short = 'r', long, num_args = 0.., value_parser = parse_valid_file, conflicts_with = "file")]
    rc: Option<Vec<String>>,

    /// Output format
    #[arg(long, value_enum, default_value_t = PrintFormat::Automatic)]
    format: PrintFormat,

    /// Reduce printing other than the results and work quietly
    #[arg(short, long)]
    quiet: bool,

    /// Specify the memory pool type 'greedy' or 'fair'
    #[arg(long, default_value_t = PoolType::Greedy)]
    mem_pool_type: PoolType,

    /// The number of top memory consumers to display when query fails due to memory
    /// exhaustion. To disable memory consumer tracking, set this value to 0
    #[arg(long, default_value = "3")]
    top_memory_consumers: usize,

    /// The max number of rows to display for 'Table' format
    /// [possible values: numbers(0/10/...), inf(no limit)]
    #[arg(long, default_value = "40")]
    maxrows: MaxRows,

    /// Enables console syntax highlighting
    #[arg(long)]
    color: bool,

    /// Available disk space for spilling queries (e.g. '10g'), default to None (uses
    /// DataFusion's default value of '100g')
    #[arg(short = 'd', long, value_parser = |s: &str| parse_size(s, "disk limit"))]
    disk_limit: Option<usize>,

    /// Specify the default object_store_profiling mode, defaults to 'disabled'.
    /// [possible values: disabled, summary, trace]
    #[arg(long, default_value_t = InstrumentedObjectStoreMode::Disabled)]
    object_store_profiling: InstrumentedObjectStoreMode,

    /// Key for encrypted TsFiles: 32 hex digits or 16 characters (the master key of legacy
    /// encryptLevel-2 files, or the KEK of the built-in Page-AEAD profile). Defaults to
    /// $TSFILE_MASTER_KEY, which is safer (a flag is visible in process lists).
    #[arg(long, value_name = "KEY", hide_default_value = true)]
    master_key: Option<String>,
}

fn parse_valid_file(path: &str) -> Result<String, String> {
    if Path::new(path).is_file() {
        Ok(path.to_string())
    } else {
        Err(format!("Invalid file '{path}'"))
    }
}

fn parse_valid_data_dir(dir: &str) -> Result<String, String> {
    if Path::new(dir).is_dir() {
        Ok(dir.to_string())
    } else {
        Err(format!("Invalid data directory '{dir}'"))
    }
}

fn parse_batch_size(size: &str) -> Result<usize, String> {
    match size.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("Invalid batch size '{size}'")),
    }
}

fn parse_command(command: &str) -> Result<String, String> {
    if command.is_empty() {
        Err("-c flag expects only non empty commands".to_string())
    } else {
        Ok(command.to_string())
    }
}

/// A session as datafusion-cli builds it (runtime limits, dynamic object stores, URL
/// tables, its table functions), plus the TsFile format and `tsfile_metadata`.
pub fn session(
    config: SessionConfig,
    runtime: RuntimeEnvBuilder,
    registry: Arc<InstrumentedObjectStoreRegistry>,
) -> Result<SessionContext> {
    let runtime = runtime.with_object_store_registry(registry).build_arc()?;
    let ctx = SessionContext::new_with_config_rt(config, runtime).enable_url_table();
    register_tsfile_format(&ctx)?;
    ctx.register_catalog_list(Arc::new(DynamicObjectStoreCatalog::new(ctx.state().catalog_list().clone(), ctx.state_weak_ref())));
    ctx.register_udtf("tsfile_metadata", Arc::new(crate::stores::StoreAwareMetadataFunc));
    ctx.register_udtf("parquet_metadata", Arc::new(ParquetMetadataFunc {}));
    let cache = ctx.task_ctx().runtime_env().cache_manager.clone();
    ctx.register_udtf("metadata_cache", Arc::new(MetadataCacheFunc::new(cache.clone())));
    ctx.register_udtf("statistics_cache", Arc::new(StatisticsCacheFunc::new(cache.clone())));
    ctx.register_udtf("list_files_cache", Arc::new(ListFilesCacheFunc::new(cache)));
    Ok(ctx)
}

/// The session configuration: environment (`DATAFUSION_*`), then flags; tree EXPLAIN and
/// `NULL` for nulls unless the environment says otherwise (as datafusion-cli does).
fn session_config(args: &SqlArgs) -> Result<SessionConfig> {
    let mut options = ConfigOptions::from_env()?;
    if let Some(n) = args.batch_size {
        options.execution.batch_size = datafusion::common::config::ConfigNonZeroUsize::try_new(n)?;
    }
    if std::env::var_os("DATAFUSION_EXPLAIN_FORMAT").is_none() {
        options.explain.format = ExplainFormat::Tree;
    }
    if std::env::var_os("DATAFUSION_FORMAT_NULL").is_none() {
        options.format.null = String::from("NULL");
    }
    Ok(SessionConfig::from(options).with_information_schema(true))
}

fn runtime(args: &SqlArgs) -> Result<RuntimeEnvBuilder> {
    let mut rt = RuntimeEnvBuilder::new();
    if let Some(limit) = args.memory_limit {
        let top = NonZeroUsize::new(args.top_memory_consumers);
        let pool: Arc<dyn MemoryPool> = match (&args.mem_pool_type, top) {
            (PoolType::Fair, None) => Arc::new(FairSpillPool::new(limit)),
            (PoolType::Fair, Some(n)) => Arc::new(TrackConsumersPool::new(FairSpillPool::new(limit), n)),
            (PoolType::Greedy, None) => Arc::new(GreedyMemoryPool::new(limit)),
            (PoolType::Greedy, Some(n)) => Arc::new(TrackConsumersPool::new(GreedyMemoryPool::new(limit), n)),
        };
        rt = rt.with_memory_pool(pool);
    }
    if let Some(limit) = args.disk_limit {
        let builder =
            DiskManagerBuilder::default().with_mode(DiskManagerMode::OsTmpDirectory).with_max_temp_directory_size(limit as u64);
        rt = rt.with_disk_manager_builder(builder);
    }
    Ok(rt)
}

/// The statements of a script, as datafusion-cli splits them: lines starting with `--` or
/// `#!` are skipped, a statement ends with a line ending in `;`, and what follows the last
/// `;` is a statement too unless it is blank.
pub fn script_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut query = String::new();
    for line in text.lines() {
        if line.starts_with("#!") || line.starts_with("--") {
            continue;
        }
        let line = line.trim_end();
        query.push_str(line);
        if line.ends_with(';') {
            out.push(std::mem::take(&mut query));
        } else {
            query.push('\n');
        }
    }
    if query.contains(|c| c != '\n') {
        out.push(query);
    }
    out
}

/// Run the statements of `files` in order, printing each failure as datafusion-cli does and
/// going on with the next statement; returns how many failed.
async fn run_scripts(ctx: &SessionContext, files: &[String], print_options: &PrintOptions) -> Result<usize> {
    let mut failed = 0;
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| datafusion::error::DataFusionError::External(format!("cannot read '{file}': {e}").into()))?;
        for statement in script_statements(&text) {
            if let Err(e) = exec::exec_from_commands(ctx, vec![statement], print_options).await {
                eprintln!("{}", with_hint(e.to_string()));
                failed += 1;
            }
        }
    }
    Ok(failed)
}

/// Run `tsfile sql`.
pub async fn run(args: SqlArgs) -> Result<(), String> {
    run_inner(args).await.map_err(|e| with_hint(e.to_string()))
}

/// datafusion-cli checks DDL options against the built-in formats' options, so a bare
/// TsFile option key (`'table'`) fails with a puzzling message: say what to write instead.
pub fn with_hint(message: String) -> String {
    if message.contains("Specify a format for TableOptions") {
        format!("{message} (in `tsfile sql`, write TsFile table options with the `tsfile.` prefix, e.g. OPTIONS ('tsfile.table' 'weather'))")
    } else {
        message
    }
}

async fn run_inner(args: SqlArgs) -> Result<()> {
    if !args.quiet {
        println!("tsfile sql (DataFusion CLI v{DATAFUSION_CLI_VERSION}, with TsFile support)");
    }
    if let Some(dir) = &args.data_path {
        std::env::set_current_dir(dir)
            .map_err(|e| datafusion::error::DataFusionError::External(format!("cannot enter '{dir}': {e}").into()))?;
    }
    let registry = Arc::new(InstrumentedObjectStoreRegistry::new().with_profile_mode(args.object_store_profiling));
    let ctx = session(session_config(&args)?, runtime(&args)?, registry.clone())?;
    if let Some(key) = crate::keys::master_key(args.master_key.as_deref()) {
        // A session default of every TsFile table (URL tables and DDL alike).
        ctx.state_ref().write().table_options_mut().set("tsfile.master_key", &key).map_err(|_| {
            datafusion::error::DataFusionError::Configuration(format!(
                "--master-key / {}: expected 32 hex digits or 16 characters (the value is not shown)",
                crate::keys::ENV
            ))
        })?;
    }
    let mut print_options = PrintOptions {
        format: args.format,
        quiet: args.quiet,
        maxrows: args.maxrows,
        color: args.color,
        instrumented_registry: registry,
    };
    let repl = args.command.is_empty() && args.file.is_empty();
    if repl {
        let rc = match args.rc {
            Some(files) => files,
            None => std::env::home_dir()
                .map(|h| h.join(".datafusionrc"))
                .filter(|p| p.is_file())
                .map(|p| p.to_string_lossy().into_owned())
                .into_iter()
                .collect(),
        };
        if !rc.is_empty() {
            exec::exec_from_files(&ctx, rc, &print_options).await?;
        }
        return exec::exec_from_repl(&ctx, &mut print_options)
            .await
            .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)));
    }
    if !args.file.is_empty() {
        let failed = run_scripts(&ctx, &args.file, &print_options).await?;
        if failed > 0 {
            let s = if failed == 1 { "" } else { "s" };
            return Err(datafusion::error::DataFusionError::Execution(format!("{failed} statement{s} failed")));
        }
    }
    if !args.command.is_empty() {
        exec::exec_from_commands(&ctx, args.command, &print_options).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::script_statements;

    #[test]
    fn test_script_statements_split_like_datafusion_cli() {
        let s = script_statements("#!/usr/bin/env tsfile\n-- note\nSELECT 1;\nSELECT\n  2;  \n\n\nSELECT 3");
        assert_eq!(s, ["SELECT 1;", "SELECT\n  2;", "\n\nSELECT 3\n"]);
        assert!(script_statements("").is_empty());
        assert!(script_statements("\n\n-- only a comment\n").is_empty());
        assert_eq!(script_statements("SELECT 1;"), ["SELECT 1;"]);
    }
}
