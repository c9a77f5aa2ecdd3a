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
//!   (tests, demos, benchmarks);
//! * [`stores`]: S3 and HTTP object stores made on demand in every process, from the
//!   session's `s3.*` settings and each process's own credentials.
//!
//! Every process must reach the files under the same paths: a shared file system, or object
//! store URLs (`s3://…`, `http(s)://…`). Secrets never travel in plans or settings: give
//! each process its own S3 credentials (`AWS_*` environment, instance role) and each
//! executor its own key for encrypted files (`tsfile-executor --master-key`, or
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
use ballista_core::serde::{BallistaCodec, BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_core::{ConfigProducer, RuntimeProducer};
use ballista_executor::executor_process::ExecutorProcessConfig;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_server::SessionBuilder;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_tsfile::crypto::EncryptionKeys;
use datafusion_tsfile::datafusion::MetadataCache;
use datafusion_tsfile::datafusion::{enable_tsfile_url_tables, register_tsfile_format, TsFileLogicalCodec, TsFilePhysicalCodec};

pub mod stores;

use stores::{ClusterStores, S3Settings, StoreCredentials};

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

    /// A Ballista session configuration using these codecs, with the `s3.*` settings.
    pub fn session_config(&self) -> SessionConfig {
        SessionConfig::new_with_ballista()
            .with_ballista_logical_extension_codec(self.logical.clone())
            .with_ballista_physical_extension_codec(self.physical.clone())
            .with_option_extension(S3Settings::default())
    }
}

/// A Ballista session configuration whose plans carry TsFile tables and scans (no keys: a
/// client needs none, statistics and schemas read without them).
///
/// Ballista's adaptive planner is off: with it, Ballista 55 fails every sort on a
/// dictionary-typed column (TsFile TAG columns, and any Parquet column cast to a dictionary)
/// with "RowConverter column schema mismatch, expected Dictionary(Int32, Utf8) got Utf8":
/// its executors hand on such columns as plain strings while the adaptive stage plans still
/// expect dictionaries. Set `ballista.planner.adaptive.enabled = true` to have it back.
pub fn client_config() -> SessionConfig {
    let mut config = Codecs::new(EncryptionKeys::default()).session_config();
    if let Err(e) = config.options_mut().set(ADAPTIVE_PLANNER, "false") {
        // The key is Ballista's own; a Ballista without it has no adaptive planner to turn off.
        debug_assert!(false, "{ADAPTIVE_PLANNER}: {e}");
    }
    config
}

/// Ballista's switch of its adaptive (stage-by-stage re-optimizing) planner.
const ADAPTIVE_PLANNER: &str = ballista_core::config::BALLISTA_ADAPTIVE_PLANNER_ENABLED;

/// Connect to the scheduler at `url` (`df://host:port`) with [`client_config`]; the TsFile
/// format is registered (`STORED AS TSFILE`), S3 and HTTP stores are made on demand with
/// this process's environment credentials (see [`stores`]).
pub async fn connect(url: &str) -> Result<SessionContext> {
    connect_with(url, client_config()).await
}

/// [`connect`] with a configuration of your own (start from [`client_config`]; its `s3.*`
/// settings travel with every query).
pub async fn connect_with(url: &str, config: SessionConfig) -> Result<SessionContext> {
    connect_with_stores(url, config, ClusterStores::new(StoreCredentials::Environment)).await
}

/// [`connect_with`] whose S3 requests are signed by `stores`' credentials. URL tables
/// (`SELECT … FROM 's3://bucket/dir/'`) are enabled.
pub async fn connect_with_stores(url: &str, config: SessionConfig, stores: Arc<ClusterStores>) -> Result<SessionContext> {
    let runtime = stores.runtime(&config)?;
    let state = SessionStateBuilder::new().with_default_features().with_config(config).with_runtime_env(runtime).build();
    let ctx = SessionContext::remote_with_state(url, state).await?;
    register_tsfile_format(&ctx)?;
    // URL tables over TsFiles are TsFileTables, which plans carry to the scheduler.
    Ok(enable_tsfile_url_tables(ctx))
}

