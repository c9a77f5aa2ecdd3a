//! The `tsfile.` namespace of table options: `OPTIONS ('tsfile.table' 'weather')`.
//!
//! DataFusion turns a bare option key such as `'table'` into `format.table`, which only its
//! built-in formats (CSV, JSON, Parquet) may carry when a session checks options against its
//! table options — as datafusion-cli does before creating a table. Registering this
//! extension lets every TsFile option also be spelled `tsfile.<key>`, which such sessions
//! accept; the keys and values are checked with the same rules as
//! [`TsFileReadOptions::apply`], and each entry is described by its option's doc in
//! [`OPTIONS`](crate::datafusion::options::OPTIONS).

use std::any::Any;
use std::collections::{BTreeMap, HashMap};

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::{DataFusionError, Result};

use crate::datafusion::options::{OptionDef, TsFileReadOptions};

/// TsFile table options registered as the `tsfile` table-options extension of a session
/// (done by [`register_tsfile_format`](crate::datafusion::register_tsfile_format)).
#[derive(Clone, Default)]
pub struct TsFileTableOptions {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for TsFileTableOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.entries().into_iter().map(|e| (e.key, e.value))).finish()
    }
}

impl TsFileTableOptions {
    /// The options set in this session, by key without the `tsfile.` prefix (key values
    /// included: for building a scan's options, never for display).
    pub fn values(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .filter(|(k, _)| !crate::datafusion::sink::is_write_option(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The write options among the values (see [`TsFileSink`](crate::datafusion::TsFileSink)).
    pub fn write_values(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .filter(|(k, _)| crate::datafusion::sink::is_write_option(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl ConfigExtension for TsFileTableOptions {
    const PREFIX: &'static str = "tsfile";
}

impl ExtensionOptions for TsFileTableOptions {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let key = key.strip_prefix("tsfile.").unwrap_or(key).to_ascii_lowercase();
        if crate::datafusion::sink::is_write_option(&key) {
            // A write option (`COPY`/`INSERT INTO`), checked by the writer's own parser.
            crate::writer::TsFileWriterOptions::default()
                .set(&key, value)
                .map_err(|e| DataFusionError::Configuration(e.to_string()))?;
            self.values.insert(key, value.to_string());
            return Ok(());
        }
        let one = HashMap::from([(key.clone(), value.to_string())]);
        TsFileReadOptions::default().apply(&one).map_err(|e| DataFusionError::Configuration(e.to_string()))?;
        self.values.insert(key, value.to_string());
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        self.values
            .iter()
            .map(|(k, v)| ConfigEntry {
                key: format!("tsfile.{k}"),
                // Keys are never shown (SHOW ALL, information_schema, EXPLAIN).
                value: Some(if k == "master_key" { "<redacted>".to_string() } else { v.clone() }),
                description: OptionDef::find(k).map_or("TsFile table option", |o| o.doc),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_like_table_options() {
        let mut o = TsFileTableOptions::default();
        o.set("tsfile.table", "weather").unwrap();
        o.set("time_unit", "us").unwrap();
        assert_eq!(o.entries().len(), 2);
        assert_eq!(o.entries()[0].key, "tsfile.table");
        assert_eq!(
            o.entries()[0].description,
            "the TsFile table to expose (needed when the files hold several table-model tables); `*` = every tree-model device"
        );
        o.set("tsfile.master_key", "tsfile-rs-master").unwrap();
        let shown = format!("{:?} {o:?}", o.entries());
        assert!(shown.contains("<redacted>") && !shown.contains("tsfile-rs"), "{shown}");
        let e = o.set("tsfile.colour", "red").unwrap_err().to_string();
        assert!(e.contains("unknown TsFile option 'colour'"), "{e}");
        assert!(o.set("tsfile.time_unit", "hours").is_err());
    }
}
