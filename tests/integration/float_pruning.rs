//! FLOAT/DOUBLE statistics pruning never changes an answer: every query over FLOAT and
//! DOUBLE columns holding NaN (either sign, first in a page or not), ±∞, −0.0/+0.0 (alone and
//! mixed in both orders), nulls (whole pages, partial pages, a whole series), values equal to
//! the constants, and extremes (MAX, MIN_POSITIVE, subnormals) gives, with pruning, the same
//! rows (floats compared by bits) as the same table read with `pruning = false` and as
//! DataFusion filtering the full decode collected into a `MemTable` (an independent path).
//! The same on the corpus files with float columns (table and tree model). And pruning
//! happens: a query no value matches decodes nothing, while a page holding a NaN is never
//! pruned for `x > c` (NaN is above every number in DataFusion).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use datafusion::datasource::MemTable;
use datafusion::physical_plan::displayable;
use datafusion::prelude::SessionContext;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use datafusion_tsfile::format::Encoding;
use serde_json::Value;

use crate::common::{file_path, manifest, manifest_files};
use crate::sql::{block_on, count_rows, ctx, metric, quote, rows_of, run};
use crate::writer::{write_tsfile, Device, Table, Val, DOUBLE, FLOAT, INT64};

/// Rows per page of the synthetic files.
const PAGE: usize = 6;

/// Pages of float values (`None` = null) covering the cases of the module doc; `f32` picks
/// the FLOAT variant of the extremes.
fn page_patterns(f32: bool) -> Vec<Vec<Option<f64>>> {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let all = |v: f64| vec![Some(v); PAGE];
    let p = |v: [f64; PAGE]| v.iter().map(|x| Some(*x)).collect::<Vec<_>>();
    let extremes = if f32 {
        let sub = f64::from(f32::from_bits(1));
        p([f64::from(f32::MAX), f64::from(f32::MIN_POSITIVE), sub, -f64::from(f32::MAX), -sub, 1.0])
    } else {
        p([f64::MAX, f64::MIN_POSITIVE, 5e-324, -f64::MAX, -5e-324, 1e300])
    };
    vec![
        p([1.0, 2.5, 3.25, 4.0, 10.0, 7.5]),
        p([50.0, 60.0, 70.0, 80.0, 90.0, 100.0]),
        p([-10.0, -20.0, -3.5, -7.0, -1.0, -100.0]),
        p([nan, 1.0, 2.0, 3.0, 4.0, 5.0]),
        p([1.0, 2.0, nan, 3.0, 4.0, 5.0]),
        p([1.0, 2.0, -nan, 3.0, 4.0, 5.0]),
        vec![Some(nan), None, Some(nan), Some(nan), None, Some(-nan)],
        p([1.0, inf, 2.0, 3.0, 4.0, 5.0]),
        p([1.0, -inf, 2.0, 3.0, 4.0, 5.0]),
        p([inf, -inf, 1.0, 2.0, 3.0, 4.0]),
        p([inf, inf, inf, inf, inf, inf]),
        all(-0.0),
        all(0.0),
        p([-0.0, 0.0, -0.0, 0.0, -0.0, 0.0]),
        p([0.0, -0.0, 0.0, -0.0, 0.0, -0.0]),
        p([0.0, 1.0, -0.0, 2.0, 3.0, 1.5]),
        p([-0.0, -1.0, 0.0, -2.0, -3.0, -1.5]),
        vec![None; PAGE],
        vec![None, Some(1.5), None, Some(3.0), None, Some(1.5)],
        vec![Some(-0.0), None, None, None, None, Some(0.0)],
        all(1.5),
        all(3.0),
        all(100.0),
        extremes,
    ]
}

/// The values of `pages` (a list of pattern indexes) concatenated.
fn column(patterns: &[Vec<Option<f64>>], pages: &[usize]) -> Vec<Option<f64>> {
    pages.iter().flat_map(|&i| patterns[i % patterns.len()].clone()).collect()
}

