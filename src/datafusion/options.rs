//! Options of a TsFile table, from SQL `OPTIONS (...)` or the Rust builder.
//!
//! | key | meaning | default |
//! | --- | --- | --- |
//! | `table` | which TsFile table to expose (required when the files hold several) | the only table |
//! | `time_unit` | `ms`, `us`, `ns` or `raw` (plain `Int64`) for the time column and TIMESTAMP fields | `ms` |
//! | `nonaligned_time_encoding` | time encoding of non-aligned pages (not stored in files) | `TS_2DIFF` |
//! | `writer_layout` | whose semantics SPRINTZ INT64/TIMESTAMP/DOUBLE and RLBE FLOAT/DOUBLE pages have: `auto` (Java, else C++ when the page statistics reject the Java reading), `java` or `cpp` (unchecked); `sprintz_product` = `wrapping` / `exact` is an older alias of `java` / `cpp` | `auto` |
//! | `pruning` | use statistics to skip devices, chunks and pages | `true` |
//! | `max_page_values` | values one page may decode to | 16777216 |
//! | `max_page_bytes` | bytes one page may decompress or decode to | 268435456 (256 MiB) |
//! | `max_string_bytes` | bytes of one string/blob value or dictionary entry | 67108864 (64 MiB) |
//! | `max_dictionary_bytes` | bytes of one page's dictionary entries | 67108864 (64 MiB) |
//! | `max_metadata_bytes` | bytes of a file's TsFileMetadata block | 268435456 (256 MiB) |
//! | `max_decoded_bytes` | bytes of values one query decodes, over all files and partitions | 4294967296 (4 GiB) |
//! | `tree_levels` | tree-model tables: add the path levels as columns `level0`, `level1`, ... | `false` |
//! | `tree_mixed_types` | tree-model tables: a measurement typed differently on two devices is an `error`, or `coerce` it (`DOUBLE` if all numeric, else `Utf8`) | `error` |
//! | `master_key` | key for encrypted files: 32 hex digits or 16 characters (legacy `encryptLevel` 2 master key; KEK of the built-in Page-AEAD profile) | none |
//! | `aead_provider` | Page-AEAD provider id that `master_key` is the KEK for | `test-aead-provider` |
//!
//! Key values are never printed: not in errors, `Debug` output or `EXPLAIN`.
//! Keys are case-insensitive and may carry the `format.` prefix that `CREATE EXTERNAL TABLE`
//! adds.

use std::collections::HashMap;

use crate::arrow::schema::TimeUnit;
use crate::crypto::{EncryptionKeys, MasterKey};
use crate::encoding::WriterLayout;
use crate::error::{Result, TsFileError};
use crate::format::Encoding;
use crate::read::ReadOptions;

/// Options of a TsFile table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TsFileReadOptions {
    /// The TsFile table to read; `None` = the only table of the files.
    pub table: Option<String>,
    /// Arrow representation of time.
    pub time_unit: TimeUnit,
    /// Page decoding options.
    pub read: ReadOptions,
    /// Skip devices, chunk groups and pages by statistics (`true` unless disabled).
    pub disable_pruning: bool,
    /// Do not answer aggregations from statistics (option `statistics_aggregates = false`;
    /// see [`crate::datafusion::aggregate`]).
    pub disable_statistics_aggregates: bool,
    /// Tree-model tables: add one nullable column per path level (`level0` = `root`, ...).
    pub tree_levels: bool,
    /// Tree-model tables: what to do with a measurement typed differently on two devices.
    pub tree_mixed_types: TreeMixedTypes,
    /// Keys for encrypted files (options `master_key`, `aead_provider`).
    pub keys: EncryptionKeys,
}

/// What a tree-model table does with a measurement whose type differs between devices
/// (or files): option `tree_mixed_types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum TreeMixedTypes {
    /// Schema inference fails with an error naming both devices and types (`error`).
    #[default]
    Error,
    /// Read the column as the common type: `DOUBLE` (Float64) when every type is INT32,
    /// INT64, FLOAT or DOUBLE, otherwise `STRING` (Utf8) (`coerce`). Values are converted
    /// with Arrow's cast (dates and timestamps as ISO text), BLOBs as `0x`-prefixed hex.
    Coerce,
}

