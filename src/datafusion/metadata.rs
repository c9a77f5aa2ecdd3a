//! Per-file metadata for the DataFusion layer: the parsed footer and index area of each file,
//! cached so a repeated query does not read footers again ([`MetadataCache`]: bounded by
//! bytes, least recently used out, [`DEFAULT_METADATA_CACHE_BYTES`] by default), and the
//! per-table view of its devices (time series + field series) that planning and pruning
//! work from — per table-model table ([`TableMeta`]) and per tree-model path prefix ([`TreeMeta`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use object_store::{ObjectMeta, ObjectStore};

use crate::datafusion::errors::file_name;
use crate::datafusion::tag_filter::TagFilter;
use crate::datafusion::tree::TreeMeta;
use crate::error::{Result, TsFileError};
use crate::format::reader::DeviceEntry;
use crate::format::{DeviceId, FileReader, TableSchema, TimeseriesMetadata};
use crate::io::{open_object_opts, OpenOptions, RangeSource};
use crate::read::aligned::AlignedChunkGroup;

/// Most devices a partial table view holds ([`FileMeta::table_for_tags`]); a TAG filter
/// allowing more loads the whole table's view.
pub const PARTIAL_VIEW_MAX_DEVICES: usize = 1024;

/// Widest window fetched to read one chunk header.
const MAX_CHUNK_HEADER_WINDOW: u64 = 16 << 20;

/// The first of the sorted `starts` after `offset`.
fn next_start(starts: &[u64], offset: u64) -> Option<u64> {
    starts.get(starts.partition_point(|&s| s <= offset)).copied()
}

/// One device of a table: what planning keeps of it. Its field series are read from the
/// index on demand ([`FileMeta::read_fields`]) and not kept, so a table of a million
/// devices costs a few hundred bytes per device, not a copy of its whole index.
#[derive(Debug, Clone)]
pub struct DeviceMeta {
    /// The device.
    pub device: DeviceId,
    /// The aligned time column's metadata.
    pub time: TimeseriesMetadata,
    /// Offset of the device's first chunk: a byte-range split owns the device when this
    /// offset falls inside the range.
    pub first_offset: u64,
    /// Byte range starting at the device's measurement index root (where its series are).
    pub series_index: Range<u64>,
}

impl DeviceMeta {
    /// Number of rows (timestamps) of the device.
    pub fn rows(&self) -> u64 {
        self.time.statistics.count
    }
}

/// Field series of one device as read by [`FileMeta::read_fields`]: all of them or those a
/// reader asked for, in index order. Reused from device to device, so reading a table's
/// devices one after another does not grow memory.
#[derive(Debug, Default)]
pub struct DeviceFields {
    series: Vec<TimeseriesMetadata>,
    /// Offsets of every chunk of the device (time and all fields, read or not), sorted.
    chunk_offsets: Vec<u64>,
    /// Whether `series` is sorted by measurement name (as writers store it), so a lookup is
    /// a binary search.
    sorted: bool,
}

impl DeviceFields {
    /// The series read, in index order.
    pub fn series(&self) -> &[TimeseriesMetadata] {
        &self.series
    }

    /// The field series named `name`, looked for first at position `hint` (devices of a
    /// table usually list the same series, so the position in one device is a good guess
    /// for the next).
    pub fn field_at(&self, name: &str, hint: usize) -> Option<&TimeseriesMetadata> {
        match self.series.get(hint) {
            Some(s) if s.measurement == name => Some(s),
            _ => self.field(name),
        }
    }

    /// Position of the field series named `name` in [`DeviceFields::series`].
    pub fn field_position(&self, name: &str) -> Option<usize> {
        if self.sorted {
            self.series.binary_search_by(|s| s.measurement.as_str().cmp(name)).ok()
        } else {
            self.series.iter().position(|s| s.measurement == name)
        }
    }

    /// The field series named `name`.
    pub fn field(&self, name: &str) -> Option<&TimeseriesMetadata> {
        self.field_position(name).and_then(|i| self.series.get(i))
    }
}