/// One aligned table-model device `name` with FLOAT `f`, DOUBLE `d` and INT64 `n` columns over
/// the pages listed (the FLOAT and DOUBLE pages differ), and a `tail` of extra rows (a last
/// partial page).
fn device(name: &str, f_pages: &[usize], d_pages: &[usize], tail: usize, all_null_f: bool) -> Device {
    let (fp, dp) = (page_patterns(true), page_patterns(false));
    let rows = f_pages.len().max(d_pages.len()) * PAGE + tail;
    let mut f = column(&fp, f_pages);
    let mut d = column(&dp, d_pages);
    f.resize(rows, Some(2.0));
    d.resize(rows, Some(-2.0));
    if all_null_f {
        f = vec![None; rows];
    }
    Device::Aligned {
        segments: vec!["t".into(), name.into()],
        times: (0..rows as i64).map(|i| i * 10).collect(),
        columns: vec![
            ("f".into(), FLOAT, f.into_iter().map(|v| v.map(|x| Val::F32(x as f32))).collect()),
            ("d".into(), DOUBLE, d.into_iter().map(|v| v.map(Val::F64)).collect()),
            ("n".into(), INT64, (0..rows as i64).map(|i| (i % 5 != 0).then_some(Val::I64(i))).collect()),
        ],
    }
}

fn table() -> Table {
    Table {
        name: "t".into(),
        tags: vec!["device".into()],
        fields: vec![("f".into(), FLOAT), ("d".into(), DOUBLE), ("n".into(), INT64)],
    }
}

/// The file of every case: several devices whose chunks mix the pages in different orders,
/// one whose FLOAT series is entirely null, and a single-page device.
fn mixed_file() -> Vec<u8> {
    let n = page_patterns(false).len();
    let all: Vec<usize> = (0..n).collect();
    let reversed: Vec<usize> = (0..n).rev().collect();
    let odd: Vec<usize> = (0..n).map(|i| (i * 7 + 3) % n).collect();
    let devices = [
        device("d1", &all, &reversed, 0, false),
        device("d2", &odd, &all, 3, false),
        device("d3", &reversed, &odd, 2, true),
        // Ordinary pages only: devices without NaN are pruned as a whole.
        device("d4", &[0, 1, 20, 21], &[1, 22, 0], 0, false),
        // One page: the chunk statistics are the page's.
        device("d5", &[13], &[3], 0, false),
        device("d6", &[11], &[15], 0, false),
    ];
    write_tsfile(&devices, &[table()], PAGE)
}

/// Ordinary finite values only; with `nan_device`, one more device whose second page holds a
/// NaN among ordinary values.
fn clean_file(nan_device: bool) -> Vec<u8> {
    let mut devices = vec![
        device("c1", &[0, 1, 2], &[0, 1, 2], 0, false),
        device("c2", &[2, 20, 21, 22], &[22, 21, 20, 0], 4, false),
        device("c3", &[1, 0], &[1, 0], 0, false),
    ];
    if nan_device {
        devices.push(device("nan", &[0, 4, 1], &[0, 4, 1], 0, false));
    }
    write_tsfile(&devices, &[table()], PAGE)
}

/// Write `bytes` to a fresh temporary `.tsfile`.
pub(crate) fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tsfile-float-pruning-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.tsfile"));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Register `path` as `on` (pruning), `off` (no pruning, no statistics answers) and `mem` (the
/// full decode of `off` in a `MemTable`).
pub(crate) async fn register_three(c: &SessionContext, path: &str, opts: TsFileReadOptions) {
    register_tsfile(c, "on", &[path], opts.clone()).await.unwrap();
    register_tsfile(c, "off", &[path], opts.with_pruning(false).with_statistics_aggregates(false)).await.unwrap();
    let batches = c.sql("SELECT * FROM off").await.unwrap().collect().await.unwrap();
    let schema = c.table_provider("off").await.unwrap().schema();
    c.register_table("mem", Arc::new(MemTable::try_new(schema, vec![batches]).unwrap())).unwrap();
}

