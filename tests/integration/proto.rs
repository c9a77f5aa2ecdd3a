//! Plans over TsFiles through `datafusion-proto` (feature `proto`): logical and physical
//! plans encode, decode in a fresh session and execute to the local results, with the same
//! pruning metrics; byte-range splits, predicates, options and partition columns survive
//! the trip, and key material never travels.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::DataType;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_tsfile::crypto::{EncryptionKeys, MasterKey};
use datafusion_tsfile::datafusion::{
    enable_tsfile_url_tables, register_tsfile_format, TsFileLogicalCodec, TsFilePhysicalCodec, TsFileReadOptions, TsFileTable,
};

use crate::common::{corpus_dir, repo_path};
use crate::sql::{block_on, metric};

/// Assert two renderings of the same query's rows are equal: every cell the same text, except
/// floating-point cells, which may differ by rounding (a plan run with another partitioning
/// adds its partial sums in another order): relative difference at most 1e-12.
fn assert_same_rows(a: &[Vec<String>], b: &[Vec<String>], what: &str) {
    let close = |x: &str, y: &str| match (x.parse::<f64>(), y.parse::<f64>()) {
        (Ok(x), Ok(y)) if x.is_finite() && y.is_finite() => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
        _ => false,
    };
    assert_eq!(a.len(), b.len(), "{what}: row counts");
    for (ra, rb) in a.iter().zip(b) {
        assert_eq!(ra.len(), rb.len(), "{what}");
        for (x, y) in ra.iter().zip(rb) {
            assert!(x == y || close(x, y), "{what}: {ra:?} != {rb:?}");
        }
    }
}

/// Rows rendered cell by cell (Arrow's display: floats in their shortest exact form).
fn rows_of(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let fmt = datafusion::arrow::util::display::FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let cols: Vec<_> = b
            .columns()
            .iter()
            .map(|c| datafusion::arrow::util::display::ArrayFormatter::try_new(c.as_ref(), &fmt).unwrap())
            .collect();
        for i in 0..b.num_rows() {
            out.push(cols.iter().map(|c| c.value(i).to_string()).collect());
        }
    }
    out
}

/// Scan metrics that must be equal between a local plan and its decoded copy.
const PRUNING_METRICS: &[&str] = &[
    "devices_total",
    "devices_pruned",
    "chunk_groups_pruned",
    "chunks_total",
    "chunks_pruned",
    "pages_total",
    "pages_pruned",
    "predicate_evaluation_errors",
    "rows_decoded",
];

/// Queries over the sample's `weather` table: full aggregates, a time window, a device, a
/// value predicate, tags and a join.
const QUERIES: &[&str] = &[
    "SELECT count(*), sum(temperature), count(humidity), min(time), max(time) FROM weather",
    "SELECT region, site, count(*), avg(temperature) FROM weather \
     WHERE time >= TIMESTAMP '2024-01-02T00:00:00' AND time < TIMESTAMP '2024-01-02T03:00:00' GROUP BY region, site ORDER BY region, site",
    "SELECT time, pressure, energy_wh, online, status, day, last_calibration FROM weather WHERE device = 'ws-north-3-7' ORDER BY time",
    "SELECT region, count(*), max(humidity) FROM weather WHERE temperature > 30 GROUP BY region ORDER BY region",
    "SELECT w.region, count(*) FROM weather w JOIN (SELECT DISTINCT device FROM weather WHERE region = 'east' AND site = 'east-site-2') d \
     ON w.device = d.device GROUP BY w.region ORDER BY w.region",
];

fn sample() -> String {
    repo_path("data/sample.tsfile").display().to_string()
}

/// A session with `partitions` target partitions, files split by byte ranges (no minimum
/// size), and the TsFile format registered.
fn session(partitions: usize) -> SessionContext {
    let config = SessionConfig::new().with_target_partitions(partitions).with_repartition_file_min_size(0);
    let c = SessionContext::new_with_config(config);
    register_tsfile_format(&c).unwrap();
    c
}

