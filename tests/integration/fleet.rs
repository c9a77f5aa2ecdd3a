//! Fleet shapes: files with many small devices. Scans gather consecutive devices into
//! batches of the session's batch size (never one batch per device, never more rows than
//! the batch size); the rows are those the library's per-device reader returns and those
//! the test wrote.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::DataType;
use datafusion::arrow::compute::cast;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use datafusion_tsfile::{TableRead, TsFile};
use serde_json::{json, Value};

use crate::conformance::cell;
use crate::sql::{block_on, rows_of};
use crate::writer::{write_tsfile, Device, Table, Val, DOUBLE, INT64, STRING};

/// Devices of the fleet file: `dev-NNNN` in regions of 100 devices; device `d` holds
/// `1 + d % 13` rows (one device in 13 has a single row), with a null temperature on every
/// fifth row and a null label on every seventh.
const DEVICES: usize = 1_500;

fn rows_of_device(d: usize) -> usize {
    1 + d % 13
}

fn temperature(d: usize, i: usize) -> Option<f64> {
    (i % 5 != 4).then_some(d as f64 * 0.5 + i as f64 * 0.25 - 100.0)
}

fn label(d: usize, i: usize) -> Option<String> {
    (i % 7 != 6).then(|| if (d + i).is_multiple_of(3) { "ok".to_string() } else { format!("warn-{}", d % 4) })
}

fn fleet_file() -> Vec<u8> {
    fleet_part(0..usize::MAX)
}

/// The fleet's rows `i` (per device) in `rows`: one time partition of the fleet, holding
/// only the devices with rows in it (as IoTDB writes one file per time partition).
fn fleet_part(rows: std::ops::Range<usize>) -> Vec<u8> {
    let devices: Vec<Device> = (0..DEVICES)
        .filter_map(|d| {
            let is: Vec<usize> = (0..rows_of_device(d)).filter(|i| rows.contains(i)).collect();
            (!is.is_empty()).then(|| Device::Aligned {
                segments: vec!["fleet".into(), format!("region-{:02}", d / 100), format!("dev-{d:04}")],
                times: is.iter().map(|&i| 1_000 + d as i64 * 10 + i as i64 * 1_000).collect(),
                columns: vec![
                    ("temperature".into(), DOUBLE, is.iter().map(|&i| temperature(d, i).map(Val::F64)).collect()),
                    ("reading".into(), INT64, is.iter().map(|&i| Some(Val::I64((d * 1_000 + i) as i64))).collect()),
                    ("label".into(), STRING, is.iter().map(|&i| label(d, i).map(Val::Text)).collect()),
                ],
            })
        })
        .collect();
    let table = Table {
        name: "fleet".into(),
        tags: vec!["region".into(), "device".into()],
        fields: vec![("temperature".into(), DOUBLE), ("reading".into(), INT64), ("label".into(), STRING)],
    };
    // Pages of 4 points: devices of more than 4 rows have multi-page chunks.
    write_tsfile(&devices, &[table], 4)
}

/// The rows the test wrote, as `cell` shows them: time (ms), region, device, temperature,
/// reading, label; in device and time order.
fn expected_rows() -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for d in 0..DEVICES {
        for i in 0..rows_of_device(d) {
            let t = 1_000 + d as i64 * 10 + i as i64 * 1_000;
            out.push(vec![
                json!(t),
                json!(format!("region-{:02}", d / 100)),
                json!(format!("dev-{d:04}")),
                temperature(d, i).map_or(Value::Null, |v| json!(format!("f64:{:016x}", v.to_bits()))),
                json!((d * 1_000 + i) as i64),
                label(d, i).map_or(Value::Null, |v| json!(v)),
            ]);
        }
    }
    out
}

fn write_fleet(test: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("tsfile-fleet-{test}-{}.tsfile", std::process::id()));
    std::fs::write(&path, fleet_file()).unwrap();
    path
}

fn ctx(partitions: usize, batch_size: usize) -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions).with_batch_size(batch_size))
}

const SELECT_ALL: &str = "SELECT CAST(time AS BIGINT), region, device, temperature, reading, label FROM fleet";

