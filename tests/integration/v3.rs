//! Version-3 TsFiles (IoTDB 1.x): the Java implementation's fixture and files built by the
//! test-only v3 writer (`writer_v3`), read through the library, the SQL tree tables, the
//! forward scan and `tsfile_metadata()`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileMetadataFunc, TsFileReadOptions};
use datafusion_tsfile::format::chunk::ChunkHeaderSuffix;
use datafusion_tsfile::format::scan::scan_data_section;
use datafusion_tsfile::format::{DeviceId, Encoding, TsDataType, ValueStatistics};
use datafusion_tsfile::{TsFile, TsFileError, TsFileOptions};
use serde_json::{json, Value};

use crate::common::repo_path;
use crate::conformance::cell;
use crate::sql::{block_on, ctx, rows_of, run};
use crate::writer_v3::{
    write_v3, Bloom, Dev, Layout, Series, BOOLEAN, DOUBLE, FLOAT, GZIP, INT32, INT64, LZ4, SNAPPY, TEXT, UNCOMPRESSED, V, ZSTD,
};

const FIXTURE: &str = "tests/data/v3/v3TsFile.tsfile";

fn lib_opts() -> TsFileOptions {
    let mut o = TsFileOptions { time_unit: TimeUnit::Raw, ..Default::default() };
    o.read.nonaligned_time_encoding = Encoding::Plain;
    o
}

fn sql_opts(table: &str) -> TsFileReadOptions {
    let mut o = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw).with_table(table);
    o.read.nonaligned_time_encoding = Encoding::Plain;
    o
}

fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("tsfile-v3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.tsfile"));
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

fn rows(b: &RecordBatch) -> Vec<Vec<Value>> {
    rows_of(std::slice::from_ref(b))
}

fn jv(v: &V) -> Value {
    match v {
        V::Bool(x) => json!(x),
        V::I32(x) => json!(x),
        V::I64(x) => json!(x),
        V::F32(x) => json!(format!("f32:{:08x}", x.to_bits())),
        V::F64(x) => json!(format!("f64:{:016x}", x.to_bits())),
        V::Text(s) => json!(s),
    }
}

/// The rows `read_tree_device` must return for a device: `time`, then the measurements
/// sorted by name, on the union of the timestamps.
fn expected_rows(d: &Dev) -> Vec<Vec<Value>> {
    let mut out: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    match d {
        Dev::NonAligned { series, .. } => {
            let mut series: Vec<&Series> = series.iter().collect();
            series.sort_by(|a, b| a.0.cmp(&b.0));
            for (i, (_, _, points)) in series.iter().enumerate() {
                for (t, v) in points {
                    out.entry(*t).or_insert_with(|| vec![Value::Null; series.len()])[i] = jv(v);
                }
            }
        }
        Dev::Aligned { times, columns, .. } => {
            let mut columns: Vec<_> = columns.iter().collect();
            columns.sort_by(|a, b| a.0.cmp(&b.0));
            for (r, t) in times.iter().enumerate() {
                out.insert(*t, columns.iter().map(|c| c.2[r].as_ref().map_or(Value::Null, jv)).collect());
            }
        }
    }
    out.into_iter()
        .map(|(t, vals)| {
            let mut row = vec![json!(t)];
            row.extend(vals);
            row
        })
        .collect()
}

fn path_of(d: &Dev) -> &str {
    match d {
        Dev::NonAligned { path, .. } | Dev::Aligned { path, .. } => path,
    }
}

/// Read every device of `file` through the library and compare with what was written.
fn check_library(file: &TsFile, devices: &[Dev]) {
    for d in devices {
        let id = DeviceId::from_tree_path(path_of(d));
        let b = file.read_tree_device(&id, None, None).unwrap_or_else(|e| panic!("{}: {e}", path_of(d)));
        assert_eq!(rows(&b), expected_rows(d), "device {}", path_of(d));
    }
}

// ---- the Java fixture ----

