//! The cross-writer property test: the official C++ writer (PyPI `tsfile` 2.5.0, installed
//! into `target/cpp-writer-venv` from `tools/cpp-writer/requirements.txt` on first use)
//! writes files of random FLOAT/DOUBLE/INT32/INT64 values — NaN of several payloads and both
//! signs, ±∞, −0.0, subnormals, the extremes, long runs of one value — in every encoding it
//! supports for each type, several pages per chunk and several chunks per series, in tree
//! (non-aligned) and table (aligned) files (`tools/cpp-writer/write_random.py`). With default
//! options, the library and SQL must give every value back bit for bit.
//!
//! The files are generated here, not vendored: the generator is a pip install away, so CI
//! runs many seeds (`SEEDS`, widened with `TSFILE_CROSS_WRITER_SEEDS=N` for a longer run)
//! without adding megabytes of files to the repository, and a new writer release is one
//! line of `requirements.txt`. The seeds are fixed, so a failure reproduces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use datafusion_tsfile::format::DeviceId;
use datafusion_tsfile::{TableRead, TsFile};
use serde_json::Value;

use crate::python_venv::{ensure_venv, run};
use crate::sql::{block_on, ctx};

/// Seeds run by default: each writes a tree file (1–3 devices × 29 series) and a table file.
const SEEDS: u64 = 24;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Write the files of `seeds` into a fresh directory with the C++ writer.
fn generate(seeds: std::ops::Range<u64>) -> PathBuf {
    let python = ensure_venv(&root().join("target/cpp-writer-venv"), &root().join("tools/cpp-writer/requirements.txt"));
    let out = std::env::temp_dir().join(format!("tsfile-cross-writer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut cmd = Command::new(python);
    cmd.arg(root().join("tools/cpp-writer/write_random.py")).arg(&out);
    cmd.args(seeds.map(|s| s.to_string()));
    run(&mut cmd, "tools/cpp-writer/write_random.py");
    out
}

/// One written series: where it is, and its values (FLOAT/DOUBLE as bits).
struct Written {
    table: Option<String>,
    device: String,
    column: String,
    ty: String,
    encoding: String,
    times: Vec<i64>,
    values: Vec<u64>,
}

fn written(file: &Value) -> Vec<Written> {
    let s = |v: &Value| v.as_str().unwrap().to_string();
    file["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| Written {
            table: x["table"].as_str().map(str::to_string),
            device: s(&x["device"]),
            column: s(&x["column"]),
            ty: s(&x["type"]),
            encoding: s(&x["encoding"]),
            times: x["times"].as_array().unwrap().iter().map(|t| t.as_i64().unwrap()).collect(),
            // Integers as their two's-complement bits, floats as written.
            values: x["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap_or_else(|| v.as_i64().unwrap() as u64))
                .collect(),
        })
        .collect()
}

/// The value at row `i` as comparable bits; `None` for null.
fn bits(a: &ArrayRef, i: usize) -> Option<u64> {
    if a.is_null(i) {
        return None;
    }
    Some(match a.data_type() {
        DataType::Float32 => u64::from(a.as_primitive::<Float32Type>().value(i).to_bits()),
        DataType::Float64 => a.as_primitive::<Float64Type>().value(i).to_bits(),
        DataType::Int32 => i64::from(a.as_primitive::<Int32Type>().value(i)) as u64,
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i) as u64,
        DataType::Timestamp(_, _) => a.as_primitive::<arrow_array::types::TimestampMillisecondType>().value(i) as u64,
        other => panic!("unexpected column type {other}"),
    })
}

/// `(time, value bits)` of the non-null rows of `value` (with times from `time`).
fn points(batches: &[RecordBatch], time: &str, value: &str) -> Vec<(i64, u64)> {
    let mut out = Vec::new();
    for b in batches {
        let (t, v) = (b.column_by_name(time).unwrap(), b.column_by_name(value).unwrap());
        for i in 0..b.num_rows() {
            if let Some(x) = bits(v, i) {
                out.push((bits(t, i).unwrap() as i64, x));
            }
        }
    }
    out
}

/// Compare one series; a line per mismatch kind into `report`.
fn check(path: &str, w: &Written, via: &str, got: Result<Vec<(i64, u64)>, String>, report: &mut Vec<String>) -> usize {
    let what = format!("{path} {via} {}/{} {} {} {}", w.table.as_deref().unwrap_or("-"), w.device, w.column, w.ty, w.encoding);
    let got = match got {
        Ok(g) => g,
        Err(e) => {
            report.push(format!("{what}: {e}"));
            return 1;
        }
    };
    let want: Vec<(i64, u64)> = w.times.iter().copied().zip(w.values.iter().copied()).collect();
    if got.len() != want.len() {
        report.push(format!("{what}: {} values, {} written", got.len(), want.len()));
        return 1;
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&i) = bad.first() {
        report.push(format!(
            "{what}: {} of {} values differ; first at row {i}: got {:?}, written {:?} (bits in hex: {:x} vs {:x})",
            bad.len(),
            want.len(),
            got[i],
            want[i],
            got[i].1,
            want[i].1
        ));
    }
    usize::from(!bad.is_empty())
}

/// `(time, value bits)` of column `column` in the rows of `batches` whose column
/// `device_col` is `device`.
fn device_points(batches: &[RecordBatch], device_col: &str, device: &str, column: &str) -> Vec<(i64, u64)> {
    let rows: Vec<RecordBatch> = batches.iter().map(|b| only_device(b, device_col, device)).collect();
    points(&rows, "time", column)
}

/// The rows of `b` whose `device_col` is `device`.
fn only_device(b: &RecordBatch, device_col: &str, device: &str) -> RecordBatch {
    let dev = datafusion::arrow::compute::cast(b.column_by_name(device_col).unwrap(), &DataType::Utf8).unwrap();
    let mask: arrow_array::BooleanArray = dev.as_string::<i32>().iter().map(|d| Some(d == Some(device))).collect();
    datafusion::arrow::compute::filter_record_batch(b, &mask).unwrap()
}

/// Where a series lives: its table (or a tree device's table-index key), the column that
/// names its device in SQL, and its device.
fn place(w: &Written) -> (String, &'static str) {
    match &w.table {
        Some(t) => (t.clone(), "dev"),
        None => (w.device.rsplit_once('.').unwrap().0.to_string(), "device"),
    }
}

/// The library's reading of every written series of `path`: one read per tree device and
/// per table.
fn library(path: &Path, series: &[Written]) -> Vec<Result<Vec<(i64, u64)>, String>> {
    let file = TsFile::open(path).unwrap();
    let mut reads: BTreeMap<(Option<String>, String), Result<Vec<RecordBatch>, String>> = BTreeMap::new();
    series
        .iter()
        .map(|w| {
            let key = (w.table.clone(), if w.table.is_some() { String::new() } else { w.device.clone() });
            let batches = reads.entry(key).or_insert_with(|| {
                let read = match &w.table {
                    None => file.read_tree_device(&DeviceId::from_tree_path(&w.device), None, None).map(|b| vec![b]),
                    Some(t) => file.read_table(t, TableRead::default()).and_then(|r| r.collect::<Result<Vec<_>, _>>()),
                };
                read.map_err(|e| e.to_string())
            });
            let batches = batches.as_ref().map_err(|e| e.clone())?;
            Ok(match &w.table {
                None => points(batches, "time", &w.column),
                Some(_) => device_points(batches, "dev", &w.device, &w.column),
            })
        })
        .collect()
}

/// SQL's reading of every written series of `path` (default options): one query per table.
fn sql(path: &Path, series: &[Written]) -> Vec<Result<Vec<(i64, u64)>, String>> {
    block_on(async {
        let mut tables: BTreeMap<String, Result<Vec<RecordBatch>, String>> = BTreeMap::new();
        for w in series {
            let (key, _) = place(w);
            if tables.contains_key(&key) {
                continue;
            }
            let c = ctx(2);
            let opts = TsFileReadOptions::default().with_table(&key);
            register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await.unwrap();
            let got = match c.sql("SELECT * FROM t").await {
                Ok(df) => df.collect().await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            tables.insert(key, got);
        }
        series
            .iter()
            .map(|w| {
                let (key, device_col) = place(w);
                let batches = tables[&key].as_ref().map_err(|e| e.clone())?;
                let mut got = device_points(batches, device_col, &w.device, &w.column);
                got.sort_unstable_by_key(|p| p.0);
                Ok(got)
            })
            .collect()
    })
}

#[test]
fn test_cross_writer_cpp_values_bit_for_bit() {
    let seeds = std::env::var("TSFILE_CROSS_WRITER_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(SEEDS);
    let dir = generate(1..seeds + 1);
    let (mut files, mut series_count, mut values, mut bad) = (0usize, 0usize, 0usize, 0usize);
    let mut report = Vec::new();
    let mut combos: BTreeMap<String, usize> = BTreeMap::new();
    for seed in 1..seeds + 1 {
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("seed_{seed}.json"))).unwrap()).unwrap();
        for f in manifest["files"].as_array().unwrap() {
            files += 1;
            let name = f["file"].as_str().unwrap();
            let path = dir.join(name);
            let series = written(f);
            for w in &series {
                series_count += 1;
                values += w.values.len();
                *combos
                    .entry(format!("{} {} {}", if w.table.is_some() { "table" } else { "tree" }, w.ty, w.encoding))
                    .or_default() += 1;
            }
            for (via, got) in [("library", library(&path, &series)), ("sql", sql(&path, &series))] {
                for (w, g) in series.iter().zip(got) {
                    bad += check(name, w, via, g, &mut report);
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("cross-writer: {seeds} seeds, {files} files, {series_count} series, {values} values, {} (model, type, encoding) combinations", combos.len());
    assert!(
        bad == 0,
        "{bad} series differ from what the C++ writer wrote:\n{}",
        report.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
    // Every encoding the C++ writer accepts was exercised in the tree files.
    let tree_combos = combos.keys().filter(|k| k.starts_with("tree ")).count();
    assert_eq!(tree_combos, 6 + 7 + 8 + 8, "{combos:?}");
    assert!(values > 100_000, "{values} values");
}
