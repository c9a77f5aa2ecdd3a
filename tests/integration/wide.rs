//! Wide tables: many TAG columns with long (non-ASCII) values and many FIELD columns, so the
//! footer (TsFileMetadata holds every device id of a leaf device node) and the index area
//! exceed the 64 KiB first read. The Java-written file of the bug report
//! (`tests/data/external/java_wide_table.tsfile`) through the library and SQL, then generated
//! files up to 2,000 fields and 1 KB tag values, each opened from a local path and through an
//! in-memory object store whose first read is small, so the open loop runs several rounds.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use datafusion_tsfile::io::{fetch_ranges, open_object_opts, OpenOptions};
use datafusion_tsfile::{TableRead, TsFile, TsFileOptions};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::common::repo_path;
use crate::sql::{block_on, ctx, quote};
use crate::writer::{write_tsfile, Device, Table, Val, BOOLEAN, DOUBLE, INT64, STRING};

const JAVA_WIDE: &str = "tests/data/external/java_wide_table.tsfile";
const JAVA_TABLE: &str = "t_samedevice_sametimestamp1";
const JAVA_TYPES: [&str; 10] = ["boolean", "int32", "int64", "float", "double", "text", "string", "blob", "timestamp", "date"];

/// A cell as text (`None` for null).
fn cell(b: &RecordBatch, col: &str, row: usize) -> Option<String> {
    let a = b.column(b.schema().index_of(col).unwrap());
    (!a.is_null(row)).then(|| array_value_to_string(a, row).unwrap())
}

/// Every row of `batches` as column name -> text (absent = null).
fn rows(batches: &[RecordBatch]) -> Vec<HashMap<String, String>> {
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            let mut row = HashMap::new();
            for f in b.schema().fields() {
                if let Some(v) = cell(b, f.name(), r) {
                    row.insert(f.name().clone(), v);
                }
            }
            out.push(row);
        }
    }
    out
}

/// Checks on the Java file's rows: 100 rows, 100 devices, tags of 64 characters (some CJK)
/// equal to the device ids, 50 values in each written field and none in the others.
fn check_java_rows(rows: &[HashMap<String, String>], device_tags: &HashSet<Vec<String>>) {
    assert_eq!(rows.len(), 100);
    let mut seen = HashSet::new();
    for r in rows {
        let tags: Vec<String> = (0..10).map(|i| r[&format!("id1_{i}")].clone()).collect();
        for t in &tags {
            assert_eq!(t.chars().count(), 64, "{t}");
        }
        assert!(device_tags.contains(&tags), "tags of no device: {tags:?}");
        seen.insert(tags);
    }
    assert_eq!(seen.len(), 100, "every row is its own device");
    let cjk = seen.iter().flatten().filter(|t| t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))).count();
    assert!(cjk > 900, "{cjk} of 1000 tag values hold CJK characters");
    for ty in JAVA_TYPES {
        for g in 0..20 {
            let name = format!("m1_{ty}_{g}");
            let n = rows.iter().filter(|r| r.contains_key(&name)).count();
            assert_eq!(n, if g == 0 { 50 } else { 0 }, "{name}");
        }
    }
    // Even rows hold the numeric group, odd rows the others (never both in one row).
    for r in rows {
        let numeric = r.contains_key("m1_int64_0");
        assert_eq!(r.contains_key("m1_boolean_0"), numeric);
        assert_eq!(r.contains_key("m1_text_0"), !numeric);
        assert_eq!(r.contains_key("m1_date_0"), !numeric);
    }
}

#[test]
fn test_java_wide_table_opens_through_the_library() {
    let f = TsFile::open(repo_path(JAVA_WIDE)).unwrap();
    assert_eq!(f.table_names(), vec![JAVA_TABLE]);
    assert_eq!(f.structure().metadata_len(), 104_712, "TsFileMetadata is larger than the 64 KiB first read");
    let schema = f.table_schema(JAVA_TABLE).unwrap();
    assert_eq!(schema.columns.len(), 210);
    let devices = f.devices(JAVA_TABLE).unwrap();
    assert_eq!(devices.len(), 100);
    let device_tags: HashSet<Vec<String>> =
        devices.iter().map(|d| d.segments().iter().skip(1).map(|s| s.clone().unwrap()).collect()).collect();
    assert_eq!(device_tags.len(), 100);
    let batches: Vec<RecordBatch> = f.read_table(JAVA_TABLE, TableRead::default()).unwrap().map(|b| b.unwrap()).collect();
    check_java_rows(&rows(&batches), &device_tags);
}

