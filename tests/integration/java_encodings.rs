//! FLOAT/DOUBLE encodings of files written by the official Java TsFile writer: every float
//! column of `tests/data/java/t05` (one column per encoding: PLAIN, GORILLA, GORILLA_V1,
//! CHIMP, SPRINTZ, RLBE, RLE, TS_2DIFF) and the float columns of `t01`/`t03` read back
//! bit-exactly as the expected JSON (`tests/data/java/README.md`), through the public API.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::{TableRead, TsFile, TsFileOptions};
use serde_json::Value;

use crate::common::repo_path;

/// The parsed `X.expected.json` of a Java-written file.
fn expected(stem: &str) -> Value {
    let path = repo_path(&format!("tests/data/java/{stem}.expected.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The expected cell as IEEE bits (`"0x…"`), or `None` for a null.
fn expected_bits(v: &Value) -> Option<u64> {
    if v.is_null() {
        return None;
    }
    let s = v.as_str().unwrap_or_else(|| panic!("float cell {v} is not a string"));
    Some(u64::from_str_radix(s.strip_prefix("0x").unwrap(), 16).unwrap())
}

/// Bits of row `i` of a Float32/Float64 column, or `None` for a null.
fn got_bits(a: &dyn Array, i: usize) -> Option<u64> {
    if a.is_null(i) {
        return None;
    }
    match a.data_type() {
        DataType::Float32 => Some(u64::from(a.as_primitive::<Float32Type>().value(i).to_bits())),
        DataType::Float64 => Some(a.as_primitive::<Float64Type>().value(i).to_bits()),
        other => panic!("not a float column: {other}"),
    }
}

/// Per float column of one table: (column, encoding, rows compared, mismatching rows, first
/// mismatches). Rows are keyed by (tag values, time) so device order does not matter.
fn compare_float_columns(stem: &str, table: &Value) -> Vec<(String, String, usize, usize, Vec<String>)> {
    let name = table["table"].as_str().unwrap();
    let columns = table["columns"].as_array().unwrap();
    let tags: Vec<usize> = (0..columns.len()).filter(|&c| columns[c]["category"] == "TAG").collect();
    let floats: Vec<usize> =
        (0..columns.len()).filter(|&c| matches!(columns[c]["type"].as_str(), Some("FLOAT" | "DOUBLE"))).collect();
    assert!(!floats.is_empty(), "{stem}: no float column");
    let key_of = |tag_vals: Vec<Option<String>>, t: i64| (tag_vals, t);

    // Expected rows by key; expected row = [time, col0, col1, ...].
    let mut want: HashMap<(Vec<Option<String>>, i64), &Vec<Value>> = HashMap::new();
    for row in table["rows"].as_array().unwrap() {
        let row = row.as_array().unwrap();
        let tag_vals = tags.iter().map(|&c| row[c + 1].as_str().map(str::to_string)).collect();
        assert!(want.insert(key_of(tag_vals, row[0].as_i64().unwrap()), row).is_none(), "{stem}: duplicate row");
    }

    let file = TsFile::open_with(
        repo_path(&format!("tests/data/java/{stem}.tsfile")),
        TsFileOptions { time_unit: TimeUnit::Raw, ..Default::default() },
    )
    .unwrap();
    let mut projection = vec!["time".to_string()];
    projection.extend(tags.iter().chain(&floats).map(|&c| columns[c]["name"].as_str().unwrap().to_string()));
    let batches: Vec<RecordBatch> = file
        .read_table(name, TableRead::default().with_projection(projection))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{stem}/{name}: {e}"));

    let mut report: Vec<(String, String, usize, usize, Vec<String>)> = floats
        .iter()
        .map(|&c| {
            let col = &columns[c];
            (col["name"].as_str().unwrap().to_string(), col["encoding"].as_str().unwrap_or("").to_string(), 0, 0, Vec::new())
        })
        .collect();
    let mut seen = 0usize;
    for b in &batches {
        let times = b.column(0).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let tag_vals = (0..tags.len())
                .map(|k| {
                    let a = b.column(1 + k);
                    if a.is_null(i) {
                        None
                    } else {
                        let s = arrow_cast_string(a.as_ref(), i);
                        Some(s)
                    }
                })
                .collect();
            let key = key_of(tag_vals, times.value(i));
            let row = want.get(&key).unwrap_or_else(|| panic!("{stem}: unexpected row {key:?}"));
            seen += 1;
            for (k, &c) in floats.iter().enumerate() {
                let (name, _, n, bad, first) = &mut report[k];
                let g = got_bits(b.column(1 + tags.len() + k).as_ref(), i);
                let w = expected_bits(&row[c + 1]);
                *n += 1;
                if g != w {
                    *bad += 1;
                    if first.len() < 3 {
                        first.push(format!("{name} at {key:?}: got {g:x?}, want {w:x?}"));
                    }
                }
            }
        }
    }
    assert_eq!(seen, want.len(), "{stem}/{name}: row count");
    report
}

/// A tag value as a string (plain or dictionary-encoded Utf8).
fn arrow_cast_string(a: &dyn Array, i: usize) -> String {
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
        DataType::Dictionary(_, _) => {
            let d = a.as_dictionary::<arrow_array::types::Int32Type>();
            let k = d.keys().value(i) as usize;
            d.values().as_string::<i32>().value(k).to_string()
        }
        other => panic!("unexpected tag type {other}"),
    }
}

/// Compare every float column of every table of a Java-written file; returns the encodings
/// checked.
fn check_file(stem: &str) -> Vec<String> {
    let exp = expected(stem);
    let mut failures = Vec::new();
    let mut encodings = Vec::new();
    for table in exp["tables"].as_array().unwrap() {
        for (col, enc, n, bad, first) in compare_float_columns(stem, table) {
            assert!(n > 0, "{stem}: {col} compared no rows");
            encodings.push(enc.clone());
            if bad > 0 {
                failures.push(format!("{stem} {col} ({enc}): {bad} of {n} rows differ; {}", first.join("; ")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    encodings
}

#[test]
fn test_java_t05_every_float_encoding_bit_exact() {
    let encodings = check_file("t05_table_gzip_float_encodings");
    // Two columns (FLOAT, DOUBLE) per encoding, every encoding of the file.
    for enc in ["PLAIN", "GORILLA", "GORILLA_V1", "CHIMP", "SPRINTZ", "RLBE", "RLE", "TS_2DIFF"] {
        assert_eq!(encodings.iter().filter(|e| *e == enc).count(), 2, "{enc}");
    }
    assert_eq!(encodings.len(), 16);
}

#[test]
fn test_java_t01_t03_float_columns_bit_exact() {
    for stem in ["t01_table_defaults_alltypes", "t03_table_uncompressed_smallpages_nulls"] {
        let encodings = check_file(stem);
        assert!(encodings.len() >= 2, "{stem}: {encodings:?}");
    }
}
