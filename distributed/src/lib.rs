//! TsFile scans on an Apache DataFusion Ballista cluster.
//!
//! Ballista ships logical plans from the client to the scheduler and physical plans from the
//! scheduler to the executors as protobuf. The TsFile codecs of `datafusion-tsfile`
//! (feature `proto`) carry [`TsFileTable`]s and TsFile scans through both trips; this crate
//! wraps them around Ballista's own codecs and provides what a cluster runs:
//!
//! * [`Codecs`]: Ballista's codecs with TsFile support, for client, scheduler and
//!   executors alike;
//! * [`client_config`] and [`connect`]: a client session whose plans carry TsFile tables;
//! * [`scheduler_config`] / [`executor_config`]: what the `tsfile-scheduler` and
//!   `tsfile-executor` binaries start;
//! * [`InProcessCluster`]: a scheduler and several executors on loopback inside this process
//!   (tests, demos, benchmarks).
//!
//! Every process must reach the files under the same paths (a shared file system, or an
//! object store URL registered in every process). Keys for encrypted files never travel in
//! plans: give each executor its own (`tsfile-executor --master-key`, or
//! `TSFILE_MASTER_KEY`).
//!
//! ```no_run
//! use datafusion_tsfile::datafusion::{TsFileReadOptions, TsFileTable};
//! use std::sync::Arc;
//!
//! # async fn demo() -> datafusion::common::Result<()> {
//! let ctx = tsfile_ballista::connect("df://localhost:50050").await?;
//! let table = TsFileTable::try_new(&ctx.state(), &["/data/fleet/"], TsFileReadOptions::default()).await?;
//! ctx.register_table("fleet", Arc::new(table))?;
//! ctx.sql("SELECT device_id, avg(temperature) FROM fleet GROUP BY device_id").await?.show().await?;
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_executor::executor_process::ExecutorProcessConfig;
use ballista_scheduler::config::SchedulerConfig;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_tsfile::crypto::EncryptionKeys;
use datafusion_tsfile::datafusion::MetadataCache;
use datafusion_tsfile::datafusion::{register_tsfile_format, TsFileLogicalCodec, TsFilePhysicalCodec};

#[doc(no_inline)]
pub use datafusion_tsfile::datafusion::TsFileTable;

/// The TsFile-aware Ballista codecs of one process; both share one metadata cache, so the
/// process reads each file's footer once.
#[derive(Debug, Clone)]
pub struct Codecs {
    /// Ballista's logical codec, with TsFile tables.
    pub logical: Arc<dyn LogicalExtensionCodec>,
    /// Ballista's physical codec, with TsFile scans.
    pub physical: Arc<dyn PhysicalExtensionCodec>,
    /// The footers this process has read.
    pub cache: Arc<MetadataCache>,
}

impl Codecs {
    /// Codecs whose decoded tables and scans read encrypted files with `keys`.
    pub fn new(keys: EncryptionKeys) -> Codecs {
        let cache = Arc::new(MetadataCache::new());
        let logical = TsFileLogicalCodec::new(Arc::new(BallistaLogicalExtensionCodec::default()))
            .with_keys(keys.clone())
            .with_cache(cache.clone());
        let physical = TsFilePhysicalCodec::new(Arc::new(BallistaPhysicalExtensionCodec::default()))
            .with_keys(keys)
            .with_cache(cache.clone());
        Codecs { logical: Arc::new(logical), physical: Arc::new(physical), cache }
    }

    /// A Ballista session configuration using these codecs.
    pub fn session_config(&self) -> SessionConfig {
        SessionConfig::new_with_ballista()
            .with_ballista_logical_extension_codec(self.logical.clone())
            .with_ballista_physical_extension_codec(self.physical.clone())
    }
}

/// A Ballista session configuration whose plans carry TsFile tables and scans (no keys: a
/// client needs none, statistics and schemas read without them).
pub fn client_config() -> SessionConfig {
    Codecs::new(EncryptionKeys::default()).session_config()
}

/// Connect to the scheduler at `url` (`df://host:port`) with [`client_config`]; the TsFile
/// format is registered (`STORED AS TSFILE`).
pub async fn connect(url: &str) -> Result<SessionContext> {
    connect_with(url, client_config()).await
}

/// [`connect`] with a configuration of your own (start from [`client_config`]).
pub async fn connect_with(url: &str, config: SessionConfig) -> Result<SessionContext> {
    let state = SessionStateBuilder::new().with_default_features().with_config(config).build();
    let ctx = SessionContext::remote_with_state(url, state).await?;
    register_tsfile_format(&ctx)?;
    Ok(ctx)
}