/// The predicates over column `x` for constants `cs` (SQL literals).
fn predicates(x: &str, cs: &[String]) -> Vec<String> {
    let mut out = vec![format!("{x} IS NULL"), format!("{x} IS NOT NULL")];
    for c in cs {
        for op in [">", ">=", "<", "<=", "=", "!="] {
            out.push(format!("{x} {op} {c}"));
        }
        out.push(format!("NOT ({x} > {c})"));
    }
    for (a, b) in cs.iter().zip(cs.iter().skip(1).chain(cs.first())) {
        out.push(format!("{x} BETWEEN {a} AND {b}"));
        out.push(format!("{x} > {a} OR {x} < {b}"));
    }
    out
}

/// Constants of the synthetic files.
fn synthetic_constants() -> Vec<String> {
    [
        "0.0",
        "-0.0",
        "'-0.0'::double",
        "1.5",
        "3.0",
        "100.0",
        "1e300",
        "'NaN'::double",
        "'-NaN'::double",
        "'inf'::double",
        "'-inf'::double",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Constants for a FLOAT column compared without a cast of the column.
fn real_constants() -> Vec<String> {
    ["CAST(0.0 AS REAL)", "CAST(-0.0 AS REAL)", "CAST(1.5 AS REAL)", "CAST('NaN' AS REAL)", "CAST('inf' AS REAL)"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// What [`check`] compares.
#[derive(Clone, Copy)]
struct Checks {
    /// Also compare `SELECT *` of `off` with `mem`.
    off: bool,
    /// Compare a grouped aggregate of `on` with `mem` for every `aggregates`-th predicate (0:
    /// never), and the unfiltered extremes.
    aggregates: usize,
}

/// The differential checks of `preds` over the tables registered by [`register_three`]:
/// `SELECT *` with pruning against `mem` (and `off`), and grouped aggregates (see [`Checks`]).
/// Returns the number of queries that pruned something.
///
/// Aggregates are compared in one-partition sessions only: DataFusion's grouped `min`/`max`
/// of floats replace the running value with any value that follows a NaN
/// (`partial_cmp` is `None`), so over NaN their answer depends on the order in which partial
/// states are merged, which several partitions do not fix.
async fn check(c: &SessionContext, preds: &[String], order: &str, group: &str, x: &str, label: &str, checks: Checks) -> usize {
    let mut pruned_queries = 0;
    for (i, p) in preds.iter().enumerate() {
        let q = |t: &str| format!("SELECT * FROM {t} WHERE {p} ORDER BY {order}");
        let (on, plan) = run(c, &q("on")).await;
        let (mem, _) = run(c, &q("mem")).await;
        let want = rows_of(&mem);
        if checks.off {
            let (off, _) = run(c, &q("off")).await;
            assert_eq!(rows_of(&off), want, "{label}: unpruned read differs from the MemTable for {p}");
        }
        assert_eq!(rows_of(&on), want, "{label}: pruned read differs for {p}");
        if metric(&plan, "devices_pruned") + metric(&plan, "chunk_groups_pruned") + metric(&plan, "pages_pruned") > 0 {
            pruned_queries += 1;
        }
        if checks.aggregates == 0 || i % checks.aggregates != 0 {
            continue;
        }
        let agg = |t: &str| {
            format!(
                "SELECT {group}, count(*), count({x}), min({x}), max({x}) FROM {t} WHERE {p} GROUP BY {group} ORDER BY {group}"
            )
        };
        let (on, _) = run(c, &agg("on")).await;
        let (mem, _) = run(c, &agg("mem")).await;
        assert_eq!(rows_of(&on), rows_of(&mem), "{label}: aggregate differs for {p}");
    }
    if checks.aggregates == 0 {
        return pruned_queries;
    }
    // Unfiltered extremes: answered from statistics where they are exact, else decoded.
    let unfiltered = |t: &str| {
        [
            format!("SELECT min({x}), max({x}), count({x}) FROM {t}"),
            format!("SELECT {group}, min({x}), max({x}) FROM {t} GROUP BY {group} ORDER BY {group}"),
        ]
    };
    for (q_on, q_mem) in unfiltered("on").iter().zip(unfiltered("mem").iter()) {
        let (on, _) = run(c, q_on).await;
        let (mem, _) = run(c, q_mem).await;
        assert_eq!(rows_of(&on), rows_of(&mem), "{label}: unfiltered extremes differ: {q_on}");
    }
    pruned_queries
}

#[test]
fn test_float_pruning_synthetic_file_same_answers() {
    let path = temp_file("mixed", &mixed_file());
    let p = path.to_str().unwrap().to_string();
    block_on(async {
        for partitions in [1, 3] {
            let c = ctx(partitions);
            register_three(&c, &p, TsFileReadOptions::default().with_time_unit(TimeUnit::Raw)).await;
            let cs = synthetic_constants();
            let mut preds = predicates("d", &cs);
            preds.extend(predicates("f", &cs));
            preds.extend(predicates("f", &real_constants()));
            preds.push("d > 45 AND f < 3".into());
            preds.push("d = 'NaN'::double OR f = CAST('NaN' AS REAL)".into());
            let label = format!("mixed, {partitions} partitions");
            let checks = Checks { off: true, aggregates: usize::from(partitions == 1) };
            let pruned = check(&c, &preds, "device, time", "device", "d", &label, checks).await;
            let pruned_f = check(&c, &predicates("f", &real_constants()), "device, time", "device", "f", &label, checks).await;
            assert!(pruned > preds.len() / 4, "only {pruned} of {} queries pruned anything", preds.len());
            assert!(pruned_f > 0);
        }
    });
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn test_float_pruning_happens() {
    let clean = temp_file("clean", &clean_file(false));
    let with_nan = temp_file("clean_nan", &clean_file(true));
    block_on(async {
        let c = ctx(2);
        let opts = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw);
        register_tsfile(&c, "c", &[clean.to_str().unwrap()], opts.clone()).await.unwrap();
        register_tsfile(&c, "n", &[with_nan.to_str().unwrap()], opts).await.unwrap();
        // No value can match: nothing is fetched or decoded, for DOUBLE and FLOAT.
        for q in [
            "SELECT count(*) FROM c WHERE d > 1e300",
            "SELECT count(*) FROM c WHERE f > 1e30",
            "SELECT device, count(*), max(d) FROM c WHERE d > 1000 GROUP BY device",
            "SELECT count(*) FROM c WHERE d < -1e300 OR f > 'inf'::double",
            "SELECT count(*) FROM c WHERE d = 'NaN'::double",
        ] {
            let (b, plan) = run(&c, q).await;
            assert!(count_rows(&b) <= 1, "{q}");
            assert_eq!(metric(&plan, "devices_pruned"), metric(&plan, "devices_total"), "{q}");
            assert_eq!(metric(&plan, "devices_total"), 3, "{q}");
            assert_eq!(metric(&plan, "rows_decoded"), 0, "{q}");
            assert_eq!(metric(&plan, "bytes_scanned"), 0, "{q}");
        }
        // Page level: the page of 50..100 of device c1 is its only DOUBLE page above 45.
        let (b, plan) = run(&c, "SELECT time, d FROM c WHERE device = 'c1' AND d > 45 ORDER BY time").await;
        assert_eq!(count_rows(&b), PAGE);
        assert_eq!(metric(&plan, "pages_total"), 3);
        assert_eq!(metric(&plan, "pages_pruned"), 2);
        assert_eq!(metric(&plan, "rows_decoded"), PAGE);
        // A page holding a NaN is kept for `x > c` (NaN > c is true), every other page is pruned.
        for (q, x) in [("d > 1e300", "d"), ("f > 1e30", "f")] {
            let (b, plan) = run(&c, &format!("SELECT device, time, {x} FROM n WHERE {q} ORDER BY time")).await;
            let rows = rows_of(&b);
            assert_eq!(rows.len(), 1, "{q}: {rows:?}");
            assert_eq!(rows[0][0], Value::from("nan"));
            assert_eq!(metric(&plan, "devices_total") - metric(&plan, "devices_pruned"), 1, "{q}");
            assert_eq!(metric(&plan, "pages_total"), 3, "{q}");
            assert_eq!(metric(&plan, "pages_pruned"), 2, "{q}");
            assert_eq!(metric(&plan, "rows_decoded"), PAGE, "{q}");
        }
    });
    std::fs::remove_file(&clean).unwrap();
    std::fs::remove_file(&with_nan).unwrap();
}

/// Unfiltered `min`/`max` over zeros: file statistics give a float extreme as exact only when
/// it is the total-order answer (DataFusion answers `min(x)`/`max(x)` from exact statistics
/// before any TsFile rule), so a +0.0 minimum or −0.0 maximum, which may hide the other zero,
/// is decoded; a widened zero bound never becomes an answer.
#[test]
fn test_float_unfiltered_extremes_of_zeros() {
    let zeros = page_patterns(false);
    // (FLOAT pages, DOUBLE pages) per device, as pattern indexes: 11 = all -0.0, 12 = all +0.0,
    // 13/14 = both zeros (either first), 15 = +0.0 first then -0.0 among positives, 16 = -0.0
    // first then +0.0 among negatives.
    let cases: [&[(&[usize], &[usize])]; 8] = [
        &[(&[12], &[11])],
        &[(&[11], &[12])],
        &[(&[12, 12], &[11, 11]), (&[12], &[11])],
        &[(&[13], &[14])],
        &[(&[15], &[16])],
        &[(&[16, 12], &[15, 11]), (&[11], &[12])],
        // Page 2 holds -100..-1: the extremes are attained by one device and exact.
        &[(&[2], &[2]), (&[12], &[15])],
        // The widened minimum of +0.0 values is below another device's exact minimum.
        &[(&[12], &[12]), (&[0], &[0])],
    ];
    assert_eq!(zeros[12], vec![Some(0.0); PAGE]);
    block_on(async {
        for (k, case) in cases.iter().enumerate() {
            let devices: Vec<Device> =
                case.iter().enumerate().map(|(i, (f, d))| device(&format!("z{i}"), f, d, 0, false)).collect();
            let path = temp_file(&format!("zeros{k}"), &write_tsfile(&devices, &[table()], PAGE));
            for aggregates in [true, false] {
                let c = ctx(1);
                let opts = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw).with_statistics_aggregates(aggregates);
                register_three(&c, path.to_str().unwrap(), opts).await;
                for q in ["SELECT min(f), max(f), min(d), max(d) FROM ", "SELECT min(d) FROM ", "SELECT max(f) FROM "] {
                    let (on, plan) = run(&c, &format!("{q}on")).await;
                    let (mem, _) = run(&c, &format!("{q}mem")).await;
                    assert_eq!(rows_of(&on), rows_of(&mem), "case {k}: {q}");
                    // Without the TsFile rule only exact file statistics can answer.
                    let scans = displayable(plan.as_ref()).indent(true).to_string().contains("DataSourceExec");
                    // Case 0: min(f) is a stored +0.0 and max(d) a stored -0.0 (decoded), min(d)
                    // a stored -0.0 and max(f) a stored +0.0 (exact).
                    if !aggregates && k == 0 {
                        let all = q.contains("min(f)");
                        assert_eq!(scans, all, "case {k}: {q}: decoded {scans}");
                    }
                    if !aggregates && k == 6 {
                        assert!(!scans, "case {k}: {q} not answered from exact statistics");
                    }
                }
            }
            std::fs::remove_file(&path).unwrap();
        }
    });
}

/// Exact SQL literals of the first, middle and last (total order) non-NaN values of a float
/// column of `batches` (column `i`).
fn data_constants(batches: &[RecordBatch], i: usize) -> Vec<String> {
    let mut v: Vec<(f64, bool)> = Vec::new();
    for b in batches {
        let a = b.column(i);
        for r in 0..a.len() {
            if a.is_null(r) {
                continue;
            }
            match a.data_type() {
                DataType::Float32 => v.push((f64::from(a.as_primitive::<Float32Type>().value(r)), true)),
                DataType::Float64 => v.push((a.as_primitive::<Float64Type>().value(r), false)),
                _ => {}
            }
        }
    }
    v.retain(|(x, _)| !x.is_nan());
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let picks = [v.first(), v.get(v.len() / 2), v.last()];
    picks
        .into_iter()
        .flatten()
        .map(|(x, is_f32)| if *is_f32 { format!("CAST('{:?}' AS REAL)", *x as f32) } else { format!("CAST('{x:?}' AS DOUBLE)") })
        .collect()
}

/// Corpus files with FLOAT/DOUBLE columns and the NaN, ±∞, −0.0, null and multi-page cases
/// (`SELECT *` of `on` against `mem` for every predicate; `off` only serves `mem`).
const CORPUS: [&str; 7] =
    ["table_extremes", "tree_extremes", "tree_enc_float", "tree_enc_double", "table_nulls", "table_multi_page", "table_enc_0"];

#[test]
fn test_float_pruning_corpus_same_answers() {
    let m = manifest();
    let (mut columns, mut queries) = (0usize, 0usize);
    block_on(async {
        for entry in manifest_files(&m) {
            let name = entry["name"].as_str().unwrap();
            if !CORPUS.contains(&name) {
                continue;
            }
            let path = file_path(&entry);
            let tree = entry["model"] == "tree";
            let mut keys: Vec<String> = entry["expected"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| if tree { e["segments"][0].as_str() } else { e["table"].as_str() }.unwrap().to_string())
                .collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let c = ctx(1);
                let mut opts = TsFileReadOptions::default().with_table(&key).with_time_unit(TimeUnit::Raw);
                if let Some(enc) = entry["reader_hints"]["nonaligned_time_encoding"].as_str() {
                    opts.read.nonaligned_time_encoding = Encoding::from_name(enc).unwrap();
                }
                register_three(&c, path.to_str().unwrap(), opts).await;
                let schema = c.table_provider("mem").await.unwrap().schema();
                let (full, _) = run(&c, "SELECT * FROM mem").await;
                // Group by the device (tree) or the first TAG column (else the time column).
                let first_tag = schema.fields().iter().find(|f| matches!(f.data_type(), DataType::Dictionary(..)));
                let group =
                    if tree { "device".to_string() } else { quote(first_tag.map_or(schema.field(0).name(), |f| f.name())) };
                let order: Vec<String> = if tree {
                    vec!["device".into(), "time".into()]
                } else {
                    // Tags (nulls first), then time: unique per row.
                    let tags = schema.fields().iter().skip(1).filter(|f| matches!(f.data_type(), DataType::Dictionary(..)));
                    let mut o: Vec<String> = tags.map(|f| format!("{} NULLS FIRST", quote(f.name()))).collect();
                    o.push(quote(schema.field(0).name()));
                    o
                };
                for (i, f) in schema.fields().iter().enumerate() {
                    if !matches!(f.data_type(), DataType::Float32 | DataType::Float64) {
                        continue;
                    }
                    // The tree_enc files hold the same values under one measurement per codec.
                    if name.starts_with("tree_enc") && f.name() != "uncompressed" {
                        continue;
                    }
                    columns += 1;
                    let mut cs: Vec<String> = ["0.0", "-0.0", "1.5", "'NaN'::double", "'inf'::double", "'-inf'::double"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                    cs.extend(data_constants(&full, i));
                    let preds = predicates(&quote(f.name()), &cs);
                    queries += preds.len();
                    let label = format!("{name}/{key}/{}", f.name());
                    let started = std::time::Instant::now();
                    let checks = Checks { off: false, aggregates: 3 };
                    check(&c, &preds, &order.join(", "), &group, &quote(f.name()), &label, checks).await;
                    eprintln!("{label}: {} predicates, {:?}", preds.len(), started.elapsed());
                }
            }
        }
    });
    println!("float pruning on the corpus: {columns} float columns, {queries} predicates");
    assert!(columns >= 10, "{columns} float columns");
}
