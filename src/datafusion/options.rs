//! Options of a TsFile table, from SQL `OPTIONS (...)` or the Rust builder.
//!
//! Each option is declared once, in [`OPTIONS`]; parsing, serialization, the known keys of
//! error messages and this table (checked by a test, like the README's) come from it.
//!
//! | option | meaning | default |
//! | --- | --- | --- |
//! | `table` | the TsFile table to expose (needed when the files hold several table-model tables); `*` = every tree-model device | the only table, or `*` when all are tree-model path prefixes |
//! | `time_unit` | `ms`, `us`, `ns` or `raw` (Int64) for the time column and TIMESTAMP fields | `ms` |
//! | `nonaligned_time_encoding` | time encoding of non-aligned pages (not stored in files) | `TS_2DIFF` |
//! | `writer_layout` | semantics of SPRINTZ INT64/TIMESTAMP/DOUBLE and RLBE FLOAT/DOUBLE pages, whose bytes the Java and C++ writers give different meanings: `auto` (decided per file from the footer and the pages whose statistics decide; contradictions are errors), `java` or `cpp` (every page that way, unchecked); `sprintz_product` = `wrapping`/`exact` is an older alias of `java`/`cpp` | `auto` |
//! | `pruning` | skip devices/chunk groups/pages by statistics | `true` |
//! | `statistics_aggregates` | answer `count`/`sum`/`avg`/`min`/`max`/`first_value`/`last_value` from series, chunk and page statistics under time and TAG filters, per TAG group and `date_bin` bucket, decoding only the pages they cannot answer | `true` |
//! | `max_page_values` | values one page may decode to | 16777216 |
//! | `max_page_bytes` | bytes one page may decompress to, and decode to | 268435456 (256 MiB) |
//! | `max_string_bytes` | bytes of one string/blob value or dictionary entry | 67108864 (64 MiB) |
//! | `max_dictionary_bytes` | bytes of one page's dictionary entries | 67108864 (64 MiB) |
//! | `max_metadata_bytes` | bytes of a file's TsFileMetadata block (checked before it is fetched) | 268435456 (256 MiB) |
//! | `metadata_size_hint` | bytes read from the end of a file in the first request when it is opened (the footer and, when they fit, the index area come in one round trip); 0 = 64 KiB for local files, 512 KiB for object stores | 0 |
//! | `statistics_max_index_bytes` | files whose index area (all devices' series metadata) is larger report unknown statistics at planning instead of walking every device (their devices are still pruned as they are scanned, and a query naming devices by TAG equalities reads only their index); 0 = never gather them | 16777216 (16 MiB) |
//! | `max_decoded_bytes` | bytes of values one query decodes, over all its files and partitions | 4294967296 (4 GiB) |
//! | `tree_levels` | tree-model tables: add the path levels as nullable columns `level0`, `level1`, ... | `false` |
//! | `tree_mixed_types` | tree-model tables: a measurement typed differently on two devices is an `error` (naming both), or `coerce` it to `DOUBLE` (all numeric) / `STRING` | `error` |
//! | `layout` | how a directory is read: `plain` (every `.tsfile` as it is), `iotdb` (an IoTDB data directory, a database, region or partition of one: a point written in several files once, by IoTDB's priority, deletions of `.mods`/`.mods2` applied, files skipped by `.resource`; table model, local paths; see docs/iotdb-layout.md) or `auto`: `iotdb` for a local directory of that shape (every TsFile under it named and placed as IoTDB places data files, at least one with its `.resource`), else `plain` | `auto` |
//! | `ttl` | `layout = iotdb`: rows older than this many milliseconds before now are left out, as IoTDB's TTL does (IoTDB keeps the TTL in its schema, not beside the files); 0 = none | 0 |
//! | `master_key` | key for encrypted files: 32 hex digits or 16 characters (legacy `encryptLevel` 2 master key; KEK of the built-in Page-AEAD profile); never written out | none |
//! | `aead_provider` | Page-AEAD provider id that `master_key` is the key-encryption key for | `test-aead-provider` |
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// see [`crate::datafusion::TsFileStatisticsAggregate`]).
    pub disable_statistics_aggregates: bool,
    /// Tree-model tables: add one nullable column per path level (`level0` = `root`, ...).
    pub tree_levels: bool,
    /// Tree-model tables: what to do with a measurement typed differently on two devices.
    pub tree_mixed_types: TreeMixedTypes,
    /// How a directory is read (option `layout`).
    pub layout: DirectoryLayout,
    /// `layout = iotdb`: leave out rows older than this many milliseconds before now (option
    /// `ttl`; 0 = none).
    pub ttl_ms: u64,
    /// Keys for encrypted files (options `master_key`, `aead_provider`).
    pub keys: EncryptionKeys,
    /// File statistics are gathered at planning only for files whose index area is at most
    /// this many bytes (option `statistics_max_index_bytes`, default
    /// [`crate::datafusion::STATISTICS_MAX_INDEX_BYTES`]).
    pub statistics_max_index_bytes: u64,
}