/// Scheduler settings with the TsFile codecs, listening on `bind`.
pub fn scheduler_config(bind: SocketAddr, external_host: &str) -> SchedulerConfig {
    let codecs = Codecs::new(EncryptionKeys::default());
    SchedulerConfig {
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: external_host.to_string(),
        override_logical_codec: Some(codecs.logical),
        override_physical_codec: Some(codecs.physical),
        ..SchedulerConfig::default()
    }
}

/// Start a scheduler with [`scheduler_config`]; runs until the process ends.
pub async fn run_scheduler(config: SchedulerConfig) -> Result<()> {
    let address: SocketAddr = format!("{}:{}", config.bind_host, config.bind_port)
        .parse()
        .map_err(|e| DataFusionError::Configuration(format!("scheduler address: {e}")))?;
    let cluster = ballista_scheduler::cluster::BallistaCluster::new_from_config(&config).await.map_err(ballista_err)?;
    ballista_scheduler::scheduler_process::start_server(cluster, address, Arc::new(config)).await.map_err(ballista_err)
}

/// Executor settings with the TsFile codecs: `port` serves shuffle data (Arrow Flight),
/// the scheduler is at `scheduler_host:scheduler_port`, `keys` open encrypted files.
pub fn executor_config(
    bind_host: &str,
    port: u16,
    scheduler_host: &str,
    scheduler_port: u16,
    vcores: usize,
    keys: EncryptionKeys,
) -> ExecutorProcessConfig {
    let codecs = Codecs::new(keys);
    ExecutorProcessConfig {
        bind_host: bind_host.to_string(),
        port,
        grpc_port: port.saturating_add(1),
        scheduler_host: scheduler_host.to_string(),
        scheduler_port,
        vcores,
        override_logical_codec: Some(codecs.logical),
        override_physical_codec: Some(codecs.physical),
        ..ExecutorProcessConfig::default()
    }
}

/// Start an executor with [`executor_config`]; runs until the process ends.
pub async fn run_executor(config: ExecutorProcessConfig) -> Result<()> {
    ballista_executor::executor_process::start_executor_process(Arc::new(config)).await.map_err(ballista_err)
}

fn ballista_err(e: ballista_core::error::BallistaError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A Ballista scheduler and executors on loopback, inside this process: each executor has
/// its own Arrow Flight port, work directory and codecs (with their own metadata cache), so
/// every plan crosses the protobuf boundary as on a real cluster.
#[derive(Debug, Clone)]
pub struct InProcessCluster {
    url: String,
    executors: Vec<Codecs>,
}

impl InProcessCluster {
    /// Start a scheduler and `executors` executors of `vcores` task slots each; executors
    /// open encrypted files with `keys`.
    pub async fn start(executors: usize, vcores: usize, keys: EncryptionKeys) -> Result<InProcessCluster> {
        let scheduler_codecs = Codecs::new(EncryptionKeys::default());
        let state = SessionStateBuilder::new().with_default_features().with_config(scheduler_codecs.session_config()).build();
        let addr = ballista_scheduler::standalone::new_standalone_scheduler_from_state(&state).await.map_err(ballista_err)?;
        let grpc = format!("http://localhost:{}", addr.port());
        let mut started = Vec::with_capacity(executors);
        for _ in 0..executors {
            let codecs = Codecs::new(keys.clone());
            let state = SessionStateBuilder::new().with_default_features().with_config(codecs.session_config()).build();
            let scheduler = connect_scheduler(&grpc).await?;
            ballista_executor::new_standalone_executor_from_state(scheduler, vcores, &state).await.map_err(ballista_err)?;
            started.push(codecs);
        }
        Ok(InProcessCluster { url: format!("df://localhost:{}", addr.port()), executors: started })
    }

    /// The scheduler's URL for [`connect`] (`df://localhost:<port>`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A client session on this cluster.
    pub async fn connect(&self) -> Result<SessionContext> {
        connect(&self.url).await
    }

    /// The executors' codecs: `cache.len()` tells how many files an executor has opened.
    pub fn executors(&self) -> &[Codecs] {
        &self.executors
    }
}

/// The scheduler's gRPC client, retrying for up to 10 s while it starts.
async fn connect_scheduler(url: &str) -> Result<SchedulerGrpcClient<tonic::transport::Channel>> {
    let mut last = String::new();
    for _ in 0..100 {
        match SchedulerGrpcClient::connect(url.to_string()).await {
            Ok(c) => return Ok(c),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(DataFusionError::Execution(format!("no Ballista scheduler at {url}: {last}")))
}
