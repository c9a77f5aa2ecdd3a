//! Conformance on files written by the official Java writer (what Apache IoTDB uses):
//! `tests/data/java/`, five files with the exact data written. Every table, every tree
//! device and every column is compared cell by cell, floats by their bit patterns, through
//! the library API and through SQL.

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use datafusion_tsfile::format::DeviceId;
use datafusion_tsfile::{TableRead, TsFile, TsFileOptions};
use serde_json::{json, Value};

use crate::common::repo_path;
use crate::sql::{block_on, ctx, quote};

/// The Java-written files, by stem.
const FILES: [&str; 5] = [
    "t01_table_defaults_alltypes",
    "t03_table_uncompressed_smallpages_nulls",
    "t05_table_gzip_float_encodings",
    "t08_tree_nonaligned_mixed",
    "t11_table_attribute_tag_order_null_tag",
];

fn tsfile_path(stem: &str) -> std::path::PathBuf {
    repo_path(&format!("tests/data/java/{stem}.tsfile"))
}

fn expected(stem: &str) -> Value {
    let path = repo_path(&format!("tests/data/java/{stem}.expected.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Days since the epoch → `yyyy-mm-dd` (civil calendar).
fn iso_date(days: i32) -> String {
    let z = i64::from(days) + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// One cell in the Java corpus' JSON convention.
fn java_cell(a: &ArrayRef, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Boolean => json!(a.as_boolean().value(i)),
        DataType::Int32 => json!(a.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => json!(a.as_primitive::<Int64Type>().value(i)),
        DataType::Date32 => json!(iso_date(a.as_primitive::<Date32Type>().value(i))),
        DataType::Float32 => json!(format!("0x{:08x}", a.as_primitive::<Float32Type>().value(i).to_bits())),
        DataType::Float64 => json!(format!("0x{:016x}", a.as_primitive::<Float64Type>().value(i).to_bits())),
        DataType::Utf8 => json!(a.as_string::<i32>().value(i)),
        DataType::Utf8View => json!(a.as_string_view().value(i)),
        DataType::Binary => json!(hex(a.as_binary::<i32>().value(i))),
        DataType::BinaryView => json!(hex(a.as_binary_view().value(i))),
        DataType::Dictionary(_, _) => {
            let d = a.as_dictionary::<Int32Type>();
            let k = d.keys().value(i) as usize;
            json!(d.values().as_string::<i32>().value(k))
        }
        DataType::Timestamp(_, _) => {
            json!(a.as_primitive::<arrow_array::types::TimestampMillisecondType>().value(i))
        }
        other => panic!("unexpected type {other}"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

fn rows_of(batches: &[RecordBatch]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            out.push(b.columns().iter().map(|c| java_cell(c, i)).collect());
        }
    }
    out
}

/// Cells equal: integers compared as i64 (they exceed f64's precision).
fn same(g: &Value, w: &Value) -> bool {
    match (g.as_i64(), w.as_i64()) {
        (Some(a), Some(b)) => a == b,
        _ => g == w,
    }
}

/// Sort key of a row `[time, c0, c1, ...]`: the TAG cells (null first), then time.
fn row_key(row: &[Value], tag_cols: &[usize]) -> (Vec<Option<String>>, i64) {
    let tags = tag_cols.iter().map(|&c| row.get(c + 1).and_then(|v| v.as_str().map(str::to_string))).collect();
    (tags, row.first().and_then(Value::as_i64).unwrap_or(i64::MIN))
}

/// Compare `got` with `want` (both `[time, c0, ...]` in `names` order) after sorting both by
/// device and time; returns the mismatching cell count, with per-column counts in `report`.
fn compare_rows(
    what: &str,
    names: &[String],
    tag_cols: &[usize],
    mut got: Vec<Vec<Value>>,
    want: &[Value],
    report: &mut Vec<String>,
) -> usize {
    let mut want: Vec<Vec<Value>> = want.iter().map(|r| r.as_array().unwrap().clone()).collect();
    got.sort_by_key(|r| row_key(r, tag_cols));
    want.sort_by_key(|r| row_key(r, tag_cols));
    let mut bad = 0;
    if got.len() != want.len() {
        report.push(format!("{what}: {} rows, expected {}", got.len(), want.len()));
        bad += got.len().abs_diff(want.len()).max(1);
    }
    let mut per_col = vec![0usize; names.len() + 1];
    let mut first: Vec<Option<String>> = vec![None; names.len() + 1];
    for (r, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.len() != w.len() {
            report.push(format!("{what}: row {r} has {} cells, expected {}", g.len(), w.len()));
            bad += 1;
            continue;
        }
        for (c, (gv, wv)) in g.iter().zip(w).enumerate() {
            if !same(gv, wv) {
                bad += 1;
                per_col[c] += 1;
                first[c].get_or_insert_with(|| format!("row {r} (time {}): got {gv}, want {wv}", w[0]));
            }
        }
    }
    for (c, n) in per_col.iter().enumerate() {
        if *n > 0 {
            let col = if c == 0 { "time" } else { names[c - 1].as_str() };
            report.push(format!(
                "{what}/{col}: {n} of {} cells differ; first: {}",
                want.len(),
                first[c].as_deref().unwrap_or("")
            ));
        }
    }
    bad
}

fn column_names(t: &Value) -> Vec<String> {
    t["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect()
}

fn tag_columns(t: &Value) -> Vec<usize> {
    t["columns"].as_array().unwrap().iter().enumerate().filter(|(_, c)| c["category"] == "TAG").map(|(i, _)| i).collect()
}

fn raw_options() -> TsFileOptions {
    TsFileOptions { time_unit: TimeUnit::Raw, ..Default::default() }
}

/// Cells compared and mismatches over one test's tables or devices.
#[derive(Default)]
struct Tally {
    cells: usize,
    mismatches: usize,
    report: Vec<String>,
}

impl Tally {
    /// Compare one table's or device's read (`Err`: it could not be read) with its expected
    /// rows; `tags` are the TAG column indexes of `names`.
    fn check<E: std::fmt::Display>(
        &mut self,
        what: &str,
        names: &[String],
        tags: &[usize],
        got: Result<Vec<RecordBatch>, E>,
        want: &[Value],
    ) {
        match got {
            Ok(b) => {
                self.cells += want.len() * (names.len() + 1);
                self.mismatches += compare_rows(what, names, tags, rows_of(&b), want, &mut self.report);
            }
            Err(e) => {
                self.report.push(format!("{what}: {e}"));
                self.mismatches += 1;
            }
        }
    }

    /// Print the report and the counts; fail on any mismatch or when nothing was compared.
    fn finish(&self, what: &str) {
        for r in &self.report {
            eprintln!("{r}");
        }
        println!("{what}: {} cells, {} mismatches", self.cells, self.mismatches);
        assert!(self.cells > 0, "{what}: nothing compared");
        assert_eq!(self.mismatches, 0, "{what}: {}", self.report.join("\n"));
    }
}

#[test]
fn test_java_tables_through_the_library() {
    let mut tally = Tally::default();
    for stem in FILES {
        let exp = expected(stem);
        let Some(tables) = exp["tables"].as_array() else { continue };
        let file = TsFile::open_with(tsfile_path(stem), raw_options()).unwrap_or_else(|e| panic!("{stem}: {e}"));
        for t in tables {
            let table = t["table"].as_str().unwrap();
            let names = column_names(t);
            let time = file.arrow_schema(table).unwrap().field(0).name().clone();
            let projection: Vec<String> = std::iter::once(time).chain(names.iter().cloned()).collect();
            let what = format!("{stem}/{table}");
            let got = file
                .read_table(table, TableRead::default().with_projection(projection))
                .and_then(|it| it.collect::<Result<Vec<_>, _>>());
            let want = t["rows"].as_array().unwrap();
            assert_eq!(want.len() as u64, t["row_count"].as_u64().unwrap(), "{what}: expected file");
            tally.check(&what, &names, &tag_columns(t), got, want);
        }
    }
    tally.finish("java tables (library)");
}

#[test]
fn test_java_tables_through_sql() {
    let mut tally = Tally::default();
    block_on(async {
        for stem in FILES {
            let exp = expected(stem);
            let Some(tables) = exp["tables"].as_array() else { continue };
            let path = tsfile_path(stem);
            for t in tables {
                let table = t["table"].as_str().unwrap();
                let names = column_names(t);
                let what = format!("{stem}/{table} (sql)");
                let c = ctx(2);
                let opts = TsFileReadOptions::default().with_table(table).with_time_unit(TimeUnit::Raw);
                let got = async {
                    register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await?;
                    let df = c.table("t").await?;
                    let time = df.schema().field(0).name().clone();
                    let cols: Vec<String> = std::iter::once(&time).chain(&names).map(|n| quote(n)).collect();
                    c.sql(&format!("SELECT {} FROM t", cols.join(", "))).await?.collect().await
                }
                .await;
                tally.check(&what, &names, &tag_columns(t), got, t["rows"].as_array().unwrap());
            }
        }
    });
    tally.finish("java tables (sql)");
}

#[test]
fn test_java_tree_devices_through_the_library() {
    let mut tally = Tally::default();
    for stem in FILES {
        let exp = expected(stem);
        let Some(devices) = exp["devices"].as_array() else { continue };
        let file = TsFile::open_with(tsfile_path(stem), raw_options()).unwrap_or_else(|e| panic!("{stem}: {e}"));
        for d in devices {
            let segs = d["java_device_id_segments"].as_array().unwrap();
            let dev = DeviceId::new(segs.iter().map(|s| s.as_str().map(str::to_string)).collect());
            assert_eq!(dev.to_string(), d["device"].as_str().unwrap(), "the device path joins its segments");
            let names = column_names(d);
            let ms: Vec<&str> = names.iter().map(String::as_str).collect();
            let what = format!("{stem}/{dev}");
            let got = file.read_tree_device(&dev, Some(&ms), None).map(|b| vec![b]);
            tally.check(&what, &names, &[], got, d["rows"].as_array().unwrap());
        }
    }
    tally.finish("java tree devices (library)");
}

#[test]
fn test_java_tree_devices_through_sql() {
    let mut tally = Tally::default();
    block_on(async {
        for stem in FILES {
            let exp = expected(stem);
            let Some(devices) = exp["devices"].as_array() else { continue };
            let path = tsfile_path(stem);
            for d in devices {
                let key = d["java_device_id_table_name"].as_str().unwrap();
                let dev = d["device"].as_str().unwrap();
                let names = column_names(d);
                let what = format!("{stem}/{dev} (sql)");
                let c = ctx(2);
                let opts = TsFileReadOptions::default().with_table(key).with_time_unit(TimeUnit::Raw);
                let cols: Vec<String> = std::iter::once("time").chain(names.iter().map(String::as_str)).map(quote).collect();
                let sql = format!("SELECT {} FROM t WHERE device = '{dev}'", cols.join(", "));
                let got = async {
                    register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await?;
                    c.sql(&sql).await?.collect().await
                }
                .await;
                tally.check(&what, &names, &[], got, d["rows"].as_array().unwrap());
            }
        }
    });
    tally.finish("java tree devices (sql)");
}

#[test]
fn test_iso_date() {
    assert_eq!(iso_date(0), "1970-01-01");
    assert_eq!(iso_date(11_016), "2000-02-29");
    assert_eq!(iso_date(-1), "1969-12-31");
}