/// A table of one file: schema and devices in index order.
#[derive(Debug)]
pub struct TableMeta {
    /// The table's schema as stored in the file.
    pub schema: TableSchema,
    /// Devices in index order.
    pub devices: Vec<DeviceMeta>,
    /// Measurement names of the first device's field series, in index order (where
    /// [`DeviceFields::field_at`] looks first, see [`TableMeta::field_hints`]).
    first_fields: Vec<String>,
    /// For a view of some devices only: the exact end of each of their chunks, read from
    /// the chunk headers (the other devices' chunk offsets that bound them are not known).
    chunk_ends: HashMap<u64, u64>,
}

impl TableMeta {
    /// The view of `entries` (devices of the table `schema` describes): each device's
    /// series are read once into one buffer; its time series and (for the first device) its
    /// field names are kept, and the offsets of all its chunks go to `chunk_offsets` when
    /// given.
    fn build(
        reader: &FileReader<RangeSource>,
        schema: TableSchema,
        entries: Vec<DeviceEntry>,
        mut chunk_offsets: Option<&mut Vec<u64>>,
    ) -> Result<TableMeta> {
        let mut devices = Vec::with_capacity(entries.len());
        let mut first_fields = Vec::new();
        let mut series = Vec::new();
        for d in entries {
            series.clear();
            // The time series (named "") is parsed; the field series are stepped over,
            // except in the first device, whose field names give the lookup hints.
            let keep = |name: &str| devices.is_empty() || name.is_empty();
            reader
                .series_where(d.measurement_root.clone(), &keep, &mut series, chunk_offsets.as_deref_mut())
                .map_err(|e| e.context(format!("series of device {}", d.device)))?;
            let time_at = series
                .iter()
                .position(TimeseriesMetadata::is_aligned_time)
                .ok_or_else(|| TsFileError::corrupt("device", None, format!("table device {} has no time column", d.device)))?;
            if devices.is_empty() {
                first_fields = series.iter().filter(|s| !s.is_aligned_time()).map(|s| s.measurement.clone()).collect();
            }
            let time = series.swap_remove(time_at);
            let first_offset = time.chunks.iter().map(|c| c.offset).min().unwrap_or(0);
            devices.push(DeviceMeta { device: d.device, time, first_offset, series_index: d.measurement_root });
        }
        Ok(TableMeta { schema, devices, first_fields, chunk_ends: HashMap::new() })
    }

    /// The end of the chunk at `offset` as read from its header, for a view of some devices
    /// only ([`FileMeta::table_for_tags`]); `None` for a whole table's view.
    pub fn chunk_end(&self, offset: u64) -> Option<u64> {
        self.chunk_ends.get(&offset).copied()
    }

    /// Per name of `names`: where [`DeviceFields::field_at`] looks first for it in a device
    /// read with exactly those names — its position among them in the first device's index
    /// order (`usize::MAX` when the first device lacks it).
    pub fn field_hints(&self, names: &[&str]) -> Vec<usize> {
        let wanted: HashSet<&str> = names.iter().copied().collect();
        let order: Vec<&str> = self.first_fields.iter().map(String::as_str).filter(|f| wanted.contains(f)).collect();
        names.iter().map(|n| order.iter().position(|f| f == n).unwrap_or(usize::MAX)).collect()
    }
}

/// A file's parsed footer and index area.
#[derive(Debug)]
pub struct FileMeta {
    /// Reader over the fetched footer region.
    pub reader: FileReader<RangeSource>,
    /// The file as the user names it, for error messages: `/` + path on the local file
    /// system, `s3://bucket/key` on S3, the store path elsewhere.
    pub location: String,
    tables: Mutex<HashMap<String, Arc<TableMeta>>>,
    trees: Mutex<HashMap<String, Arc<TreeMeta>>>,
    chunk_starts: std::sync::OnceLock<std::result::Result<Vec<u64>, String>>,
    /// Offsets where chunk groups of table devices start (their time chunks) and the data
    /// section end; `None` for a file with tree-model devices (see [`FileMeta::chunk_ranges`]).
    group_starts: std::sync::OnceLock<std::result::Result<Option<Vec<u64>>, String>>,
    /// File statistics by table and table schema, computed once (planning asks on every query).
    statistics: Mutex<HashMap<(String, arrow_schema::SchemaRef), datafusion::common::Statistics>>,
}

