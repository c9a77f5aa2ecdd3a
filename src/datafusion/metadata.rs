//! Per-file metadata for the DataFusion layer: the parsed footer and index area of each file,
//! cached so a repeated query does not read footers again, and the per-table view of its
//! devices (time series + field series) that planning and pruning work from — per
//! table-model table ([`TableMeta`]) and per tree-model path prefix ([`TreeMeta`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use object_store::{ObjectMeta, ObjectStore};

use crate::datafusion::tree::TreeMeta;
use crate::error::{Result, TsFileError};
use crate::format::{DeviceId, FileReader, TableSchema, TimeseriesMetadata};
use crate::io::{open_object_with, RangeSource};

/// One device of a table: its time series and field series.
#[derive(Debug, Clone)]
pub struct DeviceMeta {
    /// The device.
    pub device: DeviceId,
    /// The aligned time column's metadata.
    pub time: TimeseriesMetadata,
    /// Field series by measurement name.
    pub fields: HashMap<String, TimeseriesMetadata>,
    /// Offset of the device's first chunk: a byte-range split owns the device when this
    /// offset falls inside the range.
    pub first_offset: u64,
}

impl DeviceMeta {
    /// Number of rows (timestamps) of the device.
    pub fn rows(&self) -> u64 {
        self.time.statistics.count
    }
}

/// A table of one file: schema and devices in index order.
#[derive(Debug)]
pub struct TableMeta {
    /// The table's schema as stored in the file.
    pub schema: TableSchema,
    /// Devices in index order.
    pub devices: Vec<DeviceMeta>,
}

/// A file's parsed footer and index area.
#[derive(Debug)]
pub struct FileMeta {
    /// Reader over the fetched footer region.
    pub reader: FileReader<RangeSource>,
    /// The object's path (for error messages).
    pub location: String,
    tables: Mutex<HashMap<String, Arc<TableMeta>>>,
    trees: Mutex<HashMap<String, Arc<TreeMeta>>>,
    chunk_starts: std::sync::OnceLock<std::result::Result<Vec<u64>, String>>,
}

impl FileMeta {
    /// End (exclusive upper bound) of the chunk starting at `offset`: the start of the next
    /// chunk of any series in the file, or the separator. Chunk headers carry the exact
    /// size; this bound lets all chunks of a device be fetched before any is parsed.
    pub fn chunk_end(&self, offset: u64) -> Result<u64> {
        let starts = self.chunk_starts.get_or_init(|| {
            let mut v = Vec::new();
            let devices = self.reader.all_devices().map_err(|e| e.to_string())?;
            for d in devices {
                for s in self.reader.series(&d).map_err(|e| e.to_string())? {
                    v.extend(s.chunks.iter().map(|c| c.offset));
                }
            }
            v.push(self.reader.metadata().meta_offset);
            v.sort_unstable();
            v.dedup();
            Ok(v)
        });
        let starts = starts.as_ref().map_err(|e| TsFileError::corrupt("metadata index", None, e.clone()))?;
        let i = starts.partition_point(|&s| s <= offset);
        starts
            .get(i)
            .copied()
            .ok_or_else(|| TsFileError::corrupt("chunk metadata", Some(offset), "chunk offset at or past the data section end"))
    }

    /// Names of the tables with schemas.
    pub fn table_names(&self) -> Vec<String> {
        self.reader.metadata().table_schemas.iter().map(|t| t.name.clone()).collect()
    }

    /// Keys of the device index without a table schema: tree-model path prefixes, each one
    /// tree table (see [`crate::datafusion::tree`]).
    pub fn tree_keys(&self) -> Vec<String> {
        let md = self.reader.metadata();
        md.table_index.iter().filter(|t| md.table_schema(&t.name).is_none()).map(|t| t.name.clone()).collect()
    }

    /// Every SQL table of the file: the table-model tables, then the tree-model keys.
    pub fn sql_table_names(&self) -> Vec<String> {
        let mut names = self.table_names();
        names.extend(self.tree_keys());
        names
    }

