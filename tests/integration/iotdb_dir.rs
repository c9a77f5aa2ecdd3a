//! IoTDB data directories read with `datadir` (library) against an oracle written here: rows
//! as IoTDB defines them — per (device, time) and per column the value of the
//! highest-priority file (unsequence over sequence, then version, then the time in the name;
//! a later chunk of one file over an earlier one) that is not null, each file's deletions
//! applied to its own rows first. Directories are generated from seeds: several partitions,
//! sequence and unsequence files overlapping partly and fully, devices spread over several
//! chunk groups of one file, nulls, `.mods2` deletions of whole rows and of columns for one
//! device, a TAG value or all devices, files with and without `.resource`, a file still being
//! written, and files that are not data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema, TimeUnit, TimestampMillisecondType};
use datafusion_tsfile::datadir::DataDirReader;
use datafusion_tsfile::datafusion::register_tsfile_format;
use datafusion_tsfile::format::DeviceId;
use datafusion_tsfile::iotdb::companions::{mods2_bytes, resource_bytes};
use datafusion_tsfile::iotdb::{Deletion, DeletionTarget, DeviceTimes, TagPredicate};
use datafusion_tsfile::plan::TagFilter;
use datafusion_tsfile::writer::{TsFileWriter, TsFileWriterOptions};
use datafusion_tsfile::{TableRead, TsFileOptions};

use crate::sql::{block_on, ctx};

/// A row as the oracle and the reader give it: device, time, a, b (b as bits, so NaN compares).
type Row = (String, i64, Option<i64>, Option<u64>);

/// A generated point: device, time, a, b.
type Point = (usize, i64, Option<i64>, Option<f64>);

/// splitmix64: a small deterministic generator, so a failing seed reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One deletion as the oracle sees it.
#[derive(Debug, Clone)]
struct Del {
    /// `None`: every device; `Some(k)`: device `d{k}`.
    device: Option<usize>,
    /// By a TAG-value predicate (`Segment`) instead of the device id.
    by_tag: bool,
    /// Deleted columns; empty = whole rows.
    columns: Vec<&'static str>,
    start: i64,
    end: i64,
}

impl Del {
    fn to_deletion(&self) -> Deletion {
        let tags = match (self.device, self.by_tag) {
            (None, _) => TagPredicate::All,
            (Some(k), false) => TagPredicate::Device(device_id(k)),
            (Some(k), true) => TagPredicate::Segment { index: 1, value: Some(format!("d{k}")) },
        };
        Deletion {
            target: DeletionTarget::Table {
                table: "t".into(),
                tags,
                measurements: self.columns.iter().map(|c| c.to_string()).collect(),
            },
            start: self.start,
            end: self.end,
            file_offset: None,
        }
    }
    fn hits(&self, device: usize, time: i64) -> bool {
        self.device.is_none_or(|d| d == device) && self.start <= time && time <= self.end
    }
}

/// One generated data file: its place, its chunks (each a flush: rows of several devices),
/// its deletions.
#[derive(Debug)]
struct GenFile {
    unsequence: bool,
    partition: i64,
    version: i64,
    name_time: i64,
    /// Flushes, each: (device, time, a, b).
    flushes: Vec<Vec<Point>>,
    deletions: Vec<Del>,
    resource: bool,
}

impl GenFile {
    fn path(&self, root: &Path) -> PathBuf {
        let space = if self.unsequence { "unsequence" } else { "sequence" };
        root.join(space)
            .join("root.db")
            .join("1")
            .join(self.partition.to_string())
            .join(format!("{}-{}-0-0.tsfile", self.name_time, self.version))
    }
}

fn device_id(k: usize) -> DeviceId {
    DeviceId::new(vec![Some("t".into()), Some(format!("d{k}"))])
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("time", DataType::Timestamp(TimeUnit::Millisecond, None), false),
        Field::new("dev", DataType::Utf8, true),
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Float64, true),
    ]))
}

