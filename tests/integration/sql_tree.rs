//! SQL over tree-model TsFiles: every tree device of the corpus through SQL, path levels,
//! the schema provider, pruning metrics, aligned tree devices, files mixing table-model and
//! tree-model data, and measurements typed differently on two devices.

use std::collections::BTreeMap;

use datafusion::prelude::SessionContext;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, register_tsfile_schema, TreeMixedTypes, TsFileReadOptions};
use datafusion_tsfile::format::chunk::PageIter;
use datafusion_tsfile::format::{Encoding, FileReader, LocalFile};
use serde_json::Value;

use crate::common::{corpus_dir, file_path, manifest, manifest_files};
use crate::sql::{block_on, count_rows, ctx, metric, quote, rows_of, run, Lcg};
use crate::writer::{write_tsfile, Device, Series, Table, Val, BOOLEAN, DOUBLE, INT32, INT64, STRING, TEXT};

/// Table options for a corpus entry (honouring its reader hints).
fn corpus_options(entry: &Value, key: &str) -> TsFileReadOptions {
    let mut o = TsFileReadOptions::default().with_table(key).with_time_unit(TimeUnit::Raw);
    if let Some(enc) = entry["reader_hints"]["nonaligned_time_encoding"].as_str() {
        o.read.nonaligned_time_encoding = Encoding::from_name(enc).unwrap();
    }
    o
}

fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn same(g: &Value, w: &Value) -> bool {
    match (g.as_i64(), w.as_i64()) {
        (Some(a), Some(b)) => a == b,
        _ => g == w,
    }
}

#[test]
fn test_sql_tree_conformance_every_device() {
    let m = manifest();
    let (mut files, mut keys, mut devices, mut rows, mut mismatches) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut report: Vec<String> = Vec::new();
    block_on(async {
        for entry in manifest_files(&m) {
            if entry["model"] != "tree" {
                continue;
            }
            files += 1;
            let name = entry["name"].as_str().unwrap().to_string();
            let path = file_path(&entry);
            // Expected devices grouped by table-index key (DeviceID segment 0).
            let mut by_key: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for exp in entry["expected"].as_array().unwrap() {
                by_key.entry(exp["segments"][0].as_str().unwrap().to_string()).or_default().push(exp.clone());
            }
            for (key, exps) in by_key {
                keys += 1;
                let c = ctx(2);
                if let Err(e) = register_tsfile(&c, "t", &[path.to_str().unwrap()], corpus_options(&entry, &key)).await {
                    report.push(format!("{name}/{key}: {e}"));
                    mismatches += 1;
                    continue;
                }
                for exp in exps {
                    devices += 1;
                    let dev = exp["device"].as_str().unwrap();
                    let text = std::fs::read_to_string(corpus_dir().join(exp["path"].as_str().unwrap())).unwrap();
                    let mut lines = text.lines();
                    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
                    let want: Vec<Vec<Value>> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
                    let cols: Vec<String> =
                        header["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect();
                    let sql = format!("SELECT * FROM t WHERE device = {} ORDER BY time", sql_str(dev));
                    let batches = match c.sql(&sql).await {
                        Ok(df) => df.collect().await,
                        Err(e) => Err(e),
                    };
                    let batches = match batches {
                        Ok(b) => b,
                        Err(e) => {
                            report.push(format!("{name}/{dev}: {e}"));
                            mismatches += 1;
                            continue;
                        }
                    };
                    let Some(schema) = batches.first().map(|b| b.schema()) else {
                        if !want.is_empty() {
                            report.push(format!("{name}/{dev}: no rows, expected {}", want.len()));
                            mismatches += 1;
                        }
                        continue;
                    };
                    let got = rows_of(&batches);
                    rows += got.len();
                    if got.len() != want.len() {
                        report.push(format!("{name}/{dev}: {} rows, expected {}", got.len(), want.len()));
                        mismatches += 1;
                        continue;
                    }
                    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
                    // Expected columns by name; every other measurement must be all null.
                    let pos: Vec<Option<usize>> = cols.iter().map(|c| names.iter().position(|n| n == c)).collect();
                    if let Some(missing) = cols.iter().zip(&pos).find(|(_, p)| p.is_none()) {
                        report.push(format!("{name}/{dev}: no column '{}' in {names:?}", missing.0));
                        mismatches += 1;
                        continue;
                    }
                    let device_col = names.iter().position(|n| n == "device").unwrap();
                    for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                        if g[device_col] != Value::String(dev.to_string()) {
                            mismatches += 1;
                            report.push(format!("{name}/{dev} row {r}: device {}", g[device_col]));
                        }
                        for (ci, (p, wv)) in pos.iter().zip(w).enumerate() {
                            let gv = &g[p.unwrap()];
                            if !same(gv, wv) {
                                mismatches += 1;
                                if report.len() < 40 {
                                    report.push(format!("{name}/{dev} row {r} '{}': got {gv}, want {wv}", cols[ci]));
                                }
                            }
                        }
                        for (i, gv) in g.iter().enumerate() {
                            if i != device_col && !pos.contains(&Some(i)) && !gv.is_null() {
                                mismatches += 1;
                                report
                                    .push(format!("{name}/{dev} row {r}: '{}' = {gv}, the device has no such series", names[i]));
                            }
                        }
                    }
                }
            }
        }
    });
    for r in &report {
        eprintln!("{r}");
    }
    println!("sql tree conformance: {files} files, {keys} tables, {devices} devices, {rows} rows, {mismatches} mismatches");
    assert!(files >= 10 && devices > 300, "{files} files, {devices} devices");
    assert_eq!(mismatches, 0);
}

