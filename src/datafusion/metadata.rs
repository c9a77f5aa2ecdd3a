//! Per-file metadata for the DataFusion layer: the parsed footer and index area of each file
//! with the planning views built from it ([`crate::plan::FileView`]), cached so a repeated
//! query does not read footers again ([`MetadataCache`]: bounded by bytes, least recently used
//! out, [`DEFAULT_METADATA_CACHE_BYTES`] by default).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use object_store::{ObjectMeta, ObjectStore};

use crate::datafusion::errors::file_name;
use crate::error::{Result, TsFileError};
use crate::format::FileReader;
use crate::io::{fetch_chunk_ends, open_object_opts, OpenOptions, RangeSource};
use crate::plan::{FileView, TableView, TagFilter};

/// Which columns of a table `TsFileFormat::infer_stats` computes statistics for. Row
/// counts, time and TAG bounds come from the table's view (a device's time series); a FIELD
/// column's from a walk of every device's series. `TsFileTable`
/// asks per query for the columns it uses, and for none when the query names its devices by
/// TAG (the scan looks them up along their index path: statistics would walk every device).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum StatisticsScope {
    /// Every column (a format used directly, e.g. by DataFusion's listing table).
    #[default]
    All,
    /// Rows, time, TAGs and these FIELD (tree: measurement) columns; other fields unknown.
    Columns(Arc<std::collections::BTreeSet<String>>),
    /// None: every statistic unknown (nothing is read at planning beyond the footer).
    None,
}

impl StatisticsScope {
    /// Whether FIELD (or measurement) column `name` gets statistics.
    pub fn field(&self, name: &str) -> bool {
        match self {
            StatisticsScope::All => true,
            StatisticsScope::Columns(c) => c.contains(name),
            StatisticsScope::None => false,
        }
    }
}

/// A file's parsed footer and index area with the planning views built from it
#[derive(Debug)]
pub struct FileMeta {
    /// The reader over the fetched footer region and the views built from it.
    pub plan: FileView<RangeSource>,
    /// The file as the user names it, for error messages: `/` + path on the local file
    /// system, `s3://bucket/key` on S3, the store path elsewhere.
    pub location: String,
    /// File statistics by table, table schema and the columns they cover, computed once
    /// (planning asks on every query).
    statistics: Mutex<HashMap<(String, arrow_schema::SchemaRef, StatisticsScope), datafusion::common::Statistics>>,
}

impl FileMeta {
    /// The file's reader (footer and index).
    pub fn reader(&self) -> &FileReader<RangeSource> {
        self.plan.reader()
    }

    /// Estimated bytes this metadata keeps in memory: the TsFileMetadata length (standing
    /// for its parsed form) plus the footer and index bytes its reader holds.
    pub fn memory_size(&self) -> u64 {
        self.reader().metadata_len().saturating_add(self.reader().source().bytes_held())
    }

    /// The table a scan of this file reads ([`FileView::table_to_scan`]) as a planning error
    /// naming the file.
    pub fn table_to_scan(&self, option: Option<&str>) -> datafusion::common::Result<String> {
        self.plan
            .table_to_scan(option)
            .map_err(|e| datafusion::common::DataFusionError::Plan(format!("{}: {}", self.location, root_message(&e))))
    }

    /// The statistics of `table` for `schema` covering `scope`, computed by `compute` on
    /// first use and kept with the footer (a failure is returned, not kept).
    pub fn statistics_with(
        &self,
        table: &str,
        schema: &arrow_schema::SchemaRef,
        scope: &StatisticsScope,
        compute: impl FnOnce() -> Result<datafusion::common::Statistics>,
    ) -> Result<datafusion::common::Statistics> {
        let key = (table.to_string(), schema.clone(), scope.clone());
        if let Some(s) = self.statistics.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(s);
        }
        let s = compute()?;
        if let Ok(mut m) = self.statistics.lock() {
            m.insert(key, s.clone());
        }
        Ok(s)
    }

    /// The view a query of table `name` reads: of only the devices `tags` names when the
    /// table's whole view is not loaded and they are few ([`FileMeta::table_for_tags`]),
    /// else the whole table's (built once).
    pub async fn view_for(
        &self,
        store: &Arc<dyn ObjectStore>,
        location: &object_store::path::Path,
        name: &str,
        tags: &TagFilter,
    ) -> Result<Arc<TableView>> {
        let tag_count = self.reader().metadata().table_schema(name).map_or(0, |s| s.tag_columns().count());
        match self.table_for_tags(store, location, name, tags, tag_count).await? {
            Some(t) => Ok(Arc::new(t)),
            None => self.plan.table(name),
        }
    }

    /// [`FileView::partial_table`] with its devices' chunk ends read from their headers
    /// with one request to `store`.
    pub async fn table_for_tags(
        &self,
        store: &Arc<dyn ObjectStore>,
        location: &object_store::path::Path,
        name: &str,
        tags: &TagFilter,
        tag_count: usize,
    ) -> Result<Option<TableView>> {
        let Some((mut table, offsets)) = self.plan.partial_table(name, tags, tag_count)? else { return Ok(None) };
        table.set_chunk_ends(fetch_chunk_ends(store, location, self.reader(), &offsets).await?);
        Ok(Some(table))
    }
}

impl AsRef<FileView<RangeSource>> for FileMeta {
    fn as_ref(&self) -> &FileView<RangeSource> {
        &self.plan
    }
}

/// The message of an error without the variant's prefix (`invalid argument: `).
fn root_message(e: &TsFileError) -> String {
    match e {
        TsFileError::InvalidArgument(m) => m.clone(),
        other => other.to_string(),
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
            crate::format::open::check_metadata_len(m.reader().metadata_len(), max_metadata_bytes)
                .map_err(|e| e.in_file(&m.location))?;
            return Ok((m, LoadCost::default()));
        }
        let start = Instant::now();
        let name = file_name(store, &meta.location);
        let (reader, trace) = open_object_opts(store, &meta.location, meta.size, OpenOptions::for_store(store, read))
            .await
            .map_err(|e| e.in_file(&name))?;
        let fm = Arc::new(FileMeta { plan: FileView::new(reader), location: name, statistics: Mutex::new(HashMap::new()) });
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

    #[test]
    fn test_cache_hit_and_miss() {
        let (store, metas) = store_with(&["a.tsfile"]);
        let cache = MetadataCache::new();
        assert_eq!(cache.limit(), DEFAULT_METADATA_CACHE_BYTES);
        let (first, load) = block_on(cache.get(&store, &metas[0])).unwrap();
        assert!(load.nanos > 0 && load.requests >= 1 && load.bytes >= first.reader().metadata_len(), "a miss reads the footer");
        let (second, load) = block_on(cache.get(&store, &metas[0])).unwrap();
        assert_eq!(load, LoadCost::default(), "a hit reads nothing");
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.bytes(), first.memory_size());
        assert!(first.memory_size() >= first.reader().metadata_len() && first.reader().metadata_len() > 0);
        assert_eq!(first.location, "a.tsfile", "an in-memory store names files by path");
    }

    #[test]
    fn test_metadata_size_hint_sets_the_round_trips_of_an_open() {
        let (store, metas) = store_with(&["a.tsfile"]);
        let size = metas[0].size;
        let open = |hint: u64| {
            let read = crate::read::ReadOptions { metadata_size_hint: hint, ..Default::default() };
            let (m, cost) = block_on(MetadataCache::new().get_with(&store, &metas[0], &read)).unwrap();
            (m.reader().metadata().meta_offset, cost)
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
