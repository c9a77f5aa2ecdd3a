//! Per-file metadata for the DataFusion layer: the parsed footer and index area of each file,
//! cached so a repeated query does not read footers again ([`MetadataCache`]: bounded by
//! bytes, least recently used out, [`DEFAULT_METADATA_CACHE_BYTES`] by default), and the
//! per-table view of its devices (time series + field series) that planning and pruning
//! work from — per table-model table ([`TableMeta`]) and per tree-model path prefix ([`TreeMeta`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use object_store::{ObjectMeta, ObjectStore};

use crate::datafusion::errors::file_name;
use crate::datafusion::tree::TreeMeta;
use crate::error::{Result, TsFileError};
use crate::format::{DeviceId, FileReader, TableSchema, TimeseriesMetadata};
use crate::io::{open_object_opts, OpenOptions, RangeSource};

/// One device of a table: its time series and field series.
#[derive(Debug, Clone)]
pub struct DeviceMeta {
    /// The device.
    pub device: DeviceId,
    /// The aligned time column's metadata.
    pub time: TimeseriesMetadata,
    /// Field series in index order (see [`DeviceMeta::field`]).
    pub fields: Vec<TimeseriesMetadata>,
    /// Whether `fields` is sorted by measurement name (as writers store it), so a lookup
    /// is a binary search.
    pub fields_sorted: bool,
    /// Offset of the device's first chunk: a byte-range split owns the device when this
    /// offset falls inside the range.
    pub first_offset: u64,
}

impl DeviceMeta {
    /// Number of rows (timestamps) of the device.
    pub fn rows(&self) -> u64 {
        self.time.statistics.count
    }

    /// The field series named `name`, looked for first at position `hint` (devices of a
    /// table usually list the same series, so the position in one device is a good guess
    /// for the next).
    pub fn field_at(&self, name: &str, hint: usize) -> Option<&TimeseriesMetadata> {
        match self.fields.get(hint) {
            Some(s) if s.measurement == name => Some(s),
            _ => self.field(name),
        }
    }

    /// Position of the field series named `name` in [`DeviceMeta::fields`].
    pub fn field_position(&self, name: &str) -> Option<usize> {
        if self.fields_sorted {
            self.fields.binary_search_by(|s| s.measurement.as_str().cmp(name)).ok()
        } else {
            self.fields.iter().position(|s| s.measurement == name)
        }
    }

    /// The field series named `name`.
    pub fn field(&self, name: &str) -> Option<&TimeseriesMetadata> {
        self.field_position(name).and_then(|i| self.fields.get(i))
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

impl TableMeta {
    /// Per name: its position among the first device's field series (`usize::MAX` when
    /// absent), the first place [`DeviceMeta::field_at`] looks in every device.
    pub fn field_hints<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
        let first = self.devices.first();
        names.into_iter().map(|n| first.and_then(|d| d.field_position(n)).unwrap_or(usize::MAX)).collect()
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
    /// File statistics by table and table schema, computed once (planning asks on every query).
    statistics: Mutex<HashMap<(String, arrow_schema::SchemaRef), datafusion::common::Statistics>>,
}

impl FileMeta {
    /// Estimated bytes this metadata keeps in memory: the TsFileMetadata length (standing
    /// for its parsed form) plus the footer and index bytes its reader holds.
    pub fn memory_size(&self) -> u64 {
        self.reader.metadata_len().saturating_add(self.reader.source().bytes_held())
    }

    /// End (exclusive upper bound) of the chunk starting at `offset`: the start of the next
    /// chunk of any series in the file, or the separator. Chunk headers carry the exact
    /// size; this bound lets all chunks of a device be fetched before any is parsed.
    pub fn chunk_end(&self, offset: u64) -> Result<u64> {
        let starts = self.chunk_starts.get_or_init(|| {
            let mut v = self.table_chunk_starts().unwrap_or_default();
            if v.is_empty() {
                let devices = self.reader.all_devices().map_err(|e| e.to_string())?;
                for d in devices {
                    for s in self.reader.series(&d).map_err(|e| e.to_string())? {
                        v.extend(s.chunks.iter().map(|c| c.offset));
                    }
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

    /// Chunk offsets of every series from the per-table views (parsed once and shared with
    /// the scans), when every device of the file belongs to a table-model table; `None`
    /// (walk the index instead) for a file with tree-model devices or a table that fails to
    /// load.
    fn table_chunk_starts(&self) -> Option<Vec<u64>> {
        if !self.tree_keys().is_empty() {
            return None;
        }
        let mut v = Vec::new();
        for name in self.table_names() {
            let t = self.table(&name).ok()?;
            for d in &t.devices {
                v.extend(d.time.chunks.iter().map(|c| c.offset));
                for s in &d.fields {
                    v.extend(s.chunks.iter().map(|c| c.offset));
                }
            }
        }
        Some(v)
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
            let entries = self.reader.devices(name)?;
            devices.reserve_exact(entries.len());
            // One buffer for every device's series; each device keeps an exact-size copy.
            let mut series = Vec::new();
            for d in entries {
                series.clear();
                self.reader.series_into(&d, &mut series)?;
                let time = series.iter().position(TimeseriesMetadata::is_aligned_time).map(|i| series.remove(i));
                let time = time.ok_or_else(|| {
                    TsFileError::corrupt("device", None, format!("table device {} has no time column", d.device))
                })?;
                let mut fields: Vec<TimeseriesMetadata> = Vec::with_capacity(series.len());
                fields.append(&mut series);
                let fields_sorted =
                    fields.windows(2).all(|w| w.first().map(|s| &s.measurement) < w.get(1).map(|s| &s.measurement));
                let first_offset = time.chunks.iter().map(|c| c.offset).min().unwrap_or(0);
                devices.push(DeviceMeta { device: d.device, time, fields, fields_sorted, first_offset });
            }
        }
        let t = Arc::new(TableMeta { schema, devices });
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
            let d = DeviceMeta {
                device: DeviceId::from_strs(&["t", "x"]),
                time: series(""),
                fields: names.iter().map(|n| series(n)).collect(),
                fields_sorted: sorted,
                first_offset: 0,
            };
            for n in &names {
                assert_eq!(d.field(n).map(|s| s.measurement.as_str()), Some(*n));
                let at = d.field_position(n).unwrap();
                assert_eq!(d.fields[at].measurement, *n);
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