/// Generate the files of one directory.
fn generate(seed: u64) -> Vec<GenFile> {
    let mut rng = Rng(seed);
    let partitions = 1 + rng.below(3) as i64;
    let mut files = Vec::new();
    let mut version = 1;
    for p in 0..partitions {
        let n = 1 + rng.below(5);
        for _ in 0..n {
            let unsequence = rng.chance(40);
            let mut flushes = Vec::new();
            // Each flush's rows of a device come after the earlier flushes' (as IoTDB writes).
            let mut next_time = [0i64; 4];
            let base = p * 1000;
            for _ in 0..1 + rng.below(3) {
                let mut rows = Vec::new();
                for (dev, next) in next_time.iter_mut().enumerate() {
                    if !rng.chance(60) {
                        continue;
                    }
                    let mut t = (*next).max(rng.below(40) as i64);
                    for _ in 0..rng.below(30) {
                        t += 1 + rng.below(4) as i64;
                        if t >= 1000 {
                            break;
                        }
                        let a = (!rng.chance(15)).then(|| rng.below(1000) as i64 - 500);
                        let b = (!rng.chance(15)).then(|| match rng.below(20) {
                            0 => f64::NAN,
                            1 => f64::INFINITY,
                            _ => rng.below(10_000) as f64 / 8.0,
                        });
                        rows.push((dev, base + t, a, b));
                    }
                    *next = t + 1;
                }
                if !rows.is_empty() {
                    flushes.push(rows);
                }
            }
            if flushes.is_empty() {
                continue;
            }
            let mut deletions = Vec::new();
            for _ in 0..rng.below(3) {
                let start = p * 1000 + rng.below(120) as i64 - 10;
                let columns: Vec<&'static str> = match rng.below(4) {
                    0 => vec!["a"],
                    1 => vec!["b"],
                    2 => vec!["a", "b"],
                    _ => vec![],
                };
                deletions.push(Del {
                    device: (!rng.chance(30)).then(|| rng.below(4) as usize),
                    by_tag: rng.chance(50),
                    columns,
                    start,
                    end: start + rng.below(40) as i64,
                });
            }
            if rng.chance(15) {
                // All of one device's rows in this file, deleted: the file is not read for it.
                let device = Some(rng.below(4) as usize);
                deletions.push(Del { device, by_tag: false, columns: vec![], start: p * 1000 - 5, end: p * 1000 + 1000 });
            }
            files.push(GenFile {
                unsequence,
                partition: p,
                version,
                name_time: 1_700_000_000_000 + rng.below(5) as i64,
                flushes,
                deletions,
                resource: rng.chance(80),
            });
            version += 1 + rng.below(2) as i64;
        }
    }
    // Shuffle versions within a space so name order and version order disagree sometimes.
    if files.len() > 2 && rng.chance(50) {
        let (i, j) = (rng.below(files.len() as u64) as usize, rng.below(files.len() as u64) as usize);
        let (vi, vj) = (files[i].version, files[j].version);
        files[i].version = vj;
        files[j].version = vi;
    }
    files
}