#[test]
fn test_java_wide_table_opens_through_sql() {
    let path = repo_path(JAVA_WIDE);
    let f = TsFile::open(&path).unwrap();
    let device_tags: HashSet<Vec<String>> = f
        .devices(JAVA_TABLE)
        .unwrap()
        .iter()
        .map(|d| d.segments().iter().skip(1).map(|s| s.clone().unwrap()).collect())
        .collect();
    block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "t", &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
        let one = |sql: String| {
            let c = c.clone();
            async move { rows(&c.sql(&sql).await.unwrap().collect().await.unwrap()) }
        };
        assert_eq!(one("SELECT count(*) AS n FROM t".into()).await[0]["n"], "100");
        let tags: Vec<String> = (0..10).map(|i| quote(&format!("id1_{i}"))).collect();
        let distinct = format!("SELECT count(*) AS n FROM (SELECT DISTINCT {} FROM t)", tags.join(", "));
        assert_eq!(one(distinct).await[0]["n"], "100");
        // count() of every field column in one query.
        let fields: Vec<String> = JAVA_TYPES.iter().flat_map(|ty| (0..20).map(move |g| format!("m1_{ty}_{g}"))).collect();
        let counts: Vec<String> = fields.iter().map(|n| format!("count({}) AS {}", quote(n), quote(n))).collect();
        let got = one(format!("SELECT {} FROM t", counts.join(", "))).await;
        for n in &fields {
            assert_eq!(got[0][n], if n.ends_with("_0") { "50" } else { "0" }, "{n}");
        }
        // Every row, tags intact.
        check_java_rows(&one("SELECT * FROM t".into()).await, &device_tags);
    });
}

/// Shape of a generated wide table.
#[derive(Debug, Clone, Copy)]
struct Shape {
    tags: usize,
    /// Bytes of each tag value (at least; whole characters).
    tag_bytes: usize,
    fields: usize,
    devices: usize,
    rows: usize,
}

fn tag_value(d: usize, t: usize, bytes: usize) -> String {
    let mut s = format!("d{d}t{t}-");
    for c in "风山结ü€é相去Ω".chars().cycle() {
        if s.len() >= bytes {
            break;
        }
        s.push(c);
    }
    s
}

fn field_name(f: usize) -> String {
    format!("f{f:04}")
}

/// The value of field `f` at row `r` of device `d` (`None`: null), as written and as text.
fn field_value(d: usize, f: usize, r: usize) -> Option<(Val, String)> {
    if (d + f + r).is_multiple_of(5) {
        return None;
    }
    let n = (d * 1_000_000 + f * 10 + r) as i64;
    Some(match f % 4 {
        0 => (Val::I64(n), n.to_string()),
        1 => (Val::F64(n as f64 + 0.5), format!("{n}.5")),
        2 => (Val::Bool(n % 2 == 0), (n % 2 == 0).to_string()),
        _ => {
            let s = format!("v{n}-值");
            (Val::Text(s.clone()), s)
        }
    })
}

const FIELD_TYPES: [u8; 4] = [INT64, DOUBLE, BOOLEAN, STRING];

fn wide_file(s: Shape) -> Vec<u8> {
    let devices: Vec<Device> = (0..s.devices)
        .map(|d| {
            let mut segments = vec!["wide".to_string()];
            segments.extend((0..s.tags).map(|t| tag_value(d, t, s.tag_bytes)));
            Device::Aligned {
                segments,
                times: (0..s.rows).map(|r| 1_000 + r as i64).collect(),
                columns: (0..s.fields)
                    .map(|f| {
                        (field_name(f), FIELD_TYPES[f % 4], (0..s.rows).map(|r| field_value(d, f, r).map(|v| v.0)).collect())
                    })
                    .collect(),
            }
        })
        .collect();
    let table = Table {
        name: "wide".into(),
        tags: (0..s.tags).map(|t| format!("tag{t}")).collect(),
        fields: (0..s.fields).map(|f| (field_name(f), FIELD_TYPES[f % 4])).collect(),
    };
    write_tsfile(&devices, &[table], 64)
}