#[test]
fn test_v3_fixture_library_values_and_metadata() {
    // The fixture's non-aligned time streams are TS_2DIFF, the default.
    let f = TsFile::open_with(repo_path(FIXTURE), TsFileOptions { time_unit: TimeUnit::Raw, ..Default::default() }).unwrap();
    let md = f.structure().metadata();
    assert_eq!(md.version, 3);
    assert_eq!(md.meta_offset, 100);
    assert!(md.table_schemas.is_empty() && md.properties.is_empty());
    assert!(f.table_names().is_empty());
    assert_eq!(f.tree_prefixes(), ["d1", "d2"]);
    assert_eq!(f.devices("d1").unwrap(), [DeviceId::from_strs(&["d1"])]);
    assert_eq!(f.devices("d2").unwrap(), [DeviceId::from_strs(&["d2"])]);
    // d1: one row at 10000, s1 FLOAT 5.0 and s2 INT32 5.
    let d1 = f.read_tree_device(&DeviceId::from_strs(&["d1"]), None, None).unwrap();
    let schema = d1.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["time", "s1", "s2"]);
    assert_eq!(rows(&d1), [vec![json!(10000), jv(&V::F32(5.0)), json!(5)]]);
    // d2: s1 is an aligned TEXT value column (0x40) without a time column; its only chunk
    // (marker 0x45, LZ4, PLAIN) holds no data and its statistics count 0 points.
    let d2 = f.read_tree_device(&DeviceId::from_strs(&["d2"]), None, None).unwrap();
    let schema = d2.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["time", "s1"]);
    assert_eq!(d2.num_rows(), 0);
    let r = f.structure();
    let e2 = r.find_device(&DeviceId::from_strs(&["d2"])).unwrap().unwrap();
    let s = r.series(&e2).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].timeseries_type, s[0].measurement.as_str(), s[0].data_type), (0x40, "s1", TsDataType::Text));
    assert_eq!((s[0].statistics.count, s[0].chunks[0].offset), (0, 92));
    let h = r.read_chunk_header(92).unwrap();
    assert_eq!((h.marker, h.data_size, h.compression, h.encoding), (0x45, 0, 7, 0));
    // d1's statistics agree with the values.
    let e1 = r.find_device(&DeviceId::from_strs(&["d1"])).unwrap().unwrap();
    let s1 = r.find_series(&e1, "s1").unwrap().unwrap();
    assert_eq!(
        (s1.data_type, s1.statistics.count, s1.statistics.start_time, s1.chunks[0].offset),
        (TsDataType::Float, 1, 10000, 11)
    );
    assert_eq!(s1.statistics.values, ValueStatistics::Float { min: 5.0, max: 5.0, first: 5.0, last: 5.0, sum: 5.0 });
    let s2 = r.find_series(&e1, "s2").unwrap().unwrap();
    assert_eq!(s2.statistics.values, ValueStatistics::Int32 { min: 5, max: 5, first: 5, last: 5, sum: 5 });
    assert_eq!(r.read_chunk_header(11).unwrap().compression, 1); // SNAPPY
                                                                 // The bloom filter (256 bits, 5 hash functions) holds the three series.
    let bf = md.bloom_filter.as_ref().unwrap();
    assert_eq!((bf.size_bits, bf.hash_functions), (256, 5));
    for (d, m) in [("d1", "s1"), ("d1", "s2"), ("d2", "s1")] {
        assert!(bf.may_contain(d, m), "{d}.{m}");
    }
    let shape = r.index_shape().unwrap();
    assert_eq!((shape.internal_device_nodes, shape.device_levels, shape.measurement_levels), (0, 1, 1));
}

#[test]
fn test_v3_fixture_sql_tree_tables() {
    block_on(async {
        let c = ctx(2);
        let opts = |t: &str| TsFileReadOptions::default().with_time_unit(TimeUnit::Raw).with_table(t);
        register_tsfile(&c, "d1", &[repo_path(FIXTURE).to_str().unwrap()], opts("d1")).await.unwrap();
        register_tsfile(&c, "d2", &[repo_path(FIXTURE).to_str().unwrap()], opts("d2")).await.unwrap();
        let (b, _) = run(&c, "SELECT time, device, s1, s2 FROM d1").await;
        assert_eq!(rows_of(&b), [vec![json!(10000), json!("d1"), jv(&V::F32(5.0)), json!(5)]]);
        let (b, _) = run(&c, "SELECT count(*), sum(s2), max(s1) FROM d1").await;
        assert_eq!(rows_of(&b), [vec![json!(1), json!(5), jv(&V::F32(5.0))]]);
        let (b, _) = run(&c, "SELECT count(*), count(s1) FROM d2").await;
        assert_eq!(rows_of(&b), [vec![json!(0), json!(0)]]);
    });
}