#[test]
fn test_sql_tree_levels_schema_provider_and_table_choice() {
    let deep = corpus_dir().join("files/tree_deep_index.tsfile");
    let groups = corpus_dir().join("files/tree_chunk_groups.tsfile");
    block_on(async {
        // Level columns: the path's nodes, null past a shorter path's end.
        let c = ctx(2);
        let opts = TsFileReadOptions::default().with_table("root.n0_2.n1_1").with_tree_levels(true);
        register_tsfile(&c, "t", &[deep.to_str().unwrap()], opts).await.unwrap();
        let schema = c.table_provider("t").await.unwrap().schema();
        let names: Vec<&str> = schema.fields().iter().take(7).map(|f| f.name().as_str()).collect();
        assert_eq!(&names[..2], &["time", "device"]);
        assert!(names.contains(&"level0") && names.contains(&"level3"), "{names:?}");
        let (b, _) = run(&c, "SELECT DISTINCT device, level0, level1, level2, level3, level4 FROM t ORDER BY device").await;
        let got = rows_of(&b);
        assert!(got.len() > 1);
        for row in &got {
            let path = row[0].as_str().unwrap();
            let levels: Vec<&str> = path.split('.').collect();
            for (i, v) in row[1..].iter().enumerate() {
                match levels.get(i) {
                    Some(l) => assert_eq!(v.as_str(), Some(*l), "{path} level{i}"),
                    None => assert!(v.is_null(), "{path} level{i} = {v}"),
                }
            }
        }
        // A level predicate prunes devices by the index.
        let (b, plan) = run(&c, "SELECT count(*) FROM t WHERE level3 = 'n2_0'").await;
        let n = rows_of(&b)[0][0].as_i64().unwrap();
        assert!(n > 0);
        assert!(metric(&plan, "devices_pruned") > 0);

        // The schema provider lists every prefix.
        let c = ctx(1);
        let names = register_tsfile_schema(&c, "tsf", groups.to_str().unwrap(), TsFileReadOptions::default()).await.unwrap();
        assert_eq!(names, vec!["root.plant", "root.plant.line1", "root.plant.line2"]);
        let (b, _) = run(&c, "SELECT count(DISTINCT device), count(*) FROM tsf.\"root.plant.line1\"").await;
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(1));
        assert_eq!(rows_of(&b)[0][1].as_i64(), Some(128));
        // Several path prefixes and no `table` option: every device, aligned by device (as
        // IoTDB shows them): the rows of each prefix's table, the union of the measurements.
        register_tsfile(&c, "all", &[groups.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
        let explicit = TsFileReadOptions::default().with_table("*");
        register_tsfile(&c, "star", &[groups.to_str().unwrap()], explicit).await.unwrap();
        let per_device = "SELECT device, count(*) AS n, CAST(min(time) AS BIGINT), CAST(max(time) AS BIGINT) FROM {} GROUP BY device ORDER BY device";
        let mut want = Vec::new();
        let mut columns: Vec<String> = Vec::new();
        for name in &names {
            let (b, _) = run(&c, &per_device.replace("{}", &format!("tsf.\"{name}\""))).await;
            want.extend(rows_of(&b));
            let schema = c.table_provider(format!("tsf.\"{name}\"").as_str()).await.unwrap().schema();
            for f in schema.fields() {
                if !columns.contains(f.name()) {
                    columns.push(f.name().clone());
                }
            }
        }
        want.sort_by_key(|r| r[0].as_str().unwrap_or_default().to_string());
        assert!(want.len() >= 3, "{want:?}");
        for table in ["all", "star"] {
            let (b, _) = run(&c, &per_device.replace("{}", table)).await;
            assert_eq!(rows_of(&b), want, "{table}");
            let schema = c.table_provider(table).await.unwrap().schema();
            let mut got: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
            got.sort();
            columns.sort();
            assert_eq!(got, columns, "{table}");
        }
        // Counted from statistics or from the pages, the same.
        let (b, _) = run(&c, "SELECT count(*) FROM all").await;
        let total: i64 = want.iter().map(|r| r[1].as_i64().unwrap()).sum();
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(total));
        c.sql("SET tsfile.statistics_aggregates = false").await.unwrap();
        let (b, _) = run(&c, "SELECT count(*) FROM all").await;
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(total));
        // A URL table (no OPTIONS possible) reads the same.
        let url = ctx(1);
        datafusion_tsfile::datafusion::register_tsfile_format(&url).unwrap();
        let url = datafusion_tsfile::datafusion::enable_tsfile_url_tables(url);
        let (b, _) = run(&url, &per_device.replace("{}", &format!("'{}'", groups.to_str().unwrap()))).await;
        assert_eq!(rows_of(&b), want);
        // One path prefix: no option needed.
        let one = corpus_dir().join("files/tree_enc_int32.tsfile");
        let (b, _) = {
            let c = ctx(1);
            register_tsfile(&c, "t", &[one.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
            run(&c, "SELECT count(DISTINCT device) FROM t").await
        };
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(8));
    });
}

