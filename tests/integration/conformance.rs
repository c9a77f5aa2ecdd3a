//! Value conformance: every table and every tree device of every corpus file reads back
//! exactly as its expected JSONL file (float bit patterns, nulls, blobs, dates, row order).

use std::io::BufRead;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::format::{DeviceId, Encoding};
use datafusion_tsfile::{TableRead, TsFile, TsFileOptions};
use serde_json::{json, Value};

use crate::common::{corpus_dir, file_path, manifest, manifest_files};

/// Days since the epoch → `YYYYMMDD`.
fn days_to_yyyymmdd(z: i32) -> i64 {
    let z = i64::from(z) + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    y * 10_000 + m * 100 + d
}

/// One cell in the corpus' JSON convention.
pub fn cell(a: &ArrayRef, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Boolean => json!(a.as_boolean().value(i)),
        DataType::Int32 => json!(a.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => json!(a.as_primitive::<Int64Type>().value(i)),
        DataType::Date32 => json!(days_to_yyyymmdd(a.as_primitive::<arrow_array::types::Date32Type>().value(i))),
        DataType::Float32 => json!(format!("f32:{:08x}", a.as_primitive::<Float32Type>().value(i).to_bits())),
        DataType::Float64 => json!(format!("f64:{:016x}", a.as_primitive::<Float64Type>().value(i).to_bits())),
        DataType::Utf8 => json!(a.as_string::<i32>().value(i)),
        DataType::Utf8View => json!(a.as_string_view().value(i)),
        DataType::Timestamp(unit, _) => {
            json!(format!("{unit:?}:{}", datafusion::arrow::util::display::array_value_to_string(a, i).unwrap()))
        }
        DataType::Binary => json!(a.as_binary::<i32>().value(i).iter().map(|b| format!("{b:02x}")).collect::<String>()),
        DataType::Dictionary(_, _) => {
            let d = a.as_dictionary::<Int32Type>();
            let k = d.keys().value(i) as usize;
            json!(d.values().as_string::<i32>().value(k))
        }
        other => panic!("unexpected type {other}"),
    }
}

fn read_expected(rel: &str) -> (Value, Vec<Vec<Value>>) {
    let path = corpus_dir().join(rel);
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = std::io::BufReader::new(f).lines();
    let header: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let rows = lines.map(|l| serde_json::from_str::<Vec<Value>>(&l.unwrap()).unwrap()).collect();
    (header, rows)
}

fn batch_rows(batches: &[RecordBatch]) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            rows.push(b.columns().iter().map(|c| cell(c, i)).collect());
        }
    }
    rows
}

/// Compare rows; returns the number of mismatching cells and prints the first few.
fn compare(what: &str, got: &[Vec<Value>], want: &[Vec<Value>], report: &mut Vec<String>) -> usize {
    let mut bad = 0;
    if got.len() != want.len() {
        report.push(format!("{what}: {} rows, expected {}", got.len(), want.len()));
        bad += got.len().abs_diff(want.len());
    }
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        for (c, (gv, wv)) in g.iter().zip(w).enumerate() {
            // Expected integers may be JSON numbers beyond f64 precision: compare as i64.
            let same = match (gv.as_i64(), wv.as_i64()) {
                (Some(a), Some(b)) => a == b,
                _ => gv == wv,
            };
            if !same {
                bad += 1;
                if report.len() < 40 {
                    report.push(format!("{what}: row {r} col {c}: got {gv}, want {wv}"));
                }
            }
        }
    }
    bad
}

fn options_for(entry: &Value) -> TsFileOptions {
    let mut o = TsFileOptions { time_unit: TimeUnit::Raw, ..Default::default() };
    if let Some(enc) = entry["reader_hints"]["nonaligned_time_encoding"].as_str() {
        o.read.nonaligned_time_encoding = Encoding::from_name(enc).unwrap();
    }
    o
}

#[test]
fn test_conformance_every_table_and_device() {
    let m = manifest();
    let files = manifest_files(&m);
    assert!(!files.is_empty());
    let (mut nfiles, mut nrows, mut mismatches) = (0usize, 0usize, 0usize);
    let mut report = Vec::new();
    for entry in &files {
        let name = entry["name"].as_str().unwrap().to_string();
        let file = match TsFile::open_with(file_path(entry), options_for(entry)) {
            Ok(f) => f,
            Err(e) => {
                report.push(format!("{name}: cannot open: {e}"));
                mismatches += 1;
                continue;
            }
        };
        nfiles += 1;
        for exp in entry["expected"].as_array().unwrap() {
            let (header, want) = read_expected(exp["path"].as_str().unwrap());
            let cols: Vec<String> =
                header["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect();
            let result: Result<Vec<RecordBatch>, String> = if let Some(table) = exp["table"].as_str() {
                let what = format!("{name}/{table}");
                file.read_table(table, TableRead::default().with_projection(cols.clone()))
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| format!("{what}: {e}"))
            } else {
                let segs = exp["segments"].as_array().unwrap();
                let dev = DeviceId::new(segs.iter().map(|s| s.as_str().map(str::to_string)).collect());
                let ms: Vec<&str> = cols.iter().skip(1).map(String::as_str).collect();
                // The default column set (all measurements by name) must equal the expected one.
                match file.read_tree_device(&dev, None, None) {
                    Ok(b) => {
                        let names: Vec<String> = b.schema().fields().iter().map(|f| f.name().clone()).collect();
                        if names != cols {
                            report.push(format!("{name}/{dev}: columns {names:?}, expected {cols:?}"));
                            mismatches += 1;
                        }
                    }
                    Err(e) => report.push(format!("{name}/{dev}: {e}")),
                }
                file.read_tree_device(&dev, Some(&ms), None).map(|b| vec![b]).map_err(|e| format!("{name}/{dev}: {e}"))
            };
            match result {
                Ok(batches) => {
                    let got = batch_rows(&batches);
                    nrows += got.len();
                    let what = format!("{name}/{}", exp["table"].as_str().or(exp["device"].as_str()).unwrap_or("?"));
                    mismatches += compare(&what, &got, &want, &mut report);
                }
                Err(e) => {
                    report.push(e);
                    mismatches += 1;
                }
            }
        }
    }
    for r in &report {
        eprintln!("{r}");
    }
    println!("conformance: {nfiles} files, {nrows} rows, {mismatches} mismatches");
    assert_eq!(nfiles, files.len(), "some files could not be opened");
    assert_eq!(mismatches, 0);
}

#[test]
fn test_days_to_yyyymmdd() {
    assert_eq!(days_to_yyyymmdd(0), 19700101);
    assert_eq!(days_to_yyyymmdd(11016), 20000229);
    assert_eq!(days_to_yyyymmdd(-1), 19691231);
}
