//! SQL over TsFiles through DataFusion: corpus conformance, pruning metrics, statistics,
//! pushdown on/off equivalence, and errors.

use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::physical_plan::{collect, ExecutionPlan, ExecutionPlanVisitor};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, register_tsfile_format, register_tsfile_schema, TsFileReadOptions};
use serde_json::Value;

use crate::common::{file_path, manifest, manifest_files, repo_path};
use crate::conformance::cell;

pub(crate) fn ctx(partitions: usize) -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions))
}

pub(crate) fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

pub(crate) fn rows_of(batches: &[RecordBatch]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            out.push(b.columns().iter().map(|c| cell(c, i)).collect());
        }
    }
    out
}

pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap().block_on(f)
}

#[test]
fn test_sql_conformance_every_table() {
    let m = manifest();
    let (mut files, mut rows, mut mismatches) = (0usize, 0usize, 0usize);
    block_on(async {
        for entry in manifest_files(&m) {
            if entry["model"] != "table" {
                continue;
            }
            files += 1;
            let path = file_path(&entry);
            for exp in entry["expected"].as_array().unwrap() {
                let table = exp["table"].as_str().unwrap();
                let text = std::fs::read_to_string(crate::common::corpus_dir().join(exp["path"].as_str().unwrap())).unwrap();
                let mut lines = text.lines();
                let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
                let want: Vec<Vec<Value>> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
                let cols: Vec<&Value> = header["columns"].as_array().unwrap().iter().collect();
                let names: Vec<String> = cols.iter().map(|c| quote(c["name"].as_str().unwrap())).collect();
                let tags: Vec<String> = cols
                    .iter()
                    .filter(|c| c["category"] == "TAG")
                    .map(|c| format!("{} NULLS FIRST", quote(c["name"].as_str().unwrap())))
                    .collect();
                let mut order = tags.clone();
                order.push(names[0].clone());
                let sql = format!("SELECT {} FROM t ORDER BY {}", names.join(", "), order.join(", "));
                let c = ctx(2);
                let opts = TsFileReadOptions::default().with_table(table).with_time_unit(TimeUnit::Raw);
                let got = async {
                    register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await?;
                    c.sql(&sql).await?.collect().await
                }
                .await;
                match got {
                    Ok(b) => {
                        let got = rows_of(&b);
                        rows += got.len();
                        if got.len() != want.len() {
                            eprintln!("{}/{table}: {} rows, want {}", entry["name"], got.len(), want.len());
                            mismatches += 1;
                        }
                        for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                            for (gv, wv) in g.iter().zip(w) {
                                let same = match (gv.as_i64(), wv.as_i64()) {
                                    (Some(a), Some(b)) => a == b,
                                    _ => gv == wv,
                                };
                                if !same {
                                    mismatches += 1;
                                    eprintln!("{}/{table} row {r}: got {gv} want {wv}", entry["name"]);
                                }
                            }
                        }
                    }
                    Err(e) => {
                        eprintln!("{}/{table}: {e}", entry["name"]);
                        mismatches += 1;
                    }
                }
            }
        }
    });
    println!("sql conformance: {files} files, {rows} rows, {mismatches} mismatches");
    assert!(files > 20);
    assert_eq!(mismatches, 0);
}

/// Sum of a named metric over every `DataSourceExec` of a plan.
pub(crate) fn metric(plan: &Arc<dyn ExecutionPlan>, name: &str) -> usize {
    metric_of(plan, name, |p| p.name() == "DataSourceExec")
}

/// Sum of metric `name` over the nodes of `plan` that `pick` selects, including the plan a
/// `StatisticsAggregateExec` ran as its fallback (not a child of it).
pub(crate) fn metric_of(plan: &Arc<dyn ExecutionPlan>, name: &str, pick: impl Fn(&dyn ExecutionPlan) -> bool) -> usize {
    struct V<'a, F>(&'a str, usize, F);
    impl<F: Fn(&dyn ExecutionPlan) -> bool> ExecutionPlanVisitor for V<'_, F> {
        type Error = std::convert::Infallible;
        fn pre_visit(&mut self, plan: &dyn ExecutionPlan) -> Result<bool, Self::Error> {
            if (self.2)(plan) {
                if let Some(m) = plan.metrics() {
                    self.1 += m.sum_by_name(self.0).map(|v| v.as_usize()).unwrap_or(0);
                }
            }
            if let Some(s) = plan.downcast_ref::<datafusion_tsfile::datafusion::StatisticsAggregateExec>() {
                datafusion::physical_plan::accept(s.fallback().as_ref(), self)?;
            }
            Ok(true)
        }
    }
    let mut v = V(name, 0, pick);
    datafusion::physical_plan::accept(plan.as_ref(), &mut v).unwrap();
    v.1
}