#[test]
fn test_sql_tree_count_star_does_not_depend_on_projection() {
    let path = corpus_dir().join("files/tree_chunk_groups.tsfile");
    block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "t", &[path.to_str().unwrap()], TsFileReadOptions::default().with_table("root.plant")).await.unwrap();
        let (all, _) = run(&c, "SELECT * FROM t").await;
        let n = count_rows(&all);
        assert_eq!(n, 185);
        let (b, _) = run(&c, "SELECT count(*) FROM t").await;
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(n as i64));
        // One measurement: every row of the device, null where that series has no point.
        let schema = all[0].schema();
        let m = schema.fields().iter().map(|f| f.name().clone()).find(|n| n != "time" && n != "device").unwrap();
        let (b, _) = run(&c, &format!("SELECT {} FROM t", quote(&m))).await;
        assert_eq!(count_rows(&b), n);
        let (b, _) = run(&c, &format!("SELECT count({}) FROM t", quote(&m))).await;
        assert!((rows_of(&b)[0][0].as_i64().unwrap() as usize) < n, "'{m}' is sparse in this file");
    });
}

/// Time ranges of every page of the non-aligned series of `key` (single-page chunks: the
/// chunk's statistics), found independently of the SQL scan.
fn page_ranges(path: &std::path::Path, key: &str) -> Vec<(i64, i64)> {
    let reader = FileReader::open(LocalFile::open(path).unwrap()).unwrap();
    let mut pages = Vec::new();
    for d in reader.devices(key).unwrap() {
        for s in reader.series(&d).unwrap() {
            for c in &s.chunks {
                let chunk = reader.read_chunk(c.offset).unwrap();
                for p in PageIter::new(&chunk.header, &chunk.data).unwrap() {
                    let st = p.unwrap().header.statistics.unwrap_or_else(|| c.statistics.clone());
                    pages.push((st.start_time, st.end_time));
                }
            }
        }
    }
    pages
}