impl FileMeta {
    /// Estimated bytes this metadata keeps in memory: the TsFileMetadata length (standing
    /// for its parsed form) plus the footer and index bytes its reader holds.
    pub fn memory_size(&self) -> u64 {
        self.reader.metadata_len().saturating_add(self.reader.source().bytes_held())
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
    /// view of some devices ([`TableMeta::chunk_end`]); otherwise at an upper bound: the
    /// device's next chunk, the next chunk group of any device (each starts with its time
    /// chunk) or the data section end, whichever comes first (files that also hold
    /// tree-model devices use [`FileMeta::chunk_end`]).
    pub fn chunk_ranges(
        &self,
        table: &TableMeta,
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
    pub fn read_fields(&self, d: &DeviceMeta, keep: &dyn Fn(&str) -> bool, out: &mut DeviceFields) -> Result<()> {
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
    pub fn visit_fields(&self, d: &DeviceMeta, visit: &mut dyn FnMut(&str, &crate::format::Statistics)) -> Result<()> {
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

    /// The statistics of `table` for `schema`, computed by `compute` on first use and kept
    /// with the footer (a failure is returned, not kept).
    pub fn statistics_with(
        &self,
        table: &str,
        schema: &arrow_schema::SchemaRef,
        compute: impl FnOnce() -> Result<datafusion::common::Statistics>,
    ) -> Result<datafusion::common::Statistics> {
        let key = (table.to_string(), schema.clone());
        if let Some(s) = self.statistics.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(s);
        }
        let s = compute()?;
        if let Ok(mut m) = self.statistics.lock() {
            m.insert(key, s.clone());
        }
        Ok(s)
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

    /// A view of only the devices of table `name` that `tags` allows (with `tag_count` TAG
    /// columns), when the full view is not loaded and they are at most
    /// [`PARTIAL_VIEW_MAX_DEVICES`]; `None` otherwise (use [`FileMeta::table`]). Devices
    /// named by every TAG are looked up along their index path; otherwise the device list
    /// is walked (identifiers only) and the allowed devices' series read. Their chunk ends
    /// are read from the chunk headers with one request to `store`.
    pub async fn table_for_tags(
        &self,
        store: &Arc<dyn ObjectStore>,
        location: &object_store::path::Path,
        name: &str,
        tags: &TagFilter,
        tag_count: usize,
    ) -> Result<Option<TableMeta>> {
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
        let mut table = TableMeta::build(&self.reader, schema, entries, Some(&mut offsets))?;
        table.chunk_ends = self.read_chunk_ends(store, location, &offsets).await?;
        Ok(Some(table))
    }

    /// The end of each chunk at `offsets`, from its header: headers are fetched with one
    /// request (a window per chunk; a longer header, e.g. a very long name, is fetched again
    /// with a wider window).
    async fn read_chunk_ends(
        &self,
        store: &Arc<dyn ObjectStore>,
        location: &object_store::path::Path,
        offsets: &[u64],
    ) -> Result<HashMap<u64, u64>> {
        let data_end = self.reader.metadata().meta_offset;
        let mut ends = HashMap::with_capacity(offsets.len());
        let mut pending: Vec<u64> = offsets.to_vec();
        let mut window: u64 = 4 << 10;
        loop {
            let ranges = pending.iter().map(|&o| o..data_end.min(o.saturating_add(window))).collect();
            let parts = crate::io::fetch_ranges(store, location, ranges).await?;
            let view = self.reader.with_source(self.reader.source().with_parts(parts));
            let mut short = Vec::new();
            for &o in &pending {
                match view.read_chunk_header(o) {
                    Ok(h) => {
                        ends.insert(o, h.end_offset());
                    }
                    Err(e) if window >= MAX_CHUNK_HEADER_WINDOW => return Err(e),
                    Err(_) => short.push(o),
                }
            }
            if short.is_empty() {
                return Ok(ends);
            }
            pending = short;
            window = window.saturating_mul(64).min(MAX_CHUNK_HEADER_WINDOW);
        }
    }

    /// Whether the per-table view of `name` is loaded (a later [`FileMeta::table`] is free).
    pub fn table_loaded(&self, name: &str) -> bool {
        self.tables.lock().is_ok_and(|m| m.contains_key(name))
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
        let entries = if self.reader.metadata().table_root(name).is_some() { self.reader.devices(name)? } else { Vec::new() };
        let table = TableMeta::build(&self.reader, schema, entries, None)?;
        let t = Arc::new(table);
        if let Ok(mut map) = self.tables.lock() {
            map.insert(name.to_string(), t.clone());
        }
        Ok(t)
    }
}

/// Default byte limit of a [`MetadataCache`]: 512 MiB, room for two footers of the default
/// `max_metadata_bytes` (256 MiB) or many ordinary ones.
pub const DEFAULT_METADATA_CACHE_BYTES: u64 = 512 * 1024 * 1024;

/// What loading one file's metadata cost: time, requests and bytes (all 0 on a cache hit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadCost {
    /// Wall time in nanoseconds.
    pub nanos: u64,
    /// Requests to the object store (after coalescing).
    pub requests: u64,
    /// Bytes fetched.
    pub bytes: u64,
}

/// A cache of parsed footers (`FileMeta`), bounded by bytes with least-recently-used
/// eviction.
///
/// Entries are found in O(1) by object store and path; an entry serves a request only when
/// the object's size, modification time and e-tag are those it was read with, so a changed
/// file is read again (and replaces the stale entry). An entry weighs its TsFileMetadata
/// length plus the index bytes its reader holds (`FileMeta::memory_size`); when the total
/// passes the limit ([`DEFAULT_METADATA_CACHE_BYTES`] unless [`MetadataCache::with_limit`]),
/// the least recently used entries are dropped; an entry heavier than the whole limit is
/// returned but not kept. A lock poisoned by a panic elsewhere is recovered by emptying the
/// cache (never a panic).
///
/// Design note: DataFusion 55's runtime `FileMetadataCache` (used by Parquet) is keyed by
/// path alone (no object store: two stores holding the same path would share an entry) and
/// is reachable only through a session, while this cache is created with a format or table
/// and used by scans' file openers, which see no session; so TsFile keeps its own.
#[derive(Debug)]
pub struct MetadataCache {
    inner: Mutex<Lru>,
    limit: u64,
}

/// Identity of a cached object: the store (its `Display`) and the path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    store: String,
    location: String,
}

/// What the object was when its entry was read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    size: u64,
    last_modified: i64,
    e_tag: Option<String>,
}

impl Version {
    fn of(meta: &ObjectMeta) -> Self {
        Version {
            size: meta.size,
            last_modified: meta.last_modified.timestamp_nanos_opt().unwrap_or(i64::MIN),
            e_tag: meta.e_tag.clone(),
        }
    }
}

#[derive(Debug)]
struct Entry {
    meta: Arc<FileMeta>,
    version: Version,
    bytes: u64,
    /// Use stamp: the entry's key in [`Lru::order`].
    stamp: u64,
}

/// The cache's state: entries by key, and keys by last use (oldest first).
#[derive(Debug, Default)]
struct Lru {
    entries: HashMap<CacheKey, Entry>,
    order: std::collections::BTreeMap<u64, CacheKey>,
    next_stamp: u64,
    bytes: u64,
}

impl Lru {
    /// The entry of `key` if it is of `version` (marked used); a stale entry is dropped.
    fn get(&mut self, key: &CacheKey, version: &Version) -> Option<Arc<FileMeta>> {
        match self.entries.get_mut(key) {
            None => return None,
            Some(e) if e.version == *version => {
                self.order.remove(&e.stamp);
                e.stamp = self.next_stamp;
                self.next_stamp += 1;
                self.order.insert(e.stamp, key.clone());
                return Some(e.meta.clone());
            }
            Some(_) => {}
        }
        self.remove(key);
        None
    }