/// Register a table whose aggregations scan (these tests are about scans; answers from
/// statistics are checked in `test_statistics_aggregate_travels_as_the_aggregation_it_replaced`).
async fn register(c: &SessionContext, name: &str, paths: &[&str], options: TsFileReadOptions) {
    let t = TsFileTable::try_new(&c.state(), paths, options.with_statistics_aggregates(false)).await.unwrap();
    c.register_table(name, Arc::new(t)).unwrap();
}

fn display(plan: &Arc<dyn ExecutionPlan>) -> String {
    displayable(plan.as_ref()).indent(true).to_string()
}

/// Encode the physical plan of `sql`, decode it with `codec` in a session that has no
/// table registered, check that both display alike (file groups with their byte ranges,
/// projection, pruning predicate), run both; returns (local, decoded) results and plans.
async fn physical_trip(
    c: &SessionContext,
    sql: &str,
    codec: &TsFilePhysicalCodec,
) -> (Vec<RecordBatch>, Arc<dyn ExecutionPlan>, datafusion::common::Result<Vec<RecordBatch>>, Arc<dyn ExecutionPlan>) {
    let plan = c.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
    let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), codec).unwrap();
    let remote = session(1);
    let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &remote.task_ctx(), codec).unwrap();
    assert_eq!(display(&plan), display(&decoded), "{sql}");
    let local = collect(plan.clone(), c.task_ctx()).await.unwrap();
    let there = collect(decoded.clone(), remote.task_ctx()).await;
    (local, plan, there, decoded)
}

#[test]
fn test_physical_plans_round_trip_with_equal_results_and_pruning() {
    block_on(async {
        let c = session(3);
        register(&c, "weather", &[&sample()], TsFileReadOptions::default()).await;
        let codec = TsFilePhysicalCodec::default();
        let mut ranged = 0;
        for sql in QUERIES {
            let (local, plan, there, decoded) = physical_trip(&c, sql, &codec).await;
            let there = there.unwrap();
            assert_same_rows(&rows_of(&local), &rows_of(&there), sql);
            assert!(!rows_of(&local).is_empty(), "{sql}");
            if display(&plan).contains("sample.tsfile:") {
                ranged += 1;
            }
            for m in PRUNING_METRICS {
                assert_eq!(metric(&plan, m), metric(&decoded, m), "{m} of {sql}");
            }
        }
        assert_eq!(ranged, QUERIES.len(), "every scan is split into byte ranges over 3 partitions");
        // The device and time-window queries really prune (so equal metrics mean something).
        let (_, plan, _, decoded) = physical_trip(&c, QUERIES[2], &codec).await;
        assert_eq!(metric(&decoded, "devices_pruned"), 299);
        assert_eq!(metric(&plan, "devices_pruned"), 299);
        let (_, _, _, decoded) = physical_trip(&c, QUERIES[1], &codec).await;
        assert!(metric(&decoded, "rows_decoded") < 100_000, "the time window decodes few rows");
    });
}

#[test]
fn test_physical_plan_keeps_the_options() {
    block_on(async {
        let c = session(2);
        let opts = TsFileReadOptions::default().with_pruning(false).with_table("weather");
        register(&c, "weather", &[&sample()], opts).await;
        let (local, plan, there, decoded) = physical_trip(&c, QUERIES[2], &TsFilePhysicalCodec::default()).await;
        assert_eq!(rows_of(&local), rows_of(&there.unwrap()));
        // Pruning stays off on the other side: every device is read.
        assert_eq!(metric(&decoded, "devices_pruned"), 0);
        assert_eq!(metric(&plan, "rows_decoded"), metric(&decoded, "rows_decoded"));
        assert_eq!(metric(&decoded, "rows_decoded"), 1_006_239);
    });
}