impl TsFileReadOptions {
    /// Select the TsFile table to read.
    pub fn with_table(mut self, table: impl Into<String>) -> Self {
        self.table = Some(table.into());
        self
    }

    /// Set the time unit.
    pub fn with_time_unit(mut self, unit: TimeUnit) -> Self {
        self.time_unit = unit;
        self
    }

    /// Turn statistics pruning on or off (for comparisons and debugging).
    pub fn with_pruning(mut self, on: bool) -> Self {
        self.disable_pruning = !on;
        self
    }

    /// Answer whole-table aggregations (`count`, `sum`, `avg`, `min`, `max`, grouped by
    /// TAG columns or not) from statistics when they can be (on by default).
    pub fn with_statistics_aggregates(mut self, on: bool) -> Self {
        self.disable_statistics_aggregates = !on;
        self
    }

    /// Tree-model tables: add the path levels as columns `level0`, `level1`, ...
    pub fn with_tree_levels(mut self, on: bool) -> Self {
        self.tree_levels = on;
        self
    }

    /// Tree-model tables: how a measurement typed differently on two devices is read.
    pub fn with_tree_mixed_types(mut self, mode: TreeMixedTypes) -> Self {
        self.tree_mixed_types = mode;
        self
    }

    /// Keys for encrypted files (master key, Page-AEAD key providers).
    pub fn with_keys(mut self, keys: EncryptionKeys) -> Self {
        self.keys = keys;
        self
    }