/// Write `files` under `root` with their companions and some files that are not data.
fn write_dir(root: &Path, files: &[GenFile]) {
    let _ = std::fs::remove_dir_all(root);
    for f in files {
        let path = f.path(root);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let options = TsFileWriterOptions { table: Some("t".into()), tags: Some(vec!["dev".into()]), ..Default::default() };
        let mut w = TsFileWriter::try_new(Vec::new(), schema(), &options).unwrap();
        let mut ranges: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
        for rows in &f.flushes {
            let time = TimestampMillisecondArray::from(rows.iter().map(|r| r.1).collect::<Vec<_>>());
            let dev = StringArray::from(rows.iter().map(|r| format!("d{}", r.0)).collect::<Vec<_>>());
            let a = Int64Array::from(rows.iter().map(|r| r.2).collect::<Vec<_>>());
            let b = Float64Array::from(rows.iter().map(|r| r.3).collect::<Vec<_>>());
            let batch = RecordBatch::try_new(schema(), vec![Arc::new(time), Arc::new(dev), Arc::new(a), Arc::new(b)]).unwrap();
            w.write(&batch).unwrap();
            w.flush().unwrap();
            for r in rows {
                let e = ranges.entry(r.0).or_insert((r.1, r.1));
                e.0 = e.0.min(r.1);
                e.1 = e.1.max(r.1);
            }
        }
        std::fs::write(&path, w.finish().unwrap()).unwrap();
        let companion = |suffix: &str| PathBuf::from(format!("{}.{suffix}", path.display()));
        if f.resource {
            let devices: Vec<DeviceTimes> =
                ranges.iter().map(|(&d, &(start, end))| DeviceTimes { device: device_id(d), start, end }).collect();
            std::fs::write(companion("resource"), resource_bytes(&devices).unwrap()).unwrap();
        }
        if !f.deletions.is_empty() {
            let dels: Vec<Deletion> = f.deletions.iter().map(Del::to_deletion).collect();
            std::fs::write(companion("mods2"), mods2_bytes(&dels).unwrap()).unwrap();
        }
        // Not data: compaction leftovers and temporaries beside it.
        std::fs::write(companion("temp"), b"junk").unwrap();
        std::fs::write(path.with_extension("inner"), b"junk").unwrap();
    }
    if let Some(f) = files.first() {
        let dir = f.path(root).parent().unwrap().to_path_buf();
        std::fs::write(dir.join("notes.tsfile"), b"not a data file name").unwrap();
        // A file still being written: no .resource, no footer.
        let bytes = std::fs::read(f.path(root)).unwrap();
        std::fs::write(dir.join("1800000000000-999999-0-0.tsfile"), &bytes[..bytes.len() / 2]).unwrap();
    }
}

/// The rows IoTDB answers for `files`, sorted by device and time.
fn oracle(files: &[GenFile]) -> Vec<Row> {
    // (device, time) -> candidates (priority, a, b), priority ascending by construction key.
    type Key = (bool, i64, i64, usize, usize);
    type Candidate = (Key, Option<i64>, Option<f64>);
    let mut cells: BTreeMap<(usize, i64), Vec<Candidate>> = BTreeMap::new();
    for f in files {
        for (flush, rows) in f.flushes.iter().enumerate() {
            for (i, &(dev, time, a, b)) in rows.iter().enumerate() {
                if f.deletions.iter().any(|d| d.columns.is_empty() && d.hits(dev, time)) {
                    continue;
                }
                let gone = |c: &str| f.deletions.iter().any(|d| d.columns.contains(&c) && d.hits(dev, time));
                let a = if gone("a") { None } else { a };
                let b = if gone("b") { None } else { b };
                cells.entry((dev, time)).or_default().push(((f.unsequence, f.version, f.name_time, flush, i), a, b));
            }
        }
    }
    cells
        .into_iter()
        .map(|((dev, time), mut c)| {
            c.sort_by_key(|x| std::cmp::Reverse(x.0));
            let a = c.iter().find_map(|x| x.1);
            let b = c.iter().find_map(|x| x.2);
            (format!("d{dev}"), time, a, b.map(f64::to_bits))
        })
        .collect()
}

/// Rows of batches with columns (dev, time, a, b) in any order by name, sorted.
fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let s = b.schema();
        let col = |n: &str| s.index_of(n).ok().map(|i| b.column(i).clone());
        let dev = col("dev").map(|c| datafusion::arrow::compute::cast(&c, &DataType::Utf8).unwrap());
        let time = col("time");
        let a = col("a");
        let bb = col("b");
        for r in 0..b.num_rows() {
            out.push((
                dev.as_ref().map_or(String::new(), |c| c.as_string::<i32>().value(r).to_string()),
                time.as_ref().map_or(0, |c| c.as_primitive::<TimestampMillisecondType>().value(r)),
                a.as_ref().and_then(|c| c.is_valid(r).then(|| c.as_primitive::<Int64Type>().value(r))),
                bb.as_ref().and_then(|c| c.is_valid(r).then(|| c.as_primitive::<Float64Type>().value(r).to_bits())),
            ));
        }
    }
    out.sort();
    out
}

