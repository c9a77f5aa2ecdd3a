//! Async reads from an `object_store`, feeding the synchronous format layer.
//!
//! The format and read layers pull bytes through [`ByteSource`]. Over an object store the
//! bytes a step needs are fetched first (the footer region on open, the chunks of the
//! devices that survive pruning before decoding them) and served from memory by a
//! [`RangeSource`]: a sparse set of fetched ranges. Nearby ranges are coalesced into one
//! request ([`coalesce`]), as remote stores charge per request.

// One-range requests are written as `vec![a..b]` on purpose.
#![allow(clippy::single_range_in_vec_init)]

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::error::{Result, TsFileError};
use crate::format::reader::StructureOptions;
use crate::format::{ByteSource, FileReader};

/// A byte source holding only some ranges of a file, fetched beforehand.
#[derive(Debug, Clone, Default)]
pub struct RangeSource {
    len: u64,
    /// Fetched ranges, sorted by start, non-overlapping.
    parts: Vec<(u64, Bytes)>,
}

impl RangeSource {
    /// An empty source for a file of `len` bytes.
    pub fn new(len: u64) -> Self {
        RangeSource { len, parts: Vec::new() }
    }

    /// Add the bytes of `[offset, offset + bytes.len())`.
    pub fn insert(&mut self, offset: u64, bytes: Bytes) {
        let i = self.parts.partition_point(|(o, _)| *o < offset);
        self.parts.insert(i, (offset, bytes));
    }

    /// Total bytes held.
    pub fn bytes_held(&self) -> u64 {
        self.parts.iter().map(|(_, b)| b.len() as u64).sum()
    }

    /// A new source holding this one's ranges plus `extra` (cheap: `Bytes` are shared).
    pub fn with_parts(&self, extra: impl IntoIterator<Item = (u64, Bytes)>) -> RangeSource {
        let mut s = self.clone();
        for (o, b) in extra {
            s.insert(o, b);
        }
        s
    }
}

impl ByteSource for RangeSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        // The last part starting at or before range.start must contain the whole range.
        let i = self.parts.partition_point(|(o, _)| *o <= range.start);
        if let Some((o, b)) = i.checked_sub(1).and_then(|i| self.parts.get(i)) {
            let end = o + b.len() as u64;
            if range.end <= end && range.start <= range.end {
                return Ok(b.slice((range.start - o) as usize..(range.end - o) as usize));
            }
        }
        Err(Self::not_fetched(range))
    }

    fn read_up_to(&self, range: Range<u64>) -> Result<Bytes> {
        let i = self.parts.partition_point(|(o, _)| *o <= range.start);
        if let Some((o, b)) = i.checked_sub(1).and_then(|i| self.parts.get(i)) {
            let end = (o + b.len() as u64).min(range.end);
            if range.start < end {
                return Ok(b.slice((range.start - o) as usize..(end - o) as usize));
            }
        }
        Err(Self::not_fetched(range))
    }
}