    /// The table a scan of this file reads: `option` (the `table` option), or else the
    /// file's only table; several tables without the option are an error.
    pub fn table_to_scan(&self, option: Option<&str>) -> datafusion::common::Result<String> {
        if let Some(t) = option {
            return Ok(t.to_string());
        }
        let names = self.sql_table_names();
        match names.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(datafusion::common::DataFusionError::Plan(format!(
                "{}: holds tables {names:?}; choose one with the 'table' option",
                self.location
            ))),
        }
    }

    /// The per-key view of a tree-model path prefix (computed once).
    pub fn tree(&self, key: &str) -> Result<Arc<TreeMeta>> {
        if let Ok(map) = self.trees.lock() {
            if let Some(t) = map.get(key) {
                return Ok(t.clone());
            }
        }
        let t = Arc::new(TreeMeta::load(&self.reader, key)?);
        if let Ok(mut map) = self.trees.lock() {
            map.insert(key.to_string(), t.clone());
        }
        Ok(t)
    }

    /// The per-table view (computed once).
    pub fn table(&self, name: &str) -> Result<Arc<TableMeta>> {
        if let Ok(map) = self.tables.lock() {
            if let Some(t) = map.get(name) {
                return Ok(t.clone());
            }
        }
        let schema = self.reader.metadata().table_schema(name).cloned().ok_or_else(|| {
            let tree = self.reader.metadata().table_root(name).is_some();
            if tree {
                TsFileError::InvalidArgument(format!("'{name}' is a tree-model path prefix, not a table-model table"))
            } else {
                TsFileError::NotFound { what: format!("table '{name}' (tables: {})", self.table_names().join(", ")) }
            }
        })?;
        let mut devices = Vec::new();
        if self.reader.metadata().table_root(name).is_some() {
            for d in self.reader.devices(name)? {
                let series = self.reader.series(&d)?;
                let mut time = None;
                let mut fields = HashMap::new();
                for s in series {
                    if s.is_aligned_time() {
                        time = Some(s);
                    } else {
                        fields.insert(s.measurement.clone(), s);
                    }
                }
                let time = time.ok_or_else(|| {
                    TsFileError::corrupt("device", None, format!("table device {} has no time column", d.device))
                })?;
                let first_offset = time.chunks.iter().map(|c| c.offset).min().unwrap_or(0);
                devices.push(DeviceMeta { device: d.device, time, fields, first_offset });
            }
        }
        let t = Arc::new(TableMeta { schema, devices });
        if let Ok(mut map) = self.tables.lock() {
            map.insert(name.to_string(), t.clone());
        }
        Ok(t)
    }
}

/// A bounded cache of [`FileMeta`] keyed by store, path, size and modification time.
#[derive(Debug, Default)]
pub struct MetadataCache {
    entries: Mutex<Vec<(String, Arc<FileMeta>)>>,
}

const CACHE_ENTRIES: usize = 1024;

impl MetadataCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn key(store: &Arc<dyn ObjectStore>, meta: &ObjectMeta) -> String {
        format!(
            "{store}|{}|{}|{}|{:?}",
            meta.location,
            meta.size,
            meta.last_modified.timestamp_nanos_opt().unwrap_or(0),
            meta.e_tag
        )
    }

    /// The metadata of `meta`'s object, loaded on first use. Returns it and the load time
    /// in nanoseconds (0 on a cache hit).
    pub async fn get(&self, store: &Arc<dyn ObjectStore>, meta: &ObjectMeta) -> Result<(Arc<FileMeta>, u64)> {
        self.get_with(store, meta, crate::read::DEFAULT_MAX_METADATA_BYTES).await
    }

    /// [`MetadataCache::get`] with a limit on the TsFileMetadata size (option
    /// `max_metadata_bytes`), also enforced on a cache hit.
    pub async fn get_with(
        &self,
        store: &Arc<dyn ObjectStore>,
        meta: &ObjectMeta,
        max_metadata_bytes: u64,
    ) -> Result<(Arc<FileMeta>, u64)> {
        let key = Self::key(store, meta);
        let cached = self.entries.lock().ok().and_then(|e| e.iter().find(|(k, _)| *k == key).map(|(_, m)| m.clone()));
        if let Some(m) = cached {
            // The same check as on open (the limit may differ from the one it was opened with).
            crate::format::open::check_metadata_len(m.reader.metadata_len(), max_metadata_bytes)
                .map_err(|e| e.in_file(&meta.location))?;
            return Ok((m, 0));
        }
        let start = Instant::now();
        let reader = open_object_with(store, &meta.location, meta.size, max_metadata_bytes)
            .await
            .map_err(|e| e.in_file(&meta.location))?;
        let fm = Arc::new(FileMeta {
            reader,
            location: meta.location.to_string(),
            tables: Mutex::new(HashMap::new()),
            trees: Mutex::new(HashMap::new()),
            chunk_starts: std::sync::OnceLock::new(),
        });
        let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHE_ENTRIES {
                entries.remove(0);
            }
            entries.push((key, fm.clone()));
        }
        Ok((fm, nanos))
    }

    /// Number of cached files.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