fn read(reader: &Arc<DataDirReader>, read: TableRead, tags: &TagFilter) -> Vec<Row> {
    let batches: Vec<RecordBatch> = reader.read_table("t", &read, tags).unwrap().collect::<Result<_, _>>().unwrap();
    rows_of(&batches)
}

/// Equal row lists, or a panic naming the first difference (not the whole lists).
fn assert_rows(got: &[Row], want: &[Row], context: &str) {
    if got == want {
        return;
    }
    let at = got.iter().zip(want).position(|(g, w)| g != w).unwrap_or(got.len().min(want.len()));
    panic!(
        "{context}: {} rows, expected {}; first difference at {at}: got {:?}, expected {:?}",
        got.len(),
        want.len(),
        got.get(at),
        want.get(at)
    );
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tsfile-iotdb-{name}-{}", std::process::id()))
}

#[test]
fn test_generated_directories_equal_the_oracle() {
    let mut compared = 0usize;
    for seed in 0..40u64 {
        let files = generate(seed);
        let root = tmp(&format!("gen{seed}"));
        write_dir(&root, &files);
        let expect = oracle(&files);
        let reader = Arc::new(DataDirReader::open(&root, TsFileOptions::default()).unwrap());
        let skipped: Vec<String> =
            reader.dir().skipped.iter().map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(skipped, ["1800000000000-999999-0-0.tsfile", "notes.tsfile"], "seed {seed}");
        assert_eq!(reader.dir().files.len(), files.len(), "seed {seed}");

        let all = read(&reader, TableRead::default(), &TagFilter::default());
        assert_rows(&all, &expect, &format!("seed {seed}: full read"));

        // A time window and a projection without the time column.
        let (lo, hi) = (15, 60);
        let got = read(
            &reader,
            TableRead::default().with_time_range(lo, hi).with_projection(["dev", "b", "time"]),
            &TagFilter::default(),
        );
        let want: Vec<Row> = expect.iter().filter(|r| lo <= r.1 && r.1 <= hi).map(|r| (r.0.clone(), r.1, None, r.3)).collect();
        let got: Vec<Row> = got.into_iter().filter(|r| lo <= r.1 && r.1 <= hi).collect();
        assert_rows(&got, &want, &format!("seed {seed}: window and projection"));

        // One device by its TAG.
        let mut tags = TagFilter::default();
        tags.restrict(1, ["d2".to_string()].into());
        let got = read(&reader, TableRead::default(), &tags);
        let want: Vec<Row> = expect.iter().filter(|r| r.0 == "d2").cloned().collect();
        assert_rows(&got, &want, &format!("seed {seed}: one device"));
        compared += expect.len();
        let _ = std::fs::remove_dir_all(&root);
    }
    assert!(compared > 2000, "the generator makes rows: {compared}");
}