pub(crate) async fn run(c: &SessionContext, sql: &str) -> (Vec<RecordBatch>, Arc<dyn ExecutionPlan>) {
    let df = c.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    let batches = collect(plan.clone(), c.task_ctx()).await.unwrap();
    (batches, plan)
}

pub(crate) fn count_rows(b: &[RecordBatch]) -> usize {
    b.iter().map(|b| b.num_rows()).sum()
}

#[test]
fn test_sql_pruning_metrics_on_sample() {
    block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "w", &[repo_path("data/sample.tsfile").to_str().unwrap()], TsFileReadOptions::default())
            .await
            .unwrap();
        // A tag predicate reads only that device: planning did not walk every device for
        // statistics, so the scan builds a view of that device alone.
        let (b, plan) = run(&c, "SELECT time, temperature FROM w WHERE device = 'ws-central-0-0'").await;
        assert_eq!(count_rows(&b), 3524);
        assert_eq!((metric(&plan, "devices_total"), metric(&plan, "devices_pruned")), (1, 0));
        assert_eq!(metric(&plan, "chunk_groups_total"), 1);
        // A time range outside the data prunes every device.
        let (b, plan) = run(&c, "SELECT * FROM w WHERE time < TIMESTAMP '2020-01-01T00:00:00'").await;
        assert_eq!(count_rows(&b), 0);
        assert_eq!(metric(&plan, "devices_pruned"), 300);
        assert_eq!(metric(&plan, "bytes_scanned"), 0);
        // An integer value predicate prunes by series statistics.
        let (b, plan) = run(&c, "SELECT count(*) FROM w WHERE energy_wh < 0").await;
        assert_eq!(count_rows(&b), 1);
        assert_eq!(metric(&plan, "devices_pruned"), metric(&plan, "devices_total"));
        // Statistics that evaluate cleanly count no predicate errors; EXPLAIN ANALYZE shows the metric.
        assert_eq!(metric(&plan, "predicate_evaluation_errors"), 0);
        let explained =
            c.sql("EXPLAIN ANALYZE SELECT count(*) FROM w WHERE energy_wh < 0").await.unwrap().collect().await.unwrap();
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&explained).unwrap().to_string();
        assert!(text.contains("predicate_evaluation_errors=0"), "{text}");
    });
}

#[test]
fn test_sql_page_pruning_on_multi_page_file() {
    let path = crate::common::corpus_dir().join("files/table_multi_page.tsfile");
    block_on(async {
        let c = ctx(1);
        let opts = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw);
        register_tsfile(&c, "t", &[path.to_str().unwrap()], opts.clone()).await.unwrap();
        register_tsfile(&c, "u", &[path.to_str().unwrap()], opts.with_pruning(false)).await.unwrap();
        let (all, _) = run(&c, "SELECT min(time) AS lo, max(time) AS hi FROM u").await;
        let lo = cell(all[0].column(0), 0).as_i64().unwrap();
        let hi = cell(all[0].column(1), 0).as_i64().unwrap();
        let (a, b) = (lo + (hi - lo) / 2, lo + (hi - lo) / 2 + (hi - lo) / 50);
        let q = |t: &str| format!("SELECT * FROM {t} WHERE time BETWEEN {a} AND {b} ORDER BY 2, 3, 1");
        let (pruned, plan) = run(&c, &q("t")).await;
        let (full, plan_u) = run(&c, &q("u")).await;
        assert_eq!(rows_of(&pruned), rows_of(&full));
        assert!(count_rows(&pruned) > 0);
        let pages = metric(&plan, "pages_total");
        let pruned_pages = metric(&plan, "pages_pruned");
        assert!(pages > 10, "{pages}");
        assert!(pruned_pages * 10 >= pages * 8, "only {pruned_pages} of {pages} pages pruned");
        assert_eq!(metric(&plan_u, "pages_pruned"), 0);
    });
}

#[test]
fn test_sql_count_star_and_min_max_from_statistics() {
    block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "w", &[repo_path("data/sample.tsfile").to_str().unwrap()], TsFileReadOptions::default())
            .await
            .unwrap();
        let (b, plan) = run(&c, "SELECT count(*), min(time), max(time), max(energy_wh) FROM w").await;
        assert_eq!(cell(b[0].column(0), 0), serde_json::json!(1006239));
        let text = datafusion::physical_plan::displayable(plan.as_ref()).indent(true).to_string();
        assert!(!text.contains("DataSourceExec"), "answered by scanning:\n{text}");
        assert_eq!(metric(&plan, "pages_total"), 0);
    });
}

/// A tiny deterministic generator for the property test.
pub(crate) struct Lcg(pub(crate) u64);
impl Lcg {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub(crate) fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next() as usize) % v.len()]
    }
}