/// Scheduler settings with the TsFile codecs, listening on `bind`; S3 requests (footers
/// read while planning) are signed with `credentials`.
pub fn scheduler_config(bind: SocketAddr, external_host: &str, credentials: StoreCredentials) -> SchedulerConfig {
    let codecs = Codecs::new(EncryptionKeys::default());
    let (config_producer, session_builder) = scheduler_sessions(&codecs, ClusterStores::new(credentials));
    SchedulerConfig {
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: external_host.to_string(),
        override_logical_codec: Some(codecs.logical),
        override_physical_codec: Some(codecs.physical),
        override_config_producer: Some(config_producer),
        override_session_builder: Some(session_builder),
        ..SchedulerConfig::default()
    }
}

/// The scheduler's session configuration (codecs and `s3.*` settings) and its sessions
/// (Ballista's, with a runtime whose stores follow each session's settings).
fn scheduler_sessions(codecs: &Codecs, stores: Arc<ClusterStores>) -> (ConfigProducer, SessionBuilder) {
    let config = codecs.session_config();
    let producer: ConfigProducer = Arc::new(move || config.clone());
    let builder: SessionBuilder = Arc::new(move |config: SessionConfig| {
        let runtime = stores.runtime(&config)?;
        let state = ballista_core::utils::default_session_builder(config)?;
        Ok(SessionStateBuilder::new_from_existing(state).with_runtime_env(runtime).build())
    });
    (producer, builder)
}

/// The executors' configuration (codecs and `s3.*` settings) and a runtime per task whose
/// stores follow the task's session settings.
fn executor_sessions(codecs: &Codecs, stores: Arc<ClusterStores>) -> (ConfigProducer, RuntimeProducer) {
    let config = codecs.session_config();
    let producer: ConfigProducer = Arc::new(move || config.clone());
    let runtime: RuntimeProducer = Arc::new(move |config: &SessionConfig| stores.runtime(config));
    (producer, runtime)
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
/// the scheduler is at `scheduler_host:scheduler_port`, `keys` open encrypted files,
/// `credentials` sign S3 requests.
pub fn executor_config(
    bind_host: &str,
    port: u16,
    scheduler_host: &str,
    scheduler_port: u16,
    vcores: usize,
    keys: EncryptionKeys,
    credentials: StoreCredentials,
) -> ExecutorProcessConfig {
    let codecs = Codecs::new(keys);
    let (config_producer, runtime_producer) = executor_sessions(&codecs, ClusterStores::new(credentials));
    ExecutorProcessConfig {
        bind_host: bind_host.to_string(),
        port,
        grpc_port: port.saturating_add(1),
        scheduler_host: scheduler_host.to_string(),
        scheduler_port,
        vcores,
        override_logical_codec: Some(codecs.logical),
        override_physical_codec: Some(codecs.physical),
        override_config_producer: Some(config_producer),
        override_runtime_producer: Some(runtime_producer),
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
    /// open encrypted files with `keys`, S3 requests use the environment's credentials.
    pub async fn start(executors: usize, vcores: usize, keys: EncryptionKeys) -> Result<InProcessCluster> {
        Self::start_with(executors, vcores, keys, StoreCredentials::Environment).await
    }

    /// [`InProcessCluster::start`] whose scheduler and executors sign S3 requests with
    /// `credentials` (each process of a real cluster has its own).
    pub async fn start_with(
        executors: usize,
        vcores: usize,
        keys: EncryptionKeys,
        credentials: StoreCredentials,
    ) -> Result<InProcessCluster> {
        let scheduler_codecs = Codecs::new(EncryptionKeys::default());
        let (config_producer, session_builder) = scheduler_sessions(&scheduler_codecs, ClusterStores::new(credentials.clone()));
        let codec = BallistaCodec::new(scheduler_codecs.logical.clone(), scheduler_codecs.physical.clone());
        let addr = ballista_scheduler::standalone::new_standalone_scheduler_with_builder(session_builder, config_producer, codec)
            .await
            .map_err(ballista_err)?;
        let grpc = format!("http://localhost:{}", addr.port());
        let mut started = Vec::with_capacity(executors);
        for _ in 0..executors {
            let codecs = Codecs::new(keys.clone());
            let (config_producer, runtime_producer) = executor_sessions(&codecs, ClusterStores::new(credentials.clone()));
            let codec = BallistaCodec::new(codecs.logical.clone(), codecs.physical.clone());
            let state = SessionStateBuilder::new().with_default_features().with_config(codecs.session_config()).build();
            let scheduler = connect_scheduler(&grpc).await?;
            ballista_executor::new_standalone_executor_from_builder(
                scheduler,
                vcores,
                config_producer,
                runtime_producer,
                codec,
                (&state).into(),
            )
            .await
            .map_err(ballista_err)?;
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