#[test]
fn test_sql_with_layout_iotdb_equals_the_oracle_and_plain_does_not() {
    let mut plain_wrong = 0;
    for seed in [1u64, 5, 9, 13, 21, 33] {
        let files = generate(seed);
        let root = tmp(&format!("sql{seed}"));
        write_dir(&root, &files);
        let expect = oracle(&files);
        block_on(async {
            let c = ctx(3);
            register_tsfile_format(&c).unwrap();
            let dir = root.display();
            c.sql(&format!("CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION '{dir}' OPTIONS ('tsfile.layout' 'iotdb')"))
                .await
                .unwrap();
            let all = c.sql("SELECT time, dev, a, b FROM t").await.unwrap().collect().await.unwrap();
            assert_rows(&rows_of(&all), &expect, &format!("seed {seed}: SQL full scan"));

            let sql = "SELECT b, time, dev FROM t WHERE dev IN ('d1', 'd3') AND time >= 30 AND time < 1040";
            let got = c.sql(sql).await.unwrap().collect().await.unwrap();
            let want: Vec<Row> = expect
                .iter()
                .filter(|r| (r.0 == "d1" || r.0 == "d3") && 30 <= r.1 && r.1 < 1040)
                .map(|r| (r.0.clone(), r.1, None, r.3))
                .collect();
            assert_rows(&rows_of(&got), &want, &format!("seed {seed}: {sql}"));

            // A FIELD threshold applies to the merged rows: a lower-priority value above it
            // that a higher-priority one replaced does not pass.
            let got = c.sql("SELECT time, dev, a, b FROM t WHERE a > 100").await.unwrap().collect().await.unwrap();
            let want: Vec<Row> = expect.iter().filter(|r| r.2.is_some_and(|a| a > 100)).cloned().collect();
            assert_rows(&rows_of(&got), &want, &format!("seed {seed}: a > 100"));

            let counts = c.sql("SELECT count(*), count(a), count(b) FROM t").await.unwrap().collect().await.unwrap();
            let col = |i: usize| counts[0].column(i).as_primitive::<Int64Type>().value(0);
            let want = (
                expect.len() as i64,
                expect.iter().filter(|r| r.2.is_some()).count() as i64,
                expect.iter().filter(|r| r.3.is_some()).count() as i64,
            );
            assert_eq!((col(0), col(1), col(2)), want, "seed {seed}: counts");

            // The same files read as plain files (the files that are not data removed): every
            // write and deleted point comes back.
            let first = files[0].path(&root);
            let part = first.parent().unwrap();
            std::fs::remove_file(part.join("notes.tsfile")).unwrap();
            std::fs::remove_file(part.join("1800000000000-999999-0-0.tsfile")).unwrap();
            c.sql("SET datafusion.execution.listing_table_ignore_subdirectory = false").await.unwrap();
            c.sql(&format!("CREATE EXTERNAL TABLE p STORED AS TSFILE LOCATION '{dir}/' OPTIONS ('tsfile.table' 't', 'tsfile.layout' 'plain')"))
                .await
                .unwrap();
            let plain = c.sql("SELECT count(*) FROM p").await.unwrap().collect().await.unwrap();
            if plain[0].column(0).as_primitive::<Int64Type>().value(0) != expect.len() as i64 {
                plain_wrong += 1;
            }

            // tsfile_metadata: each series' space, file version and deletions naming it.
            let meta = c
                .sql(&format!(
                    "SELECT iotdb_space, iotdb_file_version, CAST(device AS VARCHAR), measurement, iotdb_deletions, iotdb_partition \
                     FROM tsfile_metadata('{dir}/') WHERE category = 'FIELD'"
                ))
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            let mut got = Vec::new();
            for b in &meta {
                let text = |i: usize| datafusion::arrow::compute::cast(b.column(i), &DataType::Utf8).unwrap();
                let (space, device, m, part) = (text(0), text(2), text(3), text(5));
                for r in 0..b.num_rows() {
                    got.push((
                        space.as_string::<i32>().value(r).to_string(),
                        b.column(1).as_primitive::<Int64Type>().value(r),
                        device.as_string::<i32>().value(r).to_string(),
                        m.as_string::<i32>().value(r).to_string(),
                        b.column(4).as_primitive::<Int64Type>().value(r),
                        part.as_string::<i32>().value(r).to_string(),
                    ));
                }
            }
            got.sort();
            let mut want = Vec::new();
            for f in &files {
                let devices: std::collections::BTreeSet<usize> = f.flushes.iter().flatten().map(|r| r.0).collect();
                for dev in devices {
                    // A column with no value in the file has no series (the writer writes none).
                    let rows = || f.flushes.iter().flatten().filter(|r| r.0 == dev);
                    let present = [("a", rows().any(|r| r.2.is_some())), ("b", rows().any(|r| r.3.is_some()))];
                    for m in present.iter().filter(|p| p.1).map(|p| p.0) {
                        let n = f
                            .deletions
                            .iter()
                            .filter(|d| d.device.is_none_or(|k| k == dev) && (d.columns.is_empty() || d.columns.contains(&m)))
                            .count() as i64;
                        let space = if f.unsequence { "unsequence" } else { "sequence" };
                        want.push((
                            space.to_string(),
                            f.version,
                            format!("t.d{dev}"),
                            m.to_string(),
                            n,
                            format!("root.db/{}", f.partition),
                        ));
                    }
                }
            }
            want.sort();
            assert_eq!(got, want, "seed {seed}: tsfile_metadata iotdb columns");
        });
        let _ = std::fs::remove_dir_all(&root);
    }
    assert!(plain_wrong >= 3, "the generated directories need IoTDB's semantics: {plain_wrong} of 6 differ read as plain files");
}

