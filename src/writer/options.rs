//! [`TsFileWriterOptions`]: the table, TAG and time columns, memory bound, encodings and
//! compressions of the Arrow writer, settable from `key = value` pairs (the DataFusion
//! `tsfile.` options, the CLI and Python use the same keys).
//!
//! | key | default | meaning |
//! | --- | --- | --- |
//! | `table` | the target's file stem, or its directory's name | table name |
//! | `tags` | see below | comma-separated TAG columns (device identifiers) |
//! | `time_column` | `time` | the time column: `Timestamp` in any unit (stored as is) or `Int64`, no nulls |
//! | `memory_limit` | 64 MiB | buffered row bytes that trigger a flush of every device (`k`/`m`/`g` suffixes) |
//! | `compression` | `LZ4` | compression of every column, time included |
//! | `compression.<column>` | | compression of one column (`time` for the time column) |
//! | `encoding.<column>` | Java's default for its type | encoding of one column |
//! | `page_max_points` | 10000 | most rows of a page |
//! | `page_max_bytes` | 65536 | a page closes when a PLAIN column's values reach this size |
//! | `sort` | `false` | SQL only: have DataFusion sort the input by TAG columns and time first (spilling to disk as needed), for input whose devices arrive out of time order across more than `memory_limit` |
//!
//! Without `tags`: the columns whose Arrow metadata says `tsfile.category = TAG` (what this
//! crate's reader produces, so a TsFile read back writes the same devices); else every
//! dictionary-encoded string column (dictionaries are how Arrow marks low-cardinality
//! identifiers); else none, and the whole table is one device. An empty `tags` value means
//! no TAG column.

use std::collections::HashMap;

use crate::error::{Result, TsFileError};
use crate::format::{Compression, Encoding};
use crate::write::WriteOptions;

/// Default of [`TsFileWriterOptions::memory_limit`]: 64 MiB of buffered rows.
pub const DEFAULT_MEMORY_LIMIT: usize = 64 << 20;

/// Options of [`TsFileWriter`](crate::writer::TsFileWriter).
#[derive(Debug, Clone, PartialEq)]
pub struct TsFileWriterOptions {
    /// Table name (`None`: the caller's default, see the module doc).
    pub table: Option<String>,
    /// TAG columns in the order given (`None`: the default rule of the module doc).
    pub tags: Option<Vec<String>>,
    /// The time column's name.
    pub time_column: String,
    /// Buffered row bytes (timestamps, null flags, values) above which every buffered device
    /// is flushed as a chunk group.
    pub memory_limit: usize,
    /// Compression of every column unless a column overrides it.
    pub compression: Option<Compression>,
    /// Encoding per column (lower-case name).
    pub encodings: HashMap<String, Encoding>,
    /// Compression per column (lower-case name; `time` or the time column's name for time).
    pub compressions: HashMap<String, Compression>,
    /// Page limits and the time column's encoding.
    pub format: WriteOptions,
    /// Sort the input by TAG columns and time before writing (the DataFusion sink asks the
    /// engine for that order; the library writer ignores it).
    pub sort: bool,
}

impl Default for TsFileWriterOptions {
    fn default() -> Self {
        TsFileWriterOptions {
            table: None,
            tags: None,
            time_column: "time".to_string(),
            memory_limit: DEFAULT_MEMORY_LIMIT,
            compression: None,
            encodings: HashMap::new(),
            compressions: HashMap::new(),
            format: WriteOptions::default(),
            sort: false,
        }
    }
}

fn bad(key: &str, value: &str, expected: &str) -> TsFileError {
    TsFileError::InvalidArgument(format!("option {key} = '{value}': expected {expected}"))
}

