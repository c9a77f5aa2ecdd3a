//! A Ballista scheduler and two executors in this process, on loopback: the benchmark
//! workloads over a directory of TsFiles, split into byte ranges across both executors,
//! give exactly the local results — from a local directory, and from a real S3 API (moto,
//! started on 127.0.0.1 by the shared test-server harness) with the store settings sent
//! through the session and each process signing with its own credentials.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Shared with the CLI tests, which use the signature-checking server this test does not.
#[allow(dead_code)]
#[path = "../../cli/tests/object_stores/servers.rs"]
mod servers;

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_tsfile::crypto::EncryptionKeys;
use datafusion_tsfile::datafusion::{register_tsfile_format, TsFileReadOptions, TsFileTable};
use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutPayload};
use tsfile_ballista::stores::{ClusterStores, StoreCredentials};
use tsfile_ballista::InProcessCluster;

/// The benchmark workloads (see BENCHMARKS.md) over the sample's schema; averages are
/// rounded so the partial-aggregate merge order cannot change the last bits.
const WORKLOADS: &[(&str, &str)] = &[
    ("scan_all", "SELECT * FROM weather"),
    ("one_field", "SELECT time, temperature FROM weather"),
    (
        "time_range",
        "SELECT * FROM weather WHERE time BETWEEN TIMESTAMP '2024-01-02T06:00:00' AND TIMESTAMP '2024-01-02T06:33:44'",
    ),
    ("one_device", "SELECT * FROM weather WHERE device = 'ws-north-3-7'"),
    ("agg_global", "SELECT count(*), round(avg(temperature), 6), max(pressure) FROM weather"),
    ("agg_by_device", "SELECT device, count(*), round(avg(temperature), 6), max(pressure) FROM weather GROUP BY device"),
    ("agg_stats", "SELECT count(*), min(time), max(pressure) FROM weather"),
];

fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// A directory of two TsFiles (the sample under two names), one per test.
fn data_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tsfile-ballista-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["a.tsfile", "b.tsfile"] {
        std::fs::copy(repo_path("data/sample.tsfile"), dir.join(name)).unwrap();
    }
    dir
}

/// Row count and an order-independent digest of the rows (sum of row hashes), plus the
/// sorted rendered rows when there are few.
#[derive(Debug, PartialEq)]
struct Answer {
    rows: usize,
    digest: u64,
    small: Vec<String>,
}

fn answer(batches: &[RecordBatch]) -> Answer {
    let mut rows = 0;
    let mut digest = 0u64;
    let mut small = Vec::new();
    for b in batches {
        let fields = b.schema().fields().iter().map(|f| SortField::new(f.data_type().clone())).collect();
        let converter = RowConverter::new(fields).unwrap();
        let converted = converter.convert_columns(b.columns()).unwrap();
        for r in converted.iter() {
            // FNV-1a of the row's bytes.
            let h = r.as_ref().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3));
            digest = digest.wrapping_add(h);
        }
        rows += b.num_rows();
        if rows <= 1000 {
            let fmt = FormatOptions::default();
            let cols: Vec<ArrayFormatter> =
                b.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &fmt).unwrap()).collect();
            for i in 0..b.num_rows() {
                small.push(cols.iter().map(|c| c.value(i).to_string()).collect::<Vec<_>>().join("|"));
            }
        }
    }
    if rows > 1000 {
        small.clear();
    }
    small.sort();
    Answer { rows, digest, small }
}

async fn run(ctx: &SessionContext, sql: &str) -> Answer {
    let stream = ctx.sql(sql).await.unwrap().execute_stream().await.unwrap();
    let batches: Vec<RecordBatch> = stream.try_collect().await.unwrap();
    answer(&batches)
}

async fn register(ctx: &SessionContext, dir: &str) {
    let table = TsFileTable::try_new(&ctx.state(), &[dir], TsFileReadOptions::default()).await.unwrap();
    ctx.register_table("weather", Arc::new(table)).unwrap();
}