#[test]
fn test_sql_pushdown_on_off_same_results() {
    let path = repo_path("data/sample.tsfile");
    block_on(async {
        let c = ctx(2);
        let p = path.to_str().unwrap();
        register_tsfile(&c, "on", &[p], TsFileReadOptions::default().with_time_unit(TimeUnit::Raw)).await.unwrap();
        register_tsfile(&c, "off", &[p], TsFileReadOptions::default().with_time_unit(TimeUnit::Raw).with_pruning(false))
            .await
            .unwrap();
        let (t0, t1) = (1_704_067_200_432i64, 1_704_292_139_991i64);
        let mut rng = Lcg(42);
        let regions = ["central", "east", "north", "south", "west", "nowhere"];
        let ops = ["<", "<=", ">", ">=", "=", "<>"];
        for _ in 0..12 {
            let mut conj = Vec::new();
            for _ in 0..(1 + rng.next() % 3) {
                conj.push(match rng.next() % 6 {
                    0 => {
                        let t = t0 + (rng.next() as i64 % (t1 - t0 + 1));
                        format!("time {} {t}", rng.pick(&ops))
                    }
                    1 => format!("region = '{}'", rng.pick(&regions)),
                    2 => format!("device {} 'ws-east-{}-{}'", rng.pick(&ops), rng.next() % 6, rng.next() % 10),
                    3 => format!("pressure {} {}", rng.pick(&ops), 990 + rng.next() % 40),
                    4 => format!("energy_wh {} {}", rng.pick(&ops), rng.next() % 20_000_000),
                    _ => format!("online = {}", rng.next().is_multiple_of(2)),
                });
            }
            let join = if rng.next().is_multiple_of(4) { " OR " } else { " AND " };
            let pred = conj.join(join);
            let q = |t: &str| format!("SELECT time, device, energy_wh FROM {t} WHERE {pred} ORDER BY device, time");
            let (a, _) = run(&c, &q("on")).await;
            let (b, _) = run(&c, &q("off")).await;
            assert_eq!(rows_of(&a), rows_of(&b), "predicate {pred}");
        }
    });
}

