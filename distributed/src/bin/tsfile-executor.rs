//! `tsfile-executor`: a Ballista executor that runs TsFile scans.
//!
//! ```text
//! tsfile-executor --scheduler localhost:50050 --port 50051 --vcores 2
//! ```
//!
//! Keys for encrypted TsFiles come from `--master-key` or `TSFILE_MASTER_KEY` (they are
//! never part of a plan).

use std::process::ExitCode;

use clap::Parser;
use datafusion_tsfile::crypto::{EncryptionKeys, MasterKey};
use tsfile_ballista::stores::StoreCredentials;

/// A Ballista executor with the TsFile plan codecs.
#[derive(Parser, Debug)]
#[command(name = "tsfile-executor", version)]
struct Args {
    /// The scheduler, `host:port`.
    #[arg(long, default_value = "localhost:50050")]
    scheduler: String,
    /// Host to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind_host: String,
    /// Port serving shuffle data to other executors (Arrow Flight); the next port is the
    /// executor's gRPC port.
    #[arg(long, default_value_t = 50051)]
    port: u16,
    /// Task slots (concurrent tasks); 0 = one per CPU core.
    #[arg(long, default_value_t = 0)]
    vcores: usize,
    /// Key for encrypted TsFiles (32 hex digits or 16 characters).
    #[arg(long, env = "TSFILE_MASTER_KEY", hide_env_values = true)]
    master_key: Option<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let mut keys = EncryptionKeys::default();
    if let Some(k) = &args.master_key {
        match MasterKey::parse(k) {
            Ok(k) => keys = keys.with_master_key(k),
            Err(e) => {
                eprintln!("tsfile-executor: --master-key: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let Some((host, port)) = args.scheduler.rsplit_once(':').and_then(|(h, p)| Some((h.to_string(), p.parse::<u16>().ok()?)))
    else {
        eprintln!("tsfile-executor: --scheduler '{}': expected host:port", args.scheduler);
        return ExitCode::FAILURE;
    };
    let vcores = if args.vcores == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { args.vcores };
    eprintln!("tsfile-executor: port {} ({} task slots), scheduler {host}:{port}", args.port, vcores);
    let config =
        tsfile_ballista::executor_config(&args.bind_host, args.port, &host, port, vcores, keys, StoreCredentials::Environment);
    match tsfile_ballista::run_executor(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tsfile-executor: {e}");
            ExitCode::FAILURE
        }
    }
}