impl RangeSource {
    fn not_fetched(range: Range<u64>) -> TsFileError {
        TsFileError::corrupt(
            "range read",
            Some(range.start),
            format!("bytes {range:?} were not fetched (structure points outside the planned ranges)"),
        )
    }
}

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
pub async fn fetch_ranges(
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    ranges: Vec<Range<u64>>,
) -> Result<Vec<(u64, Bytes)>> {
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

/// Default number of bytes read from the end of a file on open.
pub const FOOTER_PREFETCH: u64 = 64 << 10;

/// Open a file of `size` bytes in an object store: fetch the head, the tail and the whole
/// footer region (`meta_offset ..`, index area and TsFileMetadata) and parse it.
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
    let max_metadata_bytes = if max_metadata_bytes == 0 { crate::read::DEFAULT_MAX_METADATA_BYTES } else { max_metadata_bytes };
    let structure = StructureOptions { max_metadata_size: max_metadata_bytes, ..Default::default() };
    let mut src = RangeSource::new(size);
    let tail_start = size.saturating_sub(FOOTER_PREFETCH);
    let head_end = size.min(64);
    let mut wanted = vec![tail_start..size];
    if head_end <= tail_start {
        wanted.push(0..head_end);
    }
    for (o, b) in fetch_ranges(store, location, wanted).await? {
        src.insert(o, b);
    }
    // A Page-AEAD header can exceed the 64-byte head: fetch it whole when present.
    if let Ok(head) = src.read(0..head_end) {
        if head.get(7) == Some(&crate::format::marker::ENCRYPTION_HEADER) && tail_start > 64 {
            let end = tail_start.min((1 << 20) + 64);
            for (o, b) in fetch_ranges(store, location, vec![64..end]).await? {
                src.insert(o, b);
            }
        }
    }
    // The metadata length tells how far back the footer starts.
    let tail = src.read(size.saturating_sub(10)..size).map_err(|e| e.context(format!("reading the tail of {location}")))?;
    if tail.get(4..) != Some(&b"TsFile"[..]) {
        // Let the parser report the missing magic (a cut upload, not a huge footer).
        return FileReader::open_with(src, structure);
    }
    let l = tail.get(..4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]])).unwrap_or(-1);
    if l >= 0 && l as u64 > max_metadata_bytes {
        return Err(TsFileError::LimitExceeded {
            what: "bytes of TsFileMetadata (option max_metadata_bytes)".into(),
            value: l as u64,
            limit: max_metadata_bytes,
        });
    }
    if l >= 0 && (l as u64) + 10 > size - tail_start {
        let need_start = size.saturating_sub(l as u64 + 10);
        for (o, b) in fetch_ranges(store, location, vec![need_start..tail_start]).await? {
            src.insert(o, b);
        }
    }
    // Parse TsFileMetadata with what we have, then fetch the index area before it.
    let first = FileReader::open_with(src.clone(), structure);
    let reader = match first {
        Ok(r) => r,
        Err(e) => match e.root() {
            TsFileError::Corrupt { what, .. } if what == "range read" => {
                // meta_offset lies before the fetched region: fetch everything from it.
                return open_whole_footer(store, location, size, src, structure).await;
            }
            _ => return Err(e),
        },
    };
    let meta_offset = reader.metadata().meta_offset;
    let fetched_from = src.parts.iter().map(|(o, _)| *o).filter(|&o| o >= head_end).min().unwrap_or(size);
    if meta_offset < fetched_from {
        for (o, b) in fetch_ranges(store, location, vec![meta_offset..fetched_from]).await? {
            src.insert(o, b);
        }
    }
    Ok(reader.with_source(src))
}

async fn open_whole_footer(
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    size: u64,
    src: RangeSource,
    structure: StructureOptions,
) -> Result<FileReader<RangeSource>> {
    // Without meta_offset yet, parse TsFileMetadata from the tail bytes directly.
    let tail = src.read(size.saturating_sub(10)..size)?;
    let l = tail.get(..4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]])).unwrap_or(-1);
    let l = u64::try_from(l).map_err(|_| TsFileError::corrupt("metadata length", Some(size - 10), format!("{l}")))?;
    let meta_start = size.checked_sub(10 + l).ok_or_else(|| TsFileError::corrupt("metadata length", Some(size - 10), "larger than the file"))?;
    let meta = src.read(meta_start..size - 10)?;
    let mut c = crate::format::Cursor::new(&meta, meta_start);
    let meta_offset = match src.read(6..7).ok().and_then(|v| v.first().copied()) {
        Some(crate::format::VERSION_V3) => crate::format::v3::Footer::parse(&mut c, size)?.meta_offset,
        _ => crate::format::TsFileMetadata::parse(&mut c, size)?.meta_offset,
    };
    let mut src = src;
    for (o, b) in fetch_ranges(store, location, vec![meta_offset..meta_start]).await? {
        src.insert(o, b);
    }
    FileReader::open_with(src, structure)
}

/// Fetch a whole object (small files, tests).
pub async fn fetch_all(store: &Arc<dyn ObjectStore>, location: &Path) -> Result<Bytes> {
    store
        .get(location)
        .await
        .map_err(|e| store_error(format!("fetching {location}"), e))?
        .bytes()
        .await
        .map_err(|e| store_error(format!("fetching {location}"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn test_range_source_reads_inside_parts_only() {
        let mut s = RangeSource::new(100);
        s.insert(50, Bytes::from_static(b"abcdef"));
        s.insert(10, Bytes::from_static(b"xyz"));
        assert_eq!(s.read(51..53).unwrap().as_ref(), b"bc");
        assert_eq!(s.read(10..13).unwrap().as_ref(), b"xyz");
        assert!(s.read(9..11).is_err());
        assert!(s.read(54..57).is_err());
        assert!(s.read(0..1).is_err());
        assert_eq!(s.bytes_held(), 9);
    }

    #[test]
    fn test_open_object_in_memory_store() {
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/files/table_deep_index.tsfile")).unwrap();
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
}