#[test]
fn test_sql_directory_with_corrupt_file_names_it() {
    let dir = std::env::temp_dir().join(format!("tsfile-sql-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(crate::common::corpus_dir().join("files/table_null_tags.tsfile"), dir.join("a.tsfile")).unwrap();
    std::fs::write(dir.join("b.tsfile"), b"this is not a tsfile at all, just text").unwrap();
    let err = block_on(async {
        let c = ctx(2);
        let r = register_tsfile(&c, "t", &[dir.to_str().unwrap()], TsFileReadOptions::default()).await;
        match r {
            Err(e) => e.to_string(),
            Ok(()) => c.sql("SELECT * FROM t").await.unwrap().collect().await.unwrap_err().to_string(),
        }
    });
    assert!(err.contains("b.tsfile"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_sql_ddl_url_table_and_schema_provider() {
    let path = crate::common::corpus_dir().join("files/table_multi_tables.tsfile");
    let p = path.to_str().unwrap().to_string();
    block_on(async {
        let c = SessionContext::new().enable_url_table();
        register_tsfile_format(&c).unwrap();
        c.sql(&format!("CREATE EXTERNAL TABLE ev STORED AS TSFILE LOCATION '{p}' OPTIONS ('table' 'events')")).await.unwrap();
        let b = c.sql("SELECT count(*) FROM ev").await.unwrap().collect().await.unwrap();
        let n = cell(b[0].column(0), 0).as_i64().unwrap();
        assert!(n > 0);
        // The registration brings the tsfile_metadata table function: its point counts of the
        // table's time series are the table's rows.
        let sql = format!("SELECT sum(point_count) FROM tsfile_metadata('{p}') WHERE \"table\" = 'events' AND category = 'TIME'");
        let b = c.sql(&sql).await.unwrap().collect().await.unwrap();
        assert_eq!(cell(b[0].column(0), 0).as_i64().unwrap(), n);
        // Several tables and no option: a clear error.
        let err = c.sql(&format!("CREATE EXTERNAL TABLE x STORED AS TSFILE LOCATION '{p}'")).await.unwrap_err().to_string();
        assert!(err.contains("several tables"), "{err}");
        // Every table as tsf.<name>.
        let names = register_tsfile_schema(&c, "tsf", &p, TsFileReadOptions::default()).await.unwrap();
        assert!(names.contains(&"events".to_string()));
        let b = c.sql("SELECT count(*) FROM tsf.events").await.unwrap().collect().await.unwrap();
        assert_eq!(cell(b[0].column(0), 0).as_i64().unwrap(), n);
        let b = c.sql("SELECT count(*) FROM tsf.never_written").await.unwrap().collect().await.unwrap();
        assert_eq!(cell(b[0].column(0), 0).as_i64().unwrap(), 0);
    });
    // A URL table over a single-table file.
    let one = crate::common::corpus_dir().join("files/table_null_tags.tsfile");
    block_on(async {
        let c = SessionContext::new().enable_url_table();
        register_tsfile_format(&c).unwrap();
        let b = c.sql(&format!("SELECT count(*) FROM '{}'", one.display())).await.unwrap().collect().await.unwrap();
        assert!(cell(b[0].column(0), 0).as_i64().unwrap() > 0);
    });
}

#[test]
fn test_sql_in_memory_object_store_and_tag_predicates() {
    use object_store::ObjectStoreExt;
    let bytes = std::fs::read(repo_path("data/sample.tsfile")).unwrap();
    block_on(async {
        let c = ctx(2);
        let store = Arc::new(object_store::memory::InMemory::new());
        store.put(&object_store::path::Path::from("lake/a/sample.tsfile"), bytes.into()).await.unwrap();
        let url = url::Url::parse("memory://").unwrap();
        c.register_object_store(&url, store);
        register_tsfile(&c, "m", &["memory:///lake/a/"], TsFileReadOptions::default()).await.unwrap();
        let (b, _) = run(&c, "SELECT count(*) FROM m").await;
        assert_eq!(cell(b[0].column(0), 0).as_i64(), Some(1006239));
        // Tag predicates prune devices from the index: IN, LIKE prefix, IS NULL. A count(*) is
        // answered from statistics (StatisticsAggregateExec), the rest by the scan; both prune.
        let pruned = |plan: &Arc<dyn ExecutionPlan>| {
            metric_of(plan, "devices_pruned", |p| matches!(p.name(), "DataSourceExec" | "StatisticsAggregateExec"))
        };
        let (b, plan) = run(&c, "SELECT count(*) FROM m WHERE device IN ('ws-east-1-1', 'ws-west-5-9')").await;
        let (stats_n, stats_plan) = (cell(b[0].column(0), 0).as_i64().unwrap(), plan);
        assert_eq!(pruned(&stats_plan), 298);
        assert_eq!(metric_of(&stats_plan, "series_from_statistics", |p| p.name() == "StatisticsAggregateExec"), 2);
        // The same count from the scan: equal, and the scan prunes as many devices.
        let (b, plan) =
            run(&c, "SELECT count(time) FILTER (WHERE time IS NOT NULL) FROM m WHERE device IN ('ws-east-1-1', 'ws-west-5-9')")
                .await;
        assert_eq!(cell(b[0].column(0), 0).as_i64().unwrap(), stats_n);
        assert!(stats_n > 0);
        assert_eq!(metric(&plan, "devices_pruned"), 298);
        let (b, plan) = run(&c, "SELECT count(DISTINCT device) FROM m WHERE device LIKE 'ws-north-2%'").await;
        assert_eq!(cell(b[0].column(0), 0).as_i64(), Some(10));
        assert_eq!(pruned(&plan), 290);
        let (b, plan) = run(&c, "SELECT count(*) FROM m WHERE site IS NULL").await;
        assert_eq!(cell(b[0].column(0), 0).as_i64(), Some(0));
        assert_eq!(pruned(&plan), 300);
    });
}

#[test]
fn test_sql_time_range_decodes_only_overlapping_pages() {
    use datafusion_tsfile::format::chunk::PageIter;
    use datafusion_tsfile::format::{FileReader, LocalFile};
    for name in ["table_multi_page", "table_chunk_groups", "table_nulls"] {
        let path = crate::common::corpus_dir().join(format!("files/{name}.tsfile"));
        // Independently: the time pages of the file and their time ranges.
        let reader = FileReader::open(LocalFile::open(&path).unwrap()).unwrap();
        let mut pages: Vec<(i64, i64)> = Vec::new();
        for d in reader.all_devices().unwrap() {
            for s in reader.series(&d).unwrap().into_iter().filter(|s| s.is_aligned_time()) {
                for c in &s.chunks {
                    let chunk = reader.read_chunk(c.offset).unwrap();
                    for p in PageIter::new(&chunk.header, &chunk.data).unwrap() {
                        let st = p.unwrap().header.statistics.unwrap_or_else(|| c.statistics.clone());
                        pages.push((st.start_time, st.end_time));
                    }
                }
            }
        }
        let lo = pages.iter().map(|p| p.0).min().unwrap();
        let hi = pages.iter().map(|p| p.1).max().unwrap();
        let (a, b) = (lo + (hi - lo) / 3, lo + (hi - lo) / 3 + (hi - lo) / 100);
        let overlapping = pages.iter().filter(|(s, e)| *s <= b && *e >= a).count();
        block_on(async {
            let c = ctx(1);
            let opts = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw);
            register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await.unwrap();
            let (batches, plan) = run(&c, &format!("SELECT * FROM t WHERE time BETWEEN {a} AND {b}")).await;
            let decoded = metric(&plan, "pages_total") - metric(&plan, "pages_pruned");
            assert_eq!(decoded, overlapping, "{name}: decoded {decoded} pages, {overlapping} overlap [{a}, {b}]");
            // Only the rows inside the range leave the scan (the predicate's time bounds).
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            assert!(rows > 0 || name == "table_nulls", "{name}");
            assert_eq!(metric(&plan, "rows_decoded"), rows, "{name}");
        });
    }
}

#[test]
fn test_sql_encrypted_files_without_keys() {
    let dir = repo_path("tests/data/encrypted");
    block_on(async {
        for (name, readable) in [
            ("aes128_level1", true),
            ("sm4128_level1", true),
            ("aes128_level2", false),
            ("cpp_flag_level2_nokey", false),
            ("plain", true),
        ] {
            let c = ctx(1);
            let p = dir.join(format!("{name}.tsfile"));
            register_tsfile(&c, "t", &[p.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
            // Metadata-only answers work without a key ...
            let (b, _) = run(&c, "SELECT count(*) FROM t").await;
            assert_eq!(cell(b[0].column(0), 0).as_i64(), Some(5), "{name}");
            // (a filter: a whole-table sum would come from the plaintext statistics)
            let r = c.sql("SELECT sum(v) FROM t WHERE v > 0").await.unwrap().collect().await;
            if readable {
                // ... level 1 keeps its key in the file ...
                assert_eq!(cell(r.unwrap()[0].column(0), 0).as_i64(), Some(360), "{name}");
            } else {
                // ... anything else is a clear error, never plaintext garbage.
                let err = r.unwrap_err().to_string();
                assert!(err.contains("encrypted file") && err.contains(name), "{name}: {err}");
            }
        }
    });
    // The library API fails the same way.
    let f = datafusion_tsfile::TsFile::open(dir.join("aes128_level2.tsfile")).unwrap();
    let err = f.read_table("t1", datafusion_tsfile::TableRead::default()).unwrap_err().to_string();
    assert!(err.contains("encrypted") && err.contains("master key"), "{err}");
}

/// Two tables of one file with the same columns: the session's statistics cache (keyed by
/// file) must not answer one table's `count(*)` with the other's statistics.
#[test]
fn test_statistics_of_same_shaped_tables_in_one_file_stay_apart() {
    use crate::writer::{write_tsfile, Device, Table, Val, INT64};
    let dev = |table: &str, id: &str, rows: i64, base: i64| Device::Aligned {
        segments: vec![table.into(), id.into()],
        times: (0..rows).map(|i| 1000 + i).collect(),
        columns: vec![("v".into(), INT64, (0..rows).map(|i| Some(Val::I64(base + i))).collect())],
    };
    let table = |name: &str| Table { name: name.into(), tags: vec!["id".into()], fields: vec![("v".into(), INT64)] };
    let bytes =
        write_tsfile(&[dev("a", "d1", 10, 0), dev("b", "d1", 25, 100), dev("b", "d2", 25, 500)], &[table("a"), table("b")], 8);
    let path = std::env::temp_dir().join(format!("tsfile-two-tables-{}.tsfile", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    block_on(async {
        let c = ctx(2);
        register_tsfile_schema(&c, "s", path.to_str().unwrap(), TsFileReadOptions::default()).await.unwrap();
        for _ in 0..2 {
            for (sql, want) in [
                ("SELECT count(*), max(v), CAST(max(time) AS BIGINT) FROM s.a", "[[Number(10), Number(9), Number(1009)]]"),
                ("SELECT count(*), max(v), CAST(max(time) AS BIGINT) FROM s.b", "[[Number(50), Number(524), Number(1024)]]"),
            ] {
                let rows = rows_of(&c.sql(sql).await.unwrap().collect().await.unwrap());
                assert_eq!(format!("{rows:?}"), want, "{sql}");
            }
        }
    });
    std::fs::remove_file(&path).unwrap();
}

/// Distributed engines re-split files by bytes without asking the source: ranges cut
/// anywhere (inside the magic, chunk headers, pages, the index) read every device exactly
/// once, in the range holding its first chunk.
#[test]
fn test_ranges_cut_anywhere_read_every_device_once() {
    use std::collections::HashMap;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use datafusion::datasource::file_format::FileFormat;
    use datafusion::datasource::listing::PartitionedFile;
    use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::datasource::table_schema::TableSchema;
    use datafusion::execution::object_store::ObjectStoreUrl;
    use datafusion_tsfile::datafusion::TsFileFormat;
    use object_store::ObjectStoreExt;

    let path = repo_path("data/sample.tsfile");
    let size = std::fs::metadata(&path).unwrap().len();
    block_on(async {
        let c = ctx(1);
        let format = TsFileFormat::new(TsFileReadOptions::default());
        let store = c.runtime_env().object_store(ObjectStoreUrl::local_filesystem()).unwrap();
        let meta = store.head(&object_store::path::Path::from_filesystem_path(&path).unwrap()).await.unwrap();
        let schema = format.infer_schema(&c.state(), &store, std::slice::from_ref(&meta)).await.unwrap();
        let device = schema.index_of("device").unwrap();
        let cut_sets: Vec<Vec<u64>> = vec![
            vec![0, size],
            vec![0, 1, 7, 4096, 123_457, size / 2, size - 1, size],
            (0..=13).map(|i| size * i / 13).collect(),
        ];
        for cuts in cut_sets {
            let groups: Vec<FileGroup> = cuts
                .windows(2)
                .map(|w| FileGroup::new(vec![PartitionedFile::new_from_meta(meta.clone()).with_range(w[0] as i64, w[1] as i64)]))
                .collect();
            let source = format.file_source(TableSchema::from(schema.clone()));
            let config = FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), source).with_file_groups(groups).build();
            let parts = datafusion::physical_plan::collect_partitioned(DataSourceExec::from_data_source(config), c.task_ctx())
                .await
                .unwrap();
            let (mut rows, mut owner) = (0usize, HashMap::<String, usize>::new());
            for (p, batches) in parts.iter().enumerate() {
                for b in batches {
                    rows += b.num_rows();
                    let d = b.column(device).as_dictionary::<Int32Type>();
                    let values = d.values().as_string::<i32>();
                    for k in d.keys().iter().flatten() {
                        let name = values.value(k as usize).to_string();
                        let first = *owner.entry(name.clone()).or_insert(p);
                        assert_eq!(first, p, "{name} read by partitions {first} and {p} (cuts {cuts:?})");
                    }
                }
            }
            assert_eq!(rows, 1_006_239, "cuts {cuts:?}");
            assert_eq!(owner.len(), 300, "cuts {cuts:?}");
        }
    });
}

/// Errors name a local file as the user wrote it: the absolute path with its leading `/`
/// (not the object-store path `tmp/...`), in schema inference, scans, statistics
/// aggregates and `tsfile_metadata`.
#[test]
fn test_sql_errors_name_local_files_by_absolute_path() {
    let dir = std::env::temp_dir().join(format!("tsfile-errname-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(repo_path("data/sample.tsfile")).unwrap();
    let cut = dir.join("cut.tsfile");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let path = cut.to_str().unwrap().to_string();
    assert!(path.starts_with('/'));
    block_on(async {
        let c = ctx(1);
        let e = register_tsfile(&c, "t", &[path.as_str()], TsFileReadOptions::default()).await.unwrap_err().to_string();
        assert!(e.contains(&format!("file {path}: ")), "{e}");
        let c = SessionContext::new().enable_url_table();
        register_tsfile_format(&c).unwrap();
        c.register_udtf("tsfile_metadata", Arc::new(datafusion_tsfile::datafusion::TsFileMetadataFunc));
        for sql in [format!("SELECT count(*) FROM '{path}'"), format!("SELECT * FROM tsfile_metadata('{path}')")] {
            let e = match c.sql(&sql).await {
                Ok(df) => df.collect().await.unwrap_err().to_string(),
                Err(e) => e.to_string(),
            };
            assert!(e.contains(&format!("file {path}: ")), "{sql}: {e}");
        }
    });
    std::fs::remove_dir_all(dir).unwrap();
}

/// A pruning predicate whose evaluation against statistics fails (an INT64 column compared
/// with a string) never fails the scan and never prunes: every unit is read, and the failures are counted in
/// `predicate_evaluation_errors`.
#[test]
fn test_failing_pruning_predicate_keeps_every_unit_and_counts_errors() {
    use datafusion::common::ScalarValue;
    use datafusion::datasource::file_format::FileFormat;
    use datafusion::datasource::listing::PartitionedFile;
    use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::datasource::table_schema::TableSchema;
    use datafusion::execution::object_store::ObjectStoreUrl;
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{col, lit, BinaryExpr};
    use datafusion::physical_expr::PhysicalExpr;
    use datafusion_tsfile::datafusion::MetadataCache;
    use datafusion_tsfile::datafusion::{TsFileFormat, TsFileSource};
    use object_store::ObjectStoreExt;

    let path = repo_path("data/sample.tsfile");
    block_on(async {
        let c = ctx(1);
        let format = TsFileFormat::new(TsFileReadOptions::default());
        let store = c.runtime_env().object_store(ObjectStoreUrl::local_filesystem()).unwrap();
        let meta = store.head(&object_store::path::Path::from_filesystem_path(&path).unwrap()).await.unwrap();
        let schema = format.infer_schema(&c.state(), &store, std::slice::from_ref(&meta)).await.unwrap();
        let device: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
            col("device", &schema).unwrap(),
            Operator::Eq,
            lit(ScalarValue::Utf8(Some("ws-north-1-8".to_string()))),
        ));
        // A type mismatch: INT64 `energy_wh` compared with a string cannot be evaluated.
        let mismatch: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
            col("energy_wh", &schema).unwrap(),
            Operator::Gt,
            lit(ScalarValue::Utf8(Some("5".to_string()))),
        ));
        let scan = |predicate: Arc<dyn PhysicalExpr>| {
            let source = TsFileSource::new(
                TableSchema::from(schema.clone()),
                TsFileReadOptions::default(),
                Arc::new(MetadataCache::new()),
            )
            .with_predicate(Some(predicate));
            let group = FileGroup::new(vec![PartitionedFile::new_from_meta(meta.clone())]);
            let config = FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), Arc::new(source))
                .with_file_groups(vec![group])
                .build();
            DataSourceExec::from_data_source(config) as Arc<dyn ExecutionPlan>
        };
        // The device predicate alone reads one of 300 devices without errors (the view of
        // the table is not loaded: only that device is taken from the index).
        let read = |plan: &Arc<dyn ExecutionPlan>| metric(plan, "devices_total") - metric(plan, "devices_pruned");
        let plan = scan(device.clone());
        let rows = count_rows(&collect(plan.clone(), c.task_ctx()).await.unwrap());
        assert_eq!((rows, read(&plan), metric(&plan, "predicate_evaluation_errors")), (3621, 1, 0));
        // With the mismatch OR the device (the statistics predicate fails on every container,
        // and no TAG equality holds for every row) nothing is pruned, every row is read and
        // the query does not fail.
        let or: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(mismatch.clone(), Operator::Or, device.clone()));
        let plan = scan(or);
        let rows = count_rows(&collect(plan.clone(), c.task_ctx()).await.unwrap());
        assert_eq!(rows, 1_006_239);
        assert_eq!(metric(&plan, "devices_pruned"), 0);
        assert!(metric(&plan, "predicate_evaluation_errors") >= 1, "{}", metric(&plan, "predicate_evaluation_errors"));
        // With the mismatch AND the device, the TAG equality still selects the device from
        // the device list; the failing statistics predicate then keeps that device.
        let and: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(mismatch, Operator::And, device));
        let plan = scan(and);
        let rows = count_rows(&collect(plan.clone(), c.task_ctx()).await.unwrap());
        assert_eq!((rows, read(&plan)), (3621, 1));
        assert!(metric(&plan, "predicate_evaluation_errors") >= 1, "{}", metric(&plan, "predicate_evaluation_errors"));
    });
}