impl Default for TsFileReadOptions {
    fn default() -> Self {
        TsFileReadOptions {
            table: None,
            time_unit: TimeUnit::default(),
            read: ReadOptions::default(),
            disable_pruning: false,
            disable_statistics_aggregates: false,
            tree_levels: false,
            tree_mixed_types: TreeMixedTypes::default(),
            layout: DirectoryLayout::default(),
            ttl_ms: 0,
            keys: EncryptionKeys::default(),
            statistics_max_index_bytes: crate::datafusion::STATISTICS_MAX_INDEX_BYTES,
        }
    }
}

/// How the files under a location are read: option `layout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum DirectoryLayout {
    /// `iotdb` for a local directory with the shape of an IoTDB data directory
    /// ([`crate::datadir::looks_like_data_dir`]), `plain` otherwise (`auto`).
    #[default]
    Auto,
    /// Every `.tsfile` as it is (`plain`).
    Plain,
    /// An IoTDB data directory with IoTDB's semantics (`iotdb`; see [`crate::datadir`]).
    Iotdb,
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
    /// One pair per entry of [`OPTIONS`] that has a value to write, in table order.
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        OPTIONS.iter().filter_map(|o| (o.get)(self).map(|v| (o.key.to_string(), v))).collect()
    }

    /// Apply `key = value` options (SQL `OPTIONS`); unknown keys are errors. Keys are
    /// case-insensitive and may carry a `format.` or `tsfile.` prefix.
    pub fn apply(mut self, options: &HashMap<String, String>) -> Result<Self> {
        for (k, v) in options {
            let key = k.to_ascii_lowercase();
            let key = key.strip_prefix("format.").or_else(|| key.strip_prefix("tsfile.")).unwrap_or(&key);
            let def = OptionDef::find(key).ok_or_else(|| {
                TsFileError::InvalidArgument(format!("unknown TsFile option '{key}' (known: {})", known_keys()))
            })?;
            (def.set)(&mut self, key, v)?;
        }
        Ok(self)
    }
}

/// One TsFile table option, declared once in [`OPTIONS`]: parsing ([`TsFileReadOptions::apply`]),
/// serialization ([`TsFileReadOptions::to_pairs`]), the known keys of error messages, the
/// descriptions of the `tsfile.` table-options namespace and the documentation table
/// ([`options_markdown`]) all come from it.
pub struct OptionDef {
    /// The canonical key (what [`TsFileReadOptions::to_pairs`] writes).
    pub key: &'static str,
    /// Other accepted spellings of the key.
    pub aliases: &'static [&'static str],
    /// What the option means (Markdown).
    pub doc: &'static str,
    /// The default, as documented (Markdown).
    pub default: &'static str,
    /// The value to write out; `None` = nothing to write (unset, or key material).
    get: fn(&TsFileReadOptions) -> Option<String>,
    /// Parse `value` into the options; the `&str` is the key as written (for errors).
    set: fn(&mut TsFileReadOptions, &str, &str) -> Result<()>,
}

impl std::fmt::Debug for OptionDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionDef").field("key", &self.key).field("aliases", &self.aliases).finish_non_exhaustive()
    }
}

impl OptionDef {
    /// The option spelled `key` (canonical or alias; lower case, without prefix).
    pub fn find(key: &str) -> Option<&'static OptionDef> {
        OPTIONS.iter().find(|o| o.key == key || o.aliases.contains(&key))
    }
}