    fn remove(&mut self, key: &CacheKey) {
        if let Some(e) = self.entries.remove(key) {
            self.order.remove(&e.stamp);
            self.bytes = self.bytes.saturating_sub(e.bytes);
        }
    }

    /// Insert (replacing any entry of `key`), then evict the least recently used entries
    /// until the total is within `limit`.
    fn insert(&mut self, key: CacheKey, meta: Arc<FileMeta>, version: Version, limit: u64) {
        self.remove(&key);
        let bytes = meta.memory_size();
        if bytes > limit {
            return;
        }
        while self.bytes + bytes > limit {
            let Some((_, oldest)) = self.order.pop_first() else { break };
            if let Some(e) = self.entries.remove(&oldest) {
                self.bytes = self.bytes.saturating_sub(e.bytes);
            }
        }
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.order.insert(stamp, key.clone());
        self.entries.insert(key, Entry { meta, version, bytes, stamp });
        self.bytes += bytes;
    }
}

impl Default for MetadataCache {
    fn default() -> Self {
        Self::with_limit(DEFAULT_METADATA_CACHE_BYTES)
    }
}

impl MetadataCache {
    /// An empty cache of [`DEFAULT_METADATA_CACHE_BYTES`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache holding up to `limit` bytes of metadata (0 = cache nothing).
    pub fn with_limit(limit: u64) -> Self {
        MetadataCache { inner: Mutex::new(Lru::default()), limit }
    }