#[test]
fn test_ddl_with_declared_columns_reads_those_columns_as_declared() {
    let sample = repo_path("data/sample.tsfile");
    let p = sample.to_str().unwrap().to_string();
    block_on(async {
        let c = ctx(4);
        register_tsfile_format(&c).unwrap();
        register_tsfile(&c, "w", &[&p], TsFileReadOptions::default()).await.unwrap();
        c.sql(&format!(
            "CREATE EXTERNAL TABLE d (temperature FLOAT, time TIMESTAMP, device VARCHAR, pressure DOUBLE) \
             STORED AS TSFILE LOCATION '{p}'"
        ))
        .await
        .unwrap();
        let t = c.table_provider("d").await.unwrap();
        let fields: Vec<String> = t.schema().fields().iter().map(|f| format!("{} {}", f.name(), f.data_type())).collect();
        assert_eq!(fields, ["temperature Float32", "time Timestamp(ns)", "device Utf8View", "pressure Float64"]);
        let all = |sql: &str| {
            let c = c.clone();
            let sql = sql.to_string();
            async move { rows_of(&c.sql(&sql).await.unwrap().collect().await.unwrap()) }
        };
        // Declared types are casts of the files' columns (the time unit converted, not
        // relabelled), with filters and aggregates on them.
        let got = all("SELECT device, count(*), sum(CAST(temperature AS DOUBLE)), min(time), max(pressure) FROM d \
                       WHERE time >= TIMESTAMP '2024-01-02T00:00:00' GROUP BY device ORDER BY device")
        .await;
        let want = all("SELECT CAST(device AS VARCHAR), count(*), sum(CAST(CAST(temperature AS FLOAT) AS DOUBLE)), \
             min(CAST(time AS TIMESTAMP(9))), max(CAST(pressure AS DOUBLE)) FROM w WHERE time >= TIMESTAMP '2024-01-02T00:00:00' \
             GROUP BY 1 ORDER BY 1")
        .await;
        assert_eq!(got.len(), 300);
        assert_eq!(got, want);
        let got = all("SELECT time, temperature FROM d WHERE device = 'ws-north-3-7' ORDER BY time DESC LIMIT 3").await;
        let want = all("SELECT CAST(time AS TIMESTAMP(9)) AS t, CAST(temperature AS FLOAT) FROM w WHERE device = 'ws-north-3-7' ORDER BY t DESC LIMIT 3").await;
        assert_eq!(got, want);
        assert_eq!(all("SELECT count(*) FROM d").await, all("SELECT count(*) FROM w").await);
        // The files' other columns are not part of it.
        let e = c.sql("SELECT humidity FROM d").await.unwrap_err().to_string();
        assert!(e.contains("humidity"), "{e}");
        // A declared column no file holds: an error naming it and what there is.
        let e = c
            .sql(&format!("CREATE EXTERNAL TABLE typo (time TIMESTAMP, temprature DOUBLE) STORED AS TSFILE LOCATION '{p}'"))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("'temprature' is declared but no file") && e.contains("temperature"), "{e}");
        // A declared type the values do not convert to: an error, not nulls.
        c.sql(&format!("CREATE EXTERNAL TABLE bad (device INT) STORED AS TSFILE LOCATION '{p}'")).await.unwrap();
        let e = match c.sql("SELECT * FROM bad").await {
            Ok(df) => df.collect().await.unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("ws-") || e.contains("Int32"), "{e}");
    });
}