#[test]
fn test_v3_fixture_scan_and_metadata_function() {
    let bytes = Bytes::from(std::fs::read(repo_path(FIXTURE)).unwrap());
    let report = scan_data_section(&bytes, ChunkHeaderSuffix::None).unwrap();
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_eq!(report.separator_offset, Some(100));
    let groups: Vec<(u64, String, Vec<String>)> = report
        .chunk_groups
        .iter()
        .map(|g| (g.offset, g.device.path(), g.chunks.iter().map(|c| c.header.measurement.clone()).collect()))
        .collect();
    assert_eq!(groups, [(7, "d1".into(), vec!["s1".into(), "s2".into()]), (88, "d2".into(), vec!["s1".into()])]);
    assert_eq!(report.chunk_groups[1].chunks[0].pages, 0);
    block_on(async {
        let c = ctx(1);
        c.register_udtf("tsfile_metadata", Arc::new(TsFileMetadataFunc));
        let sql = format!(
            "SELECT \"table\", device, measurement, category, data_type, aligned, compression, chunk_count, point_count, start_time, min_value, max_value \
             FROM tsfile_metadata('{}') ORDER BY device, measurement",
            repo_path(FIXTURE).display()
        );
        let (b, _) = run(&c, &sql).await;
        // The format version is a column too: 3 here, 4 for the v4 sample.
        // So is the writer the footer names, with its evidence: only Java wrote version 3;
        // the sample is C++-written, the Java corpus Java-written.
        let v =
            format!("SELECT DISTINCT version, writer, writer_evidence FROM tsfile_metadata('{}')", repo_path(FIXTURE).display());
        assert_eq!(
            rows_of(&run(&c, &v).await.0),
            [vec![json!(3), json!("java"), json!("version 3 file (only the Java writer of IoTDB 1.x writes version 3)")]]
        );
        let v = format!(
            "SELECT DISTINCT version, writer, writer_evidence FROM tsfile_metadata('{}')",
            repo_path("data/sample.tsfile").display()
        );
        let cpp = json!("property encryptKey stored without a value (the C++ writer)");
        assert_eq!(rows_of(&run(&c, &v).await.0), [vec![json!(4), json!("cpp"), cpp]]);
        let v = format!("SELECT DISTINCT writer FROM tsfile_metadata('{}')", repo_path("tests/data/java").display());
        assert_eq!(rows_of(&run(&c, &v).await.0), [vec![json!("java")]]);
        assert_eq!(
            rows_of(&b),
            [
                vec![
                    json!("d1"),
                    json!("d1"),
                    json!("s1"),
                    json!("FIELD"),
                    json!("FLOAT"),
                    json!(false),
                    json!("SNAPPY"),
                    json!(1),
                    json!(1),
                    json!(10000),
                    json!("5"),
                    json!("5")
                ],
                vec![
                    json!("d1"),
                    json!("d1"),
                    json!("s2"),
                    json!("FIELD"),
                    json!("INT32"),
                    json!(false),
                    json!("SNAPPY"),
                    json!(1),
                    json!(1),
                    json!(10000),
                    json!("5"),
                    json!("5")
                ],
                vec![
                    json!("d2"),
                    json!("d2"),
                    json!("s1"),
                    json!("FIELD"),
                    json!("TEXT"),
                    json!(true),
                    json!("LZ4"),
                    json!(1),
                    json!(0),
                    json!(i64::MAX),
                    Value::Null,
                    Value::Null
                ],
            ]
        );
    });
}

// ---- errors ----