/// Parse a byte size: an integer with an optional `k`, `m` or `g` suffix (powers of 1024,
/// optional trailing `b`/`ib`).
pub fn parse_bytes(value: &str) -> Option<usize> {
    let v = value.trim().to_ascii_lowercase();
    let v = v.trim_end_matches("ib").trim_end_matches('b');
    let (num, shift) = match v.chars().last() {
        Some('k') => (&v[..v.len() - 1], 10),
        Some('m') => (&v[..v.len() - 1], 20),
        Some('g') => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(1usize << shift)
}

impl TsFileWriterOptions {
    /// Set one option by key (a `tsfile.` prefix is accepted); an unknown key is an error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let k = key.trim().to_ascii_lowercase();
        let k = k.strip_prefix("tsfile.").unwrap_or(&k);
        let compression =
            |v: &str| Compression::from_name(v.trim()).ok_or_else(|| bad(key, value, "a compression name (LZ4, ZSTD, ...)"));
        match k {
            "table" => self.table = Some(value.trim().to_string()).filter(|t| !t.is_empty()),
            "tags" => {
                self.tags = Some(value.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect());
            }
            "time_column" => self.time_column = value.trim().to_string(),
            "memory_limit" => {
                self.memory_limit =
                    parse_bytes(value).filter(|v| *v > 0).ok_or_else(|| bad(key, value, "a positive byte size such as 64m"))?
            }
            "compression" => self.compression = Some(compression(value)?),
            "sort" => {
                self.sort = match value.trim().to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" => true,
                    "false" | "0" | "no" => false,
                    _ => return Err(bad(key, value, "true or false")),
                }
            }
            "page_max_points" => {
                self.format.page_max_points =
                    value.trim().parse().ok().filter(|v| *v > 0).ok_or_else(|| bad(key, value, "a positive integer"))?
            }
            "page_max_bytes" => {
                self.format.page_max_bytes =
                    parse_bytes(value).filter(|v| *v > 0).ok_or_else(|| bad(key, value, "a positive byte size"))?
            }
            _ => {
                if let Some(col) = k.strip_prefix("encoding.") {
                    let e = Encoding::from_name(value.trim())
                        .ok_or_else(|| bad(key, value, "an encoding name (PLAIN, TS_2DIFF, GORILLA)"))?;
                    self.encodings.insert(col.to_string(), e);
                } else if let Some(col) = k.strip_prefix("compression.") {
                    self.compressions.insert(col.to_string(), compression(value)?);
                } else {
                    return Err(TsFileError::InvalidArgument(format!(
                        "unknown write option '{key}' (known: table, tags, time_column, memory_limit, compression, \
                         compression.<column>, encoding.<column>, page_max_points, page_max_bytes, sort)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Options from `key = value` pairs.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut o = TsFileWriterOptions::default();
        for (k, v) in pairs {
            o.set(k, v)?;
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_options_parse_every_key() {
        let o = TsFileWriterOptions::from_pairs([
            ("tsfile.tags", "region, device"),
            ("table", "weather"),
            ("TIME_COLUMN", "ts"),
            ("memory_limit", "16m"),
            ("compression", "zstd"),
            ("encoding.Temp", "plain"),
            ("compression.time", "snappy"),
            ("page_max_points", "100"),
            ("page_max_bytes", "4k"),
        ])
        .unwrap();
        assert_eq!(o.tags, Some(vec!["region".to_string(), "device".to_string()]));
        assert_eq!((o.table.as_deref(), o.time_column.as_str(), o.memory_limit), (Some("weather"), "ts", 16 << 20));
        assert_eq!(o.compression, Some(Compression::Zstd));
        assert_eq!(o.encodings.get("temp"), Some(&Encoding::Plain));
        assert_eq!(o.compressions.get("time"), Some(&Compression::Snappy));
        assert_eq!((o.format.page_max_points, o.format.page_max_bytes), (100, 4096));
        assert_eq!(TsFileWriterOptions::from_pairs([("tags", "")]).unwrap().tags, Some(vec![]));
        for (k, v) in [
            ("nope", "1"),
            ("memory_limit", "lots"),
            ("compression", "brotli"),
            ("encoding.x", "fancy"),
            ("page_max_points", "0"),
        ] {
            assert!(TsFileWriterOptions::from_pairs([(k, v)]).is_err(), "{k}={v}");
        }
        assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
    }
}