#[test]
fn test_logical_plans_round_trip_into_a_fresh_session() {
    block_on(async {
        let c = session(2);
        register(&c, "weather", &[&sample()], TsFileReadOptions::default()).await;
        let codec = TsFileLogicalCodec::default();
        for sql in QUERIES {
            let df = c.sql(sql).await.unwrap();
            let local = rows_of(&df.clone().collect().await.unwrap());
            let bytes = logical_plan_to_bytes_with_extension_codec(df.logical_plan(), &codec).unwrap();
            // The receiving session has no table and no format registered.
            let remote = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
            let decoded = logical_plan_from_bytes_with_extension_codec(&bytes, &remote.task_ctx(), &codec).unwrap();
            let there = rows_of(&remote.execute_logical_plan(decoded).await.unwrap().collect().await.unwrap());
            assert_same_rows(&local, &there, sql);
        }
    });
}

#[test]
fn test_logical_plan_keeps_options_and_tree_tables() {
    block_on(async {
        let c = session(2);
        let tree = corpus_dir().join("files/tree_many_devices.tsfile").display().to_string();
        let opts = TsFileReadOptions::default().with_table("root.fleet").with_tree_levels(true);
        register(&c, "fleet", &[&tree], opts).await;
        let us = TsFileReadOptions::default().with_time_unit(datafusion_tsfile::arrow::schema::TimeUnit::Microsecond);
        register(&c, "weather", &[&sample()], us).await;
        let codec = TsFileLogicalCodec::default();
        for sql in [
            "SELECT level2, count(*) FROM fleet GROUP BY level2 ORDER BY level2",
            "SELECT device, min(time), max(time) FROM fleet WHERE device LIKE 'root.fleet.v00%' GROUP BY device ORDER BY device",
            "SELECT arrow_typeof(time), min(time) FROM weather GROUP BY 1",
        ] {
            let df = c.sql(sql).await.unwrap();
            let local = rows_of(&df.clone().collect().await.unwrap());
            let bytes = logical_plan_to_bytes_with_extension_codec(df.logical_plan(), &codec).unwrap();
            let remote = SessionContext::new();
            let decoded = logical_plan_from_bytes_with_extension_codec(&bytes, &remote.task_ctx(), &codec).unwrap();
            let there = rows_of(&remote.execute_logical_plan(decoded).await.unwrap().collect().await.unwrap());
            assert!(!local.is_empty());
            assert_same_rows(&local, &there, sql);
        }
        let df = c.sql("SELECT arrow_typeof(time) FROM weather LIMIT 1").await.unwrap();
        assert_eq!(rows_of(&df.collect().await.unwrap()), [["Timestamp(µs)"]]);
    });
}

