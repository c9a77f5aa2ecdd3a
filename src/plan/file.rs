//! What planning knows of one file: its reader (footer, index) and, built once on first use
//! and shared by every query, the per-table views of its devices ([`TableView`]), the
//! per-key views of its tree-model devices ([`TreeView`]) and the chunk bounds that let a
//! device's chunks be fetched before any header is parsed.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Result, TsFileError};
use crate::format::reader::DeviceEntry;
use crate::format::{ByteSource, FileReader};
use crate::plan::tags::TagFilter;
use crate::plan::tree_view::{TreeView, ALL_TREE_DEVICES};
use crate::plan::view::{next_start, DeviceFields, DeviceView, TableView};
use crate::read::aligned::AlignedChunkGroup;

/// Most devices a partial table view holds ([`FileView::partial_table`]); a TAG filter
/// allowing more loads the whole table's view.
pub const PARTIAL_VIEW_MAX_DEVICES: usize = 1024;

/// A file's reader with the views planning builds from it (module doc).
#[derive(Debug)]
pub struct FileView<S> {
    reader: FileReader<S>,
    tables: Mutex<HashMap<String, Arc<TableView>>>,
    trees: Mutex<HashMap<String, Arc<TreeView>>>,
    chunk_starts: OnceLock<std::result::Result<Vec<u64>, String>>,
    /// Offsets where chunk groups of table devices start (their time chunks) and the data
    /// section end; `None` for a file with tree-model devices (see [`FileView::chunk_ranges`]).
    group_starts: OnceLock<std::result::Result<Option<Vec<u64>>, String>>,
}

impl<S: ByteSource> FileView<S> {
    /// The views of the file `reader` reads (none built yet).
    pub fn new(reader: FileReader<S>) -> Self {
        FileView {
            reader,
            tables: Mutex::new(HashMap::new()),
            trees: Mutex::new(HashMap::new()),
            chunk_starts: OnceLock::new(),
            group_starts: OnceLock::new(),
        }
    }

    /// The file's reader.
    pub fn reader(&self) -> &FileReader<S> {
        &self.reader
    }

    /// Bytes of the index area and footer (`meta_offset` to the end of the file): grows
    /// with the number of devices and series, known without walking the index.
    pub fn index_bytes(&self) -> u64 {
        self.reader.len().saturating_sub(self.reader.metadata().meta_offset)
    }

    /// End (exclusive upper bound) of the chunk starting at `offset`: the start of the next
    /// chunk of any series in the file, or the separator. Chunk headers carry the exact
    /// size; this bound lets all chunks of a device be fetched before any is parsed.
    pub fn chunk_end(&self, offset: u64) -> Result<u64> {
        let starts = self.chunk_starts.get_or_init(|| {
            let mut v = Vec::new();
            let devices = self.reader.all_devices().map_err(|e| e.to_string())?;
            let mut series = Vec::new();
            for d in devices {
                series.clear();
                self.reader
                    .series_where(d.measurement_root.clone(), &|_| false, &mut series, Some(&mut v))
                    .map_err(|e| e.context(format!("series of device {}", d.device)).to_string())?;
            }
            v.push(self.reader.metadata().meta_offset);
            v.sort_unstable();
            v.dedup();
            Ok(v)
        });
        let starts = starts.as_ref().map_err(|e| TsFileError::corrupt("metadata index", None, e.clone()))?;
        next_start(starts, offset)
            .ok_or_else(|| TsFileError::corrupt("chunk metadata", Some(offset), "chunk offset at or past the data section end"))
    }

    /// Byte ranges of the time and value chunks of `groups`, chunk groups of a device of
    /// `table` whose series were read into `fields`. A chunk ends where its header says for a
    /// view of some devices ([`TableView::chunk_end`]); otherwise at an upper bound: the
    /// device's next chunk, the next chunk group of any device (each starts with its time
    /// chunk) or the data section end, whichever comes first (files that also hold
    /// tree-model devices use [`FileView::chunk_end`]).
    pub fn chunk_ranges(
        &self,
        table: &TableView,
        groups: &[AlignedChunkGroup],
        fields: &DeviceFields,
    ) -> Result<Vec<Range<u64>>> {
        let end = |offset: u64| -> Result<u64> {
            if let Some(end) = table.chunk_end(offset) {
                return Ok(end);
            }
            let Some(starts) = self.group_starts()? else { return self.chunk_end(offset) };
            let group = next_start(starts, offset).ok_or_else(|| {
                TsFileError::corrupt("chunk metadata", Some(offset), "chunk offset at or past the data section end")
            })?;
            Ok(next_start(&fields.chunk_offsets, offset).map_or(group, |own| own.min(group)))
        };
        let mut ranges = Vec::with_capacity(groups.iter().map(|g| 1 + g.values.len()).sum());
        for g in groups {
            for offset in std::iter::once(g.time.offset).chain(g.values.iter().flatten().map(|c| c.offset)) {
                ranges.push(offset..end(offset)?);
            }
        }
        Ok(ranges)
    }

