//! Async reads from an `object_store`, feeding the synchronous format layer.
//!
//! The format and read layers pull bytes through [`crate::format::ByteSource`]. Over an
//! object store the bytes a step needs are fetched first and served from memory by a
//! [`RangeSource`]: a sparse set of fetched ranges. Nearby ranges are coalesced into one
//! request ([`coalesce`]), as remote stores charge per request.
//!
//! Opening is one loop ([`open_object_opts`]) around the format layer's sans-IO
//! [`OpenDecoder`]: it answers which ranges it lacks, they are fetched and pushed, until the
//! file is open; the index area is prefetched in the same loop. Later, a walk that meets
//! bytes not held fails with the typed `TsFileError::NeedBytes`, and [`with_fetch`] fetches
//! them and retries. The chunks of the devices that survive pruning are fetched before they
//! are decoded.

// One-range requests are written as `vec![a..b]` on purpose.
#![allow(clippy::single_range_in_vec_init)]

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::error::{Result, TsFileError};
pub use crate::format::open::RangeSource;
use crate::format::open::{OpenDecoder, OpenStep};
use crate::format::reader::StructureOptions;
use crate::format::FileReader;

/// Merge ranges closer than `gap` bytes into one, keeping each merged range at most
/// `max_len` bytes (a single larger range is kept whole). Input need not be sorted.
pub fn coalesce(mut ranges: Vec<Range<u64>>, gap: u64, max_len: u64) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        if let Some(last) = out.last_mut() {
            if r.start <= last.end.saturating_add(gap) && r.end.max(last.end) - last.start <= max_len {
                last.end = last.end.max(r.end);
                continue;
            }
        }
        out.push(r);
    }
    out
}

fn store_error(what: String, e: object_store::Error) -> TsFileError {
    TsFileError::Io { what, source: std::io::Error::other(e) }
}

/// Whether `store` reads local files. By name: object_store has no "is local" query, and
/// wrappers (such as datafusion-cli's instrumented store) show the inner store's name.
fn is_local(store: &Arc<dyn ObjectStore>) -> bool {
    store.to_string().contains("LocalFileSystem(")
}

/// The requests that read `ranges` from `store`.
///
/// A remote request costs a round trip, worth about a megabyte of transfer: ranges less than
/// [`REMOTE_COALESCE_GAP`] apart are read together. A local read costs a system call and a
/// fresh buffer, and the bytes of a gap are copied for nothing; ranges closer than
/// [`LOCAL_COALESCE_GAP`] are read together, and further runs of them are merged while the
/// bytes read stay within [`LOCAL_MAX_AMPLIFICATION`] times the bytes wanted (see
/// [`coalesce_dense`]).
fn plan_requests(store: &Arc<dyn ObjectStore>, ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    if is_local(store) {
        coalesce_dense(coalesce(ranges, LOCAL_COALESCE_GAP, MAX_REQUEST_BYTES), LOCAL_MAX_AMPLIFICATION, MAX_REQUEST_BYTES)
    } else {
        coalesce(ranges, REMOTE_COALESCE_GAP, MAX_REQUEST_BYTES)
    }
}

/// Merge consecutive sorted, non-overlapping `ranges` into one while the merged range is at
/// most `max_factor` times the bytes of the ranges it covers and at most `max_len` bytes.
///
/// A projection of most of a file's columns (time and one of seven fields in a typical table)
/// is then read with one request per run of devices instead of one per chunk: on a local
/// file that is one buffer instead of hundreds. Many small buffers cost more than the copied
/// gap bytes: each one is zeroed, and glibc's allocator hands such buffers back to the kernel
/// once freed, so the next run faults them in again (20-26% of all CPU samples of `one_field` on
/// the benchmark dataset, M, in a process that reads only TsFiles). A sparse projection (a
/// small column among large ones) keeps its separate reads.
pub fn coalesce_dense(ranges: Vec<Range<u64>>, max_factor: u64, max_len: u64) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    // Bytes wanted inside `out.last()`.
    let mut wanted = 0u64;
    for r in ranges {
        let len = r.end.saturating_sub(r.start);
        if let Some(last) = out.last_mut() {
            let span = r.end.max(last.end).saturating_sub(last.start);
            if r.start >= last.end && span <= max_len && span <= (wanted + len).saturating_mul(max_factor) {
                last.end = r.end;
                wanted += len;
                continue;
            }
        }
        out.push(r);
        wanted = len;
    }
    out
}

/// Gap bridged by one read of a local file (see [`plan_requests`]).
const LOCAL_COALESCE_GAP: u64 = 4 << 10;
/// Bytes read per byte wanted that a local read may reach by bridging larger gaps.
const LOCAL_MAX_AMPLIFICATION: u64 = 2;
/// Gap bridged by one request to a remote object store.
const REMOTE_COALESCE_GAP: u64 = 1 << 20;
/// Largest merged request (a single larger range is read whole).
const MAX_REQUEST_BYTES: u64 = 16 << 20;

