//! Runs the `tsfile` binary and checks its output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

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
        for key in ["tables", "table_index_keys", "devices", "chunk_groups", "markers", "bloom_filter", "properties", "operation_index_ranges"] {
            assert!(v.get(key).is_some(), "{p}: no {key}");
        }
        let (ok, out, err) = tsfile(&["inspect", "--scan", p]);
        assert!(ok, "{p}: {err}");
        assert!(out.contains("data section complete"), "{p}: {out}");
    }
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
