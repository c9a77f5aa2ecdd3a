//! Runs the `tsfile` binary and checks its output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod object_stores;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = root().join("tests/data/corpus/files");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    assert!(v.len() >= 30, "corpus missing in {}", dir.display());
    v
}

fn tsfile(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tsfile")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn test_inspect_and_json_on_every_corpus_file() {
    for f in corpus_files() {
        let p = f.to_str().unwrap();
        let (ok, out, err) = tsfile(&["inspect", p]);
        assert!(ok, "{p}: {err}");
        assert!(out.contains("TsFile v4"), "{p}: {out}");
        let (ok, out, err) = tsfile(&["inspect", "--json", p]);
        assert!(ok, "{p}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["version"], 4);
        // Every corpus file is C++-written, and no page of it contradicts that.
        let w = &v["writer"];
        assert_eq!((w["decision"].as_str(), w["footer"]["writer"].as_str()), (Some("cpp"), Some("cpp")), "{p}: {w}");
        assert!(w["contradiction"].is_null() && w["pages"]["decide_java"] == 0, "{p}: {w}");
        for key in [
            "tables",
            "table_index_keys",
            "devices",
            "chunk_groups",
            "markers",
            "bloom_filter",
            "properties",
            "operation_index_ranges",
        ] {
            assert!(v.get(key).is_some(), "{p}: no {key}");
        }
        let (ok, out, err) = tsfile(&["inspect", "--scan", p]);
        assert!(ok, "{p}: {err}");
        assert!(out.contains("data section complete"), "{p}: {out}");
    }
}

#[test]
fn test_inspect_shows_the_writer_decision_and_its_evidence() {
    // The Java-written file with RLBE and SPRINTZ floats: its footer and every
    // writer-dependent page say Java.
    let p = root().join("tests/data/java/t05_table_gzip_float_encodings.tsfile");
    let (ok, out, err) = tsfile(&["inspect", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let w = &v["writer"];
    assert_eq!(w["decision"], "java", "{w}");
    assert_eq!(w["footer"]["evidence"], "property encryptKey stored with a value (the Java writer)");
    assert_eq!((w["pages"]["checked"].as_u64(), w["pages"]["decide_java"].as_u64()), (Some(18), Some(18)), "{w}");
    assert!(w["contradiction"].is_null());
    let (ok, out, _) = tsfile(&["inspect", p.to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("writer: Java (footer: property encryptKey stored with a value (the Java writer))"), "{out}");
    assert!(out.contains("18 checked, 18 decide Java, 0 decide C++"), "{out}");
    // A C++-written file whose RLBE/SPRINTZ pages decide C++.
    let p = root().join("tests/data/corpus/files/table_enc_5.tsfile");
    let (ok, out, _) = tsfile(&["inspect", p.to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("writer: C++ (footer: property encryptKey stored without a value (the C++ writer))"), "{out}");
    assert!(out.contains("23 checked, 0 decide Java, 23 decide C++"), "{out}");
    // Encrypted pages are not surveyed without a key, and the output says so.
    let p = root().join("tests/data/encrypted/aes128_level2.tsfile");
    let (ok, out, _) = tsfile(&["inspect", p.to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("writer-dependent pages not checked: the pages are encrypted and no key was given"), "{out}");
}

#[test]
fn test_inspect_json_content_of_one_file() {
    let p = root().join("tests/data/corpus/files/table_multi_tables.tsfile");
    let (ok, out, _) = tsfile(&["inspect", "--json", p.to_str().unwrap()]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["table_index_keys"], serde_json::json!(["events", "global_counters", "sensors"]));
    assert_eq!(v["chunk_groups"], 6);
    assert_eq!(v["markers"]["0x00"], 6);
    assert_eq!(v["bloom_filter"]["size_bits"], 256);
    assert_eq!(v["properties"]["encryptKey"], serde_json::Value::Null);
    assert_eq!(v["properties"]["encryptLevel"]["hex"], "30");
    assert_eq!(v["operation_index_ranges"], serde_json::json!([[0, 0]]));
    let devices = v["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 6);
    let sensors: Vec<_> = devices.iter().filter(|d| d["table"] == "sensors").collect();
    assert_eq!(sensors[0]["segments"], serde_json::json!(["sensors", "r1", "1"]));
    let series = sensors[0]["series"].as_array().unwrap();
    assert_eq!(series[0]["measurement"], "");
    assert_eq!(series[0]["data_type"], "VECTOR");
    let value = series.iter().find(|s| s["measurement"] == "value").unwrap();
    assert_eq!(value["data_type"], "DOUBLE");
    for k in ["count", "start_time", "end_time", "min", "max", "first", "last", "sum"] {
        assert!(value["statistics"].get(k).is_some(), "no {k}");
    }
    assert_eq!(value["chunks"][0]["encoding"], "GORILLA");
    assert_eq!(value["chunks"][0]["compression"], "LZ4");
    assert_eq!(value["chunks"][0]["pages"], 3);
}

#[test]
fn test_inspect_scan_of_truncated_file_lists_complete_groups() {
    let src = root().join("tests/data/corpus/files/tree_chunk_groups.tsfile");
    let bytes = std::fs::read(&src).unwrap();
    // Find the 4th chunk group from a full scan and cut inside its first chunk.
    let (ok, out, _) = tsfile(&["inspect", "--scan", "--json", src.to_str().unwrap()]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let groups = v["chunk_groups"].as_array().unwrap();
    let cut = groups[3]["chunks"][0]["offset"].as_u64().unwrap() as usize + 20;
    let tmp = std::env::temp_dir().join(format!("tsfile-cli-cut-{}.tsfile", std::process::id()));
    std::fs::write(&tmp, &bytes[..cut]).unwrap();
    let (ok, out, err) = tsfile(&["inspect", "--scan", "--json", tmp.to_str().unwrap()]);
    assert!(ok, "{err}");
    let cutv: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cg = cutv["chunk_groups"].as_array().unwrap();
    let complete: Vec<_> = cg.iter().filter(|g| g["complete"] == true).collect();
    assert_eq!(complete.len(), 3);
    for (a, b) in complete.iter().zip(groups) {
        assert_eq!(a["path"], b["path"]);
        assert_eq!(a["chunks"], b["chunks"]);
    }
    assert!(cutv["separator_offset"].is_null());
    assert!(cutv["stopped_by"].as_str().unwrap().contains("truncated"));
    let (ok, text, _) = tsfile(&["inspect", "--scan", tmp.to_str().unwrap()]);
    assert!(ok);
    assert!(text.contains("incomplete"), "{text}");
    // Opening through the footer fails with one clear line.
    let (ok, _, err) = tsfile(&["inspect", tmp.to_str().unwrap()]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("tail magic"), "{err}");
    std::fs::remove_file(&tmp).unwrap();
}

#[test]
fn test_errors_are_one_line() {
    let (ok, _, err) = tsfile(&["inspect", "/nonexistent/file.tsfile"]);
    assert!(!ok);
    assert!(err.starts_with("error: "), "{err}");
    assert_eq!(err.lines().count(), 1);
    let readme = root().join("README.md");
    let (ok, _, err) = tsfile(&["inspect", readme.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("not a TsFile"), "{err}");
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tsfile-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run `tsfile` in the repository root (so `data/sample.tsfile` resolves).
fn tsfile_in_root(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tsfile")).args(args).current_dir(root()).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `tsfile sql -q --format ndjson -c SQL…`: the rows of the last statement as JSON objects.
fn sql_rows(commands: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["sql", "-q", "--format", "nd-json"];
    for c in commands {
        args.extend(["-c", c]);
    }
    let (ok, out, err) = tsfile_in_root(&args);
    assert!(ok, "{commands:?}: {err}");
    out.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"))).collect()
}

fn sample_facts() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(root().join("data/sample.expected.json")).unwrap()).unwrap()
}

#[test]
fn test_sql_query_prints_ndjson() {
    let facts = sample_facts();
    let rows = sql_rows(&["SELECT region, count(*) AS n FROM 'data/sample.tsfile' GROUP BY region ORDER BY region"]);
    let want = facts["rows_per_region"].as_object().unwrap();
    assert_eq!(rows.len(), want.len());
    for r in &rows {
        let region = r["region"].as_str().unwrap();
        assert_eq!(r["n"], want[region], "{region}");
    }
}

#[test]
fn test_create_external_table_then_select() {
    let facts = sample_facts();
    let rows = sql_rows(&[
        "CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION 'data/' OPTIONS ('tsfile.table' 'weather')",
        "SELECT count(*) AS n, sum(energy_wh) AS e, count(humidity) AS h, min(day) AS d FROM w",
    ]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["n"], facts["row_count"]);
    assert_eq!(rows[0]["e"], facts["sum_energy_wh"]);
    assert_eq!(rows[0]["h"], facts["non_null_counts"]["humidity"]);
    assert_eq!(rows[0]["d"], facts["day_min"]);

    // The same statements from a file (-f), with other output formats.
    let dir = scratch("sqlfile");
    let script = dir.join("q.sql");
    std::fs::write(&script, "CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION 'data/sample.tsfile';\nSELECT count(DISTINCT device) AS devices FROM w;\n").unwrap();
    let (ok, out, err) = tsfile_in_root(&["sql", "-q", "--format", "csv", "-f", script.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), format!("devices\n{}", facts["device_count"]));
    let (ok, out, err) = tsfile_in_root(&[
        "sql",
        "-q",
        "--format",
        "table",
        "-c",
        "SELECT count(*) AS n FROM 'data/sample.tsfile' WHERE device = 'ws-central-0-0'",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("| {} |", facts["rows_first_device"]["rows"])), "{out}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_tsfile_metadata_function() {
    let facts = sample_facts();
    let rows = sql_rows(&[
        "SELECT category, count(*) AS series, sum(point_count) AS points, min(start_time) AS t0, max(end_time) AS t1 \
                          FROM tsfile_metadata('data/sample.tsfile') WHERE category = 'TIME' GROUP BY category",
    ]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["series"], facts["device_count"]);
    assert_eq!(rows[0]["points"], facts["row_count"]);
    assert_eq!(rows[0]["t0"], facts["time_min"]);
    assert_eq!(rows[0]["t1"], facts["time_max"]);
    // One field series: its encoding and compression come from the chunk headers.
    let rows = sql_rows(&["SELECT measurement, data_type, encoding, compression, aligned, chunk_count, \"table\" AS t \
                          FROM tsfile_metadata('data/sample.tsfile') WHERE device = 'weather.central.central-site-0.ws-central-0-0' ORDER BY measurement"]);
    let by_name = |n: &str| rows.iter().find(|r| r["measurement"] == n).unwrap_or_else(|| panic!("{n} in {rows:?}")).clone();
    let t = by_name("temperature");
    assert_eq!(
        (t["data_type"].as_str(), t["encoding"].as_str(), t["compression"].as_str()),
        (Some("DOUBLE"), Some("GORILLA"), Some("LZ4"))
    );
    assert_eq!(t["aligned"], true);
    assert_eq!(t["t"], "weather");
    assert_eq!(by_name("status")["encoding"], "PLAIN");
    assert_eq!(by_name("time")["encoding"], "TS_2DIFF");
    // Humidity has nulls: the sum of its counts is the non-null count.
    let rows = sql_rows(&["SELECT sum(point_count) AS n FROM tsfile_metadata('data/') WHERE measurement = 'humidity'"]);
    assert_eq!(rows[0]["n"], facts["non_null_counts"]["humidity"]);
}

/// A failing `tsfile sql -c`: one `error: ` line on stderr that contains `needle`.
fn assert_sql_error(sql: &str, needle: &str) {
    let (ok, _, err) = tsfile_in_root(&["sql", "-q", "-c", sql]);
    assert!(!ok, "{sql} succeeded");
    assert!(err.starts_with("error: "), "{sql}: {err}");
    assert_eq!(err.lines().count(), 1, "{sql}: {err}");
    assert!(err.contains(needle), "{sql}: expected '{needle}' in {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn test_sql_errors_are_one_clear_line() {
    let dir = scratch("sqlerr");
    let not_tsfile = dir.join("readme.tsfile");
    std::fs::copy(root().join("README.md"), &not_tsfile).unwrap();
    let truncated = dir.join("cut.tsfile");
    let bytes = std::fs::read(root().join("data/sample.tsfile")).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let d = dir.to_str().unwrap();

    assert_sql_error(&format!("SELECT * FROM '{d}/missing.tsfile'"), "missing.tsfile");
    // Files are named as written: the absolute path with its leading `/`.
    assert_sql_error(&format!("SELECT * FROM '{d}/readme.tsfile'"), &format!("file {d}/readme.tsfile"));
    assert_sql_error(&format!("SELECT count(*) FROM '{d}/cut.tsfile'"), &format!("file {d}/cut.tsfile: "));
    assert_sql_error(
        "CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION 'data/sample.tsfile' OPTIONS ('tsfile.table' 'nope')",
        "nope",
    );
    assert_sql_error(&format!("SELECT * FROM tsfile_metadata('{d}/cut.tsfile')"), "tail magic");
    assert_sql_error(&format!("SELECT * FROM tsfile_metadata('{d}/cut.tsfile')"), &format!("file {d}/cut.tsfile: "));
    assert_sql_error("SELECT * FROM tsfile_metadata(42)", "tsfile_metadata");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_inspect_shows_what_the_java_writer_chose() {
    // A tree file of non-aligned series: version, encodings and compressions per chunk.
    let p = root().join("tests/data/java/t08_tree_nonaligned_mixed.tsfile");
    let (ok, out, err) = tsfile(&["inspect", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("TsFile v4"), "{out}");
    assert!(out.contains("root.sg1.d2  non-aligned  segments=[\"root.sg1\",\"d2\"]"), "{out}");
    assert!(out.contains("RLBE/SNAPPY") && out.contains("PLAIN/LZMA2") && out.contains("SPRINTZ/UNCOMPRESSED"), "{out}");
    // A table: aligned devices, and the JSON says so too.
    let p = root().join("tests/data/java/t11_table_attribute_tag_order_null_tag.tsfile");
    let (ok, out, err) = tsfile(&["inspect", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("edge..u2  aligned  segments="), "{out}");
    let (ok, out, err) = tsfile(&["inspect", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["devices"].as_array().unwrap().iter().all(|d| d["aligned"] == true), "{out}");
}

#[test]
fn test_sql_script_with_a_failing_statement_exits_non_zero() {
    let dir = scratch("sqlscript");
    let script = dir.join("q.sql");
    // The failing statement is in the middle: the ones after it still run.
    std::fs::write(
        &script,
        "-- a comment\nSELECT 1 AS a;\nSELECT * FROM 'no/such/file.tsfile';\nSELECT 2\n  AS b;\nSELECT 3 AS c",
    )
    .unwrap();
    let (ok, out, err) = tsfile_in_root(&["sql", "-q", "--format", "csv", "-f", script.to_str().unwrap()]);
    assert!(!ok, "a failed statement must fail the script: {out}");
    assert_eq!(out.split_whitespace().collect::<Vec<_>>(), ["a", "1", "b", "2", "c", "3"], "{err}");
    assert!(err.contains("file.tsfile"), "{err}");
    assert!(err.lines().last().unwrap_or("").contains("1 statement failed"), "{err}");
    // A script without failures exits 0.
    std::fs::write(&script, "SELECT 1 AS a;\n").unwrap();
    let (ok, _, err) = tsfile_in_root(&["sql", "-q", "-f", script.to_str().unwrap()]);
    assert!(ok, "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_export_to_parquet_reads_back_the_same_rows() {
    let facts = sample_facts();
    let dir = scratch("export");
    let out = dir.join("north.parquet");
    let o = out.to_str().unwrap();
    let (ok, stdout, err) =
        tsfile_in_root(&["export", "data/sample.tsfile", "--to", o, "--where", "region = 'north'", "--compression", "zstd"]);
    assert!(ok, "{err}");
    assert!(stdout.starts_with("exported 200,680 rows"), "{stdout}");
    assert!(!dir.join("north.parquet.partial").exists());
    let q = |from: &str| {
        format!("SELECT count(*) AS n, sum(energy_wh) AS e, count(humidity) AS h, count(DISTINCT device) AS d, max(time) AS t FROM {from} WHERE region = 'north'")
    };
    let from_parquet = sql_rows(&[&q(&format!("'{o}'"))]);
    let from_tsfile = sql_rows(&[&q("'data/sample.tsfile'")]);
    assert_eq!(from_parquet, from_tsfile);
    assert_eq!(from_parquet[0]["n"], facts["rows_per_region"]["north"]);

    // An existing output is kept unless --force.
    let (ok, _, err) = tsfile_in_root(&["export", "data/sample.tsfile", "--to", o]);
    assert!(!ok && err.contains("--force"), "{err}");
    let (ok, _, err) = tsfile_in_root(&["export", "-q", "data/sample.tsfile", "--to", o, "--force"]);
    assert!(ok, "{err}");
    assert_eq!(sql_rows(&[&format!("SELECT count(*) AS n FROM '{o}'")])[0]["n"], facts["row_count"]);

    // A directory output: one file per table of a multi-table file.
    let multi = root().join("tests/data/corpus/files/table_multi_tables.tsfile");
    let outdir = dir.join("tables");
    let (ok, stdout, err) = tsfile_in_root(&["export", multi.to_str().unwrap(), "--to", outdir.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
    assert!(stdout.contains("exported 0 rows (table never_written)"), "{stdout}");
    assert!(stdout.contains("exported 273 rows (table events)"), "{stdout}");
    for t in ["events", "global_counters", "sensors", "never_written"] {
        assert!(outdir.join(format!("table_multi_tables.{t}.parquet")).is_file(), "{t}: {stdout}");
    }
    // Bad input: one clear error line.
    let (ok, _, err) = tsfile_in_root(&["export", "README.md", "--to", o, "--force"]);
    assert!(!ok && err.starts_with("error: ") && err.lines().count() == 1, "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Run `tsfile` in the repository root with `TSFILE_MASTER_KEY` set (or removed).
fn tsfile_with_env_key(args: &[&str], key: Option<&str>) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tsfile"));
    cmd.args(args).current_dir(root());
    match key {
        Some(k) => cmd.env("TSFILE_MASTER_KEY", k),
        None => cmd.env_remove("TSFILE_MASTER_KEY"),
    };
    let out = cmd.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn test_encrypted_files_with_flag_env_and_without_key() {
    const KEY: &str = "tsfile-rs-master";
    let q = "SELECT dev, sum(v) AS v FROM 'tests/data/encrypted/aes128_level2.tsfile' GROUP BY dev ORDER BY dev";
    let want = "{\"dev\":\"d1\",\"v\":60}\n{\"dev\":\"d2\",\"v\":300}";
    // The flag, and the environment variable.
    let (ok, out, err) = tsfile_with_env_key(&["sql", "-q", "--format", "nd-json", "--master-key", KEY, "-c", q], None);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), want);
    let (ok, out, err) =
        tsfile_with_env_key(&["sql", "-q", "--format", "nd-json", "-c", q], Some("747366696c652d72732d6d6173746572"));
    assert!(ok, "{err}");
    assert_eq!(out.trim(), want);
    // No key: whole-table sums come from the (plaintext) statistics; reading values is one
    // clear line naming what is missing; a bad key is not echoed.
    let (ok, out, err) = tsfile_with_env_key(&["sql", "-q", "--format", "nd-json", "-c", q], None);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), want);
    let filtered = q.replace("GROUP BY", "WHERE v > 0 GROUP BY");
    let (ok, _, err) = tsfile_with_env_key(&["sql", "-q", "-c", &filtered], None);
    assert!(!ok && err.contains("encrypted file") && err.contains("--master-key"), "{err}");
    let (ok, _, err) = tsfile_with_env_key(&["sql", "-q", "--master-key", "secret-but-bad", "-c", q], None);
    assert!(!ok && err.contains("32 hex digits") && !err.contains("secret-but-bad"), "{err}");
    // Metadata needs no key: tsfile_metadata() reads footers and chunk headers only.
    let m = "SELECT sum(point_count) AS n, min(compression) AS c FROM tsfile_metadata('tests/data/encrypted/aes128_level2.tsfile') WHERE category = 'TIME'";
    let (ok, out, err) = tsfile_with_env_key(&["sql", "-q", "--format", "nd-json", "-c", m], None);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "{\"n\":5,\"c\":\"LZ4\"}");
    // Export decrypts the same way, and inspect does not show key material.
    let dir = scratch("encrypted");
    let out = dir.join("l2.parquet");
    let (ok, _, err) = tsfile_with_env_key(
        &["export", "-q", "tests/data/encrypted/aes128_level2.tsfile", "--to", out.to_str().unwrap()],
        Some(KEY),
    );
    assert!(ok, "{err}");
    let q = format!("SELECT sum(v) AS v, count(*) AS n FROM '{}'", out.display());
    let (ok, rows, err) = tsfile_with_env_key(&["sql", "-q", "--format", "nd-json", "-c", &q], None);
    assert!(ok, "{err}");
    assert_eq!(rows.trim(), "{\"v\":360,\"n\":5}");
    let (ok, text, err) = tsfile_with_env_key(&["inspect", "tests/data/encrypted/aes128_level1.tsfile"], None);
    assert!(ok, "{err}");
    assert!(text.contains("encryptKey") && text.contains("not shown") && !text.contains("16,17,18"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_inspect_version_3_file() {
    let p = root().join("tests/data/v3/v3TsFile.tsfile");
    let (ok, out, err) = tsfile(&["inspect", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], 3);
    assert_eq!(v["table_index_keys"], serde_json::json!(["d1", "d2"]));
    assert_eq!(v["chunk_groups"], 2);
    assert_eq!(v["meta_offset"], 100);
    assert_eq!(v["bloom_filter"]["size_bits"], 256);
    let devices = v["devices"].as_array().unwrap();
    assert_eq!(devices.iter().map(|d| d["path"].clone()).collect::<Vec<_>>(), [serde_json::json!("d1"), serde_json::json!("d2")]);
    let (ok, out, err) = tsfile(&["inspect", "--scan", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], 3);
    assert_eq!(v["separator_offset"], 100);
    assert_eq!(v["chunk_groups"][1]["path"], "d2");
    assert_eq!(v["chunk_groups"][1]["chunks"][0]["marker"], "0x45");
    let (ok, text, err) = tsfile(&["inspect", p.to_str().unwrap()]);
    assert!(ok && !text.is_empty(), "{err}");
}

#[test]
fn test_convert_parquet_to_tsfile_reads_back_the_same_rows() {
    let dir = scratch("convert");
    let parquet = dir.join("north.parquet");
    let p = parquet.to_str().unwrap();
    let (ok, _, err) = tsfile_in_root(&["export", "-q", "data/sample.tsfile", "--to", p, "--where", "region = 'north'"]);
    assert!(ok, "{err}");
    let out = dir.join("north.tsfile");
    let o = out.to_str().unwrap();
    let (ok, stdout, err) = tsfile_in_root(&[
        "convert",
        p,
        "--to",
        o,
        "--tags",
        "region,site,device",
        "-o",
        "page_max_points=5000",
        "-o",
        "memory_limit=8m",
    ]);
    assert!(ok, "{err}");
    assert!(stdout.starts_with("converted 200,680 rows from 1 input(s)"), "{stdout}");
    let q = |from: &str| {
        format!(
            "SELECT count(*) AS n, sum(energy_wh) AS e, count(humidity) AS h, count(DISTINCT device) AS d, min(time) AS t0, \
             max(time) AS t1 FROM {from} WHERE region = 'north'"
        )
    };
    assert_eq!(sql_rows(&[&q(&format!("'{o}'"))]), sql_rows(&[&q("'data/sample.tsfile'")]));
    // Every row, bit for bit: the set difference both ways is empty.
    let diff = |a: &str, b: &str| format!("SELECT count(*) AS n FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})");
    let sample = "(SELECT * FROM 'data/sample.tsfile' WHERE region = 'north')";
    assert_eq!(sql_rows(&[&diff(&format!("'{o}'"), sample)])[0]["n"], 0);
    assert_eq!(sql_rows(&[&diff(sample, &format!("'{o}'"))])[0]["n"], 0);
    // The layout: one table named after the file, 100 devices, TS_2DIFF/GORILLA/LZ4.
    let (ok, text, err) = tsfile_in_root(&["inspect", "--json", o]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["tables"][0]["name"], "north", "{text}");
    let (ok, _, err) = tsfile_in_root(&["convert", p, "--to", o]);
    assert!(!ok && err.contains("--force"), "{err}");
    let (ok, _, err) = tsfile_in_root(&["convert", "README.md", "--to", o, "--force"]);
    assert!(!ok && err.starts_with("error: ") && err.lines().count() == 1, "{err}");
    assert!(out.exists(), "a failed conversion leaves the old file");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_inspect_and_query_an_iotdb_data_directory() {
    let facts = sample_facts();
    // The sample written twice: once in order, once again as an out-of-order write of the
    // same points (no .resource: time ranges from the files' own indexes).
    let dir = scratch("iotdb");
    for (space, name) in [("sequence", "1700000000000-1-0-0.tsfile"), ("unsequence", "1700000000001-2-0-0.tsfile")] {
        let part = dir.join(space).join("root.weather").join("1").join("0");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::copy(root().join("data/sample.tsfile"), part.join(name)).unwrap();
    }
    std::fs::write(dir.join("sequence/root.weather/1/0/1700000000000-1-0-0.tsfile.temp"), b"x").unwrap();
    std::fs::write(dir.join("sequence/root.weather/1/0/readme.tsfile"), b"x").unwrap();
    let d = dir.to_str().unwrap();
    let (ok, out, err) = tsfile(&["inspect", d]);
    assert!(ok, "{err}");
    let devices = facts["device_count"].as_u64().unwrap();
    assert!(out.contains("2 data files in 1 partitions, 1 files skipped"), "{out}");
    assert!(out.contains(&format!("1 sequence + 1 unsequence files, {} bytes, {devices} devices", 2 * 3_704_665)), "{out}");
    assert!(out.contains(&format!("overlapping: {devices} devices written in 2 files")), "{out}");
    assert!(out.contains("readme.tsfile: not a data-file name"), "{out}");
    let (ok, out, err) = tsfile(&["inspect", "--json", d]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["partitions"][0]["overlapping_devices"], devices);
    assert_eq!(v["partitions"][0]["files_without_resource"], 2);

    let create = format!("CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION '{d}' OPTIONS ('tsfile.layout' 'iotdb')");
    let rows = sql_rows(&[&create, "SELECT count(*) AS n, sum(energy_wh) AS e, count(humidity) AS h FROM w"]);
    assert_eq!(rows[0]["n"], facts["row_count"], "each point once");
    assert_eq!(rows[0]["e"], facts["sum_energy_wh"]);
    assert_eq!(rows[0]["h"], facts["non_null_counts"]["humidity"]);
    std::fs::remove_dir_all(dir).unwrap();
}