#[test]
fn test_sql_tree_time_range_decodes_only_overlapping_pages() {
    // (file, path prefix, which page's end time the window ends at, as a fraction of the
    // pages sorted by end time)
    let cases = [
        ("tree_many_devices", "root.fleet", 0.5),
        ("tree_enc_int64", "root.enc_int64", 0.4),
        ("tree_chunk_groups", "root.plant.line2", 0.3),
        ("tree_chunk_groups", "root.plant", 0.6),
    ];
    for (name, key, at) in cases {
        let path = corpus_dir().join(format!("files/{name}.tsfile"));
        let pages = page_ranges(&path, key);
        let mut ends: Vec<i64> = pages.iter().map(|p| p.1).collect();
        ends.sort();
        let lo = pages.iter().map(|p| p.0).min().unwrap();
        let b = ends[(ends.len() as f64 * at) as usize];
        let a = b - (b - lo) / 50;
        let overlapping = pages.iter().filter(|(s, e)| *s <= b && *e >= a).count();
        block_on(async {
            let c = ctx(1);
            let opts = TsFileReadOptions::default().with_table(key).with_time_unit(TimeUnit::Raw);
            register_tsfile(&c, "t", &[path.to_str().unwrap()], opts.clone()).await.unwrap();
            register_tsfile(&c, "u", &[path.to_str().unwrap()], opts.with_pruning(false)).await.unwrap();
            let q = |t: &str| format!("SELECT * FROM {t} WHERE time BETWEEN {a} AND {b} ORDER BY device, time");
            let (got, plan) = run(&c, &q("t")).await;
            let (want, plan_u) = run(&c, &q("u")).await;
            assert_eq!(rows_of(&got), rows_of(&want), "{name}/{key}");
            let decoded = metric(&plan, "pages_total") - metric(&plan, "pages_pruned");
            let all = metric(&plan_u, "pages_total");
            println!(
                "sql tree time pruning {name}/{key}: [{a}, {b}] {} rows; decoded {decoded} of {} pages ({overlapping} overlap); devices pruned {} of {}; chunks pruned {} of {}",
                count_rows(&got),
                all,
                metric(&plan, "devices_pruned"),
                metric(&plan, "devices_total"),
                metric(&plan, "chunks_pruned"),
                metric(&plan, "chunks_total")
            );
            assert_eq!(decoded, overlapping, "{name}/{key}: decoded {decoded} pages, {overlapping} overlap [{a}, {b}]");
            assert_eq!(all, pages.len());
            assert!(decoded < all);
        });
    }
}