    /// Where chunk groups of table devices start (their time chunks), with the data section
    /// end, sorted; `None` for a file that also holds tree-model devices. Loads every
    /// table's view on first use.
    fn group_starts(&self) -> Result<Option<&[u64]>> {
        let starts = self.group_starts.get_or_init(|| {
            if !self.tree_keys().is_empty() {
                return Ok(None);
            }
            let mut v = vec![self.reader.metadata().meta_offset];
            for name in self.table_names() {
                let t = self.table(&name).map_err(|e| e.to_string())?;
                v.extend(t.devices.iter().flat_map(|d| d.time.chunks.iter().map(|c| c.offset)));
            }
            v.sort_unstable();
            v.dedup();
            Ok(Some(v))
        });
        let starts = starts.as_ref().map_err(|e| TsFileError::corrupt("metadata index", None, e.clone()))?;
        Ok(starts.as_deref())
    }

    /// The field series of device `d` whose names `keep` accepts, read from the index into
    /// `out` (replacing what it held), with the offsets of all the device's chunks.
    pub fn read_fields(&self, d: &DeviceView, keep: &dyn Fn(&str) -> bool, out: &mut DeviceFields) -> Result<()> {
        out.series.clear();
        out.chunk_offsets.clear();
        self.reader
            .series_where(
                d.series_index.clone(),
                &|name| !name.is_empty() && keep(name),
                &mut out.series,
                Some(&mut out.chunk_offsets),
            )
            .map_err(|e| e.context(format!("series of device {}", d.device)))?;
        out.chunk_offsets.sort_unstable();
        out.series.retain(|s| !s.is_aligned_time());
        out.sorted = out.series.windows(2).all(|w| w.first().map(|s| &s.measurement) < w.get(1).map(|s| &s.measurement));
        Ok(())
    }

    /// Call `visit` with the name and series statistics of each field series of device `d`
    /// (nothing is kept or allocated per series).
    pub fn visit_fields(&self, d: &DeviceView, visit: &mut dyn FnMut(&str, &crate::format::Statistics)) -> Result<()> {
        self.reader
            .visit_series(d.series_index.clone(), &mut |name, stats| {
                if !name.is_empty() {
                    visit(name, stats)
                }
            })
            .map_err(|e| e.context(format!("series of device {}", d.device)))
    }

    /// Names of the tables with schemas.
    pub fn table_names(&self) -> Vec<String> {
        self.reader.metadata().table_schemas.iter().map(|t| t.name.clone()).collect()
    }

    /// Keys of the device index without a table schema: tree-model path prefixes, each one
    /// tree table (the DataFusion layer's `datafusion::tree`).
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
    /// file's only table, or [`ALL_TREE_DEVICES`] when its tables are all tree-model path
    /// prefixes; several table-model tables without the option are an error.
    pub fn table_to_scan(&self, option: Option<&str>) -> Result<String> {
        if let Some(t) = option {
            return Ok(t.to_string());
        }
        let names = self.sql_table_names();
        default_table(&names, self.table_names().is_empty())
            .ok_or_else(|| TsFileError::InvalidArgument(format!("holds tables {names:?}; choose one with the 'table' option")))
    }

    /// Whether `name` reads as a tree-model table here: a path prefix of the device index
    /// without a table schema, or [`ALL_TREE_DEVICES`] in a file with tree-model devices.
    pub fn holds_tree(&self, name: &str) -> bool {
        let md = self.reader.metadata();
        md.table_schema(name).is_none()
            && (md.table_root(name).is_some() || (name == ALL_TREE_DEVICES && !self.tree_keys().is_empty()))
    }