#[test]
fn test_layout_iotdb_errors_and_explain() {
    block_on(async {
        let c = ctx(2);
        register_tsfile_format(&c).unwrap();
        let root = tmp("errors");
        let _ = std::fs::remove_dir_all(&root);
        // A data file outside sequence/ or unsequence/.
        let flat = root.join("flat");
        std::fs::create_dir_all(&flat).unwrap();
        let files = generate(3);
        write_dir(&root.join("ok"), &files);
        std::fs::copy(files[0].path(&root.join("ok")), flat.join("1-1-0-0.tsfile")).unwrap();
        let e = c
            .sql(&format!(
                "CREATE EXTERNAL TABLE x STORED AS TSFILE LOCATION '{}' OPTIONS ('tsfile.layout' 'iotdb')",
                flat.display()
            ))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("sequence/ or unsequence/"), "{e}");
        let e = c
            .sql("CREATE EXTERNAL TABLE y STORED AS TSFILE LOCATION 's3://bucket/data/' OPTIONS ('tsfile.layout' 'iotdb')")
            .await
            .unwrap_err();
        assert!(e.to_string().contains("local directories"), "{e}");
        let e = c
            .sql(&format!(
                "CREATE EXTERNAL TABLE z STORED AS TSFILE LOCATION '{}' OPTIONS ('tsfile.layout' 'tree')",
                flat.display()
            ))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("expected auto, plain or iotdb"), "{e}");
        let ok = root.join("ok");
        // Entry points that read plain files refuse the option instead of ignoring it.
        let options = datafusion_tsfile::datafusion::TsFileReadOptions {
            layout: datafusion_tsfile::datafusion::DirectoryLayout::Iotdb,
            ..Default::default()
        };
        let e = datafusion_tsfile::datafusion::register_tsfile(&c, "r", &[ok.to_str().unwrap()], options).await.unwrap_err();
        assert!(e.to_string().contains("this entry point reads plain files"), "{e}");
        c.sql("SET datafusion.execution.listing_table_ignore_subdirectory = false").await.unwrap();
        let e = c
            .sql(&format!(
                "CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION '{}/' OPTIONS ('tsfile.layout' 'iotdb') WITH ORDER (time)",
                ok.display()
            ))
            .await;
        assert!(e.is_err_and(|e| e.to_string().contains("this entry point reads plain files")));
        c.sql(&format!("CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION '{}' OPTIONS ('tsfile.layout' 'iotdb')", ok.display()))
            .await
            .unwrap();
        let plan = c.sql("EXPLAIN SELECT a FROM t WHERE time > 5 AND dev = 'd1'").await.unwrap().collect().await.unwrap();
        let text = format!("{}", datafusion::arrow::util::pretty::pretty_format_batches(&plan).unwrap());
        assert!(text.contains("IotdbScanExec: table=t"), "{text}");
        assert!(text.contains("skipped_files=2") && text.contains("time=[6, ") && text.contains("tag_filter"), "{text}");
        // A TTL of a day leaves nothing of 1970.
        c.sql(&format!(
            "CREATE EXTERNAL TABLE old STORED AS TSFILE LOCATION '{}' OPTIONS ('tsfile.layout' 'iotdb', 'tsfile.ttl' '86400000')",
            ok.display()
        ))
        .await
        .unwrap();
        let n = c.sql("SELECT count(*) FROM old").await.unwrap().collect().await.unwrap();
        assert_eq!(n[0].column(0).as_primitive::<Int64Type>().value(0), 0);
        // The layout is detected (`auto`) once every TsFile has a data-file name: a stray name
        // keeps the directory plain (the rule is strict), whose read then fails on the file
        // being written.
        let part = files[0].path(&ok).parent().unwrap().to_path_buf();
        c.sql("SET datafusion.execution.listing_table_ignore_subdirectory = false").await.unwrap();
        c.sql(&format!("CREATE EXTERNAL TABLE stray STORED AS TSFILE LOCATION '{}/' OPTIONS ('tsfile.table' 't')", ok.display()))
            .await
            .unwrap_err();
        std::fs::remove_file(part.join("notes.tsfile")).unwrap();
        c.sql(&format!("CREATE EXTERNAL TABLE auto STORED AS TSFILE LOCATION '{}'", ok.display())).await.unwrap();
        let plan = c.sql("EXPLAIN SELECT count(*) FROM auto").await.unwrap().collect().await.unwrap();
        let text = format!("{}", datafusion::arrow::util::pretty::pretty_format_batches(&plan).unwrap());
        assert!(text.contains("IotdbScanExec"), "{text}");
        // Where only plain files can be read, such a directory is refused, not read plain.
        let e = datafusion_tsfile::datafusion::register_tsfile(&c, "auto_plain", &[ok.to_str().unwrap()], Default::default())
            .await
            .unwrap_err();
        assert!(e.to_string().contains("is an IoTDB data directory"), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    });
}