#[test]
fn test_planning_statistics_cover_the_columns_a_query_uses() {
    use datafusion::catalog::TableProvider;
    use datafusion::common::stats::Precision;
    use datafusion::datasource::physical_plan::FileScanConfig;
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::logical_expr::{col, lit};
    use datafusion_tsfile::datafusion::TsFileTable;
    // The statistics planning gave the scan's file.
    fn file_statistics(plan: &Arc<dyn ExecutionPlan>) -> datafusion::common::Statistics {
        let exec = plan.downcast_ref::<DataSourceExec>().expect("a DataSourceExec");
        let config = exec.data_source().downcast_ref::<FileScanConfig>().expect("a file scan");
        let file = config.file_groups[0].files()[0].clone();
        file.statistics.map(|s| s.as_ref().clone()).expect("statistics")
    }
    block_on(async {
        let c = ctx(1);
        register_tsfile_format(&c).unwrap();
        let state = c.state();
        let path = repo_path("data/sample.tsfile");
        let table = TsFileTable::try_new(&state, &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
        let schema = table.schema();
        let (time, temperature, humidity) =
            (schema.index_of("time").unwrap(), schema.index_of("temperature").unwrap(), schema.index_of("humidity").unwrap());
        // No filter: rows, time and the projected field's bounds are known; an unused field's
        // statistics are not computed.
        let plan = table.scan(&state, Some(&vec![time, temperature]), &[], None).await.unwrap();
        let s = file_statistics(&plan);
        assert_eq!(s.num_rows, Precision::Exact(1_006_239));
        let t = &s.column_statistics[temperature];
        assert!(t.min_value.get_value().is_some() && t.max_value.get_value().is_some(), "{t:?}");
        assert_eq!(s.column_statistics[humidity].max_value, Precision::Absent);
        assert_eq!(s.column_statistics[humidity].null_count, Precision::Absent);
        // A filter naming a device by its TAG: nothing is walked at planning.
        let filter = col("device").eq(lit("ws-central-0-0"));
        let plan = table.scan(&state, Some(&vec![time, temperature]), &[filter], None).await.unwrap();
        let s = file_statistics(&plan);
        assert_eq!(s.num_rows, Precision::Absent);
        assert!(s.column_statistics.iter().all(|c| c.min_value == Precision::Absent), "{s:?}");
    });
}

#[test]
fn test_metadata_without_header_columns_equals_the_full_read() {
    // Leaving out `encoding` and `compression` skips the chunk headers: every other column,
    // `aligned` included, must come out as the full read gives it, on every corpus file.
    let m = manifest();
    let cols = "file, \"table\", device, measurement, category, data_type, aligned, chunk_count, point_count, \
                start_time, end_time, min_value, max_value, first_value, last_value, sum, version, writer, writer_evidence, \
                iotdb_space, iotdb_partition, iotdb_file_version, iotdb_deletions";
    let mut compared = 0;
    block_on(async {
        let ctx = SessionContext::new();
        ctx.register_udtf("tsfile_metadata", Arc::new(datafusion_tsfile::datafusion::TsFileMetadataFunc));
        for entry in manifest_files(&m) {
            let p = file_path(&entry);
            let p = p.to_str().unwrap();
            let light = ctx.sql(&format!("SELECT {cols} FROM tsfile_metadata('{p}')")).await.unwrap().collect().await;
            let full = ctx.sql(&format!("SELECT {cols}, encoding FROM tsfile_metadata('{p}')")).await.unwrap().collect().await;
            let (light, full) = match (light, full) {
                (Ok(light), Ok(full)) => (light, full),
                // A file the index read refuses is refused either way (a broken chunk header
                // may fail the full read alone).
                (Err(_), Err(_)) | (Ok(_), Err(_)) => continue,
                (Err(e), Ok(_)) => panic!("{p}: only the header-less read fails: {e}"),
            };
            let full: Vec<Vec<Value>> = rows_of(&full)
                .into_iter()
                .map(|mut r| {
                    assert!(!r.pop().unwrap().is_null(), "{p}: the full read has encodings");
                    r
                })
                .collect();
            assert_eq!(rows_of(&light), full, "{p}");
            compared += usize::from(!full.is_empty());
        }
    });
    assert!(compared >= 20, "compared {compared} files");
}