    /// The options as `key = value` pairs that [`apply`](Self::apply) reads back into equal
    /// options — without key material: `master_key` and registered key providers never
    /// leave the process (a serialized plan carries none; the receiving side supplies its
    /// own keys). The Page-AEAD provider id is kept (it names a provider, it is no secret).
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        let d = &self.read.decode;
        let mut v: Vec<(&str, String)> = Vec::with_capacity(16);
        if let Some(t) = &self.table {
            v.push(("table", t.clone()));
        }
        v.push(("time_unit", self.time_unit.name().to_string()));
        v.push(("nonaligned_time_encoding", self.read.nonaligned_time_encoding.name().to_string()));
        v.push(("writer_layout", d.writer_layout.name().to_string()));
        v.push(("pruning", (!self.disable_pruning).to_string()));
        v.push(("statistics_aggregates", (!self.disable_statistics_aggregates).to_string()));
        v.push(("tree_levels", self.tree_levels.to_string()));
        let mixed = match self.tree_mixed_types {
            TreeMixedTypes::Error => "error",
            TreeMixedTypes::Coerce => "coerce",
        };
        v.push(("tree_mixed_types", mixed.to_string()));
        v.push(("max_page_values", d.max_page_values.to_string()));
        v.push(("max_page_bytes", d.max_page_bytes.to_string()));
        v.push(("max_string_bytes", d.max_string_bytes.to_string()));
        v.push(("max_dictionary_bytes", d.max_dictionary_bytes.to_string()));
        v.push(("max_metadata_bytes", self.read.max_metadata_bytes.to_string()));
        v.push(("max_decoded_bytes", self.read.max_decoded_bytes.to_string()));
        v.push(("aead_provider", self.keys.aead_provider_id().to_string()));
        v.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// Apply `key = value` options (SQL `OPTIONS`); unknown keys are errors.
    pub fn apply(mut self, options: &HashMap<String, String>) -> Result<Self> {
        for (k, v) in options {
            let key = k.to_ascii_lowercase();
            let key = key.strip_prefix("format.").or_else(|| key.strip_prefix("tsfile.")).unwrap_or(&key);
            match key {
                "table" | "table_name" => self.table = Some(v.clone()),
                "time_unit" => self.time_unit = TimeUnit::parse(v)?,
                "nonaligned_time_encoding" | "time_encoding" => {
                    self.read.nonaligned_time_encoding = Encoding::from_name(v).ok_or_else(|| {
                        TsFileError::InvalidArgument(format!("nonaligned_time_encoding '{v}': not an encoding name"))
                    })?
                }
                "writer_layout" | "sprintz_product" => {
                    self.read.decode.writer_layout = match v.to_ascii_lowercase().as_str() {
                        "auto" => WriterLayout::Auto,
                        "java" | "wrapping" => WriterLayout::Java,
                        "cpp" | "c++" | "exact" => WriterLayout::Cpp,
                        other => {
                            return Err(TsFileError::InvalidArgument(format!(
                                "{key} '{other}': expected auto, java or cpp"
                            )))
                        }
                    }
                }
                "pruning" => {
                    self.disable_pruning = !parse_bool(v).ok_or_else(|| {
                        TsFileError::InvalidArgument(format!("pruning '{v}': expected true or false"))
                    })?
                }
                "statistics_aggregates" => {
                    self.disable_statistics_aggregates = !parse_bool(v).ok_or_else(|| {
                        TsFileError::InvalidArgument(format!("statistics_aggregates '{v}': expected true or false"))
                    })?
                }
                "tree_levels" => {
                    self.tree_levels = parse_bool(v).ok_or_else(|| {
                        TsFileError::InvalidArgument(format!("tree_levels '{v}': expected true or false"))
                    })?
                }
                "tree_mixed_types" => {
                    self.tree_mixed_types = match v.to_ascii_lowercase().as_str() {
                        "error" => TreeMixedTypes::Error,
                        "coerce" => TreeMixedTypes::Coerce,
                        other => {
                            return Err(TsFileError::InvalidArgument(format!(
                                "tree_mixed_types '{other}': expected error or coerce"
                            )))
                        }
                    }
                }
                "master_key" => self.keys = std::mem::take(&mut self.keys).with_master_key(MasterKey::parse(v)?),
                "aead_provider" => self.keys = std::mem::take(&mut self.keys).with_aead_provider_id(v.trim()),
                "max_page_values" => self.read.decode.max_page_values = parse_limit(key, v)?,
                "max_page_bytes" => self.read.decode.max_page_bytes = parse_limit(key, v)?,
                "max_string_bytes" => self.read.decode.max_string_bytes = parse_limit(key, v)?,
                "max_dictionary_bytes" => self.read.decode.max_dictionary_bytes = parse_limit(key, v)?,
                "max_metadata_bytes" => self.read.max_metadata_bytes = parse_limit(key, v)?,
                "max_decoded_bytes" => self.read.max_decoded_bytes = parse_limit(key, v)?,
                other => {
                    return Err(TsFileError::InvalidArgument(format!(
                        "unknown TsFile option '{other}' (known: table, time_unit, nonaligned_time_encoding, writer_layout, sprintz_product, pruning, statistics_aggregates, max_page_values, max_page_bytes, max_string_bytes, max_dictionary_bytes, max_metadata_bytes, max_decoded_bytes, tree_levels, tree_mixed_types, master_key, aead_provider)"
                    )))
                }
            }
        }
        Ok(self)
    }
}