    /// The byte limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The state, recovered (emptied) when a panic poisoned the lock: its invariants may
    /// not hold any more, and an empty cache is always correct.
    fn state(&self) -> std::sync::MutexGuard<'_, Lru> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => {
                let mut g = poisoned.into_inner();
                *g = Lru::default();
                self.inner.clear_poison();
                g
            }
        }
    }

    fn key(store: &Arc<dyn ObjectStore>, meta: &ObjectMeta) -> CacheKey {
        CacheKey { store: store.to_string(), location: meta.location.to_string() }
    }

    /// The metadata of `meta`'s object, loaded on first use, with what loading it cost
    /// (nothing on a cache hit).
    pub async fn get(&self, store: &Arc<dyn ObjectStore>, meta: &ObjectMeta) -> Result<(Arc<FileMeta>, LoadCost)> {
        self.get_with(store, meta, &crate::read::ReadOptions::default()).await
    }

    /// [`MetadataCache::get`] with the read options' limit on the TsFileMetadata size
    /// (option `max_metadata_bytes`, also enforced on a cache hit) and size hint (option
    /// `metadata_size_hint`).
    pub async fn get_with(
        &self,
        store: &Arc<dyn ObjectStore>,
        meta: &ObjectMeta,
        read: &crate::read::ReadOptions,
    ) -> Result<(Arc<FileMeta>, LoadCost)> {
        let max_metadata_bytes = read.max_metadata_bytes;
        let key = Self::key(store, meta);
        let version = Version::of(meta);
        let cached = self.state().get(&key, &version);
        if let Some(m) = cached {
            // The same check as on open (the limit may differ from the one it was opened with).
            crate::format::open::check_metadata_len(m.reader.metadata_len(), max_metadata_bytes)
                .map_err(|e| e.in_file(&m.location))?;
            return Ok((m, LoadCost::default()));
        }
        let start = Instant::now();
        let name = file_name(store, &meta.location);
        let (reader, trace) = open_object_opts(store, &meta.location, meta.size, OpenOptions::for_store(store, read))
            .await
            .map_err(|e| e.in_file(&name))?;
        let fm = Arc::new(FileMeta {
            reader,
            location: name,
            tables: Mutex::new(HashMap::new()),
            trees: Mutex::new(HashMap::new()),
            chunk_starts: std::sync::OnceLock::new(),
            group_starts: std::sync::OnceLock::new(),
            statistics: Mutex::new(HashMap::new()),
        });
        let cost = LoadCost {
            nanos: u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX),
            requests: trace.requests,
            bytes: trace.bytes_fetched,
        };
        self.state().insert(key, fm.clone(), version, self.limit);
        Ok((fm, cost))
    }

    /// Number of cached files.
    pub fn len(&self) -> usize {
        self.state().entries.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the cached entries (by `FileMeta::memory_size`).
    pub fn bytes(&self) -> u64 {
        self.state().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{ObjectStoreExt, PutPayload};

    fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }

    /// An in-memory store holding the sample file under each of `names`.
    fn store_with(names: &[&str]) -> (Arc<dyn ObjectStore>, Vec<ObjectMeta>) {
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.tsfile")).unwrap();
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let metas = block_on(async {
            let mut metas = Vec::new();
            for n in names {
                let p = Path::from(*n);
                store.put(&p, PutPayload::from(bytes.clone())).await.unwrap();
                metas.push(store.head(&p).await.unwrap());
            }
            metas
        });
        (store, metas)
    }

    fn series(name: &str) -> TimeseriesMetadata {
        let statistics =
            crate::format::Statistics { count: 1, start_time: 0, end_time: 0, values: crate::format::ValueStatistics::None };
        TimeseriesMetadata {
            timeseries_type: 0,
            measurement: name.to_string(),
            data_type: crate::format::TsDataType::Int64,
            statistics: statistics.clone(),
            chunks: vec![crate::format::ChunkMetadata { offset: 0, statistics }],
        }
    }

    #[test]
    fn test_device_field_lookup_sorted_and_unsorted() {
        for (names, sorted) in [(vec!["a", "b", "c", "d"], true), (vec!["c", "a", "d", "b"], false), (vec!["a", "a"], false)] {
            let d = DeviceFields { series: names.iter().map(|n| series(n)).collect(), chunk_offsets: Vec::new(), sorted };
            for n in &names {
                assert_eq!(d.field(n).map(|s| s.measurement.as_str()), Some(*n));
                let at = d.field_position(n).unwrap();
                assert_eq!(d.series()[at].measurement, *n);
                // Any hint, right, wrong or out of range, finds the same series.
                for hint in [at, 0, 3, usize::MAX] {
                    assert_eq!(d.field_at(n, hint).map(|s| s.measurement.as_str()), Some(*n));
                }
            }
            assert!(d.field_at("e", 0).is_none() && d.field_position("e").is_none());
            assert!(d.field("e").is_none() && d.field("").is_none());
        }
    }

    #[test]
    fn test_cache_hit_and_miss() {
        let (store, metas) = store_with(&["a.tsfile"]);
        let cache = MetadataCache::new();
        assert_eq!(cache.limit(), DEFAULT_METADATA_CACHE_BYTES);
        let (first, load) = block_on(cache.get(&store, &metas[0])).unwrap();
        assert!(load.nanos > 0 && load.requests >= 1 && load.bytes >= first.reader.metadata_len(), "a miss reads the footer");
        let (second, load) = block_on(cache.get(&store, &metas[0])).unwrap();
        assert_eq!(load, LoadCost::default(), "a hit reads nothing");
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.bytes(), first.memory_size());
        assert!(first.memory_size() >= first.reader.metadata_len() && first.reader.metadata_len() > 0);
        assert_eq!(first.location, "a.tsfile", "an in-memory store names files by path");
    }

    #[test]
    fn test_metadata_size_hint_sets_the_round_trips_of_an_open() {
        let (store, metas) = store_with(&["a.tsfile"]);
        let size = metas[0].size;
        let open = |hint: u64| {
            let read = crate::read::ReadOptions { metadata_size_hint: hint, ..Default::default() };
            let (m, cost) = block_on(MetadataCache::new().get_with(&store, &metas[0], &read)).unwrap();
            (m.reader.metadata().meta_offset, cost)
        };
        // A hint as large as the file: head, footer and index in one request.
        let (offset, whole) = open(size);
        assert_eq!((whole.requests, whole.bytes), (1, size));
        // The default for an object store (512 KiB) holds the footer and index area of this
        // 3.7 MB file: one round of two requests, the head and the tail.
        let default = open(0).1;
        assert_eq!((default.requests, default.bytes), (2, 64 + (512 << 10)));
        // A tiny hint: the head and tail, then the metadata, then the index area.
        let (same_offset, tiny) = open(16);
        assert_eq!(same_offset, offset, "the same file either way");
        assert!(tiny.requests >= 3 && tiny.bytes < size, "{tiny:?} of {size} bytes");
    }

    #[test]
    fn test_cache_rereads_a_changed_file() {
        let (store, metas) = store_with(&["a.tsfile"]);
        let cache = MetadataCache::new();
        let (first, _) = block_on(cache.get(&store, &metas[0])).unwrap();
        let mut touched = metas[0].clone();
        touched.last_modified += std::time::Duration::from_secs(1);
        let (second, load) = block_on(cache.get(&store, &touched)).unwrap();
        assert!(load.requests > 0 && !Arc::ptr_eq(&first, &second), "a new modification time is a miss");
        let mut etag = touched.clone();
        etag.e_tag = Some("other".to_string());
        let (third, load) = block_on(cache.get(&store, &etag)).unwrap();
        assert!(load.requests > 0 && !Arc::ptr_eq(&second, &third), "a new e-tag is a miss");
        assert_eq!(cache.len(), 1, "the stale entry is replaced, not kept beside the new one");
        assert_eq!(cache.bytes(), third.memory_size());
        // A different size is another file too (reading it fails: the bytes did not change).
        let mut grown = etag.clone();
        grown.size += 1;
        assert!(block_on(cache.get(&store, &grown)).is_err());
        assert_eq!(cache.len(), 0, "the entry of the old size was dropped");
    }

    #[test]
    fn test_cache_evicts_least_recently_used_by_bytes() {
        let (store, metas) = store_with(&["a.tsfile", "b.tsfile", "c.tsfile"]);
        let one = block_on(MetadataCache::new().get(&store, &metas[0])).unwrap().0.memory_size();
        // Room for two entries, not three.
        let cache = MetadataCache::with_limit(2 * one + one / 2);
        let get = |i: usize| block_on(cache.get(&store, &metas[i])).unwrap().1.requests;
        assert!(get(0) > 0);
        assert!(get(1) > 0);
        assert_eq!(get(0), 0, "a is used again: b is now the least recently used");
        assert!(get(2) > 0);
        assert_eq!((cache.len(), cache.bytes()), (2, 2 * one));
        assert_eq!(get(0), 0, "a stayed");
        assert_eq!(get(2), 0, "c stayed");
        assert!(get(1) > 0, "b was evicted");
        // An entry heavier than the whole limit is served but not kept.
        let tiny = MetadataCache::with_limit(one - 1);
        assert!(block_on(tiny.get(&store, &metas[0])).is_ok());
        assert!(tiny.is_empty());
        assert_eq!(tiny.bytes(), 0);
    }

    #[test]
    fn test_cache_survives_a_poisoned_lock() {
        let (store, metas) = store_with(&["a.tsfile"]);
        let cache = Arc::new(MetadataCache::new());
        block_on(cache.get(&store, &metas[0])).unwrap();
        let c = cache.clone();
        let poisoner = std::thread::spawn(move || {
            let _guard = c.inner.lock();
            panic!("poison the cache lock");
        });
        assert!(poisoner.join().is_err());
        assert!(cache.inner.is_poisoned());
        // Recovered as an empty cache: a miss, then a hit again.
        assert_eq!(cache.len(), 0);
        assert!(!cache.inner.is_poisoned());
        assert!(block_on(cache.get(&store, &metas[0])).unwrap().1.requests > 0);
        assert_eq!(block_on(cache.get(&store, &metas[0])).unwrap().1.requests, 0);
        assert_eq!(cache.len(), 1);
    }
}