/// The million-row directory: 10 partitions × 80 devices × 1,250 points in two sequence
/// files each (the second continuing the first), an unsequence file per partition rewriting
/// every 7th point (`a` = -time, `b` null), and per partition a `.mods2` on the unsequence
/// file deleting `b`… nothing (it is null) and on the second sequence file whole rows of
/// device d3 over 100 ms. Per-device aggregates through SQL equal the oracle's, and so do the
/// rows of one window.
#[test]
fn test_a_million_row_directory() {
    // More devices than one merge chunk (64) takes.
    const DEVICES: usize = 80;
    const POINTS: i64 = 1_250;
    const PARTITIONS: i64 = 10;
    let root = tmp("million");
    let _ = std::fs::remove_dir_all(&root);
    let value = |dev: usize, t: i64| t * 3 + dev as i64;
    let mut files = Vec::new();
    for p in 0..PARTITIONS {
        let base = p * 1_000_000;
        let mut seq = [Vec::new(), Vec::new()];
        let mut unseq = Vec::new();
        for dev in 0..DEVICES {
            for i in 0..POINTS {
                let t = base + i * 10;
                let half = usize::from(i >= POINTS / 2);
                seq[half].push((dev, t, Some(value(dev, t)), Some(t as f64 / 4.0)));
                if i % 7 == 0 {
                    unseq.push((dev, t, Some(-t), None));
                }
            }
        }
        let del = Del { device: Some(3), by_tag: false, columns: vec![], start: base + 10_000, end: base + 10_100 };
        let [first, second] = seq;
        for (k, rows, unsequence, deletions) in
            [(0, first, false, vec![]), (1, second, false, vec![del]), (2, unseq, true, vec![])]
        {
            files.push(GenFile {
                unsequence,
                partition: p,
                version: p * 10 + k + 1,
                name_time: 1_700_000_000_000 + p,
                flushes: vec![rows],
                deletions,
                resource: true,
            });
        }
    }
    write_dir(&root, &files);
    // The oracle per device: rows, count(a), sum(a), count(b), sum(b).
    let mut want: BTreeMap<String, (i64, i64, i128, i64, f64)> = BTreeMap::new();
    for p in 0..PARTITIONS {
        let base = p * 1_000_000;
        for dev in 0..DEVICES {
            let e = want.entry(format!("d{dev}")).or_default();
            for i in 0..POINTS {
                let t = base + i * 10;
                let deleted = dev == 3 && i >= POINTS / 2 && (base + 10_000..=base + 10_100).contains(&t);
                let rewritten = i % 7 == 0;
                if deleted && !rewritten {
                    continue;
                }
                e.0 += 1;
                e.1 += 1;
                e.2 += i128::from(if rewritten { -t } else { value(dev, t) });
                // The rewrite's null b is filled from the sequence row unless that row is deleted.
                if !deleted {
                    e.3 += 1;
                    e.4 += t as f64 / 4.0;
                }
            }
        }
    }
    let total: i64 = want.values().map(|w| w.0).sum();
    assert!(total > 990_000, "{total}");
    block_on(async {
        let c = ctx(2);
        register_tsfile_format(&c).unwrap();
        c.sql(&format!(
            "CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION '{}' OPTIONS ('tsfile.layout' 'iotdb')",
            root.display()
        ))
        .await
        .unwrap();
        let got = c
            .sql("SELECT CAST(dev AS VARCHAR) AS dev, count(*), count(a), CAST(sum(CAST(a AS DECIMAL(38, 0))) AS VARCHAR), count(b), sum(b) FROM t GROUP BY dev ORDER BY dev")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let mut seen = 0;
        for b in &got {
            let text = |i: usize| datafusion::arrow::compute::cast(b.column(i), &DataType::Utf8).unwrap();
            let (devs, sums) = (text(0), text(3));
            for r in 0..b.num_rows() {
                let dev = devs.as_string::<i32>().value(r).to_string();
                let w = want[&dev];
                let n = |i: usize| b.column(i).as_primitive::<Int64Type>().value(r);
                assert_eq!((n(1), n(2), n(4)), (w.0, w.1, w.3), "{dev}: counts");
                assert_eq!(sums.as_string::<i32>().value(r), w.2.to_string(), "{dev}: sum(a)");
                let sum_b = b.column(5).as_primitive::<Float64Type>().value(r);
                assert!((sum_b - w.4).abs() <= 1e-9 * w.4.abs(), "{dev}: sum(b) {sum_b} vs {}", w.4);
                seen += 1;
            }
        }
        assert_eq!(seen, DEVICES);
        // The rows of one window of d3 across the deletion, row by row.
        let got = c
            .sql("SELECT time, dev, a, b FROM t WHERE dev = 'd3' AND time BETWEEN 4009900 AND 4010200")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let rows = rows_of(&got);
        let times: Vec<i64> = rows.iter().map(|r| r.1).collect();
        let expect: Vec<i64> = (4_009_900..=4_010_200)
            .step_by(10)
            .filter(|t| !(4_010_000..=4_010_100).contains(t) || ((t - 4_000_000) / 10) % 7 == 0)
            .collect();
        assert_eq!(times, expect);
        for r in &rows {
            let i = (r.1 - 4_000_000) / 10;
            let a = if i % 7 == 0 { -r.1 } else { value(3, r.1) };
            assert_eq!(r.2, Some(a), "{r:?}");
        }
    });
    let _ = std::fs::remove_dir_all(&root);
}