#[test]
fn test_sql_tree_device_predicates_read_only_that_device() {
    let path = corpus_dir().join("files/tree_many_devices.tsfile");
    let reader = FileReader::open(LocalFile::open(&path).unwrap()).unwrap();
    let fleet = reader.devices("root.fleet").unwrap();
    let one = fleet.iter().find(|d| d.device.path() == "root.fleet.v0007").unwrap();
    let chunks: usize = reader.series(one).unwrap().iter().map(|s| s.chunks.len()).sum();
    block_on(async {
        let c = ctx(2);
        let opts = TsFileReadOptions::default().with_table("root.fleet").with_tree_levels(true);
        register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await.unwrap();
        let (all, _) = run(&c, "SELECT count(*) FROM t").await;
        let total_rows = rows_of(&all)[0][0].as_i64().unwrap();
        let (b, plan) = run(&c, "SELECT * FROM t WHERE device = 'root.fleet.v0007'").await;
        assert_eq!(count_rows(&b), 3);
        assert_eq!(metric(&plan, "devices_total"), fleet.len());
        assert_eq!(metric(&plan, "devices_pruned"), fleet.len() - 1);
        assert_eq!(metric(&plan, "chunks_total"), chunks);
        assert_eq!(metric(&plan, "rows_decoded"), 3);
        println!(
            "sql tree device predicate: 1 of {} devices read, {} chunks, {} bytes, {} rows",
            fleet.len(),
            metric(&plan, "chunks_total"),
            metric(&plan, "bytes_scanned"),
            metric(&plan, "rows_decoded")
        );
        // LIKE on the path and a level predicate prune by the index too.
        let (b, plan) = run(&c, "SELECT count(DISTINCT device) FROM t WHERE device LIKE 'root.fleet.v001%'").await;
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(10));
        assert_eq!(metric(&plan, "devices_pruned"), fleet.len() - 10);
        let (b, plan) = run(&c, "SELECT count(*) FROM t WHERE level2 = 'v0042'").await;
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(3));
        assert_eq!(metric(&plan, "devices_pruned"), fleet.len() - 1);
        // A path outside the table prunes everything; nothing is fetched.
        let (b, plan) = run(&c, "SELECT * FROM t WHERE device = 'root.wide.w'").await;
        assert_eq!(count_rows(&b), 0);
        assert_eq!(metric(&plan, "bytes_scanned"), 0);
        assert!(total_rows > 300);
    });
}

#[test]
fn test_sql_tree_value_pruning_matches_unpruned_scan() {
    let path = corpus_dir().join("files/tree_many_devices.tsfile");
    block_on(async {
        let c = ctx(2);
        let p = path.to_str().unwrap();
        let opts = TsFileReadOptions::default().with_table("root.fleet").with_time_unit(TimeUnit::Raw).with_tree_levels(true);
        register_tsfile(&c, "on", &[p], opts.clone()).await.unwrap();
        register_tsfile(&c, "off", &[p], opts.with_pruning(false)).await.unwrap();
        let (b, _) = run(&c, "SELECT min(time), max(time), min(gear), max(gear) FROM off").await;
        let r = &rows_of(&b)[0];
        let (t0, t1) = (r[0].as_i64().unwrap(), r[1].as_i64().unwrap());
        let (g0, g1) = (r[2].as_i64().unwrap(), r[3].as_i64().unwrap());
        // A value outside every device's range prunes every device.
        let (b, plan) = run(&c, &format!("SELECT * FROM on WHERE gear > {g1}")).await;
        assert_eq!(count_rows(&b), 0);
        assert_eq!(metric(&plan, "devices_pruned"), metric(&plan, "devices_total"));
        let mut rng = Lcg(7);
        let ops = ["<", "<=", ">", ">=", "=", "<>"];
        for _ in 0..16 {
            let mut conj = Vec::new();
            for _ in 0..(1 + rng.next() % 3) {
                conj.push(match rng.next() % 5 {
                    0 => format!("time {} {}", rng.pick(&ops), t0 + (rng.next() as i64 % (t1 - t0 + 1))),
                    1 => format!("gear {} {}", rng.pick(&ops), g0 + (rng.next() as i64 % (g1 - g0 + 1))),
                    2 => format!("device {} 'root.fleet.v0{:03}'", rng.pick(&ops), rng.next() % 300),
                    3 => "speed IS NULL".to_string(),
                    _ => format!("level2 = 'v0{:03}'", rng.next() % 300),
                });
            }
            let join = if rng.next().is_multiple_of(4) { " OR " } else { " AND " };
            let pred = conj.join(join);
            let q = |t: &str| format!("SELECT time, device, gear, speed FROM {t} WHERE {pred} ORDER BY device, time");
            let (a, _) = run(&c, &q("on")).await;
            let (b, _) = run(&c, &q("off")).await;
            assert_eq!(rows_of(&a), rows_of(&b), "predicate {pred}");
        }
    });
}

