//! The `tsfile` command-line tool.
//!
//! * `tsfile inspect FILE` — the structure of a TsFile as a readable tree;
//! * `tsfile inspect --json FILE` — the same as one JSON document;
//! * `tsfile inspect --scan FILE` — walk the data section forward instead of using the
//!   footer (works on files whose writer crashed).
//!
//! Errors print as one line on stderr and the exit code is non-zero.

mod inspect;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Read Apache TsFile files.
#[derive(Debug, Parser)]
#[command(name = "tsfile", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show a TsFile's structure: tables, devices, series, chunks, pages, statistics,
    /// bloom filter and properties (no values are decoded).
    Inspect {
        /// Print one JSON document instead of a tree.
        #[arg(long)]
        json: bool,
        /// Walk the data section forward marker by marker instead of reading the footer
        /// (for incomplete files); lists the complete chunk groups before any cut.
        #[arg(long)]
        scan: bool,
        /// The TsFile to inspect.
        file: String,
    },
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Inspect { json, scan, file } => {
            let summary = if scan { inspect::scan_summary(&file) } else { inspect::summary(&file) };
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
    }
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