#[test]
fn test_many_small_devices_are_gathered_into_batches_of_the_batch_size() {
    let path = write_fleet("batches");
    let expected = expected_rows();
    let total: usize = (0..DEVICES).map(rows_of_device).sum();
    assert_eq!(expected.len(), total);
    block_on(async {
        for (partitions, batch_size) in [(1, 64), (2, 64), (1, 8192), (2, 5), (1, 1)] {
            let c = ctx(partitions, batch_size);
            register_tsfile(&c, "fleet", &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
            let batches: Vec<RecordBatch> = c.sql(SELECT_ALL).await.unwrap().collect().await.unwrap();
            let what = format!("{partitions} partition(s), batch size {batch_size}");
            assert!(batches.iter().all(|b| b.num_rows() <= batch_size && b.num_rows() > 0), "{what}");
            // A batch is emitted when the next device would not fit, so every batch but the
            // last of each fetched run (one run per partition here) is short of the batch
            // size by less than a device's rows (at most 13).
            let short = batches.iter().filter(|b| b.num_rows() + 13 <= batch_size).count();
            assert!(short <= partitions, "{what}: {short} short batches of {}", batches.len());
            if batch_size >= 64 {
                assert!(batches.len() * 8 < DEVICES, "{what}: {} batches for {DEVICES} devices", batches.len());
            }
            let mut rows = rows_of(&batches);
            rows.sort_by(|a, b| (a[2].as_str(), a[0].as_i64()).cmp(&(b[2].as_str(), b[0].as_i64())));
            assert_eq!(rows, expected, "{what}");
        }
    });
    std::fs::remove_file(&path).unwrap();
}

/// Gathering devices changes batch boundaries, not rows: projections (tags only, a string
/// field only, time only) and filters that prune devices, chunk groups and pages give the
/// rows of the library's per-device reader and of the written data.
#[test]
fn test_gathered_batches_equal_the_per_device_reader() {
    let path = write_fleet("reader");
    let expected = expected_rows();
    // The library reader: one batch per device (and per 3 rows within one), time cast to
    // milliseconds; it returns the written rows in device and time order.
    let file = TsFile::open(&path).unwrap();
    let per_device: Vec<RecordBatch> =
        file.read_table("fleet", TableRead::default().with_batch_size(3)).unwrap().collect::<Result<_, _>>().unwrap();
    assert!(per_device.len() >= DEVICES);
    let mut lib_rows = Vec::new();
    for b in &per_device {
        let mut cols = b.columns().to_vec();
        cols[0] = cast(&cols[0], &DataType::Int64).unwrap();
        lib_rows.extend((0..b.num_rows()).map(|i| cols.iter().map(|c| cell(c, i)).collect::<Vec<_>>()));
    }
    assert_eq!(lib_rows, expected);
    block_on(async {
        let c = ctx(2, 100);
        register_tsfile(&c, "fleet", &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
        type Pick = Arc<dyn Fn(&[Value]) -> bool + Send + Sync>;
        let cases: Vec<(&str, Vec<usize>, Pick)> = vec![
            ("SELECT region, device FROM fleet", vec![1, 2], Arc::new(|_| true)),
            ("SELECT label FROM fleet", vec![5], Arc::new(|_| true)),
            ("SELECT CAST(time AS BIGINT) FROM fleet", vec![0], Arc::new(|_| true)),
            (
                "SELECT CAST(time AS BIGINT), region, device, temperature, reading, label FROM fleet WHERE reading >= 700000 AND reading < 900005",
                vec![0, 1, 2, 3, 4, 5],
                Arc::new(|r| (700_000..900_005).contains(&r[4].as_i64().unwrap())),
            ),
            (
                "SELECT device, reading FROM fleet WHERE region = 'region-03' OR device = 'dev-1499'",
                vec![2, 4],
                Arc::new(|r| r[1] == json!("region-03") || r[2] == json!("dev-1499")),
            ),
            (
                "SELECT device, label FROM fleet WHERE label = 'warn-2'",
                vec![2, 5],
                Arc::new(|r| r[5] == json!("warn-2")),
            ),
            // TAG equalities and IN lists, found in the device list before any statistics.
            (
                "SELECT CAST(time AS BIGINT), device, temperature FROM fleet WHERE device = 'dev-0777'",
                vec![0, 2, 3],
                Arc::new(|r| r[2] == json!("dev-0777")),
            ),
            (
                "SELECT device, reading FROM fleet WHERE device IN ('dev-0001', 'dev-1213', 'dev-9999') AND reading > 1000",
                vec![2, 4],
                Arc::new(|r| (r[2] == json!("dev-0001") || r[2] == json!("dev-1213")) && r[4].as_i64().unwrap() > 1000),
            ),
            (
                "SELECT device, label FROM fleet WHERE region = 'region-07' AND 'dev-0712' = device AND label IS NOT NULL",
                vec![2, 5],
                Arc::new(|r| r[2] == json!("dev-0712") && !r[5].is_null()),
            ),
        ];
        for (sql, columns, pick) in cases {
            let want: Vec<Vec<Value>> =
                lib_rows.iter().filter(|r| pick(r)).map(|r| columns.iter().map(|&i| r[i].clone()).collect()).collect();
            let batches = c.sql(sql).await.unwrap().collect().await.unwrap();
            assert!(batches.iter().all(|b| b.num_rows() <= 100), "{sql}");
            let mut got = rows_of(&batches);
            let mut want = want;
            got.sort_by_key(|r| format!("{r:?}"));
            want.sort_by_key(|r| format!("{r:?}"));
            assert!(!want.is_empty(), "{sql}");
            assert_eq!(got, want, "{sql}");
        }
        // TAG equalities that no device (or no single device) satisfies: no rows.
        for sql in [
            "SELECT device FROM fleet WHERE device = 'dev-0712' AND region = 'region-08'",
            "SELECT device FROM fleet WHERE device = 'dev-0712' AND device = 'dev-0713'",
            "SELECT device FROM fleet WHERE device = 'no-such-device'",
        ] {
            let batches = c.sql(sql).await.unwrap().collect().await.unwrap();
            assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 0, "{sql}");
        }
    });
    std::fs::remove_file(&path).unwrap();
}

/// A directory of time partitions of the same fleet (as IoTDB writes them: file k holds
/// rows 3k..3k+2 of each device that has them), queried by glob: the same rows as the
/// single file, for a full scan, one device, one device in a time window and a time
/// window that only some files overlap.
#[test]
fn test_directory_of_time_partitions_equals_the_single_file() {
    let dir = std::env::temp_dir().join(format!("tsfile-fleet-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for k in 0..5 {
        std::fs::write(dir.join(format!("part-{k:02}.tsfile")), fleet_part(3 * k..3 * k + 3)).unwrap();
    }
    let single = write_fleet("dir-single");
    let glob = format!("{}/*.tsfile", dir.display());
    block_on(async {
        let c = ctx(2, 512);
        register_tsfile(&c, "dir", &[glob.as_str()], TsFileReadOptions::default()).await.unwrap();
        register_tsfile(&c, "fleet", &[single.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
        let queries = [
            SELECT_ALL.to_string(),
            format!("{SELECT_ALL} WHERE device = 'dev-0012'"),
            format!("{SELECT_ALL} WHERE device = 'dev-0012' AND time >= to_timestamp_millis(3120) AND time < to_timestamp_millis(9120)"),
            format!("{SELECT_ALL} WHERE time > to_timestamp_millis(12000) AND reading % 2 = 0"),
            "SELECT device, count(*), min(temperature), max(reading) FROM fleet GROUP BY device".to_string(),
        ];
        for sql in queries {
            let mut want = rows_of(&c.sql(&sql).await.unwrap().collect().await.unwrap());
            let mut got = rows_of(&c.sql(&sql.replace("FROM fleet", "FROM dir")).await.unwrap().collect().await.unwrap());
            want.sort_by_key(|r| format!("{r:?}"));
            got.sort_by_key(|r| format!("{r:?}"));
            assert!(!want.is_empty(), "{sql}");
            assert_eq!(got, want, "{sql}");
        }
        // The whole directory holds the written rows.
        let all = rows_of(&c.sql(SELECT_ALL.replace("FROM fleet", "FROM dir").as_str()).await.unwrap().collect().await.unwrap());
        assert_eq!(all.len(), expected_rows().len());
    });
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&single).unwrap();
}

/// File statistics of TAG columns (merged as strings across devices): smallest and largest
/// value and null rows, with a device whose last TAG is null; equal to the decoded answer.
#[test]
fn test_tag_statistics_of_a_file_equal_the_decoded_answer() {
    use datafusion::common::stats::Precision;
    use datafusion::common::ScalarValue;
    use datafusion::datasource::file_format::FileFormat;
    use datafusion::execution::object_store::ObjectStoreUrl;
    use datafusion_tsfile::datafusion::TsFileFormat;
    use object_store::ObjectStoreExt;

    let aligned = |segments: &[&str], n: usize| Device::Aligned {
        segments: segments.iter().map(|s| s.to_string()).collect(),
        times: (0..n as i64).collect(),
        columns: vec![("reading".into(), INT64, (0..n).map(|i| Some(Val::I64(i as i64))).collect())],
    };
    let devices = vec![aligned(&["t", "r2", "d1"], 3), aligned(&["t", "r1"], 2), aligned(&["t", "r3", "d0"], 1)];
    let table = Table { name: "t".into(), tags: vec!["region".into(), "device".into()], fields: vec![("reading".into(), INT64)] };
    let path = std::env::temp_dir().join(format!("tsfile-fleet-tagstats-{}.tsfile", std::process::id()));
    std::fs::write(&path, write_tsfile(&devices, &[table], 4)).unwrap();
    block_on(async {
        let c = ctx(1, 100);
        let format = TsFileFormat::new(TsFileReadOptions::default());
        let store = c.runtime_env().object_store(ObjectStoreUrl::local_filesystem()).unwrap();
        let meta = store.head(&object_store::path::Path::from_filesystem_path(&path).unwrap()).await.unwrap();
        let schema = format.infer_schema(&c.state(), &store, std::slice::from_ref(&meta)).await.unwrap();
        let stats = format.infer_stats(&c.state(), &store, schema.clone(), &meta).await.unwrap();
        assert_eq!(stats.num_rows, Precision::Exact(6));
        let col = |name: &str| &stats.column_statistics[schema.index_of(name).unwrap()];
        let text = |p: &Precision<ScalarValue>| match p {
            Precision::Exact(v) => Some(v.to_string()),
            _ => None,
        };
        let (region, device) = (col("region"), col("device"));
        assert_eq!((text(&region.min_value), text(&region.max_value)), (Some("r1".into()), Some("r3".into())));
        assert_eq!(region.null_count, Precision::Exact(0));
        assert_eq!((text(&device.min_value), text(&device.max_value)), (Some("d0".into()), Some("d1".into())));
        assert_eq!(device.null_count, Precision::Exact(2));

        register_tsfile(&c, "t", &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
        let sql = "SELECT min(region), max(region), count(region), min(device), max(device), count(device) FROM t";
        let from_stats = rows_of(&c.sql(sql).await.unwrap().collect().await.unwrap());
        let decoded = rows_of(&c.sql(&format!("{sql} WHERE reading >= 0")).await.unwrap().collect().await.unwrap());
        assert_eq!(from_stats, decoded);
        assert_eq!(decoded, vec![vec![json!("r1"), json!("r3"), json!(6), json!("d0"), json!("d1"), json!(4)]]);
    });
    std::fs::remove_file(&path).unwrap();
}

/// A directory whose later files gained a column (as a schema change in IoTDB leaves it):
/// the merged schema keeps the column, null in the files without it; a later file where a
/// column changed type is an error naming the column and two files that disagree, never a
/// dropped column.
#[test]
fn test_directory_whose_files_disagree_merges_or_fails_clearly() {
    let file = |fields: &[(&str, u8)], t0: i64| {
        let columns = fields
            .iter()
            .map(|(n, ty)| {
                let v = |i: i64| if *ty == DOUBLE { Val::F64(i as f64 / 2.0) } else { Val::I64(i) };
                (n.to_string(), *ty, (t0..t0 + 3).map(|i| Some(v(i))).collect())
            })
            .collect();
        let device = Device::Aligned { segments: vec!["m".into(), "d1".into()], times: (t0..t0 + 3).collect(), columns };
        let table = Table {
            name: "m".into(),
            tags: vec!["device".into()],
            fields: fields.iter().map(|(n, ty)| (n.to_string(), *ty)).collect(),
        };
        write_tsfile(&[device], &[table], 4)
    };
    let dir = std::env::temp_dir().join(format!("tsfile-fleet-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("part-0.tsfile"), file(&[("a", INT64)], 0)).unwrap();
    std::fs::write(dir.join("part-1.tsfile"), file(&[("a", INT64), ("b", DOUBLE)], 10)).unwrap();
    let glob = format!("{}/*.tsfile", dir.display());
    block_on(async {
        let c = ctx(2, 100);
        register_tsfile(&c, "m", &[glob.as_str()], TsFileReadOptions::default()).await.unwrap();
        let got =
            rows_of(&c.sql("SELECT CAST(time AS BIGINT) AS t, a, b FROM m ORDER BY t").await.unwrap().collect().await.unwrap());
        let want: Vec<Vec<Value>> = [0i64, 1, 2]
            .iter()
            .map(|&t| vec![json!(t), json!(t), Value::Null])
            .chain(
                [10i64, 11, 12]
                    .iter()
                    .map(|&t| vec![json!(t), json!(t), json!(format!("f64:{:016x}", (t as f64 / 2.0).to_bits()))]),
            )
            .collect();
        assert_eq!(got, want);
    });
    // `a` becomes DOUBLE in a third file: a planning error that names the column and both files.
    std::fs::write(dir.join("part-2.tsfile"), file(&[("a", DOUBLE)], 20)).unwrap();
    block_on(async {
        let c = ctx(2, 100);
        let err = register_tsfile(&c, "m", &[glob.as_str()], TsFileReadOptions::default()).await.unwrap_err().to_string();
        // The other file is whichever the listing gave first (part-0 or part-1).
        let other = err.contains("part-0.tsfile") || err.contains("part-1.tsfile");
        assert!(err.contains("column 'a' is") && err.contains("part-2.tsfile") && other, "{err}");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Queries naming devices by TAG equalities on a file whose table view is not loaded at
/// planning (`statistics_max_index_bytes = 0`, as for a file of a very large index): only
/// the named devices are read from the index (looked up along their index path when every
/// TAG is given, otherwise picked from the device list), their chunk ranges come from the
/// chunk headers, and the rows and aggregates equal those of the whole-table view and of
/// what the test wrote. A filter allowing more than `PARTIAL_VIEW_MAX_DEVICES` devices
/// loads the whole view.
#[test]
fn test_devices_named_by_tags_are_read_alone_and_equal_the_whole_table() {
    type RowFilter = dyn Fn(&[Value]) -> bool;
    use crate::sql::{metric, run};
    let path = write_fleet("partial");
    let expected = expected_rows();
    block_on(async {
        let register = |partial: bool| {
            let path = path.clone();
            async move {
                let c = ctx(2, 64);
                let mut opts = TsFileReadOptions::default();
                if partial {
                    opts.statistics_max_index_bytes = 0;
                }
                register_tsfile(&c, "fleet", &[path.to_str().unwrap()], opts).await.unwrap();
                c
            }
        };
        let cases: [(&str, &RowFilter, usize); 5] = [
            ("device = 'dev-0421'", &|r| r[2] == json!("dev-0421"), 1),
            ("region = 'region-04' AND device = 'dev-0421'", &|r| r[2] == json!("dev-0421"), 1),
            (
                "region = 'region-04' AND device IN ('dev-0421', 'dev-0499', 'dev-0500', 'dev-9999')",
                &|r| r[2] == json!("dev-0421") || r[2] == json!("dev-0499"),
                2,
            ),
            ("region IN ('region-00', 'region-14') AND device <> 'dev-0003'", &|r| {
                (r[1] == json!("region-00") || r[1] == json!("region-14")) && r[2] != json!("dev-0003")
            }, 200),
            // 1,100 devices: more than a partial view holds.
            ("region < 'region-11' AND region IN ('region-00','region-01','region-02','region-03','region-04','region-05','region-06','region-07','region-08','region-09','region-10')", &|r| r[1].as_str() < Some("region-11"), 1500),
        ];
        for (filter, keep, devices) in cases {
            let want: Vec<Vec<Value>> = expected.iter().filter(|r| keep(r)).cloned().collect();
            assert!(!want.is_empty(), "{filter}");
            let sql = format!("{SELECT_ALL} WHERE {filter} ORDER BY 3, 1");
            for partial in [true, false] {
                let c = register(partial).await;
                let (b, plan) = run(&c, &sql).await;
                assert_eq!(rows_of(&b), want, "{filter} (partial view: {partial})");
                if partial {
                    assert_eq!(metric(&plan, "devices_total"), devices, "{filter}");
                }
                let agg = format!(
                    "SELECT device, count(*), count(temperature), sum(reading), min(label) FROM fleet WHERE {filter} GROUP BY device ORDER BY device"
                );
                let got = rows_of(&c.sql(&agg).await.unwrap().collect().await.unwrap());
                let mut by_device: std::collections::BTreeMap<String, (i64, i64, i64, Option<String>)> = Default::default();
                for r in &want {
                    let e = by_device.entry(r[2].as_str().unwrap().to_string()).or_default();
                    e.0 += 1;
                    e.1 += i64::from(!r[3].is_null());
                    e.2 += r[4].as_i64().unwrap();
                    if let Some(l) = r[5].as_str() {
                        e.3 = Some(e.3.take().map_or(l.to_string(), |m: String| m.min(l.to_string())));
                    }
                }
                let want_agg: Vec<Vec<Value>> = by_device
                    .into_iter()
                    .map(|(d, (n, t, s, l))| vec![json!(d), json!(n), json!(t), json!(s), l.map_or(Value::Null, |l| json!(l))])
                    .collect();
                assert_eq!(got, want_agg, "{agg} (partial view: {partial})");
            }
        }
    });
    std::fs::remove_file(&path).unwrap();
}

/// A chunk header longer than the first window fetched for it (a 6,000-character field
/// name) is fetched again with a wider one.
#[test]
fn test_partial_view_reads_chunk_headers_of_long_names() {
    let long = "f".repeat(6_000);
    let devices: Vec<Device> = (0..3)
        .map(|d| Device::Aligned {
            segments: vec!["t".into(), format!("d{d}")],
            times: (0..5).map(|i| i * 10 + d).collect(),
            columns: vec![(long.clone(), INT64, (0..5).map(|i| Some(Val::I64(i * 100 + d))).collect())],
        })
        .collect();
    let table = Table { name: "t".into(), tags: vec!["device".into()], fields: vec![(long.clone(), INT64)] };
    let path = std::env::temp_dir().join(format!("tsfile-fleet-longname-{}.tsfile", std::process::id()));
    std::fs::write(&path, write_tsfile(&devices, &[table], 2)).unwrap();
    block_on(async {
        let c = ctx(1, 64);
        let opts = TsFileReadOptions { statistics_max_index_bytes: 0, ..Default::default() };
        register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await.unwrap();
        let sql = format!("SELECT CAST(time AS BIGINT), \"{long}\" FROM t WHERE device = 'd1' ORDER BY 1");
        let got = rows_of(&c.sql(&sql).await.unwrap().collect().await.unwrap());
        let want: Vec<Vec<Value>> = (0..5).map(|i| vec![json!(i * 10 + 1), json!(i * 100 + 1)]).collect();
        assert_eq!(got, want);
    });
    std::fs::remove_file(&path).unwrap();
}

/// 20,000 devices of 3 rows, planned without file statistics (as a file of a very large
/// index is) and with them: a full scan, the aggregates answered from series statistics and
/// a one-device lookup equal what the test wrote.
#[test]
fn test_twenty_thousand_devices_with_and_without_planning_statistics() {
    const N: i64 = 20_000;
    let devices: Vec<Device> = (0..N)
        .map(|d| Device::Aligned {
            segments: vec!["big".into(), format!("r{:02}", d % 16), format!("d{d:05}")],
            times: (0..3).map(|i| d + i * 1_000_000).collect(),
            columns: vec![("v".into(), INT64, (0..3).map(|i| Some(Val::I64(d * 3 + i))).collect())],
        })
        .collect();
    let table = Table { name: "big".into(), tags: vec!["region".into(), "device".into()], fields: vec![("v".into(), INT64)] };
    let path = std::env::temp_dir().join(format!("tsfile-fleet-20k-{}.tsfile", std::process::id()));
    std::fs::write(&path, write_tsfile(&devices, &[table], 2)).unwrap();
    let sum: i64 = (0..N * 3).sum();
    block_on(async {
        for max_index in [0, u64::MAX] {
            let c = ctx(2, 8192);
            let opts = TsFileReadOptions { statistics_max_index_bytes: max_index, ..Default::default() };
            register_tsfile(&c, "big", &[path.to_str().unwrap()], opts).await.unwrap();
            let q = |sql: &'static str| {
                let c = c.clone();
                async move { rows_of(&c.sql(sql).await.unwrap().collect().await.unwrap()) }
            };
            let scanned = q("SELECT count(*), count(DISTINCT device), sum(v + 0), min(CAST(time AS BIGINT) + 0), max(CAST(time AS BIGINT) + 0) FROM big").await;
            assert_eq!(
                scanned,
                vec![vec![json!(N * 3), json!(N), json!(sum), json!(0), json!(N - 1 + 2_000_000)]],
                "{max_index}"
            );
            let from_statistics = q("SELECT count(*), sum(v), min(v), max(v) FROM big").await;
            assert_eq!(from_statistics, vec![vec![json!(N * 3), json!(sum), json!(0), json!(N * 3 - 1)]], "{max_index}");
            let one = q("SELECT CAST(time AS BIGINT), v FROM big WHERE region = 'r07' AND device = 'd12343' ORDER BY 1").await;
            let want: Vec<Vec<Value>> = (0..3).map(|i| vec![json!(12_343 + i * 1_000_000), json!(12_343 * 3 + i)]).collect();
            assert_eq!(one, want, "{max_index}");
        }
    });
    std::fs::remove_file(&path).unwrap();
}