/// Fetch `ranges` of `location` (coalesced) and return them as `(offset, bytes)` parts.
pub async fn fetch_ranges(store: &Arc<dyn ObjectStore>, location: &Path, ranges: Vec<Range<u64>>) -> Result<Vec<(u64, Bytes)>> {
    if ranges.is_empty() {
        return Ok(Vec::new());
    }
    let merged = plan_requests(store, ranges);
    let data = store
        .get_ranges(location, &merged)
        .await
        .map_err(|e| store_error(format!("reading {} ranges of {location}", merged.len()), e))?;
    Ok(merged.iter().map(|r| r.start).zip(data).collect())
}

/// Widest window fetched to read one chunk header.
const MAX_CHUNK_HEADER_WINDOW: u64 = 16 << 20;

/// The end of each chunk at `offsets` of the file `reader` reads, from its header: the
/// headers are fetched with one request (a window per chunk; a longer header, e.g. a very
/// long name, is fetched again with a wider window).
pub async fn fetch_chunk_ends(
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    reader: &FileReader<RangeSource>,
    offsets: &[u64],
) -> Result<std::collections::HashMap<u64, u64>> {
    let data_end = reader.metadata().meta_offset;
    let mut ends = std::collections::HashMap::with_capacity(offsets.len());
    let mut pending: Vec<u64> = offsets.to_vec();
    let mut window: u64 = 4 << 10;
    loop {
        let ranges = pending.iter().map(|&o| o..data_end.min(o.saturating_add(window))).collect();
        let parts = fetch_ranges(store, location, ranges).await?;
        let view = reader.with_source(reader.source().with_parts(parts));
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

/// Default number of bytes read from the end of a local file on open.
pub const FOOTER_PREFETCH: u64 = 64 << 10;
/// Default number of bytes read from the end of a remote file on open: one round trip
/// brings the footer and, in most files, the whole index area (as Parquet's default
/// `metadata_size_hint` does).
pub const REMOTE_FOOTER_PREFETCH: u64 = 512 << 10;

/// How [`open_object_opts`] reads a file's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Limit on TsFileMetadata (option `max_metadata_bytes`; 0 = the default of 256 MiB).
    /// All bytes fetched on open are bounded by [`metadata_fetch_limit`] of it.
    pub max_metadata_bytes: u64,
    /// Bytes read from the end of the file in the first request (default
    /// [`FOOTER_PREFETCH`]); more are fetched when the footer is larger.
    pub prefetch: u64,
    /// Fetch the whole index area on open (default): index walks then need no requests.
    pub prefetch_index: bool,
}

impl OpenOptions {
    /// The options for opening a file of `store` with the read options' metadata limit and
    /// size hint (0: [`FOOTER_PREFETCH`] for a local file, [`REMOTE_FOOTER_PREFETCH`] for a
    /// remote one, where a round trip costs more than the bytes).
    pub fn for_store(store: &Arc<dyn ObjectStore>, read: &crate::read::ReadOptions) -> Self {
        let prefetch = match read.metadata_size_hint {
            0 if is_local(store) => FOOTER_PREFETCH,
            0 => REMOTE_FOOTER_PREFETCH,
            n => n,
        };
        OpenOptions { max_metadata_bytes: read.max_metadata_bytes, prefetch, prefetch_index: true }
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            max_metadata_bytes: crate::read::DEFAULT_MAX_METADATA_BYTES,
            prefetch: FOOTER_PREFETCH,
            prefetch_index: true,
        }
    }
}

/// The requests one open made: the ranges asked for by each round of the decoder (before
/// coalescing) and the bytes fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenTrace {
    /// Ranges each round asked for, in order.
    pub rounds: Vec<Vec<Range<u64>>>,
    /// Bytes received (coalesced requests may read more than was asked for).
    pub bytes_fetched: u64,
    /// Requests made (after coalescing).
    pub requests: u64,
}

/// Open a file of `size` bytes in an object store: fetch the head, the tail, TsFileMetadata
/// and the whole index area (`meta_offset ..`), with the default [`OpenOptions`].
pub async fn open_object(store: &Arc<dyn ObjectStore>, location: &Path, size: u64) -> Result<FileReader<RangeSource>> {
    open_object_with(store, location, size, crate::read::DEFAULT_MAX_METADATA_BYTES).await
}