/// Every TsFile table option, in documentation order.
pub const OPTIONS: &[OptionDef] = &[
    OptionDef {
        key: "table",
        aliases: &["table_name"],
        doc: "the TsFile table to expose (needed when the files hold several table-model tables); `*` = every tree-model device",
        default: "the only table, or `*` when all are tree-model path prefixes",
        get: |o| o.table.clone(),
        set: |o, _, v| {
            o.table = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        key: "time_unit",
        aliases: &[],
        doc: "`ms`, `us`, `ns` or `raw` (Int64) for the time column and TIMESTAMP fields",
        default: "`ms`",
        get: |o| Some(o.time_unit.name().to_string()),
        set: |o, _, v| {
            o.time_unit = TimeUnit::parse(v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "nonaligned_time_encoding",
        aliases: &["time_encoding"],
        doc: "time encoding of non-aligned pages (not stored in files)",
        default: "`TS_2DIFF`",
        get: |o| Some(o.read.nonaligned_time_encoding.name().to_string()),
        set: |o, _, v| {
            o.read.nonaligned_time_encoding = Encoding::from_name(v).ok_or_else(|| {
                TsFileError::InvalidArgument(format!("nonaligned_time_encoding '{v}': not an encoding name"))
            })?;
            Ok(())
        },
    },
    OptionDef {
        key: "writer_layout",
        aliases: &["sprintz_product"],
        doc: "semantics of SPRINTZ INT64/TIMESTAMP/DOUBLE and RLBE FLOAT/DOUBLE pages, whose bytes the Java and C++ writers give different meanings: `auto` (decided per file from the footer and the pages whose statistics decide; contradictions are errors), `java` or `cpp` (every page that way, unchecked); `sprintz_product` = `wrapping`/`exact` is an older alias of `java`/`cpp`",
        default: "`auto`",
        get: |o| Some(o.read.decode.writer_layout.name().to_string()),
        set: |o, key, v| {
            o.read.decode.writer_layout = match v.to_ascii_lowercase().as_str() {
                "auto" => WriterLayout::Auto,
                "java" | "wrapping" => WriterLayout::Java,
                "cpp" | "c++" | "exact" => WriterLayout::Cpp,
                other => return Err(TsFileError::InvalidArgument(format!("{key} '{other}': expected auto, java or cpp"))),
            };
            Ok(())
        },
    },
    OptionDef {
        key: "pruning",
        aliases: &[],
        doc: "skip devices/chunk groups/pages by statistics",
        default: "`true`",
        get: |o| Some((!o.disable_pruning).to_string()),
        set: |o, key, v| {
            o.disable_pruning = !bool_option(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "statistics_aggregates",
        aliases: &[],
        doc: "answer `count`/`sum`/`avg`/`min`/`max`/`first_value`/`last_value` from series, chunk and page statistics under time and TAG filters, per TAG group and `date_bin` bucket, decoding only the pages they cannot answer",
        default: "`true`",
        get: |o| Some((!o.disable_statistics_aggregates).to_string()),
        set: |o, key, v| {
            o.disable_statistics_aggregates = !bool_option(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "max_page_values",
        aliases: &[],
        doc: "values one page may decode to",
        default: "16777216",
        get: |o| Some(o.read.decode.max_page_values.to_string()),
        set: |o, key, v| {
            o.read.decode.max_page_values = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "max_page_bytes",
        aliases: &[],
        doc: "bytes one page may decompress to, and decode to",
        default: "268435456 (256 MiB)",
        get: |o| Some(o.read.decode.max_page_bytes.to_string()),
        set: |o, key, v| {
            o.read.decode.max_page_bytes = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "max_string_bytes",
        aliases: &[],
        doc: "bytes of one string/blob value or dictionary entry",
        default: "67108864 (64 MiB)",
        get: |o| Some(o.read.decode.max_string_bytes.to_string()),
        set: |o, key, v| {
            o.read.decode.max_string_bytes = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "max_dictionary_bytes",
        aliases: &[],
        doc: "bytes of one page's dictionary entries",
        default: "67108864 (64 MiB)",
        get: |o| Some(o.read.decode.max_dictionary_bytes.to_string()),
        set: |o, key, v| {
            o.read.decode.max_dictionary_bytes = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "max_metadata_bytes",
        aliases: &[],
        doc: "bytes of a file's TsFileMetadata block (checked before it is fetched)",
        default: "268435456 (256 MiB)",
        get: |o| Some(o.read.max_metadata_bytes.to_string()),
        set: |o, key, v| {
            o.read.max_metadata_bytes = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "metadata_size_hint",
        aliases: &[],
        doc: "bytes read from the end of a file in the first request when it is opened (the footer and, when they fit, the index area come in one round trip); 0 = 64 KiB for local files, 512 KiB for object stores",
        default: "0",
        get: |o| Some(o.read.metadata_size_hint.to_string()),
        set: |o, key, v| {
            o.read.metadata_size_hint = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "statistics_max_index_bytes",
        aliases: &[],
        doc: "files whose index area (all devices' series metadata) is larger report unknown statistics at planning instead of walking every device (their devices are still pruned as they are scanned, and a query naming devices by TAG equalities reads only their index); 0 = never gather them",
        default: "16777216 (16 MiB)",
        get: |o| Some(o.statistics_max_index_bytes.to_string()),
        set: |o, key, v| {
            o.statistics_max_index_bytes = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "max_decoded_bytes",
        aliases: &[],
        doc: "bytes of values one query decodes, over all its files and partitions",
        default: "4294967296 (4 GiB)",
        get: |o| Some(o.read.max_decoded_bytes.to_string()),
        set: |o, key, v| {
            o.read.max_decoded_bytes = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "tree_levels",
        aliases: &[],
        doc: "tree-model tables: add the path levels as nullable columns `level0`, `level1`, ...",
        default: "`false`",
        get: |o| Some(o.tree_levels.to_string()),
        set: |o, key, v| {
            o.tree_levels = bool_option(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "tree_mixed_types",
        aliases: &[],
        doc: "tree-model tables: a measurement typed differently on two devices is an `error` (naming both), or `coerce` it to `DOUBLE` (all numeric) / `STRING`",
        default: "`error`",
        get: |o| {
            Some(
                match o.tree_mixed_types {
                    TreeMixedTypes::Error => "error",
                    TreeMixedTypes::Coerce => "coerce",
                }
                .to_string(),
            )
        },
        set: |o, key, v| {
            o.tree_mixed_types = match v.to_ascii_lowercase().as_str() {
                "error" => TreeMixedTypes::Error,
                "coerce" => TreeMixedTypes::Coerce,
                other => return Err(TsFileError::InvalidArgument(format!("{key} '{other}': expected error or coerce"))),
            };
            Ok(())
        },
    },
    OptionDef {
        key: "layout",
        aliases: &[],
        doc: "how a directory is read: `plain` (every `.tsfile` as it is), `iotdb` (an IoTDB data directory, a database, region or partition of one: a point written in several files once, by IoTDB's priority, deletions of `.mods`/`.mods2` applied, files skipped by `.resource`; table model, local paths; see docs/iotdb-layout.md) or `auto`: `iotdb` for a local directory of that shape (every TsFile under it named and placed as IoTDB places data files, at least one with its `.resource`), else `plain`",
        default: "`auto`",
        get: |o| {
            Some(
                match o.layout {
                    DirectoryLayout::Auto => "auto",
                    DirectoryLayout::Plain => "plain",
                    DirectoryLayout::Iotdb => "iotdb",
                }
                .to_string(),
            )
        },
        set: |o, key, v| {
            o.layout = match v.to_ascii_lowercase().as_str() {
                "auto" => DirectoryLayout::Auto,
                "plain" => DirectoryLayout::Plain,
                "iotdb" => DirectoryLayout::Iotdb,
                other => return Err(TsFileError::InvalidArgument(format!("{key} '{other}': expected auto, plain or iotdb"))),
            };
            Ok(())
        },
    },
    OptionDef {
        key: "ttl",
        aliases: &[],
        doc: "`layout = iotdb`: rows older than this many milliseconds before now are left out, as IoTDB's TTL does (IoTDB keeps the TTL in its schema, not beside the files); 0 = none",
        default: "0",
        get: |o| Some(o.ttl_ms.to_string()),
        set: |o, key, v| {
            o.ttl_ms = parse_limit(key, v)?;
            Ok(())
        },
    },
    OptionDef {
        key: "master_key",
        aliases: &[],
        doc: "key for encrypted files: 32 hex digits or 16 characters (legacy `encryptLevel` 2 master key; KEK of the built-in Page-AEAD profile); never written out",
        default: "none",
        // Key material never leaves the process.
        get: |_| None,
        set: |o, _, v| {
            o.keys = std::mem::take(&mut o.keys).with_master_key(MasterKey::parse(v)?);
            Ok(())
        },
    },
    OptionDef {
        key: "aead_provider",
        aliases: &[],
        doc: "Page-AEAD provider id that `master_key` is the key-encryption key for",
        default: "`test-aead-provider`",
        get: |o| Some(o.keys.aead_provider_id().to_string()),
        set: |o, _, v| {
            o.keys = std::mem::take(&mut o.keys).with_aead_provider_id(v.trim());
            Ok(())
        },
    },
];

/// The known keys, canonical and aliases, for error messages.
pub fn known_keys() -> String {
    OPTIONS.iter().flat_map(|o| std::iter::once(o.key).chain(o.aliases.iter().copied())).collect::<Vec<_>>().join(", ")
}

/// The documentation table of the options (Markdown: `| option | meaning | default |`),
/// as in this module's docs and the README.
pub fn options_markdown() -> String {
    let mut s = String::from("| option | meaning | default |\n| --- | --- | --- |\n");
    for o in OPTIONS {
        s.push_str(&format!("| `{}` | {} | {} |\n", o.key, o.doc, o.default));
    }
    s
}

fn bool_option(key: &str, v: &str) -> Result<bool> {
    parse_bool(v).ok_or_else(|| TsFileError::InvalidArgument(format!("{key} '{v}': expected true or false")))
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
            ("metadata_size_hint", "13"),
            ("statistics_max_index_bytes", "14"),
            ("aead_provider", "kms-1"),
            ("layout", "iotdb"),
            ("ttl", "15"),
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

    /// A value other than the default for every declared key (and its alias spellings).
    fn sample_value(key: &str) -> &'static str {
        match key {
            "table" => "weather",
            "time_unit" => "us",
            "nonaligned_time_encoding" => "GORILLA",
            "writer_layout" => "cpp",
            "pruning" | "statistics_aggregates" => "false",
            "tree_levels" => "true",
            "tree_mixed_types" => "coerce",
            "layout" => "iotdb",
            "master_key" => "0123456789abcdef",
            "aead_provider" => "kms-2",
            _ => "42",
        }
    }

    #[test]
    fn test_every_declared_key_round_trips_through_to_pairs_and_apply() {
        let default = TsFileReadOptions::default();
        for o in OPTIONS {
            for spelling in std::iter::once(o.key).chain(o.aliases.iter().copied()) {
                let m: HashMap<String, String> = [(format!("format.{spelling}"), sample_value(o.key).to_string())].into();
                let set = TsFileReadOptions::default().apply(&m).unwrap();
                assert_ne!(set, default, "{spelling} changes the options");
                let back: HashMap<String, String> = set.to_pairs().into_iter().collect();
                let again = TsFileReadOptions::default().apply(&back).unwrap();
                if o.key == "master_key" {
                    // Key material is never written out: it reads back as the key-less options.
                    assert!(!back.contains_key("master_key"));
                    assert_eq!(again, default);
                } else {
                    assert_eq!(again, set, "{spelling} round-trips");
                    let written = back.get(o.key).map(String::as_str);
                    assert_eq!(
                        written.map(str::to_ascii_lowercase),
                        Some(sample_value(o.key).to_ascii_lowercase()),
                        "{spelling}"
                    );
                }
            }
        }
        // Every pair written out is a declared canonical key.
        let keys: Vec<String> = default.to_pairs().into_iter().map(|(k, _)| k).collect();
        assert!(keys.iter().all(|k| OPTIONS.iter().any(|o| o.key == k)), "{keys:?}");
        assert_eq!(keys.len(), OPTIONS.len() - 2, "all but `table` (unset) and `master_key` (never written)");
    }

    #[test]
    fn test_unknown_key_error_lists_every_declared_key() {
        let bad: HashMap<String, String> = [("colour".to_string(), "red".to_string())].into();
        let e = TsFileReadOptions::default().apply(&bad).unwrap_err().to_string();
        for o in OPTIONS {
            assert!(e.contains(o.key), "{e} lacks {}", o.key);
            assert!(o.aliases.iter().all(|a| e.contains(a)), "{e}");
        }
        assert!(e.contains("known: table, table_name, time_unit, nonaligned_time_encoding, time_encoding, writer_layout, sprintz_product, pruning"), "{e}");
    }

    #[test]
    fn test_docs_and_readme_hold_the_declared_table() {
        let table = options_markdown();
        assert_eq!(table.lines().count(), OPTIONS.len() + 2);
        let module_doc: String = table.lines().map(|l| format!("//! {l}\n")).collect();
        assert!(include_str!("options.rs").contains(&module_doc), "module docs differ from OPTIONS:\n{module_doc}");
        assert!(include_str!("../../README.md").contains(&table), "README differs from OPTIONS:\n{table}");
    }
}