#[test]
fn test_partition_columns_survive_both_trips() {
    let dir = std::env::temp_dir().join(format!("tsfile-proto-parts-{}", std::process::id()));
    for part in ["x", "y"] {
        std::fs::create_dir_all(dir.join(format!("part={part}"))).unwrap();
        std::fs::copy(sample(), dir.join(format!("part={part}/sample.tsfile"))).unwrap();
    }
    block_on(async {
        let c = session(2);
        let root = format!("{}/", dir.display());
        let t = TsFileTable::try_new_partitioned(
            &c.state(),
            &[&root],
            TsFileReadOptions::default(),
            vec![("part".into(), DataType::Utf8)],
        )
        .await
        .unwrap();
        assert_eq!(t.partition_cols(), &[("part".to_string(), DataType::Utf8)]);
        c.register_table("weather", Arc::new(t)).unwrap();
        let sql = "SELECT part, count(*), sum(pressure) FROM weather WHERE part = 'y' OR device = 'ws-north-3-7' GROUP BY part ORDER BY part";
        let local = rows_of(&c.sql(sql).await.unwrap().collect().await.unwrap());
        assert_eq!(local.len(), 2, "{local:?}");
        assert_eq!(local[1][..2], ["y", "1006239"], "part y: every row");
        let n: i64 = local[0][1].parse().unwrap();
        assert!(local[0][0] == "x" && n > 3000 && n < 3700, "part x: one device: {local:?}");
        // Physical.
        let (_, _, there, _) = physical_trip(&c, sql, &TsFilePhysicalCodec::default()).await;
        assert_eq!(local, rows_of(&there.unwrap()));
        // Logical.
        let codec = TsFileLogicalCodec::default();
        let df = c.sql(sql).await.unwrap();
        let bytes = logical_plan_to_bytes_with_extension_codec(df.logical_plan(), &codec).unwrap();
        let remote = SessionContext::new();
        let decoded = logical_plan_from_bytes_with_extension_codec(&bytes, &remote.task_ctx(), &codec).unwrap();
        assert_eq!(local, rows_of(&remote.execute_logical_plan(decoded).await.unwrap().collect().await.unwrap()));
        // Only part x's files are opened for the device: filters on a partition column
        // skip directories.
        let (_, plan, _, _) = physical_trip(
            &c,
            "SELECT count(*) FROM weather WHERE part = 'x' AND temperature > 100",
            &TsFilePhysicalCodec::default(),
        )
        .await;
        assert!(display(&plan).contains("part=x") && !display(&plan).contains("part=y"), "{}", display(&plan));
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_keys_never_travel_and_the_receiver_supplies_them() {
    const MASTER: &str = "tsfile-rs-master";
    block_on(async {
        let c = session(1);
        let path = repo_path("tests/data/encrypted/aes128_level2.tsfile").display().to_string();
        let keys = || EncryptionKeys::default().with_master_key(MasterKey::parse(MASTER).unwrap());
        register(&c, "t", &[&path], TsFileReadOptions::default().with_keys(keys())).await;
        let sql = "SELECT dev, sum(v) FROM t GROUP BY dev ORDER BY dev";
        let plan = c.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
        let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &TsFilePhysicalCodec::default()).unwrap();
        let hex: String = MASTER.bytes().map(|b| format!("{b:02x}")).collect();
        let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
        assert!(!has(MASTER.as_bytes()) && !has(hex.as_bytes()) && !has(&MASTER.as_bytes()[..8]), "the key is in the plan");
        let df = c.sql(sql).await.unwrap();
        let logical = logical_plan_to_bytes_with_extension_codec(df.logical_plan(), &TsFileLogicalCodec::default()).unwrap();
        assert!(!logical.windows(MASTER.len()).any(|w| w == MASTER.as_bytes()));
        // A receiver without keys cannot read the values; one with its own keys can.
        let (local, _, there, _) = physical_trip(&c, sql, &TsFilePhysicalCodec::default()).await;
        let e = there.unwrap_err().to_string();
        assert!(e.contains("encrypted file"), "{e}");
        let (_, _, there, _) = physical_trip(&c, sql, &TsFilePhysicalCodec::default().with_keys(keys())).await;
        assert_eq!(rows_of(&local), rows_of(&there.unwrap()));
        assert_eq!(rows_of(&local), [["d1", "60"], ["d2", "300"]]);
    });
}

#[test]
fn test_foreign_and_damaged_bytes_are_errors() {
    block_on(async {
        let c = session(1);
        register(&c, "weather", &[&sample()], TsFileReadOptions::default()).await;
        let plan =
            c.sql("SELECT count(*) FROM weather WHERE region = 'east'").await.unwrap().create_physical_plan().await.unwrap();
        let codec = TsFilePhysicalCodec::default();
        let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec).unwrap();
        let tag = b"tsfile-scan/1\0";
        let at = bytes.windows(tag.len()).position(|w| w == tag).expect("the scan is an extension node with our tag");
        // Truncating the plan inside our node: an error, never a panic.
        for cut in [at + tag.len() + 3, at + tag.len() + 40, bytes.len() - 5] {
            assert!(physical_plan_from_bytes_with_extension_codec(&bytes[..cut], &c.task_ctx(), &codec).is_err());
        }
        // Without our codec the extension node cannot be decoded.
        let e = physical_plan_from_bytes_with_extension_codec(
            &bytes,
            &c.task_ctx(),
            &datafusion_proto::physical_plan::DefaultPhysicalExtensionCodec {},
        )
        .unwrap_err()
        .to_string();
        assert!(!e.is_empty());
        // A logical codec hands foreign table providers to its inner codec (which refuses).
        let codec = TsFileLogicalCodec::default();
        let mem = datafusion::datasource::MemTable::try_new(Arc::new(arrow_schema::Schema::empty()), vec![vec![]]).unwrap();
        let mut buf = Vec::new();
        use datafusion_proto::logical_plan::LogicalExtensionCodec;
        assert!(codec.try_encode_table_provider(&"m".into(), Arc::new(mem), &mut buf).is_err());
    });
}

#[test]
fn test_statistics_aggregate_travels_as_the_aggregation_it_replaced() {
    block_on(async {
        let c = session(2);
        let path = repo_path("data/sample.tsfile").display().to_string();
        let t = TsFileTable::try_new(&c.state(), &[&path], TsFileReadOptions::default()).await.unwrap();
        c.register_table("w", Arc::new(t)).unwrap();
        let sql = "SELECT region, count(*), avg(temperature), sum(energy_wh) FROM w GROUP BY region ORDER BY region";
        let plan = c.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
        assert!(display(&plan).contains("StatisticsAggregateExec"), "{}", display(&plan));
        let codec = TsFilePhysicalCodec::default();
        let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &codec).unwrap();
        let remote = session(1);
        let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &remote.task_ctx(), &codec).unwrap();
        // The receiver runs the partial aggregation over the scan it replaced.
        let text = display(&decoded);
        assert!(
            !text.contains("StatisticsAggregateExec")
                && text.contains("AggregateExec: mode=Partial")
                && text.contains("DataSourceExec"),
            "{text}"
        );
        let local = collect(plan, c.task_ctx()).await.unwrap();
        let there = collect(decoded, remote.task_ctx()).await.unwrap();
        let (a, b) = (rows_of(&local), rows_of(&there));
        assert_eq!(a.len(), 5);
        // Counts and integer sums are exact on both sides (averages differ in the last bits).
        let exact =
            |r: &Vec<Vec<String>>| r.iter().map(|row| (row[0].clone(), row[1].clone(), row[3].clone())).collect::<Vec<_>>();
        assert_eq!(exact(&a), exact(&b));
    });
}

