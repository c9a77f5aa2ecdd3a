//! The `tsfile` command-line tool.
//!
//! * `tsfile sql` — an SQL shell (datafusion-cli with TsFile support): `SELECT … FROM
//!   'dir/*.tsfile'`, `CREATE EXTERNAL TABLE … STORED AS TSFILE`, `tsfile_metadata('path')`;
//! * `tsfile export INPUT… --to OUT` — TsFile tables to Parquet, streaming, with progress;
//! * `tsfile convert INPUT… --to OUT.tsfile` — Parquet or CSV to a TsFile, streaming, with progress;
//! * `tsfile inspect FILE` — the structure of a TsFile as a readable tree (`--json` for one
//!   JSON document, `--scan` to walk the data section of a file without a footer).
//!
//! Errors print as one line on stderr and the exit code is non-zero.

mod convert;
mod export;
mod inspect;
mod keys;
mod size;
mod sql;
mod stores;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Query, convert and inspect Apache TsFile files.
///
/// `tsfile sql` opens a SQL shell where TsFiles are tables; `tsfile export` converts them to
/// Parquet; `tsfile inspect` shows how a file is laid out. Run `tsfile help <command>` for
/// each command's flags.
#[derive(Debug, Parser)]
#[command(name = "tsfile", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// SQL shell over TsFiles (datafusion-cli with TsFile support; same flags).
    ///
    /// Without -c or -f it starts an interactive shell. TsFiles are tables directly
    /// (`SELECT * FROM 'data/sample.tsfile'`, directories and globs too), `CREATE EXTERNAL
    /// TABLE t STORED AS TSFILE LOCATION 'dir/' OPTIONS ('table' 'weather')` registers one,
    /// and `SELECT * FROM tsfile_metadata('file-or-dir')` lists every series with its
    /// encoding, compression and statistics.
    Sql(sql::SqlArgs),
    /// Export TsFile tables to Parquet (streaming, bounded memory, progress on a terminal).
    ///
    /// `--to out.parquet` writes every input into one file; `--to outdir/` writes one
    /// Parquet file per input file (and per table when a file holds several).
    Export(export::ExportArgs),
    /// Convert Parquet or CSV files into one TsFile (streaming, bounded memory, progress on a
    /// terminal).
    ///
    /// `tsfile convert data.parquet --to data.tsfile --tags region,device` writes a
    /// table-model TsFile named after the output (`--table` to choose), one device per
    /// distinct TAG tuple; the file appears only when complete.
    Convert(convert::ConvertArgs),
    /// Show a TsFile's structure: tables, devices, series, chunks, pages, statistics,
    /// bloom filter, properties and the writer decision with its evidence (no values are
    /// decoded, except pages of the writer-dependent encodings, judged both ways).
    Inspect {
        /// Print one JSON document instead of a tree.
        #[arg(long)]
        json: bool,
        /// Walk the data section forward marker by marker instead of reading the footer
        /// (for incomplete files); lists the complete chunk groups before any cut.
        #[arg(long)]
        scan: bool,
        /// The TsFile to inspect: a path or a URL (`s3://…`, `gs://…`, `http(s)://…`; read
        /// whole, up to 2 GiB; credentials from the environment as for `tsfile sql`). A
        /// local directory is summarized as an IoTDB data directory: time partitions, files
        /// per space, overlapping writes, deletions, files skipped and why.
        file: String,
    },
}

fn inspect(json: bool, scan: bool, file: &str) -> Result<(), String> {
    if !stores::is_url(file) && std::path::Path::new(file).is_dir() {
        let summary = inspect::dir_summary(file).map_err(|e| format!("{file}: {e}"))?;
        let text =
            if json { serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())? } else { inspect::render_dir(&summary) };
        print_out(&text);
        return Ok(());
    }
    let summary = if stores::is_url(file) {
        let bytes = runtime()?.block_on(stores::fetch_whole(file, stores::MAX_INSPECT_BYTES))?;
        if scan {
            inspect::scan_summary_of(file, bytes)
        } else {
            inspect::summary_of(file, bytes)
        }
    } else if scan {
        inspect::scan_summary(file)
    } else {
        inspect::summary(file)
    };
    let summary = summary.map_err(|e| format!("{file}: {e}"))?;
    let text = if json {
        serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?
    } else if scan {
        inspect::render_scan(&summary)
    } else {
        inspect::render(&summary)
    };
    print_out(&text);
    Ok(())
}

/// Print to stdout, ending quietly when the reader has gone (e.g. `| head`).
fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Inspect { json, scan, file } => inspect(json, scan, &file),
        Command::Sql(args) => runtime()?.block_on(sql::run(args)),
        Command::Export(args) => runtime()?.block_on(export::run(args)),
        Command::Convert(args) => runtime()?.block_on(convert::run(args)),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// One line: DataFusion nests causes over several lines; join them.
fn one_line(e: &str) -> String {
    e.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}
