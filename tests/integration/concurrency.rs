//! Concurrency: 16 SQL queries (full scans, filters, aggregates) over `data/sample.tsfile`
//! and corpus files, run at once as tokio tasks on one `SessionContext` — sharing its
//! metadata cache and runtime — return exactly what they return one at a time.

use datafusion::prelude::SessionContext;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use serde_json::Value;

use crate::common::repo_path;
use crate::sql::{block_on, ctx, rows_of};

const QUERIES: [&str; 16] = [
    "SELECT count(*) FROM weather",
    "SELECT region, count(*), avg(temperature), max(humidity) FROM weather GROUP BY region",
    "SELECT device, min(time), max(time), sum(energy_wh) FROM weather WHERE temperature > 20 GROUP BY device",
    "SELECT * FROM weather ORDER BY time, region, site, device LIMIT 200",
    "SELECT status, count(*) FROM weather WHERE online GROUP BY status",
    "SELECT day, count(*), min(pressure) FROM weather GROUP BY day",
    "SELECT * FROM weather WHERE humidity > 90 AND region IS NOT NULL",
    "SELECT * FROM sensors",
    "SELECT kind, sum(value), count(ok) FROM sensors GROUP BY kind",
    "SELECT * FROM events WHERE value IS NOT NULL",
    "SELECT * FROM sparse",
    "SELECT id, count(a), count(b), count(c), count(d), count(e) FROM sparse GROUP BY id",
    "SELECT * FROM meters WHERE kwh > 10",
    "SELECT building, meter, sum(kwh), max(status) FROM meters GROUP BY building, meter",
    "SELECT count(*), min(time), max(time) FROM meters",
    "SELECT count(*), max(t) FROM (SELECT time AS t FROM meters UNION ALL SELECT time AS t FROM sensors)",
];

async fn session() -> SessionContext {
    let c = ctx(4);
    let corpus = |f: &str| repo_path(&format!("tests/data/corpus/files/{f}.tsfile")).to_string_lossy().to_string();
    let sample = repo_path("data/sample.tsfile").to_string_lossy().to_string();
    let tables = [
        ("weather", sample, "weather"),
        ("sensors", corpus("table_multi_tables"), "sensors"),
        ("events", corpus("table_multi_tables"), "events"),
        ("sparse", corpus("table_nulls"), "sparse"),
        ("meters", corpus("table_chunk_groups"), "meters"),
    ];
    for (name, path, table) in tables {
        let opts = TsFileReadOptions::default().with_table(table).with_time_unit(TimeUnit::Raw);
        register_tsfile(&c, name, &[path.as_str()], opts).await.unwrap();
    }
    c
}

async fn query(c: SessionContext, sql: &'static str) -> Vec<Vec<Value>> {
    let batches = c.sql(sql).await.unwrap().collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut rows = rows_of(&batches);
    rows.sort_by_key(|r| serde_json::to_string(r).unwrap());
    rows
}

/// A float cell as rendered by `conformance::cell` (`"f64:<bits>"`, `"f32:<bits>"`).
fn float_cell(v: &Value) -> Option<f64> {
    let s = v.as_str()?;
    if let Some(h) = s.strip_prefix("f64:") {
        return u64::from_str_radix(h, 16).ok().map(f64::from_bits);
    }
    s.strip_prefix("f32:").and_then(|h| u32::from_str_radix(h, 16).ok()).map(|b| f64::from(f32::from_bits(b)))
}

/// Equal, floats within 1e-9 relative (partial aggregates may merge in another order).
fn same(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    if let (Some(x), Some(y)) = (float_cell(a), float_cell(b)) {
        return x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) if x.fract() != 0.0 || y.fract() != 0.0 => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
            _ => x == y,
        },
        _ => a == b,
    }
}

#[test]
fn test_concurrent_queries_match_sequential() {
    block_on(async {
        let c = session().await;
        let mut alone = Vec::new();
        for q in QUERIES {
            alone.push(query(c.clone(), q).await);
        }
        assert!(alone.iter().all(|r| !r.is_empty()), "every query returns rows");
        let tasks: Vec<_> = QUERIES.iter().map(|q| tokio::spawn(query(c.clone(), q))).collect();
        for ((q, task), want) in QUERIES.iter().zip(tasks).zip(&alone) {
            let got = task.await.unwrap();
            assert_eq!(got.len(), want.len(), "{q}: row count differs when run concurrently");
            for (g, w) in got.iter().zip(want) {
                assert!(g.len() == w.len() && g.iter().zip(w).all(|(a, b)| same(a, b)), "{q}: {g:?} != {w:?}");
            }
        }
    });
}