#[test]
fn test_url_tables_and_declared_columns_travel_in_logical_plans() {
    block_on(async {
        let c = enable_tsfile_url_tables(session(4));
        let dir = std::env::temp_dir().join(format!("tsfile-url-tables-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("n.csv");
        std::fs::write(&csv, "a,b\n1,2\n3,4\n").unwrap();
        let p = sample();
        // A TsFile URL is a TsFileTable; any other stays DataFusion's.
        let t = c.table_provider(datafusion::common::TableReference::bare(p.as_str())).await.unwrap();
        assert!(t.downcast_ref::<TsFileTable>().is_some(), "a TsFile URL table is a TsFileTable");
        let n = rows_of(&c.sql(&format!("SELECT count(*) FROM '{}'", csv.display())).await.unwrap().collect().await.unwrap());
        assert_eq!(n, [["2".to_string()]]);
        c.sql(&format!(
            "CREATE EXTERNAL TABLE decl (time TIMESTAMP, device VARCHAR, temperature FLOAT) STORED AS TSFILE LOCATION '{p}'"
        ))
        .await
        .unwrap();
        let codec = TsFileLogicalCodec::default();
        for sql in [
            format!("SELECT region, count(*), max(pressure) FROM '{p}' GROUP BY region ORDER BY region"),
            "SELECT device, count(*), min(time), max(temperature) FROM decl WHERE time > TIMESTAMP '2024-01-02T03:00:00' GROUP BY device ORDER BY device".to_string(),
        ] {
            let plan = c.sql(&sql).await.unwrap().into_optimized_plan().unwrap();
            let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &codec).unwrap();
            let there = session(2);
            let decoded = logical_plan_from_bytes_with_extension_codec(&bytes, &there.task_ctx(), &codec).unwrap();
            let want = rows_of(&c.execute_logical_plan(plan).await.unwrap().collect().await.unwrap());
            let got = rows_of(&there.execute_logical_plan(decoded).await.unwrap().collect().await.unwrap());
            assert!(!want.is_empty(), "{sql}");
            assert_same_rows(&got, &want, &sql);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    });
}