#[test]
fn test_v3_unknown_version_bytes_are_clear_errors() {
    let good = std::fs::read(repo_path(FIXTURE)).unwrap();
    for v in [0x00u8, 0x01, 0x02, 0x05, 0x33, 0xff] {
        let mut b = good.clone();
        b[6] = v;
        let e = TsFile::from_bytes(Bytes::from(b)).unwrap_err();
        assert!(matches!(e.root(), TsFileError::Unsupported { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(&format!("TsFile version byte 0x{v:02x}")) && msg.contains("versions 3 and 4"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}

#[test]
fn test_v3_cut_mid_chunk_is_a_one_line_error_naming_the_offset() {
    let good = std::fs::read(repo_path(FIXTURE)).unwrap();
    // The fixture's first chunk (d1.s1) starts at 11 and ends at 51; cut inside it.
    let cut = Bytes::from(good[..30].to_vec());
    let e = TsFile::from_bytes(cut.clone()).unwrap_err();
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.contains("at offset 24") && msg.contains("tail magic"), "{msg}");
    // The forward scan names the chunk and where it starts.
    let report = scan_data_section(&cut, ChunkHeaderSuffix::None).unwrap();
    let err = report.error.unwrap().to_string();
    assert_eq!(err, "truncated chunk 's1' at offset 11: needs 40 bytes, 19 available");
    assert_eq!(report.last_good_offset, 11);
    assert_eq!(report.chunk_groups.len(), 1);
    // A written file cut in the middle of its third chunk.
    let devices = nonaligned_devices();
    let bytes = write_v3(&devices, &Layout::default());
    let scan = scan_data_section(&Bytes::from(bytes.clone()), ChunkHeaderSuffix::None).unwrap();
    let third = scan.chunk_groups[0].chunks[2].header.offset as usize;
    let cut = Bytes::from(bytes[..third + 40].to_vec());
    let msg = TsFile::from_bytes(cut.clone()).unwrap_err().to_string();
    assert!(!msg.contains('\n') && msg.contains(&format!("at offset {}", third + 34)), "{msg}");
    let report = scan_data_section(&cut, ChunkHeaderSuffix::None).unwrap();
    let err = report.error.unwrap().to_string();
    assert!(err.starts_with("truncated chunk") && err.contains(&format!("at offset {third}")), "{err}");
}

// ---- written files ----

fn nonaligned_devices() -> Vec<Dev> {
    let f = |n: i64| (0..n).map(|i| (1000 + i * 10, V::F64(i as f64 * 0.5 - 3.0))).collect::<Vec<_>>();
    vec![
        Dev::NonAligned {
            path: "root.sg.d1".into(),
            series: vec![
                ("temperature".into(), DOUBLE, f(17)),
                ("status".into(), BOOLEAN, (0..9).map(|i| (1000 + i * 20, V::Bool(i % 3 == 0))).collect()),
                ("count".into(), INT64, (0..12).map(|i| (1005 + i * 10, V::I64(i * i - 40))).collect()),
            ],
        },
        Dev::NonAligned {
            path: "root.sg.d2".into(),
            series: vec![
                ("level".into(), INT32, (0..8).map(|i| (2000 + i, V::I32(-(i as i32) * 7))).collect()),
                ("note".into(), TEXT, (0..10).map(|i| (2000 + i * 2, V::Text(format!("n{i}-é")))).collect()),
                ("ratio".into(), FLOAT, (0..5).map(|i| (2001 + i * 3, V::F32(i as f32 / 4.0))).collect()),
            ],
        },
        Dev::NonAligned {
            path: "root.other.x.y".into(),
            series: vec![("v".into(), INT32, vec![(5, V::I32(1)), (6, V::I32(2))])],
        },
        Dev::NonAligned {
            path: "solo".into(),
            series: vec![("v".into(), INT64, vec![(1, V::I64(i64::MAX)), (2, V::I64(i64::MIN))])],
        },
    ]
}

fn aligned_devices() -> Vec<Dev> {
    let times: Vec<i64> = (0..20).map(|i| 100 + i * 5).collect();
    vec![
        Dev::Aligned {
            path: "root.sg.al".into(),
            columns: vec![
                // Rows 3..=5 null: with pages of 3 rows, page 1 is the empty page.
                ("a".into(), INT32, (0..20).map(|i| (!(3..=5).contains(&i)).then_some(V::I32(i * 3))).collect()),
                ("b".into(), TEXT, (0..20).map(|i| (i % 2 == 0).then(|| V::Text(format!("t{i}")))).collect()),
                ("c".into(), DOUBLE, (0..20).map(|i| Some(V::F64(i as f64 / 8.0))).collect()),
            ],
            times,
        },
        Dev::Aligned {
            path: "root.sg.a2".into(),
            times: vec![7, 8, 9],
            columns: vec![("a".into(), INT32, vec![Some(V::I32(1)), None, Some(V::I32(3))])],
        },
    ]
}

#[test]
fn test_v3_written_nonaligned_every_compression() {
    let devices = nonaligned_devices();
    for codec in [UNCOMPRESSED, SNAPPY, GZIP, LZ4, ZSTD] {
        let layout = Layout { compression: codec, ..Layout::default() };
        let bytes = write_v3(&devices, &layout);
        let f = TsFile::from_source(Box::new(Bytes::from(bytes)), format!("nonaligned-{codec}"), lib_opts()).unwrap();
        assert_eq!(f.tree_prefixes(), ["root.other.x", "root.sg", "solo"], "codec {codec}");
        assert_eq!(
            f.devices("root.sg").unwrap(),
            [DeviceId::from_strs(&["root.sg", "d1"]), DeviceId::from_strs(&["root.sg", "d2"])]
        );
        assert_eq!(f.devices("root.other.x").unwrap(), [DeviceId::from_strs(&["root.other.x", "y"])]);
        check_library(&f, &devices);
        // temperature: 17 points in chunks of 7 -> 3 chunks, pages of 3 -> 3 + 3 + 1 pages.
        let r = f.structure();
        let d1 = r.find_device(&DeviceId::from_strs(&["root.sg", "d1"])).unwrap().unwrap();
        let t = r.find_series(&d1, "temperature").unwrap().unwrap();
        assert_eq!((t.chunks.len(), t.statistics.count, t.has_multiple_chunks()), (3, 17, true));
        assert_eq!(t.chunks.iter().map(|c| c.statistics.count).collect::<Vec<_>>(), [7, 7, 3]);
        assert_eq!(t.statistics.values, ValueStatistics::Double { min: -3.0, max: 5.0, first: -3.0, last: 5.0, sum: 17.0 });
        let pages: Vec<Vec<(u64, i64, i64)>> = t
            .chunks
            .iter()
            .map(|c| {
                let chunk = r.read_chunk(c.offset).unwrap();
                assert_eq!(chunk.header.compression, codec);
                datafusion_tsfile::format::chunk::PageIter::new(&chunk.header, &chunk.data)
                    .unwrap()
                    .map(|p| {
                        let s = p.unwrap().header.statistics;
                        s.map_or((0, 0, 0), |s| (s.count, s.start_time, s.end_time))
                    })
                    .collect()
            })
            .collect();
        assert_eq!(pages[0], [(3, 1000, 1020), (3, 1030, 1050), (1, 1060, 1060)]);
        // The last chunk has one page: marker 0x05, no page statistics.
        assert_eq!(pages[2], [(0, 0, 0)]);
        assert_eq!(r.read_chunk_header(t.chunks[2].offset).unwrap().marker, 0x05);
        // A time range read.
        let b =
            f.read_tree_device(&DeviceId::from_strs(&["root.sg", "d2"]), Some(&["ratio", "level"]), Some((2003, 2007))).unwrap();
        assert_eq!(
            rows(&b),
            [
                vec![json!(2003), Value::Null, json!(-21)],
                vec![json!(2004), jv(&V::F32(0.25)), json!(-28)],
                vec![json!(2005), Value::Null, json!(-35)],
                vec![json!(2006), Value::Null, json!(-42)],
                vec![json!(2007), jv(&V::F32(0.5)), json!(-49)],
            ]
        );
    }
}

#[test]
fn test_v3_written_aligned_devices_library_and_sql() {
    let mut devices = aligned_devices();
    devices.extend(nonaligned_devices());
    for codec in [UNCOMPRESSED, ZSTD] {
        let layout = Layout { compression: codec, bloom: Bloom::Empty, ..Layout::default() };
        let bytes = write_v3(&devices, &layout);
        let f = TsFile::from_source(Box::new(Bytes::from(bytes.clone())), "aligned".into(), lib_opts()).unwrap();
        assert!(f.structure().metadata().bloom_filter.is_none());
        check_library(&f, &devices);
        let r = f.structure();
        let al = r.find_device(&DeviceId::from_strs(&["root.sg", "al"])).unwrap().unwrap();
        let series = r.series(&al).unwrap();
        let names: Vec<(&str, u8, usize)> =
            series.iter().map(|s| (s.measurement.as_str(), s.timeseries_type, s.chunks.len())).collect();
        assert_eq!(names, [("", 0x81, 3), ("a", 0x41, 3), ("b", 0x41, 3), ("c", 0x41, 3)]);
        assert!(series[0].is_aligned_time());
        // Column a's first chunk: pages of rows 0-2, 3-5 (all null: the empty page), 6.
        let a = r.read_chunk(series[1].chunks[0].offset).unwrap();
        let empty: Vec<bool> = datafusion_tsfile::format::chunk::PageIter::new(&a.header, &a.data)
            .unwrap()
            .map(|p| p.unwrap().header.is_empty_value_page)
            .collect();
        assert_eq!(empty, [false, true, false]);
        let path = temp_file(&format!("aligned-{codec}"), &bytes);
        block_on(async {
            let c = ctx(2);
            register_tsfile(&c, "t", &[&path], sql_opts("root.sg")).await.unwrap();
            let (b, _) = run(&c, "SELECT device, count(*), count(a), count(b), count(c), count(temperature) FROM t GROUP BY device ORDER BY device").await;
            assert_eq!(
                rows_of(&b),
                [
                    vec![json!("root.sg.a2"), json!(3), json!(2), json!(0), json!(0), json!(0)],
                    vec![json!("root.sg.al"), json!(20), json!(17), json!(10), json!(20), json!(0)],
                    vec![json!("root.sg.d1"), json!(29), json!(0), json!(0), json!(0), json!(17)],
                    vec![json!("root.sg.d2"), json!(15), json!(0), json!(0), json!(0), json!(0)],
                ]
            );
            let (b, _) =
                run(&c, "SELECT time, a, b, c FROM t WHERE device = 'root.sg.al' AND time BETWEEN 110 AND 130 ORDER BY time")
                    .await;
            assert_eq!(
                rows_of(&b),
                [
                    vec![json!(110), json!(6), json!("t2"), jv(&V::F64(0.25))],
                    vec![json!(115), Value::Null, Value::Null, jv(&V::F64(0.375))],
                    vec![json!(120), Value::Null, json!("t4"), jv(&V::F64(0.5))],
                    vec![json!(125), Value::Null, Value::Null, jv(&V::F64(0.625))],
                    vec![json!(130), json!(18), json!("t6"), jv(&V::F64(0.75))],
                ]
            );
            let (b, _) = run(&c, "SELECT sum(a), min(c), max(level), min(note) FROM t").await;
            assert_eq!(rows_of(&b), [vec![json!(538), jv(&V::F64(0.0)), json!(0), json!("n0-é")]]);
        });
    }
}

/// Many devices and measurements with 3 entries per index node: internal device and
/// measurement nodes over several levels.
fn wide_devices(n: usize, name_pad: usize) -> Vec<Dev> {
    (0..n)
        .map(|i| {
            let path = format!("root.g{}.{}{:0pad$}", i % 3, "dev_", i, pad = name_pad);
            let m = if i == 5 { 40 } else { 1 + i % 4 };
            Dev::NonAligned {
                path,
                series: (0..m)
                    .map(|j| {
                        (
                            format!("m{j:02}"),
                            INT64,
                            vec![(i as i64, V::I64((i * 100 + j) as i64)), (1_000_000, V::I64(-(j as i64)))],
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

#[test]
fn test_v3_written_index_with_internal_nodes() {
    let devices = wide_devices(60, 3);
    let layout = Layout { max_degree: 3, ..Layout::default() };
    let bytes = write_v3(&devices, &layout);
    let f = TsFile::from_source(Box::new(Bytes::from(bytes.clone())), "wide".into(), lib_opts()).unwrap();
    let r = f.structure();
    let shape = r.index_shape().unwrap();
    // 60 devices, 3 per node: 20 leaves, then 7, 3 and 1 internal nodes (4 levels of
    // internal nodes above the leaves); device 5 has 40 measurements: 14 runs of 3, 5
    // leaves, 2 + 1 internal nodes.
    assert_eq!(r.metadata().v3_device_index.unwrap().devices, 60);
    assert_eq!((shape.internal_device_nodes, shape.device_levels), (7 + 3 + 1, 4));
    assert_eq!((shape.internal_measurement_nodes, shape.measurement_levels), (3, 3));
    assert_eq!(f.tree_prefixes(), ["root.g0", "root.g1", "root.g2"]);
    for g in 0..3 {
        let ds = f.devices(&format!("root.g{g}")).unwrap();
        assert_eq!(ds.len(), 20);
        assert!(ds.windows(2).all(|w| w[0] < w[1]));
    }
    check_library(&f, &devices);
    let d5 = r.find_device(&DeviceId::from_strs(&["root.g2", "dev_005"])).unwrap().unwrap();
    for j in [0usize, 2, 3, 26, 39] {
        let s = r.find_series(&d5, &format!("m{j:02}")).unwrap().unwrap();
        assert_eq!(
            s.statistics.values,
            ValueStatistics::Int64 {
                min: -(j as i64),
                max: 500 + j as i64,
                first: 500 + j as i64,
                last: -(j as i64),
                sum: 500.0
            }
        );
    }
    assert!(r.find_series(&d5, "m40").unwrap().is_none());
    assert!(r.find_device(&DeviceId::from_strs(&["root.g2", "dev_006"])).unwrap().is_none());
    let path = temp_file("wide", &bytes);
    block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "t", &[&path], sql_opts("root.g2")).await.unwrap();
        let (b, _) = run(&c, "SELECT count(DISTINCT device), count(*), sum(m00), sum(m39) FROM t").await;
        let sum: i64 = (0..60).filter(|i| i % 3 == 2).map(|i| i * 100).sum();
        assert_eq!(rows_of(&b), [vec![json!(20), json!(40), json!(sum), json!(500)]]);
        let (b, _) = run(&c, "SELECT time, m00, m03 FROM t WHERE device = 'root.g2.dev_005' ORDER BY time").await;
        assert_eq!(rows_of(&b), [vec![json!(5), json!(500), json!(503)], vec![json!(1_000_000), json!(0), json!(-3)]]);
    });
}

#[test]
fn test_v3_written_large_device_index_through_object_store() {
    // The device levels (about 100 KB here) do not fit the 64 KiB tail prefetch of the
    // object-store open path.
    let devices = wide_devices(1500, 60);
    let bytes = write_v3(&devices, &Layout { max_degree: 256, ..Layout::default() });
    let path = temp_file("large-index", &bytes);
    block_on(async {
        let c = ctx(2);
        c.register_udtf("tsfile_metadata", Arc::new(TsFileMetadataFunc));
        let (b, _) =
            run(&c, &format!("SELECT count(DISTINCT device), count(*), sum(point_count) FROM tsfile_metadata('{path}')")).await;
        let series: usize = (0..1500).map(|i| if i == 5 { 40 } else { 1 + i % 4 }).sum();
        assert_eq!(rows_of(&b), [vec![json!(1500), json!(series), json!(series * 2)]]);
        register_tsfile(&c, "t", &[&path], sql_opts("root.g1")).await.unwrap();
        let (b, _) = run(&c, "SELECT count(DISTINCT device), count(*) FROM t").await;
        assert_eq!(rows_of(&b), [vec![json!(500), json!(1000)]]);
    });
    let _ = cell;
}