    /// The per-key view of a tree-model path prefix, or of every tree-model device for
    /// [`ALL_TREE_DEVICES`] (computed once).
    pub fn tree(&self, key: &str) -> Result<Arc<TreeView>> {
        if let Ok(map) = self.trees.lock() {
            if let Some(t) = map.get(key) {
                return Ok(t.clone());
            }
        }
        let t = if key == ALL_TREE_DEVICES {
            Arc::new(TreeView::load_all(&self.reader, &self.tree_keys())?)
        } else {
            Arc::new(TreeView::load(&self.reader, key)?)
        };
        if let Ok(mut map) = self.trees.lock() {
            map.insert(key.to_string(), t.clone());
        }
        Ok(t)
    }

    /// Whether the per-table view of `name` is loaded (a later [`FileView::table`] is free).
    pub fn table_loaded(&self, name: &str) -> bool {
        self.tables.lock().is_ok_and(|m| m.contains_key(name))
    }

    /// The per-table view (computed once).
    pub fn table(&self, name: &str) -> Result<Arc<TableView>> {
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
        let entries = if self.reader.metadata().table_root(name).is_some() { self.reader.devices(name)? } else { Vec::new() };
        let table = TableView::build(&self.reader, schema, entries, None)?;
        let t = Arc::new(table);
        if let Ok(mut map) = self.tables.lock() {
            map.insert(name.to_string(), t.clone());
        }
        Ok(t)
    }

    /// A view of only the devices of table `name` that `tags` allows (with `tag_count` TAG
    /// columns), when the full view is not loaded and they are at most
    /// [`PARTIAL_VIEW_MAX_DEVICES`], with the offsets of every chunk of those devices (whose
    /// ends the caller reads from their headers: [`TableView::set_chunk_ends`]); `None`
    /// otherwise (use [`FileView::table`]). Devices named by every TAG are looked up along
    /// their index path; otherwise the device list is walked (identifiers only) and the
    /// allowed devices' series read.
    pub fn partial_table(&self, name: &str, tags: &TagFilter, tag_count: usize) -> Result<Option<(TableView, Vec<u64>)>> {
        if tags.is_empty() || self.table_loaded(name) {
            return Ok(None);
        }
        let Some(schema) = self.reader.metadata().table_schema(name).cloned() else { return Ok(None) };
        if self.reader.metadata().table_root(name).is_none() {
            return Ok(None);
        }
        let entries: Vec<DeviceEntry> = match tags.device_ids(name, tag_count, PARTIAL_VIEW_MAX_DEVICES) {
            Some(ids) => {
                let mut found = Vec::new();
                for id in &ids {
                    found.extend(self.reader.find_device(id)?);
                }
                found
            }
            None => {
                let all = self.reader.devices(name)?;
                let allowed: Vec<DeviceEntry> = all.into_iter().filter(|e| tags.allows(&e.device)).collect();
                if allowed.len() > PARTIAL_VIEW_MAX_DEVICES {
                    return Ok(None);
                }
                allowed
            }
        };
        // Every chunk of the view's devices (time and fields) gets its end from its header.
        let mut offsets = Vec::new();
        let table = TableView::build(&self.reader, schema, entries, Some(&mut offsets))?;
        Ok(Some((table, offsets)))
    }
}

/// The table a scan reads when no `table` option names one, given the SQL table names of
/// the file(s) it covers and whether they hold tree-model devices only: the one name, or
/// every tree-model device ([`ALL_TREE_DEVICES`], aligned by device as IoTDB shows them)
/// when there are several tree-model path prefixes and no table-model table. `None` when
/// there is no name, or several names of which one is a table-model table: the caller must
/// ask for the option.
pub fn default_table(names: &[String], tree_only: bool) -> Option<String> {
    match names {
        [one] => Some(one.clone()),
        [_, _, ..] if tree_only => Some(ALL_TREE_DEVICES.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_table_is_the_one_name_or_every_tree_device() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(default_table(&names(&["weather"]), false).as_deref(), Some("weather"));
        assert_eq!(default_table(&names(&["root.a"]), true).as_deref(), Some("root.a"));
        assert_eq!(default_table(&names(&["root.a", "root.b"]), true).as_deref(), Some(ALL_TREE_DEVICES));
        assert_eq!(default_table(&names(&["weather", "root.b"]), false), None);
        assert_eq!(default_table(&names(&[]), true), None);
    }
}
