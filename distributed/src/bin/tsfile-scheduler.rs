//! `tsfile-scheduler`: a Ballista scheduler that plans queries over TsFiles.
//!
//! ```text
//! tsfile-scheduler --bind 0.0.0.0:50050 --external-host node1.example
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;
use tsfile_ballista::stores::StoreCredentials;

/// A Ballista scheduler with the TsFile plan codecs.
#[derive(Parser, Debug)]
#[command(name = "tsfile-scheduler", version)]
struct Args {
    /// Address to listen on for clients and executors.
    #[arg(long, default_value = "127.0.0.1:50050")]
    bind: SocketAddr,
    /// Host name executors and clients use to reach this scheduler.
    #[arg(long, default_value = "localhost")]
    external_host: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    eprintln!("tsfile-scheduler: listening on {} (external host {})", args.bind, args.external_host);
    let config = tsfile_ballista::scheduler_config(args.bind, &args.external_host, StoreCredentials::Environment);
    match tsfile_ballista::run_scheduler(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tsfile-scheduler: {e}");
            ExitCode::FAILURE
        }
    }
}