/// [`open_object`] with a limit on the TsFileMetadata size, checked against the tail's
/// length field before the metadata is fetched (option `max_metadata_bytes`).
pub async fn open_object_with(
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    size: u64,
    max_metadata_bytes: u64,
) -> Result<FileReader<RangeSource>> {
    let opts = OpenOptions { max_metadata_bytes, ..OpenOptions::default() };
    Ok(open_object_opts(store, location, size, opts).await?.0)
}

/// Open a file of `size` bytes: the one loop of every object-store open (local files read
/// through `LocalFileSystem` included). The sans-IO [`OpenDecoder`] says which ranges it
/// lacks; they are fetched with [`fetch_ranges`] (coalesced) and pushed until it is done.
/// The decoder bounds the rounds and the bytes asked for ([`metadata_fetch_limit`]).
pub async fn open_object_opts(
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    size: u64,
    opts: OpenOptions,
) -> Result<(FileReader<RangeSource>, OpenTrace)> {
    let structure = StructureOptions { max_metadata_size: opts.max_metadata_bytes, ..Default::default() };
    let mut dec = OpenDecoder::new(size, structure).with_prefetch(opts.prefetch).with_index_prefetch(opts.prefetch_index);
    let mut trace = OpenTrace::default();
    loop {
        match dec.try_decode()? {
            OpenStep::Need(ranges) => {
                trace.rounds.push(ranges.clone());
                for (o, b) in fetch_ranges(store, location, ranges).await? {
                    trace.requests += 1;
                    trace.bytes_fetched += b.len() as u64;
                    dec.push(o, b);
                }
            }
            OpenStep::Done(opened) => return Ok((FileReader::from_opened(dec.into_source(), *opened), trace)),
        }
    }
}

/// Run `f` over `reader`; while it fails for bytes the reader's [`RangeSource`] does not
/// hold ([`TsFileError::NeedBytes`], under any context), fetch them, add them to the source
/// and run `f` again. At most `max_bytes` are fetched in all; a need for bytes already held
/// (no progress) returns the error. With the index prefetched on open (the default) index
/// walks of a well-formed file need no fetch; without it, this loop reads index nodes on
/// demand.
#[cfg(any(test, feature = "experimental"))]
pub async fn with_fetch<T>(
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    reader: &mut FileReader<RangeSource>,
    max_bytes: u64,
    mut f: impl FnMut(&FileReader<RangeSource>) -> Result<T>,
) -> Result<T> {
    let mut fetched = 0u64;
    loop {
        let e = match f(reader) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let Some(range) = e.needed_range() else { return Err(e) };
        let missing = reader.source().missing(range);
        if missing.is_empty() {
            return Err(e);
        }
        fetched = fetched.saturating_add(missing.iter().map(|r| r.end - r.start).sum::<u64>());
        if fetched > max_bytes {
            return Err(TsFileError::LimitExceeded {
                what: "bytes of metadata fetched on demand".into(),
                value: fetched,
                limit: max_bytes,
            });
        }
        for (o, b) in fetch_ranges(store, location, missing).await? {
            reader.source_mut().insert(o, b);
        }
    }
}

