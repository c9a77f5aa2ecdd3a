//! Shared helpers for the integration tests: locating and loading the conformance corpus.

use std::path::PathBuf;

use serde_json::Value;

/// The corpus directory: `TSFILE_CORPUS_DIR` when set, else the vendored copy.
pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("TSFILE_CORPUS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus"),
    }
}

/// The parsed `MANIFEST.json`.
pub fn manifest() -> Value {
    let path = corpus_dir().join("MANIFEST.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// The manifest's file entries.
pub fn manifest_files(m: &Value) -> Vec<Value> {
    m["files"].as_array().cloned().unwrap_or_default()
}

/// Path of a corpus file entry's TsFile.
pub fn file_path(entry: &Value) -> PathBuf {
    corpus_dir().join(entry["file"].as_str().unwrap_or_default())
}

/// Path of a sample or fixture in the repository.
pub fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}