/// Write `bytes` to a fresh temporary `.tsfile` and return its path.
fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tsfile-sql-tree-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.tsfile"));
    std::fs::write(&p, bytes).unwrap();
    p
}

fn s(x: &str) -> String {
    x.to_string()
}

fn plain_opts() -> TsFileReadOptions {
    let mut o = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw);
    o.read.nonaligned_time_encoding = Encoding::Plain;
    o
}

/// A file with an aligned tree device, a non-aligned tree device of the same path prefix, and
/// a table-model table.
fn mixed_file() -> Vec<u8> {
    let aligned = Device::Aligned {
        segments: vec![s("root.sg"), s("al")],
        times: (0..25).map(|i| i * 10).collect(),
        columns: vec![
            (s("s1"), INT32, (0..25).map(|i| (i % 4 != 0).then_some(Val::I32(i))).collect()),
            (s("s2"), TEXT, (0..25).map(|i| (i % 3 == 0).then(|| Val::Text(format!("t{i}")))).collect()),
        ],
    };
    let tree = Device::NonAligned {
        segments: vec![s("root.sg"), s("na")],
        series: vec![
            (s("s1"), INT32, (0..20).map(|i| (i * 2, Val::I32(100 + i as i32))).collect()),
            (s("s3"), DOUBLE, (0..15).map(|i| (i * 3, Val::F64(i as f64 / 2.0))).collect()),
        ],
    };
    let table = Device::Aligned {
        segments: vec![s("t1"), s("a")],
        times: vec![1, 2, 3],
        columns: vec![(s("v"), INT64, vec![Some(Val::I64(7)), None, Some(Val::I64(9))])],
    };
    let tables = [Table { name: s("t1"), tags: vec![s("id")], fields: vec![(s("v"), INT64)] }];
    write_tsfile(&[table, aligned, tree], &tables, 8)
}

