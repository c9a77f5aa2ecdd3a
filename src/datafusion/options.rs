//! Options of a TsFile table, from SQL `OPTIONS (...)` or the Rust builder.
//!
//! | key | meaning | default |
//! | --- | --- | --- |
//! | `table` | which TsFile table to expose (required when the files hold several) | the only table |
//! | `time_unit` | `ms`, `us`, `ns` or `raw` (plain `Int64`) for the time column and TIMESTAMP fields | `ms` |
//! | `nonaligned_time_encoding` | time encoding of non-aligned pages (not stored in files) | `TS_2DIFF` |
//! | `sprintz_product` | `exact` (C++ writer) or `wrapping` (Java writer) | `exact` |
//! | `pruning` | use statistics to skip devices, chunks and pages | `true` |
//! | `max_page_values` | values one page may decode to | 16777216 |
//!
//! Keys are case-insensitive and may carry the `format.` prefix that `CREATE EXTERNAL TABLE`
//! adds.

use std::collections::HashMap;

use crate::arrow::schema::TimeUnit;
use crate::encoding::SprintzProduct;
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

    /// Apply `key = value` options (SQL `OPTIONS`); unknown keys are errors.
    pub fn apply(mut self, options: &HashMap<String, String>) -> Result<Self> {
        for (k, v) in options {
            let key = k.to_ascii_lowercase();
            let key = key.strip_prefix("format.").unwrap_or(&key);
            match key {
                "table" | "table_name" => self.table = Some(v.clone()),
                "time_unit" => self.time_unit = TimeUnit::parse(v)?,
                "nonaligned_time_encoding" | "time_encoding" => {
                    self.read.nonaligned_time_encoding = Encoding::from_name(v).ok_or_else(|| {
                        TsFileError::InvalidArgument(format!("nonaligned_time_encoding '{v}': not an encoding name"))
                    })?
                }
                "sprintz_product" => {
                    self.read.decode.sprintz_product = match v.to_ascii_lowercase().as_str() {
                        "exact" | "cpp" | "c++" => SprintzProduct::Exact128,
                        "wrapping" | "java" => SprintzProduct::Wrapping64,
                        other => {
                            return Err(TsFileError::InvalidArgument(format!(
                                "sprintz_product '{other}': expected exact or wrapping"
                            )))
                        }
                    }
                }
                "pruning" => {
                    self.disable_pruning = !parse_bool(v).ok_or_else(|| {
                        TsFileError::InvalidArgument(format!("pruning '{v}': expected true or false"))
                    })?
                }
                "max_page_values" => {
                    self.read.decode.max_page_values = v
                        .parse()
                        .map_err(|_| TsFileError::InvalidArgument(format!("max_page_values '{v}': not a number")))?
                }
                other => {
                    return Err(TsFileError::InvalidArgument(format!(
                        "unknown TsFile option '{other}' (known: table, time_unit, nonaligned_time_encoding, sprintz_product, pruning, max_page_values)"
                    )))
                }
            }
        }
        Ok(self)
    }
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
        let m: HashMap<String, String> = [
            ("format.table", "t"),
            ("TIME_UNIT", "us"),
            ("nonaligned_time_encoding", "plain"),
            ("pruning", "off"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let o = TsFileReadOptions::default().apply(&m).unwrap();
        assert_eq!(o.table.as_deref(), Some("t"));
        assert_eq!(o.time_unit, TimeUnit::Microsecond);
        assert_eq!(o.read.nonaligned_time_encoding, Encoding::Plain);
        assert!(o.disable_pruning);
        let bad: HashMap<String, String> = [("colour".to_string(), "red".to_string())].into();
        assert!(TsFileReadOptions::default().apply(&bad).unwrap_err().to_string().contains("unknown TsFile option"));
    }
}