#[test]
fn test_workloads_on_two_executors_equal_the_local_results() {
    let dir = data_dir("local");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    rt.block_on(async {
        let path = format!("{}/", dir.display());
        let local = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
        register_tsfile_format(&local).unwrap();
        register(&local, &path).await;

        let cluster = InProcessCluster::start(2, 2, EncryptionKeys::default()).await.unwrap();
        let config = tsfile_ballista::client_config().with_target_partitions(8).with_repartition_file_min_size(0);
        let remote = tsfile_ballista::connect_with(cluster.url(), config).await.unwrap();
        register(&remote, &path).await;

        for (name, sql) in WORKLOADS {
            let want = run(&local, sql).await;
            let got = run(&remote, sql).await;
            assert!(want.rows > 0, "{name}");
            assert_eq!(got, want, "{name}: {sql}");
            println!("ballista {name}: {} rows, equal to the local run", got.rows);
        }
        assert_eq!(run(&remote, WORKLOADS[0].1).await.rows, 2 * 1_006_239);
        // Both executors decoded TsFile scans (each opened the files in its own cache).
        for (i, e) in cluster.executors().iter().enumerate() {
            assert!(!e.cache.is_empty(), "executor {i} ran no TsFile scan");
        }
        // A cast TAG column sorts too.
        let sql = "SELECT CAST(device AS VARCHAR) AS device, count(*) FROM weather GROUP BY 1 ORDER BY 1 LIMIT 5";
        assert_eq!(run(&remote, sql).await, run(&local, sql).await);
        // DDL on the client: a TsFile table from CREATE EXTERNAL TABLE travels too.
        remote.sql(&format!("CREATE EXTERNAL TABLE ddl STORED AS TSFILE LOCATION '{path}'")).await.unwrap();
        let got = run(&remote, "SELECT region, count(*) FROM ddl GROUP BY region").await;
        let want = run(&local, "SELECT region, count(*) FROM weather GROUP BY region").await;
        assert_eq!(got, want);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Credentials of the S3 test: moto accepts any, these are recognizable if they leak.
const ACCESS_KEY: &str = "AKIACLUSTERTESTKEY";
const SECRET_KEY: &str = "cluster-test-secret-0d1e2f";

fn credentials() -> StoreCredentials {
    StoreCredentials::Static { access_key_id: ACCESS_KEY.into(), secret_access_key: SECRET_KEY.into(), session_token: None }
}

/// Put the sample twice under `s3://iot/cluster/`.
async fn put_sample_twice(endpoint: &str) {
    let store = AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name("iot")
        .with_access_key_id(ACCESS_KEY)
        .with_secret_access_key(SECRET_KEY)
        .build()
        .unwrap();
    let bytes = std::fs::read(repo_path("data/sample.tsfile")).unwrap();
    for name in ["a.tsfile", "b.tsfile"] {
        store.put(&StorePath::from(format!("cluster/{name}")), PutPayload::from(bytes.clone())).await.unwrap();
    }
}

#[test]
fn test_cluster_reads_s3_with_settings_from_the_session_and_credentials_of_its_own() {
    let endpoint = servers::servers().s3.clone();
    let dir = data_dir("s3");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    rt.block_on(async {
        put_sample_twice(&endpoint).await;
        let path = format!("{}/", dir.display());
        let local = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4)).enable_url_table();
        register_tsfile_format(&local).unwrap();
        register(&local, &path).await;

        let cluster = InProcessCluster::start_with(2, 2, EncryptionKeys::default(), credentials()).await.unwrap();
        let mut config = tsfile_ballista::client_config().with_target_partitions(8).with_repartition_file_min_size(0);
        config.options_mut().set("s3.endpoint", &endpoint).unwrap();
        config.options_mut().set("s3.allow_http", "true").unwrap();
        config.options_mut().set("s3.region", "us-east-1").unwrap();
        let remote =
            tsfile_ballista::connect_with_stores(cluster.url(), config, ClusterStores::new(credentials())).await.unwrap();
        register(&remote, "s3://iot/cluster/").await;

        for (name, sql) in WORKLOADS {
            let want = run(&local, sql).await;
            let got = run(&remote, sql).await;
            assert_eq!(got, want, "{name} over S3: {sql}");
        }
        for (i, e) in cluster.executors().iter().enumerate() {
            assert!(!e.cache.is_empty(), "executor {i} ran no TsFile scan");
        }
        // Sorting and grouping on TAG columns, as they are.
        for sql in [
            "SELECT device, count(*) AS n FROM weather GROUP BY device ORDER BY device LIMIT 7",
            "SELECT region, device, max(temperature) FROM weather GROUP BY region, device ORDER BY region DESC, device",
            "SELECT time, device, temperature FROM weather WHERE region = 'north' ORDER BY device, time DESC LIMIT 20",
        ] {
            let want = ordered(&local, sql).await;
            assert!(!want.is_empty(), "{sql}");
            assert_eq!(ordered(&remote, sql).await, want, "{sql}");
        }
        // DDL on the client, from the S3 location.
        remote.sql("CREATE EXTERNAL TABLE ddl STORED AS TSFILE LOCATION 's3://iot/cluster/'").await.unwrap();
        let got = run(&remote, "SELECT region, count(*) FROM ddl GROUP BY region").await;
        assert_eq!(got, run(&local, "SELECT region, count(*) FROM weather GROUP BY region").await);

        // Tables from a URL and from DDL with declared columns travel too.
        let got = ordered(&remote, "SELECT region, count(*) FROM 's3://iot/cluster/' GROUP BY region ORDER BY region").await;
        let want = ordered(&local, "SELECT region, count(*) FROM weather GROUP BY region ORDER BY region").await;
        assert_eq!(got, want);
        let got = ordered(&remote, "SELECT count(*), max(pressure) FROM 's3://iot/cluster/a.tsfile'").await;
        assert_eq!(got, ordered(&local, &format!("SELECT count(*), max(pressure) FROM '{path}a.tsfile'")).await);
        remote
            .sql("CREATE EXTERNAL TABLE decl (time TIMESTAMP, device VARCHAR, temperature FLOAT) STORED AS TSFILE LOCATION 's3://iot/cluster/'")
            .await
            .unwrap();
        let sql = "SELECT device, count(*), min(time), round(avg(CAST(temperature AS DOUBLE)), 3) AS t FROM decl \
                   WHERE time < TIMESTAMP '2024-01-02T12:00:00' GROUP BY device ORDER BY device";
        let want_sql = "SELECT CAST(device AS VARCHAR) AS device, count(*), min(CAST(time AS TIMESTAMP(9))), \
                        round(avg(CAST(CAST(temperature AS FLOAT) AS DOUBLE)), 3) AS t FROM weather \
                        WHERE time < TIMESTAMP '2024-01-02T12:00:00' GROUP BY 1 ORDER BY 1";
        let want = ordered(&local, want_sql).await;
        assert_eq!(want.len(), 300);
        assert_eq!(ordered(&remote, sql).await, want);

        // HTTP(S) locations need no settings: every process makes the store of the origin.
        let http = &servers::servers().http;
        let got = ordered(&remote, &format!("SELECT region, count(*) FROM '{http}/sample.tsfile' GROUP BY region ORDER BY region")).await;
        assert_eq!(got, ordered(&local, &format!("SELECT region, count(*) FROM '{path}a.tsfile' GROUP BY region ORDER BY region")).await);

        // What the client ships (its settings, the plans) and shows carries no credentials.
        let shipped: String =
            remote.state().config().options().entries().iter().map(|e| format!("{}={:?}\n", e.key, e.value)).collect();
        assert!(shipped.contains(&format!("s3.endpoint=Some(\"{endpoint}\")")), "{shipped}");
        let explain = rows_text(&remote, "EXPLAIN VERBOSE SELECT device, max(temperature) FROM ddl GROUP BY device").await;
        let plan = remote.sql("SELECT * FROM ddl WHERE device = 'ws-north-3-7'").await.unwrap().into_optimized_plan().unwrap();
        let codecs = tsfile_ballista::Codecs::new(EncryptionKeys::default());
        let bytes = datafusion_proto::bytes::logical_plan_to_bytes_with_extension_codec(&plan, codecs.logical.as_ref()).unwrap();
        for text in [shipped.as_str(), explain.as_str(), &String::from_utf8_lossy(&bytes)] {
            assert!(!text.contains(ACCESS_KEY) && !text.contains(SECRET_KEY), "a credential leaked: {text}");
        }
        // A credential set as a session setting is refused, naming the way to give it.
        let e = remote.sql(&format!("SET s3.secret_access_key = '{SECRET_KEY}'")).await.unwrap_err().to_string();
        assert!(e.contains("credentials are not session settings") && !e.contains(SECRET_KEY), "{e}");
        // A missing object: a one-line error naming it.
        let e = match remote.sql("SELECT count(*) FROM 's3://iot/cluster/none.tsfile'").await {
            Ok(df) => df.collect().await.unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("none.tsfile"), "{e}");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The rows of `sql` in their order, rendered.
async fn ordered(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let fmt = FormatOptions::default();
    let mut rows = Vec::new();
    for b in &batches {
        let cols: Vec<ArrayFormatter> = b.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &fmt).unwrap()).collect();
        for i in 0..b.num_rows() {
            rows.push(cols.iter().map(|c| c.value(i).to_string()).collect::<Vec<_>>().join("|"));
        }
    }
    rows
}

/// Every cell of `sql`'s answer as text.
async fn rows_text(ctx: &SessionContext, sql: &str) -> String {
    ordered(ctx, sql).await.join("\n")
}