/// Every row of a generated table holds exactly the values written.
fn check_wide_rows(s: Shape, rows: &[HashMap<String, String>]) {
    assert_eq!(rows.len(), s.devices * s.rows);
    let by_tag0: HashMap<String, usize> = (0..s.devices).map(|d| (tag_value(d, 0, s.tag_bytes), d)).collect();
    let mut seen = BTreeMap::new();
    for row in rows {
        let d = by_tag0[&row["tag0"]];
        for t in 0..s.tags {
            assert_eq!(row[&format!("tag{t}")], tag_value(d, t, s.tag_bytes));
        }
        let time: usize = row["time"].parse().unwrap();
        let r = time - 1_000;
        for f in 0..s.fields {
            assert_eq!(row.get(&field_name(f)), field_value(d, f, r).map(|v| v.1).as_ref(), "device {d} row {r} field {f}");
        }
        *seen.entry(d).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), s.devices);
    assert!(seen.values().all(|&n| n == s.rows));
}

/// The generated file through a local path (library and SQL), and through an in-memory
/// object store (open loop with a small first read, then values and SQL).
fn check_wide(s: Shape, name: &str) {
    let bytes = wide_file(s);
    let dir = std::env::temp_dir().join(format!("tsfile-wide-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.tsfile"));
    std::fs::write(&path, &bytes).unwrap();
    let opts = TsFileOptions { time_unit: TimeUnit::Raw, ..TsFileOptions::default() };
    let sql_opts = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw);

    // Local path, library.
    let f = TsFile::open_with(&path, opts.clone()).unwrap();
    let footer = f.structure().metadata_len();
    assert_eq!(f.devices("wide").unwrap().len(), s.devices);
    let batches: Vec<RecordBatch> = f.read_table("wide", TableRead::default()).unwrap().map(|b| b.unwrap()).collect();
    check_wide_rows(s, &rows(&batches));

    // Local path, SQL: counts and one field's sum.
    let int_field = field_name(0);
    let want_count =
        (0..s.devices).flat_map(|d| (0..s.rows).map(move |r| (d, r))).filter(|&(d, r)| field_value(d, 0, r).is_some()).count();
    let sql = format!("SELECT count(*) AS n, count({f}) AS c FROM t", f = quote(&int_field));
    let local = block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "t", &[path.to_str().unwrap()], sql_opts.clone()).await.unwrap();
        rows(&c.sql(&sql).await.unwrap().collect().await.unwrap())
    });
    assert_eq!(local[0]["n"], (s.devices * s.rows).to_string());
    assert_eq!(local[0]["c"], want_count.to_string());

    // Three named fields of the many (first, middle, last): each row's values as written.
    let picked = [0, s.fields / 2, s.fields - 1];
    let names: Vec<String> = picked.iter().map(|&f| field_name(f)).collect();
    let sql = format!("SELECT time, tag0, {} FROM t", names.iter().map(|n| quote(n)).collect::<Vec<_>>().join(", "));
    let got = block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "t", &[path.to_str().unwrap()], sql_opts.clone()).await.unwrap();
        rows(&c.sql(&sql).await.unwrap().collect().await.unwrap())
    });
    assert_eq!(got.len(), s.devices * s.rows);
    let by_tag0: HashMap<String, usize> = (0..s.devices).map(|d| (tag_value(d, 0, s.tag_bytes), d)).collect();
    for row in &got {
        let (d, r) = (by_tag0[&row["tag0"]], row["time"].parse::<usize>().unwrap() - 1_000);
        assert_eq!(row.len(), 2 + picked.iter().filter(|&&f| field_value(d, f, r).is_some()).count());
        for (&f, n) in picked.iter().zip(&names) {
            assert_eq!(row.get(n), field_value(d, f, r).map(|v| v.1).as_ref(), "device {d} row {r} field {f}");
        }
    }

    // In-memory object store: the open loop with a 1 KiB first read.
    let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let location = Path::from(format!("lake/{name}.tsfile"));
    let size = bytes.len() as u64;
    block_on(async {
        store.put(&location, Bytes::from(bytes.clone()).into()).await.unwrap();
        let o = OpenOptions { prefetch: 1024, ..OpenOptions::default() };
        let (reader, trace) = open_object_opts(&store, &location, size, o).await.unwrap();
        assert_eq!(reader.metadata_len(), footer);
        // Head + tail, the rest of TsFileMetadata, the index area: three rounds (the files
        // are larger than the 1 MiB gap a remote request bridges, so head and tail are apart).
        assert!(size > (1 << 20) + 1024, "{name}: {size} bytes");
        assert_eq!(trace.rounds.len(), 3, "{name}: {:?}", trace.rounds);
        assert_eq!(trace.rounds[0], vec![0..64, size - 1024..size]);
        assert!(trace.bytes_fetched <= size, "{name}: {} bytes fetched of {size}", trace.bytes_fetched);
        let devices = reader.all_devices().unwrap();
        assert_eq!(devices.len(), s.devices);
        for d in &devices {
            assert_eq!(reader.series(d).unwrap().len(), s.fields + 1);
        }
        // Values: add the data section to the fetched bytes and read the table from them.
        let data_section = 0..reader.metadata().meta_offset;
        let data = fetch_ranges(&store, &location, Vec::from([data_section])).await.unwrap();
        let source = reader.source().with_parts(data);
        let f = TsFile::from_source(Box::new(source), location.to_string(), opts.clone()).unwrap();
        let batches: Vec<RecordBatch> = f.read_table("wide", TableRead::default()).unwrap().map(|b| b.unwrap()).collect();
        check_wide_rows(s, &rows(&batches));

        // SQL over memory://.
        let c = ctx(2);
        c.register_object_store(&url::Url::parse("memory://").unwrap(), store.clone());
        register_tsfile(&c, "m", &[&format!("memory:///lake/{name}.tsfile")], sql_opts.clone()).await.unwrap();
        let sql = format!("SELECT count(*) AS n, count({f}) AS c FROM m", f = quote(&int_field));
        let got = rows(&c.sql(&sql).await.unwrap().collect().await.unwrap());
        assert_eq!(got[0]["n"], (s.devices * s.rows).to_string());
        assert_eq!(got[0]["c"], want_count.to_string());
        let last = s.tags - 1;
        let one =
            format!("SELECT * FROM m WHERE {} = '{}'", quote(&format!("tag{last}")), tag_value(s.devices - 1, last, s.tag_bytes));
        let got = rows(&c.sql(&one).await.unwrap().collect().await.unwrap());
        assert_eq!(got.len(), s.rows);
        for row in &got {
            assert_eq!(row["tag0"], tag_value(s.devices - 1, 0, s.tag_bytes));
            let r: usize = row["time"].parse::<usize>().unwrap() - 1_000;
            for f in 0..s.fields {
                assert_eq!(row.get(&field_name(f)), field_value(s.devices - 1, f, r).map(|v| v.1).as_ref());
            }
        }
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The shape of the bug report: 10 tags of 64 non-ASCII characters, 120 fields, 100 devices.
#[test]
fn test_wide_10_tags_64_chars_120_fields_100_devices() {
    let s = Shape { tags: 10, tag_bytes: 64 * 3, fields: 120, devices: 100, rows: 2 };
    let bytes = wide_file(s);
    let f = TsFile::from_bytes(Bytes::from(bytes)).unwrap();
    assert!(f.structure().metadata_len() > 64 << 10, "the footer exceeds the 64 KiB first read");
    assert!(tag_value(0, 0, s.tag_bytes).chars().count() >= 64);
    check_wide(s, "tags10x64_fields120");
}

/// 2,000 fields (a TimeseriesMetadata run of 2,001 entries per device).
#[test]
fn test_wide_2000_fields() {
    check_wide(Shape { tags: 2, tag_bytes: 16, fields: 2_000, devices: 6, rows: 2 }, "fields2000");
}

/// Tag values of 1 KB.
#[test]
fn test_wide_1kb_tag_values() {
    let s = Shape { tags: 10, tag_bytes: 1024, fields: 8, devices: 60, rows: 2 };
    assert!(tag_value(0, 0, s.tag_bytes).len() >= 1024);
    check_wide(s, "tags1kb");
}