#[test]
fn test_sql_tree_aligned_devices_and_mixed_model_file() {
    let path = temp_file("mixed", &mixed_file());
    let p = path.to_str().unwrap().to_string();
    block_on(async {
        let c = ctx(2);
        // Both models are listed and readable.
        let names = register_tsfile_schema(&c, "m", &p, plain_opts()).await.unwrap();
        assert_eq!(names, vec!["root.sg", "t1"]);
        let (b, _) = run(&c, "SELECT id, time, v FROM m.t1 ORDER BY time").await;
        assert_eq!(
            rows_of(&b),
            vec![
                vec![Value::from("a"), 1.into(), 7.into()],
                vec![Value::from("a"), 2.into(), Value::Null],
                vec![Value::from("a"), 3.into(), 9.into()]
            ]
        );
        let err = register_tsfile(&c, "x", &[&p], plain_opts()).await.unwrap_err().to_string();
        assert!(err.contains("several tables") && err.contains("root.sg") && err.contains("t1"), "{err}");
        // The aligned tree device: one row per time-column row, nulls kept.
        let schema = c.table_provider("m.\"root.sg\"").await.unwrap().schema();
        let cols: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(cols, vec!["time", "device", "s1", "s2", "s3"]);
        let (b, _) = run(&c, "SELECT time, s1, s2, s3 FROM m.\"root.sg\" WHERE device = 'root.sg.al' ORDER BY time").await;
        let got = rows_of(&b);
        assert_eq!(got.len(), 25);
        for (i, r) in got.iter().enumerate() {
            let i = i as i64;
            assert_eq!(r[0].as_i64(), Some(i * 10));
            assert_eq!(r[1], if i % 4 != 0 { Value::from(i) } else { Value::Null }, "row {i}");
            assert_eq!(r[2], if i % 3 == 0 { Value::from(format!("t{i}")) } else { Value::Null }, "row {i}");
            assert!(r[3].is_null());
        }
        // The non-aligned device: the union of its series' timestamps.
        let (b, _) = run(&c, "SELECT time, s1, s3 FROM m.\"root.sg\" WHERE device = 'root.sg.na' ORDER BY time").await;
        let got = rows_of(&b);
        let mut want_times: Vec<i64> = (0..20).map(|i| i * 2).chain((0..15).map(|i| i * 3)).collect();
        want_times.sort();
        want_times.dedup();
        assert_eq!(got.iter().map(|r| r[0].as_i64().unwrap()).collect::<Vec<_>>(), want_times);
        for r in &got {
            let t = r[0].as_i64().unwrap();
            assert_eq!(r[1], if t % 2 == 0 && t < 40 { Value::from(100 + t / 2) } else { Value::Null }, "t={t}");
            let s3 =
                if t % 3 == 0 && t < 45 { Value::from(format!("f64:{:016x}", (t as f64 / 6.0).to_bits())) } else { Value::Null };
            assert_eq!(r[2], s3, "t={t}");
        }
        // Value pruning on the aligned device uses its chunk-group and page statistics.
        let (b, plan) = run(&c, "SELECT time FROM m.\"root.sg\" WHERE s1 > 20").await;
        assert_eq!(count_rows(&b), 23, "s1 of 'al' is 21..24 (not multiples of 4) and 'na' has 100..119");
        assert!(metric(&plan, "pages_pruned") > 0, "pages of 'al' holding only s1 <= 20 are skipped");
        let (b, plan) = run(&c, "SELECT count(*) FROM m.\"root.sg\" WHERE s2 = 'zzz'").await;
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(0));
        assert_eq!(metric(&plan, "devices_pruned"), 1, "'na' has no s2: all null");
    });
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn test_sql_tree_mixed_types_error_and_coerce() {
    let dev = |name: &str, series: Vec<Series>| Device::NonAligned { segments: vec![s("root.mx"), s(name)], series };
    let bytes = write_tsfile(
        &[
            dev(
                "d1",
                vec![
                    (s("n"), INT32, vec![(1, Val::I32(5)), (2, Val::I32(-3))]),
                    (s("ok"), BOOLEAN, vec![(2, Val::Bool(true))]),
                    (s("x"), INT64, vec![(1, Val::I64(10))]),
                ],
            ),
            dev(
                "d2",
                vec![
                    (s("n"), DOUBLE, vec![(1, Val::F64(1.5))]),
                    (s("ok"), INT32, vec![(3, Val::I32(7))]),
                    (s("x"), STRING, vec![(3, Val::Text(s("hi")))]),
                ],
            ),
        ],
        &[],
        100,
    );
    let path = temp_file("mixed_types", &bytes);
    let p = path.to_str().unwrap().to_string();
    block_on(async {
        let c = ctx(1);
        let err = register_tsfile(&c, "t", &[&p], plain_opts()).await.unwrap_err().to_string();
        assert!(err.contains("'n' is INT32 on device root.mx.d1") && err.contains("DOUBLE on device root.mx.d2"), "{err}");
        let opts = plain_opts().with_tree_mixed_types(TreeMixedTypes::Coerce);
        register_tsfile(&c, "t", &[&p], opts).await.unwrap();
        let (b, _) = run(&c, "SELECT device, time, n, x, ok FROM t ORDER BY device, time").await;
        assert_eq!(b[0].schema().field(2).data_type(), &arrow_schema::DataType::Float64);
        assert_eq!(b[0].schema().field(3).data_type(), &arrow_schema::DataType::Utf8);
        let f = |v: f64| Value::from(format!("f64:{:016x}", v.to_bits()));
        let want = vec![
            vec![Value::from("root.mx.d1"), 1.into(), f(5.0), Value::from("10"), Value::Null],
            vec![Value::from("root.mx.d1"), 2.into(), f(-3.0), Value::Null, Value::from("true")],
            vec![Value::from("root.mx.d2"), 1.into(), f(1.5), Value::Null, Value::Null],
            vec![Value::from("root.mx.d2"), 3.into(), Value::Null, Value::from("hi"), Value::from("7")],
        ];
        assert_eq!(rows_of(&b), want);
        // Predicates on a coerced column still filter correctly (no unsound pruning).
        let (b, _) = run(&c, "SELECT count(*) FROM t WHERE n > 1").await;
        assert_eq!(rows_of(&b)[0][0].as_i64(), Some(2));
    });
    // The same devices under two path prefixes, read together (no `table` option): the same
    // error, naming both devices; coerced, the same rows.
    let two = |key: &str, name: &str, series: Vec<Series>| Device::NonAligned { segments: vec![s(key), s(name)], series };
    let bytes = write_tsfile(
        &[
            two("root.mx", "d1", vec![(s("n"), INT32, vec![(1, Val::I32(5))]), (s("a"), INT64, vec![(1, Val::I64(1))])]),
            two("root.my", "d2", vec![(s("n"), DOUBLE, vec![(1, Val::F64(1.5)), (4, Val::F64(2.0))])]),
        ],
        &[],
        100,
    );
    let split = temp_file("mixed_types_two_prefixes", &bytes);
    let p = split.to_str().unwrap().to_string();
    block_on(async {
        let c = ctx(1);
        let err = register_tsfile(&c, "t", &[&p], plain_opts()).await.unwrap_err().to_string();
        assert!(err.contains("'n' is INT32 on device root.mx.d1") && err.contains("DOUBLE on device root.my.d2"), "{err}");
        register_tsfile(&c, "t", &[&p], plain_opts().with_tree_mixed_types(TreeMixedTypes::Coerce)).await.unwrap();
        let (b, _) = run(&c, "SELECT device, time, n, a FROM t ORDER BY device, time").await;
        let f = |v: f64| Value::from(format!("f64:{:016x}", v.to_bits()));
        let want = vec![
            vec![Value::from("root.mx.d1"), 1.into(), f(5.0), 1.into()],
            vec![Value::from("root.my.d2"), 1.into(), f(1.5), Value::Null],
            vec![Value::from("root.my.d2"), 4.into(), f(2.0), Value::Null],
        ];
        assert_eq!(rows_of(&b), want);
    });
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn test_sql_tree_reads_across_byte_range_splits() {
    // Many partitions over one file: every device read exactly once.
    let path = corpus_dir().join("files/tree_many_devices.tsfile");
    block_on(async {
        let c = SessionContext::new_with_config(
            datafusion::prelude::SessionConfig::new().with_target_partitions(4).with_repartition_file_min_size(1),
        );
        register_tsfile(&c, "t", &[path.to_str().unwrap()], TsFileReadOptions::default().with_table("root.fleet")).await.unwrap();
        let (b, _) = run(&c, "SELECT count(*), count(DISTINCT device) FROM t").await;
        let r = &rows_of(&b)[0];
        assert_eq!(r[1].as_i64(), Some(300));
        let c1 = ctx(1);
        register_tsfile(&c1, "t", &[path.to_str().unwrap()], TsFileReadOptions::default().with_table("root.fleet"))
            .await
            .unwrap();
        let (b1, _) = run(&c1, "SELECT count(*) FROM t").await;
        assert_eq!(r[0], rows_of(&b1)[0][0]);
    });
}