/// Fetch a whole object (small files, tests).
#[cfg(any(test, feature = "experimental"))]
pub async fn fetch_all(store: &Arc<dyn ObjectStore>, location: &Path) -> Result<Bytes> {
    object_store::ObjectStoreExt::get(store, location)
        .await
        .map_err(|e| store_error(format!("fetching {location}"), e))?
        .bytes()
        .await
        .map_err(|e| store_error(format!("fetching {location}"), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;

    #[test]
    fn test_coalesce_merges_nearby() {
        let r = coalesce(vec![10..20, 0..5, 25..30, 100..110], 5, 1000);
        assert_eq!(r, vec![0..30, 100..110]);
        let r = coalesce(vec![10..20, 0..5, 26..30], 4, 1000);
        assert_eq!(r, vec![0..5, 10..20, 26..30]);
        let r = coalesce(vec![0..10, 11..20], 5, 15);
        assert_eq!(r, vec![0..10, 11..20]);
    }

    #[test]
    fn test_local_reads_bridge_gaps_within_twice_the_wanted_bytes() {
        let local: Arc<dyn ObjectStore> = Arc::new(object_store::local::LocalFileSystem::new());
        let remote: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        // Two columns' chunks of consecutive devices, 10 KB of other columns between them:
        // one request either way (local: 30 KB wanted, 50 KB read).
        let dense = vec![0..10_000, 20_000..30_000, 40_000..50_000];
        assert_eq!(plan_requests(&local, dense.clone()), vec![0..50_000]);
        assert_eq!(plan_requests(&remote, dense), vec![0..50_000]);
        // A small column among large ones (1 KB wanted per 40 KB): read apart locally, in one
        // request remotely.
        let sparse = vec![0..1_000, 40_000..41_000, 80_000..81_000];
        assert_eq!(plan_requests(&local, sparse.clone()), sparse);
        assert_eq!(plan_requests(&remote, sparse), vec![0..81_000]);
        // Gaps up to 4 KiB are bridged locally whatever the amplification.
        assert_eq!(plan_requests(&local, vec![0..10, 4_000..4_010]), vec![0..4_010]);
    }

    #[test]
    fn test_coalesce_dense_bounds_amplification_and_length() {
        // Exactly twice the wanted bytes is allowed, one byte more is not.
        assert_eq!(coalesce_dense(vec![0..10, 30..40], 2, 1000), vec![0..40]);
        assert_eq!(coalesce_dense(vec![0..10, 31..41], 2, 1000), vec![0..10, 31..41]);
        // The bound holds for the whole merged range, not pair by pair: a third range past a
        // long gap starts a new request.
        assert_eq!(coalesce_dense(vec![0..10, 15..25, 30..40, 100..110], 2, 1000), vec![0..40, 100..110]);
        // Merged requests stop at max_len; a single larger range is kept whole.
        assert_eq!(coalesce_dense(vec![0..10, 10..20, 20..30], 2, 20), vec![0..20, 20..30]);
        assert_eq!(coalesce_dense(vec![0..50, 50..60], 2, 20), vec![0..50, 50..60]);
        // Empty input, one range, empty ranges.
        assert_eq!(coalesce_dense(vec![], 2, 20), Vec::<Range<u64>>::new());
        assert_eq!(coalesce_dense(vec![5..9], 2, 20), vec![5..9]);
        assert_eq!(coalesce_dense(vec![5..5, 6..6], 2, 20), vec![5..5, 6..6]);
    }

    #[test]
    fn test_open_object_in_memory_store() {
        let bytes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/files/table_deep_index.tsfile")).unwrap();
        let size = bytes.len() as u64;
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let path = Path::from("x.tsfile");
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let reader = rt.block_on(async {
            store.put(&path, Bytes::from(bytes.clone()).into()).await.unwrap();
            open_object(&store, &path, size).await.unwrap()
        });
        let devices = reader.all_devices().unwrap();
        assert_eq!(devices.len(), 70);
        for d in &devices {
            assert!(!reader.series(d).unwrap().is_empty());
        }
        // A small file is fetched in one coalesced request, chunks included.
        let s = reader.series(&devices[0]).unwrap();
        assert!(reader.read_chunk(s[0].chunks[0].offset).is_ok());
    }

    #[test]
    fn test_open_loop_small_prefetch_and_on_demand_index() {
        // The wide Java table: TsFileMetadata (104,712 bytes) larger than the prefetch.
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/external/java_wide_table.tsfile")).unwrap();
        let size = bytes.len() as u64;
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let path = Path::from("wide.tsfile");
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            store.put(&path, Bytes::from(bytes.clone()).into()).await.unwrap();
            // Index prefetched (the default): walks need nothing more.
            let opts = OpenOptions { prefetch: 4096, ..OpenOptions::default() };
            let (reader, trace) = open_object_opts(&store, &path, size, opts).await.unwrap();
            assert_eq!(trace.rounds.len(), 3, "{:?}", trace.rounds);
            assert_eq!(trace.rounds[2], vec![347_404..size - 10 - 104_712]);
            let devices = reader.all_devices().unwrap();
            assert_eq!(devices.len(), 100);
            assert_eq!(reader.series(&devices[99]).unwrap().len(), 101);
            // Without it, a walk fails with the typed need, and with_fetch loops on it.
            let opts = OpenOptions { prefetch: 4096, prefetch_index: false, ..OpenOptions::default() };
            let (mut reader, trace) = open_object_opts(&store, &path, size, opts).await.unwrap();
            assert_eq!(trace.rounds[2], vec![347_404..347_405]);
            let e = reader.all_devices().and_then(|d| reader.series(&d[0])).unwrap_err();
            assert!(e.needed_range().is_some(), "{e}");
            let series = with_fetch(&store, &path, &mut reader, 1 << 20, |r| {
                let mut n = 0;
                for d in r.all_devices()? {
                    n += r.series(&d)?.len();
                }
                Ok(n)
            })
            .await
            .unwrap();
            assert_eq!(series, 100 * 101);
            // The fetch bound holds.
            let (mut reader, _) = open_object_opts(&store, &path, size, opts).await.unwrap();
            let e = with_fetch(&store, &path, &mut reader, 1000, |r| r.all_devices().and_then(|d| r.series(&d[0])))
                .await
                .unwrap_err();
            assert!(matches!(e, TsFileError::LimitExceeded { limit: 1000, .. }), "{e}");
        });
    }
}