/// A resource limit: a non-negative integer.
fn parse_limit<T: std::str::FromStr>(key: &str, v: &str) -> Result<T> {
    v.trim().parse().map_err(|_| TsFileError::InvalidArgument(format!("{key} '{v}': not a non-negative integer")))
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "on" | "1" | "yes" => Some(true),
        "false" | "off" | "0" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_apply_options() {
        let m: HashMap<String, String> =
            [("format.table", "t"), ("TIME_UNIT", "us"), ("nonaligned_time_encoding", "plain"), ("pruning", "off")]
                .into_iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
        let o = TsFileReadOptions::default().apply(&m).unwrap();
        assert_eq!(o.table.as_deref(), Some("t"));
        assert_eq!(o.time_unit, TimeUnit::Microsecond);
        assert_eq!(o.read.nonaligned_time_encoding, Encoding::Plain);
        assert!(o.disable_pruning);
        let limits: HashMap<String, String> = [
            ("max_page_values", "10"),
            ("max_page_bytes", "11"),
            ("max_string_bytes", "12"),
            ("max_dictionary_bytes", "13"),
            ("format.max_metadata_bytes", "14"),
            ("MAX_DECODED_BYTES", "15"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let o = TsFileReadOptions::default().apply(&limits).unwrap();
        let d = o.read.decode;
        assert_eq!((d.max_page_values, d.max_page_bytes, d.max_string_bytes, d.max_dictionary_bytes), (10, 11, 12, 13));
        assert_eq!((o.read.max_metadata_bytes, o.read.max_decoded_bytes), (14, 15));
        let neg: HashMap<String, String> = [("max_decoded_bytes".to_string(), "-1".to_string())].into();
        assert!(TsFileReadOptions::default().apply(&neg).unwrap_err().to_string().contains("max_decoded_bytes '-1'"));
        let tree: HashMap<String, String> = [("tree_levels", "on"), ("format.tree_mixed_types", "COERCE")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let o = TsFileReadOptions::default().apply(&tree).unwrap();
        assert!(o.tree_levels);
        assert_eq!(o.tree_mixed_types, TreeMixedTypes::Coerce);
        let bad_mode: HashMap<String, String> = [("tree_mixed_types".to_string(), "cast".to_string())].into();
        assert!(TsFileReadOptions::default().apply(&bad_mode).is_err());
        for (k, v, want) in [
            ("writer_layout", "JAVA", WriterLayout::Java),
            ("format.writer_layout", "cpp", WriterLayout::Cpp),
            ("writer_layout", "auto", WriterLayout::Auto),
            ("sprintz_product", "exact", WriterLayout::Cpp),
            ("sprintz_product", "wrapping", WriterLayout::Java),
        ] {
            let m: HashMap<String, String> = [(k.to_string(), v.to_string())].into();
            assert_eq!(TsFileReadOptions::default().apply(&m).unwrap().read.decode.writer_layout, want, "{k} = {v}");
        }
        assert_eq!(TsFileReadOptions::default().read.decode.writer_layout, WriterLayout::Auto);
        let bad_layout: HashMap<String, String> = [("writer_layout".to_string(), "rust".to_string())].into();
        assert!(TsFileReadOptions::default().apply(&bad_layout).unwrap_err().to_string().contains("expected auto, java or cpp"));
        let bad: HashMap<String, String> = [("colour".to_string(), "red".to_string())].into();
        assert!(TsFileReadOptions::default().apply(&bad).unwrap_err().to_string().contains("unknown TsFile option"));
    }

    #[test]
    fn test_to_pairs_reads_back_equal_without_keys() {
        let pairs = |o: &TsFileReadOptions| -> HashMap<String, String> { o.to_pairs().into_iter().collect() };
        let default = TsFileReadOptions::default();
        assert_eq!(TsFileReadOptions::default().apply(&pairs(&default)).unwrap(), default);
        let m: HashMap<String, String> = [
            ("table", "weather"),
            ("time_unit", "ns"),
            ("nonaligned_time_encoding", "GORILLA"),
            ("writer_layout", "cpp"),
            ("pruning", "false"),
            ("statistics_aggregates", "false"),
            ("tree_levels", "true"),
            ("tree_mixed_types", "coerce"),
            ("max_page_values", "7"),
            ("max_page_bytes", "8"),
            ("max_string_bytes", "9"),
            ("max_dictionary_bytes", "10"),
            ("max_metadata_bytes", "11"),
            ("max_decoded_bytes", "12"),
            ("aead_provider", "kms-1"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let custom = TsFileReadOptions::default().apply(&m).unwrap();
        assert_ne!(custom, default);
        assert_eq!(TsFileReadOptions::default().apply(&pairs(&custom)).unwrap(), custom);
        assert_eq!(pairs(&custom), m, "every option is written out under its canonical key");
        // Key material never leaves: a keyed options value serializes like the key-less one.
        let key: HashMap<String, String> = [("master_key".to_string(), "0123456789abcdef".to_string())].into();
        let keyed = custom.clone().apply(&key).unwrap();
        assert_eq!(keyed.to_pairs(), custom.to_pairs());
        assert!(!format!("{:?}", keyed.to_pairs()).contains("0123456789abcdef"));
    }
}
