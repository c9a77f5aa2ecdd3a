//! Opening a TsFile without doing I/O: the footer decoder ("sans-IO").
//!
//! [`OpenDecoder`] is given the file length and, push-style, whatever byte ranges of the file
//! its caller has read. [`OpenDecoder::try_decode`] parses what those bytes allow and answers
//! either [`OpenStep::Done`] with the parsed head, encryption header, tail and TsFileMetadata
//! ([`OpenedFile`]), or [`OpenStep::Need`] with the file ranges it still lacks. The caller
//! reads those ranges however it likes (a positioned read of a local file, coalesced range
//! requests to an object store), pushes them and asks again:
//!
//! ```text
//! round 1  head (64 bytes) + the last `prefetch` bytes (tail, usually all of TsFileMetadata)
//! round 2  the rest of the encryption header, when the file has one and it is long
//! round 3  the rest of TsFileMetadata, when it is longer than the prefetch
//! round 4  the 0x02 separator at meta_offset (with the index prefetch: the whole index
//!          area meta_offset .. TsFileMetadata), and for Page-AEAD files a 4 KiB window at
//!          the data start to tell the chunk-header layout
//! ```
//!
//! Every decision is taken from bytes already held, so the decoder never guesses a range
//! that might not hold what it needs: "not fetched" is always answered with a range to
//! fetch, never an error. Each check the format asks for is made here, once, for every
//! caller: head magic and version, the optional encryption header, tail magic, the metadata
//! length against the file and against `max_metadata_size`, TsFileMetadata itself, and
//! `meta_offset` and its separator. The bytes fetched in total are bounded
//! ([`metadata_fetch_limit`]) and so is the number of rounds.
//!
//! [`RangeSource`] is the sparse byte source the decoder keeps its bytes in; an object-store
//! reader keeps reading the index through it afterwards. A read of a range it does not hold
//! is the typed [`TsFileError::NeedBytes`], so any walk over it can be retried after a fetch
//! without looking at error text.

use std::ops::Range;

use bytes::{Bytes, BytesMut};

use crate::error::{Result, TsFileError};
use crate::format::chunk::{ChunkHeader, ChunkHeaderSuffix, FileEncryptionHeader};
use crate::format::{
    marker, v3, ByteSource, Cursor, DeviceId, TsFileMetadata, HEAD_LEN, MAGIC, TAIL_LEN, VERSION_V3, VERSION_V4,
};

/// Bytes of the file head asked for in the first round: magic, version, and room for the
/// length prefix of an encryption header.
pub const HEAD_PREFETCH: u64 = 64;

/// Bytes at the data start read to tell a Page-AEAD file's chunk-header layout.
const AEAD_DETECT_WINDOW: u64 = 4096;

/// Most rounds an open takes (four for any well-formed file; see the module doc).
const MAX_ROUNDS: u32 = 8;

/// Smallest bound on the metadata bytes fetched on open (see [`metadata_fetch_limit`]).
pub const MIN_METADATA_FETCH: u64 = 64 << 20;

/// How many times `max_metadata_size` the metadata fetched on open may reach.
pub const METADATA_FETCH_FACTOR: u64 = 4;

/// Options that change how a file's structure is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StructureOptions {
    /// Chunk-header layout in Page-AEAD files (the seed's layout by default).
    pub aead_suffix: Option<ChunkHeaderSuffix>,
    /// Upper bound on the size of TsFileMetadata (0 = default of 256 MiB).
    pub max_metadata_size: u64,
}

/// Default upper bound on the size of TsFileMetadata: 256 MiB.
pub const DEFAULT_MAX_METADATA_SIZE: u64 = 256 << 20;

/// Which Page-AEAD chunk-header suffix a file uses: the seed's layout (`int64 ordinal,
/// int32 auth_size, auth`) or the draft implementation's (`int64 ordinal`). Decided on the
/// first chunk: after its ordinal the seed layout has an `int32` whose high byte is 0 for
/// any plausible size, the draft layout the first page header, whose leading UVarInt (the
/// uncompressed size of a time or series page) is never 0. Unreadable or unexpected bytes
/// keep the seed's layout (the chunk reader then reports what it finds).
pub(crate) fn detect_aead_suffix(source: &dyn ByteSource, data_start: u64, meta_offset: u64) -> ChunkHeaderSuffix {
    let fallback = ChunkHeaderSuffix::AeadOrdinalAndAuthentication;
    let end = meta_offset.min(data_start.saturating_add(4096));
    let Ok(bytes) = source.read(data_start..end) else { return fallback };
    let mut c = Cursor::new(&bytes, data_start);
    if c.u8("chunk group marker").ok() != Some(marker::CHUNK_GROUP_HEADER) || DeviceId::parse(&mut c).is_err() {
        return fallback;
    }
    if ChunkHeader::parse(&mut c, ChunkHeaderSuffix::AeadOrdinal).is_err() {
        return fallback;
    }
    match c.peek_u8() {
        Some(0) | None => fallback,
        Some(_) => ChunkHeaderSuffix::AeadOrdinal,
    }
}

/// Check the 7-byte head (magic and version 4 or 3); returns the bytes read so far (up to
/// 8), the version byte at index 6.
pub fn check_head(source: &dyn ByteSource) -> Result<Bytes> {
    let len = source.len();
    if len < HEAD_LEN {
        return Err(TsFileError::Truncated {
            what: "file head (magic + version)".into(),
            offset: 0,
            needed: HEAD_LEN,
            available: len,
        });
    }
    let head = source.read(0..len.min(HEAD_LEN + 1))?;
    if head.get(..6) != Some(&MAGIC[..]) {
        return Err(TsFileError::corrupt("file head", Some(0), "not a TsFile: magic bytes 'TsFile' missing"));
    }
    match head.get(6) {
        Some(&VERSION_V4 | &VERSION_V3) => Ok(head),
        Some(&v) => Err(TsFileError::unsupported(format!("TsFile version byte 0x{v:02x} (versions 3 and 4 are supported)"))),
        None => Err(TsFileError::corrupt("file head", Some(6), "missing version byte")),
    }
}

/// Parse the optional encryption header at offset 7; returns it and the data start.
pub fn read_encryption_header(source: &dyn ByteSource, head: &[u8]) -> Result<(Option<FileEncryptionHeader>, u64)> {
    if usize::try_from(HEAD_LEN).ok().and_then(|i| head.get(i)) != Some(&marker::ENCRYPTION_HEADER) {
        return Ok((None, HEAD_LEN));
    }
    let len = source.len();
    let prefix = source.read(HEAD_LEN..len.min(HEAD_LEN + 6))?;
    let mut c = Cursor::new(&prefix, HEAD_LEN);
    c.u8("encryption header marker")?;
    let size = u64::from(c.uvarint("encryption header size")?);
    let total = (c.offset() - HEAD_LEN).saturating_add(size);
    let end = HEAD_LEN.saturating_add(total);
    if end > len {
        return Err(TsFileError::Truncated {
            what: "file encryption header".into(),
            offset: HEAD_LEN,
            needed: total,
            available: len - HEAD_LEN,
        });
    }
    let bytes = source.read(HEAD_LEN..end)?;
    let h = FileEncryptionHeader::parse(&mut Cursor::new(&bytes, HEAD_LEN))?;
    let start = HEAD_LEN + h.total_len;
    Ok((Some(h), start))
}

/// The bound on all bytes fetched to open a file (head, encryption header, tail,
/// TsFileMetadata and, when prefetched, the index area before it): `METADATA_FETCH_FACTOR`
/// (4) times the TsFileMetadata limit `max_metadata_size` (option `max_metadata_bytes`; 0 =
/// the default of 256 MiB, so 1 GiB by default), and never below [`MIN_METADATA_FETCH`]
/// (64 MiB), so a small TsFileMetadata limit does not refuse a normal index area.
///
/// The index area (TimeseriesMetadata of every series and the index nodes) is usually
/// several times larger than TsFileMetadata, which holds only the root nodes and schemas.
pub fn metadata_fetch_limit(max_metadata_size: u64) -> u64 {
    effective_max_metadata(max_metadata_size).saturating_mul(METADATA_FETCH_FACTOR).max(MIN_METADATA_FETCH)
}

fn effective_max_metadata(max_metadata_size: u64) -> u64 {
    if max_metadata_size == 0 {
        DEFAULT_MAX_METADATA_SIZE
    } else {
        max_metadata_size
    }
}

/// The metadata length declared by a file's last [`TAIL_LEN`] bytes `tail` (file length
/// `len`): the tail magic must be there and the length must fit between the data start
/// `data_start` (plus the `0x02` separator) and the tail.
pub fn tail_metadata_len(tail: &[u8], len: u64, data_start: u64) -> Result<u64> {
    if tail.get(4..) != Some(&MAGIC[..]) {
        return Err(TsFileError::corrupt(
            "file tail",
            Some(len.saturating_sub(6)),
            "tail magic 'TsFile' missing (the file is incomplete or not a TsFile; try a forward scan)",
        ));
    }
    let at = len.saturating_sub(TAIL_LEN);
    let l_raw = Cursor::new(tail, at).i32("metadata length")?;
    let room = at.saturating_sub(data_start).saturating_sub(1);
    u64::try_from(l_raw).ok().filter(|&l| l <= room).ok_or_else(|| {
        TsFileError::corrupt(
            "metadata length",
            Some(at),
            format!("{l_raw} does not fit between the data start {data_start} and the tail ({room} bytes)"),
        )
    })
}

/// Check a TsFileMetadata length against the limit `max_metadata_size` (0 = default): the one
/// check behind option `max_metadata_bytes`, on open and on a cached file alike.
pub fn check_metadata_len(metadata_len: u64, max_metadata_size: u64) -> Result<()> {
    let limit = effective_max_metadata(max_metadata_size);
    if metadata_len > limit {
        return Err(TsFileError::LimitExceeded {
            what: "bytes of TsFileMetadata (option max_metadata_bytes)".into(),
            value: metadata_len,
            limit,
        });
    }
    Ok(())
}

/// A byte source holding only some ranges of a file (fetched beforehand).
///
/// Ranges are kept sorted and disjoint (bytes pushed twice are kept once); a read may span
/// several adjacent ranges. Reading bytes it does not hold is [`TsFileError::NeedBytes`];
/// reading past the file's end is [`TsFileError::Truncated`].
#[derive(Debug, Clone, Default)]
pub struct RangeSource {
    len: u64,
    /// Held ranges, sorted by start, disjoint, none empty.
    parts: Vec<(u64, Bytes)>,
}

impl RangeSource {
    /// An empty source for a file of `len` bytes.
    pub fn new(len: u64) -> Self {
        RangeSource { len, parts: Vec::new() }
    }

    /// Add the bytes of `[offset, offset + bytes.len())`. Bytes past the file's end are
    /// dropped; bytes already held are kept as they were.
    pub fn insert(&mut self, offset: u64, bytes: Bytes) {
        let end = offset.saturating_add(bytes.len() as u64).min(self.len);
        for gap in self.missing(offset..end) {
            let (Ok(a), Ok(b)) = (usize::try_from(gap.start - offset), usize::try_from(gap.end - offset)) else { continue };
            let i = self.parts.partition_point(|(o, _)| *o < gap.start);
            self.parts.insert(i, (gap.start, bytes.slice(a..b)));
        }
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

    /// The parts of `range` (clipped to the file) not held, in order.
    pub fn missing(&self, range: Range<u64>) -> Vec<Range<u64>> {
        let end = range.end.min(self.len);
        let mut out = Vec::new();
        let mut cur = range.start;
        // Parts are disjoint and sorted, so their ends are sorted too.
        let mut i = self.parts.partition_point(|(o, b)| o + b.len() as u64 <= cur);
        while cur < end {
            match self.parts.get(i) {
                Some((o, b)) if *o < end => {
                    if *o > cur {
                        out.push(cur..*o);
                    }
                    cur = cur.max(o + b.len() as u64);
                    i += 1;
                }
                _ => {
                    out.push(cur..end);
                    break;
                }
            }
        }
        out
    }

    /// True when every byte of `range` (clipped to the file) is held.
    pub fn contains(&self, range: Range<u64>) -> bool {
        self.missing(range).is_empty()
    }

    /// The held bytes from `start` up to `end` (or fewer, where the held run stops), stitched
    /// from adjacent parts when it spans several.
    fn run(&self, start: u64, end: u64) -> Bytes {
        let i = self.parts.partition_point(|(o, b)| o + b.len() as u64 <= start);
        let Some((o, b)) = self.parts.get(i).filter(|(o, _)| *o <= start) else { return Bytes::new() };
        let first_end = o + b.len() as u64;
        let slice = |o: u64, b: &Bytes, from: u64, to: u64| {
            let (Ok(a), Ok(z)) = (usize::try_from(from - o), usize::try_from(to - o)) else { return Bytes::new() };
            b.slice(a..z)
        };
        if end <= first_end {
            return slice(*o, b, start, end);
        }
        let mut out = BytesMut::new();
        out.extend_from_slice(&slice(*o, b, start, first_end));
        let mut cur = first_end;
        for (o, b) in self.parts.get(i + 1..).unwrap_or_default() {
            if *o != cur || cur >= end {
                break;
            }
            let to = (o + b.len() as u64).min(end);
            out.extend_from_slice(&slice(*o, b, cur, to));
            cur = to;
        }
        out.freeze()
    }

    fn check(&self, range: &Range<u64>) -> Result<()> {
        if range.start > range.end || range.end > self.len {
            return Err(TsFileError::Truncated {
                what: "file range".into(),
                offset: range.start,
                needed: range.end.saturating_sub(range.start),
                available: self.len.saturating_sub(range.start),
            });
        }
        Ok(())
    }
}

impl ByteSource for RangeSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        self.check(&range)?;
        if range.start == range.end {
            return Ok(Bytes::new());
        }
        let got = self.run(range.start, range.end);
        let got_end = range.start + got.len() as u64;
        if got_end < range.end {
            return Err(TsFileError::NeedBytes { range: got_end..range.end });
        }
        Ok(got)
    }

    fn read_up_to(&self, range: Range<u64>) -> Result<Bytes> {
        let range = range.start..range.end.min(self.len);
        self.check(&range)?;
        let got = self.run(range.start, range.end);
        if got.is_empty() && range.start < range.end {
            return Err(TsFileError::NeedBytes { range });
        }
        Ok(got)
    }
}

/// What opening a file found: everything [`crate::format::FileReader`] needs besides its
/// byte source.
#[derive(Debug, Clone)]
pub struct OpenedFile {
    /// File length.
    pub len: u64,
    /// The parsed TsFileMetadata.
    pub metadata: TsFileMetadata,
    /// Its serialized size (the tail's `L`).
    pub metadata_len: u64,
    /// The Page-AEAD encryption header, if any.
    pub encryption_header: Option<FileEncryptionHeader>,
    /// Offset of the first data-section marker.
    pub data_start: u64,
    /// The chunk-header layout of the data section.
    pub suffix: ChunkHeaderSuffix,
}

/// The answer of [`OpenDecoder::try_decode`].
#[derive(Debug)]
pub enum OpenStep {
    /// Read these file ranges (sorted, disjoint, none empty, inside the file), push them and
    /// ask again.
    Need(Vec<Range<u64>>),
    /// The file is open.
    Done(Box<OpenedFile>),
}

/// TsFileMetadata parsed in an earlier round, kept while later rounds fetch the index area.
#[derive(Debug)]
struct Footer {
    metadata: TsFileMetadata,
    metadata_len: u64,
    encryption_header: Option<FileEncryptionHeader>,
    data_start: u64,
}

/// The push-style footer decoder (see the module doc).
///
/// ```
/// use datafusion_tsfile::format::open::{OpenDecoder, OpenStep};
/// let bytes = std::fs::read("tests/data/corpus/files/table_multi_tables.tsfile")?;
/// let mut dec = OpenDecoder::new(bytes.len() as u64, Default::default()).with_prefetch(16);
/// let opened = loop {
///     match dec.try_decode()? {
///         OpenStep::Need(ranges) => {
///             for r in ranges {
///                 dec.push(r.start, bytes::Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]));
///             }
///         }
///         OpenStep::Done(opened) => break opened,
///     }
/// };
/// assert!(opened.metadata.meta_offset > 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct OpenDecoder {
    buf: RangeSource,
    opts: StructureOptions,
    prefetch: u64,
    prefetch_index: bool,
    fetch_limit: u64,
    requested: u64,
    rounds: u32,
    footer: Option<Footer>,
}

impl OpenDecoder {
    /// A decoder for a file of `len` bytes. By default the first round asks for the last
    /// 64 KiB (see [`OpenDecoder::with_prefetch`]) and the index area is not prefetched.
    pub fn new(len: u64, opts: StructureOptions) -> Self {
        OpenDecoder {
            buf: RangeSource::new(len),
            opts,
            prefetch: 64 << 10,
            prefetch_index: false,
            fetch_limit: metadata_fetch_limit(opts.max_metadata_size),
            requested: 0,
            rounds: 0,
            footer: None,
        }
    }

    /// Ask for the last `bytes` bytes of the file in the first round (at least the 10-byte
    /// tail): a guess at the footer's size that saves a round when it holds TsFileMetadata.
    pub fn with_prefetch(mut self, bytes: u64) -> Self {
        self.prefetch = bytes;
        self
    }

    /// Also ask for the whole index area (`meta_offset ..` TsFileMetadata) before finishing,
    /// so index walks over [`OpenDecoder::into_source`] need no further reads.
    pub fn with_index_prefetch(mut self, on: bool) -> Self {
        self.prefetch_index = on;
        self
    }

    /// Bound the bytes asked for in all rounds together (default:
    /// [`metadata_fetch_limit`] of the options' `max_metadata_size`).
    pub fn with_fetch_limit(mut self, bytes: u64) -> Self {
        self.fetch_limit = bytes;
        self
    }

    /// Give the decoder the bytes of `[offset, offset + bytes.len())`.
    pub fn push(&mut self, offset: u64, bytes: Bytes) {
        self.buf.insert(offset, bytes);
    }

    /// The bytes held so far, as a byte source.
    pub fn source(&self) -> &RangeSource {
        &self.buf
    }

    /// The bytes held, for reading the index afterwards.
    pub fn into_source(self) -> RangeSource {
        self.buf
    }

    /// Bytes asked for so far (over all rounds).
    pub fn bytes_requested(&self) -> u64 {
        self.requested
    }

    /// Parse what the pushed bytes allow: the opened file, or the ranges still needed.
    pub fn try_decode(&mut self) -> Result<OpenStep> {
        let want = match self.decode()? {
            Ok(opened) => return Ok(OpenStep::Done(Box::new(opened))),
            Err(want) => want,
        };
        let mut need: Vec<Range<u64>> = want.into_iter().flat_map(|r| self.buf.missing(r)).collect();
        need.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(need.len());
        for r in need {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        let Some(first) = merged.first() else {
            // decode() only asks for bytes it lacks; holding them all is a bug, not a file defect.
            return Err(TsFileError::corrupt("file open", None, "the footer decoder asked for bytes it holds"));
        };
        self.rounds += 1;
        if self.rounds > MAX_ROUNDS {
            return Err(TsFileError::corrupt(
                "file open",
                Some(first.start),
                format!("still missing bytes {first:?} after {MAX_ROUNDS} rounds of reads (the byte source returns fewer bytes than asked?)"),
            ));
        }
        let asked: u64 = merged.iter().map(|r| r.end - r.start).sum();
        self.requested = self.requested.saturating_add(asked);
        if self.requested > self.fetch_limit {
            return Err(TsFileError::LimitExceeded {
                what: format!(
                    "bytes of metadata read to open the file (head, index area from offset {}, TsFileMetadata; {METADATA_FETCH_FACTOR} × option max_metadata_bytes, at least {MIN_METADATA_FETCH})",
                    first.start
                ),
                value: self.requested,
                limit: self.fetch_limit,
            });
        }
        Ok(OpenStep::Need(merged))
    }

    /// One pass: `Ok(Ok(file))`, `Ok(Err(ranges to fetch))` or a defect of the file.
    fn decode(&mut self) -> Result<std::result::Result<OpenedFile, Vec<Range<u64>>>> {
        let len = self.buf.len();
        // Round 1: the head and the tail together.
        let mut want = Vec::new();
        if !self.buf.contains(0..len.min(HEAD_LEN + 1)) {
            want.push(0..len.min(HEAD_PREFETCH));
        }
        if !self.buf.contains(len.saturating_sub(TAIL_LEN)..len) {
            want.push(len.saturating_sub(self.prefetch.max(TAIL_LEN))..len);
        }
        if !want.is_empty() && len >= HEAD_LEN {
            return Ok(Err(want));
        }
        if self.footer.is_none() {
            match self.decode_footer()? {
                Ok(f) => self.footer = Some(f),
                Err(want) => return Ok(Err(want)),
            }
        }
        let Some(footer) = &self.footer else { return Ok(Err(Vec::new())) };
        let meta_offset = footer.metadata.meta_offset;
        let meta_start = len - TAIL_LEN - footer.metadata_len;
        // Last round: the separator (or the whole index area), and the AEAD detection window.
        let mut want = vec![if self.prefetch_index { meta_offset..meta_start } else { meta_offset..meta_offset + 1 }];
        let detect = footer.encryption_header.is_some() && self.opts.aead_suffix.is_none();
        let window = footer.data_start..meta_offset.min(footer.data_start.saturating_add(AEAD_DETECT_WINDOW));
        if detect {
            want.push(window);
        }
        want.retain(|r| !self.buf.contains(r.clone()));
        if !want.is_empty() {
            return Ok(Err(want));
        }
        let sep = self.buf.read(meta_offset..meta_offset + 1)?;
        if sep.first() != Some(&marker::SEPARATOR) {
            return Err(TsFileError::corrupt(
                "meta_offset",
                Some(meta_offset),
                format!("points at byte 0x{:02x}, not the 0x02 separator", sep.first().copied().unwrap_or(0)),
            ));
        }
        let suffix = match (&footer.encryption_header, self.opts.aead_suffix) {
            (None, _) => ChunkHeaderSuffix::None,
            (Some(_), Some(s)) => s,
            (Some(_), None) => detect_aead_suffix(&self.buf, footer.data_start, meta_offset),
        };
        let Some(footer) = self.footer.take() else { return Ok(Err(Vec::new())) };
        Ok(Ok(OpenedFile {
            len,
            metadata: footer.metadata,
            metadata_len: footer.metadata_len,
            encryption_header: footer.encryption_header,
            data_start: footer.data_start,
            suffix,
        }))
    }

    /// Head, encryption header, tail and TsFileMetadata, once the head and tail are held.
    fn decode_footer(&self) -> Result<std::result::Result<Footer, Vec<Range<u64>>>> {
        let len = self.buf.len();
        let head = check_head(&self.buf)?;
        let v3 = head.get(6) == Some(&VERSION_V3);
        // Version 3 (IoTDB 1.x) has no encryption header: data starts right after the head.
        let header = if v3 { Ok((None, HEAD_LEN)) } else { read_encryption_header(&self.buf, &head) };
        let (encryption_header, data_start) = match header {
            Ok(h) => h,
            Err(e) => match e.needed_range() {
                Some(r) => return Ok(Err(vec![r])),
                None => return Err(e),
            },
        };
        if len < data_start + 1 + TAIL_LEN {
            return Err(TsFileError::Truncated {
                what: "file (no room for separator, metadata and tail)".into(),
                offset: 0,
                needed: data_start + 1 + TAIL_LEN,
                available: len,
            });
        }
        let tail = self.buf.read(len - TAIL_LEN..len)?;
        let metadata_len = tail_metadata_len(&tail, len, data_start)?;
        check_metadata_len(metadata_len, self.opts.max_metadata_size)?;
        let meta_start = len - TAIL_LEN - metadata_len;
        let meta_range = meta_start..len - TAIL_LEN;
        if !self.buf.contains(meta_range.clone()) {
            return Ok(Err(vec![meta_range]));
        }
        let meta_bytes = self.buf.read(meta_range)?;
        let metadata = if v3 {
            // The v3 footer holds the root of one path-keyed device tree: its device levels
            // are walked at open (format::v3), so the whole index area is needed first.
            let footer = v3::Footer::parse(&mut Cursor::new(&meta_bytes, meta_start), len)
                .map_err(|e| e.context("reading TsFileMetadata"))?;
            let area = footer.meta_offset.min(meta_start)..meta_start;
            if !self.buf.contains(area.clone()) {
                return Ok(Err(vec![area]));
            }
            v3::read_metadata(&self.buf, &meta_bytes, meta_start, len)
        } else {
            TsFileMetadata::parse(&mut Cursor::new(&meta_bytes, meta_start), len)
        }
        .map_err(|e| e.context("reading TsFileMetadata"))?;
        if metadata.meta_offset >= meta_start || metadata.meta_offset < data_start {
            return Err(TsFileError::corrupt(
                "meta_offset",
                Some(meta_start),
                format!(
                    "{} is not between the data start {data_start} and the metadata start {meta_start}",
                    metadata.meta_offset
                ),
            ));
        }
        Ok(Ok(Footer { metadata, metadata_len, encryption_header, data_start }))
    }
}

/// Open through a synchronous byte source: the decoder's loop, reading each needed range
/// from `source` (only the head, the tail, TsFileMetadata and the separator byte).
pub fn open_sync(source: &dyn ByteSource, opts: StructureOptions) -> Result<OpenedFile> {
    let mut dec = OpenDecoder::new(source.len(), opts).with_prefetch(TAIL_LEN);
    loop {
        match dec.try_decode()? {
            OpenStep::Need(ranges) => {
                for r in ranges {
                    let start = r.start;
                    let bytes = source.read(r)?;
                    dec.push(start, bytes);
                }
            }
            OpenStep::Done(opened) => return Ok(*opened),
        }
    }
}

#[cfg(test)]
// Expected rounds of one range are written as `vec![a..b]` on purpose.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use crate::format::FileReader;

    fn load(rel: &str) -> Bytes {
        Bytes::from(std::fs::read(format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap())
    }

    /// Serve every need from `bytes`; the outcome and the ranges of each round. Checks that
    /// needs are inside the file, sorted, disjoint and not already held.
    fn drive(bytes: &Bytes, mut dec: OpenDecoder) -> (Result<OpenedFile>, Vec<Vec<Range<u64>>>) {
        let mut rounds = Vec::new();
        loop {
            match dec.try_decode() {
                Err(e) => return (Err(e), rounds),
                Ok(OpenStep::Done(o)) => return (Ok(*o), rounds),
                Ok(OpenStep::Need(ranges)) => {
                    for (i, r) in ranges.iter().enumerate() {
                        assert!(r.start < r.end && r.end <= bytes.len() as u64, "{r:?}");
                        assert!(i == 0 || ranges[i - 1].end < r.start, "{ranges:?}");
                        assert!(!dec.source().contains(r.clone()));
                    }
                    for r in &ranges {
                        dec.push(r.start, bytes.slice(r.start as usize..r.end as usize));
                    }
                    rounds.push(ranges);
                }
            }
        }
    }

    const WIDE: &str = "tests/data/external/java_wide_table.tsfile";

    #[test]
    fn test_footer_larger_than_prefetch_needs_the_rest_then_the_separator() {
        // The Java wide table: 1,236,947 bytes, TsFileMetadata 104,712 bytes (> 64 KiB),
        // meta_offset 347,404 (long before the fetched tail).
        let bytes = load(WIDE);
        let len = bytes.len() as u64;
        assert_eq!(len, 1_236_947);
        let meta_start = len - 10 - 104_712;
        let (opened, rounds) = drive(&bytes, OpenDecoder::new(len, StructureOptions::default()));
        let opened = opened.unwrap();
        assert_eq!((opened.metadata_len, opened.metadata.meta_offset, opened.data_start), (104_712, 347_404, 7));
        assert_eq!(opened.metadata.table_schemas[0].name, "t_samedevice_sametimestamp1");
        assert_eq!(rounds, vec![vec![0..64, len - 65_536..len], vec![meta_start..len - 65_536], vec![347_404..347_405]]);
        // With the index prefetch the last round asks for the index area before the fetched
        // region only: meta_offset .. the metadata start.
        let dec = OpenDecoder::new(len, StructureOptions::default()).with_index_prefetch(true);
        let (opened, rounds) = drive(&bytes, dec);
        assert_eq!(opened.unwrap().metadata.meta_offset, 347_404);
        assert_eq!(rounds.len(), 3);
        assert_eq!(rounds[2], vec![347_404..meta_start]);
        // Everything an index walk reads is then held.
        let (opened, _) = drive(&bytes, OpenDecoder::new(len, StructureOptions::default()).with_index_prefetch(true));
        let mut dec = OpenDecoder::new(len, StructureOptions::default()).with_index_prefetch(true);
        for r in [0..64, len - 65_536..len, meta_start..len - 65_536, 347_404..meta_start] {
            dec.push(r.start, bytes.slice(r.start as usize..r.end as usize));
        }
        assert!(matches!(dec.try_decode(), Ok(OpenStep::Done(_))));
        let reader = FileReader::from_opened(dec.into_source(), opened.unwrap());
        let devices = reader.all_devices().unwrap();
        assert_eq!(devices.len(), 100);
        for d in &devices {
            // The time column and the 100 field series the writer stored (groups 0-9).
            assert_eq!(reader.series(d).unwrap().len(), 101, "{}", d.device);
        }
    }

    #[test]
    fn test_footer_exactly_the_prefetch_and_one_byte_more() {
        let bytes = load("tests/data/corpus/files/table_multi_tables.tsfile");
        let len = bytes.len() as u64;
        let whole = FileReader::open(bytes.clone()).unwrap();
        let footer = whole.metadata_len() + 10;
        let meta_offset = whole.metadata().meta_offset;
        // The prefetch holds the footer exactly: the next round is the separator.
        let (o, rounds) = drive(&bytes, OpenDecoder::new(len, StructureOptions::default()).with_prefetch(footer));
        assert_eq!(o.unwrap().metadata, *whole.metadata());
        assert_eq!(rounds, vec![vec![0..64, len - footer..len], vec![meta_offset..meta_offset + 1]]);
        // One byte short: one more round for exactly that byte.
        let (o, rounds) = drive(&bytes, OpenDecoder::new(len, StructureOptions::default()).with_prefetch(footer - 1));
        assert_eq!(o.unwrap().metadata_len, whole.metadata_len());
        assert_eq!(rounds[1], vec![len - footer..len - footer + 1]);
        assert_eq!(rounds.len(), 3);
        // One byte more: the separator is the only other need.
        let (o, rounds) = drive(&bytes, OpenDecoder::new(len, StructureOptions::default()).with_prefetch(footer + 1));
        assert!(o.is_ok());
        assert_eq!(rounds.len(), 2);
        // A prefetch of the whole file: one round.
        let (o, rounds) =
            drive(&bytes, OpenDecoder::new(len, StructureOptions::default()).with_prefetch(len).with_index_prefetch(true));
        assert!(o.is_ok());
        assert_eq!(rounds, vec![vec![0..len]]);
    }

    #[test]
    fn test_encrypted_header_is_read_whole_and_the_aead_window_asked_for() {
        let bytes = load("tests/data/corrupt/encrypted_header_table.tsfile");
        let len = bytes.len() as u64;
        let whole = FileReader::open(bytes.clone()).unwrap();
        let h = whole.encryption_header().unwrap().clone();
        assert!(h.total_len > HEAD_PREFETCH - HEAD_LEN, "the header is longer than the head prefetch: {}", h.total_len);
        let (o, rounds) = drive(&bytes, OpenDecoder::new(len, StructureOptions::default()).with_prefetch(10));
        let o = o.unwrap();
        assert_eq!(o.encryption_header.as_ref(), Some(&h));
        assert_eq!(o.data_start, HEAD_LEN + h.total_len);
        assert_eq!(o.suffix, whole.chunk_header_suffix());
        // Round 2 is the rest of the encryption header, the last one holds the separator and
        // the data-start window for the chunk-header layout.
        assert_eq!(rounds[1], vec![HEAD_PREFETCH..HEAD_LEN + h.total_len]);
        let last = rounds.last().unwrap();
        assert_eq!(last.first().map(|r| r.start), Some(o.data_start));
        assert!(last.iter().any(|r| r.contains(&o.metadata.meta_offset)), "{last:?}");
        // A layout given by the caller needs no window.
        let opts = StructureOptions { aead_suffix: Some(ChunkHeaderSuffix::AeadOrdinal), ..Default::default() };
        let (o, rounds) = drive(&bytes, OpenDecoder::new(len, opts).with_prefetch(10));
        assert_eq!(o.unwrap().suffix, ChunkHeaderSuffix::AeadOrdinal);
        let meta_offset = whole.metadata().meta_offset;
        assert_eq!(rounds.last().unwrap(), &vec![meta_offset..meta_offset + 1]);
        // A header cut by the end of the file is a truncation, not a need.
        let cut = bytes.slice(..40);
        let (e, _) = drive(&cut, OpenDecoder::new(40, StructureOptions::default()));
        assert!(matches!(e.unwrap_err().root(), TsFileError::Truncated { offset: 7, .. }));
    }

    #[test]
    fn test_truncated_tails_are_clear_errors_never_needs_past_the_end() {
        let bytes = load("tests/data/corpus/files/table_multi_tables.tsfile");
        for cut in 0..bytes.len() {
            let prefix = bytes.slice(..cut);
            // drive() asserts every need lies inside the prefix.
            let (r, rounds) = drive(&prefix, OpenDecoder::new(cut as u64, StructureOptions::default()).with_prefetch(16));
            let e = r.expect_err("a prefix must not open");
            assert!(rounds.len() <= 3, "cut {cut}: {rounds:?}");
            assert!(!e.to_string().contains("not loaded"), "cut {cut}: {e}");
        }
        // The last byte gone: the tail magic is missing, at the offset where it should be.
        let n = bytes.len() - 1;
        let (r, _) = drive(&bytes.slice(..n), OpenDecoder::new(n as u64, StructureOptions::default()));
        let e = r.unwrap_err();
        assert!(
            matches!(e.root(), TsFileError::Corrupt { what, offset: Some(o), .. } if what == "file tail" && *o == n as u64 - 6),
            "{e}"
        );
        // Shorter than the head.
        let (r, rounds) = drive(&bytes.slice(..3), OpenDecoder::new(3, StructureOptions::default()));
        assert!(matches!(r.unwrap_err(), TsFileError::Truncated { needed: 7, available: 3, .. }));
        assert!(rounds.is_empty());
    }

    /// `bytes` with the tail's metadata length set to `l`.
    fn with_metadata_len(bytes: &Bytes, l: i32) -> Bytes {
        let mut v = bytes.to_vec();
        let n = v.len();
        v[n - 10..n - 6].copy_from_slice(&l.to_be_bytes());
        Bytes::from(v)
    }

    #[test]
    fn test_metadata_length_beyond_the_file_or_the_limit_fails_before_fetching_it() {
        let bytes = load(WIDE);
        let len = bytes.len() as u64;
        for l in [i32::MAX, len as i32 - 10, len as i32 - 17, -1] {
            let (r, rounds) = drive(&with_metadata_len(&bytes, l), OpenDecoder::new(len, StructureOptions::default()));
            let e = r.unwrap_err();
            assert!(
                matches!(e.root(), TsFileError::Corrupt { what, offset: Some(o), .. } if what == "metadata length" && *o == len - 10),
                "{l}: {e}"
            );
            assert!(e.to_string().contains("does not fit"), "{e}");
            assert_eq!(rounds.len(), 1, "{l}: only head and tail were read");
        }
        // Largest length that fits (everything after the head and the separator byte): the
        // length is accepted, the bytes are fetched, TsFileMetadata fails to parse.
        let (r, rounds) = drive(&with_metadata_len(&bytes, len as i32 - 18), OpenDecoder::new(len, StructureOptions::default()));
        assert!(r.unwrap_err().to_string().contains("reading TsFileMetadata"));
        assert_eq!(rounds.len(), 2);
        // Over the option's limit: refused from the tail alone.
        let opts = StructureOptions { max_metadata_size: 100_000, ..Default::default() };
        let (r, rounds) = drive(&bytes, OpenDecoder::new(len, opts));
        assert!(matches!(r.unwrap_err(), TsFileError::LimitExceeded { value: 104_712, limit: 100_000, .. }));
        assert_eq!(rounds.len(), 1);
        // Exactly at the limit it opens.
        let opts = StructureOptions { max_metadata_size: 104_712, ..Default::default() };
        assert!(drive(&bytes, OpenDecoder::new(len, opts)).0.is_ok());
    }

    #[test]
    fn test_fetch_limit_bounds_all_rounds() {
        let bytes = load(WIDE);
        let len = bytes.len() as u64;
        assert_eq!(metadata_fetch_limit(0), 1 << 30);
        assert_eq!(metadata_fetch_limit(100), MIN_METADATA_FETCH);
        assert_eq!(metadata_fetch_limit(1 << 30), 4 << 30);
        // Index area (785 KB) + footer do not fit in 500 KB.
        let dec = OpenDecoder::new(len, StructureOptions::default()).with_index_prefetch(true).with_fetch_limit(500_000);
        let (r, rounds) = drive(&bytes, dec);
        let e = r.unwrap_err();
        assert!(matches!(&e, TsFileError::LimitExceeded { limit: 500_000, .. }), "{e}");
        assert!(e.to_string().contains("option max_metadata_bytes"), "{e}");
        assert_eq!(rounds.len(), 2);
        // Without the index prefetch they do.
        let dec = OpenDecoder::new(len, StructureOptions::default()).with_fetch_limit(500_000);
        assert!(drive(&bytes, dec).0.is_ok());
    }

    #[test]
    fn test_rounds_are_bounded_when_needs_are_never_served() {
        let mut dec = OpenDecoder::new(1000, StructureOptions::default());
        for _ in 0..MAX_ROUNDS {
            assert!(matches!(dec.try_decode(), Ok(OpenStep::Need(_))));
        }
        let e = dec.try_decode().unwrap_err();
        assert!(e.to_string().contains("still missing bytes"), "{e}");
    }

    #[test]
    fn test_bad_head_and_separator() {
        let bytes = load("tests/data/corpus/files/table_multi_tables.tsfile");
        let len = bytes.len() as u64;
        let mut v = bytes.to_vec();
        v[0] = b'X';
        let (r, _) = drive(&Bytes::from(v), OpenDecoder::new(len, StructureOptions::default()));
        assert!(r.unwrap_err().to_string().contains("magic bytes 'TsFile' missing"));
        let meta_offset = FileReader::open(bytes.clone()).unwrap().metadata().meta_offset;
        let mut v = bytes.to_vec();
        v[meta_offset as usize] = 0x07;
        let (r, _) = drive(&Bytes::from(v), OpenDecoder::new(len, StructureOptions::default()));
        let e = r.unwrap_err();
        assert!(matches!(e.root(), TsFileError::Corrupt { offset: Some(o), .. } if *o == meta_offset), "{e}");
        assert!(e.to_string().contains("0x07, not the 0x02 separator"), "{e}");
    }

    #[test]
    fn test_range_source_stitches_adjacent_parts_and_names_missing_bytes() {
        let mut s = RangeSource::new(100);
        s.insert(50, Bytes::from_static(b"abcdef"));
        s.insert(10, Bytes::from_static(b"xyz"));
        assert_eq!(s.read(51..53).unwrap().as_ref(), b"bc");
        assert_eq!(s.read(10..13).unwrap().as_ref(), b"xyz");
        assert!(matches!(s.read(9..11), Err(TsFileError::NeedBytes { range }) if range == (9..11)));
        assert!(matches!(s.read(54..57), Err(TsFileError::NeedBytes { range }) if range == (56..57)));
        assert!(matches!(s.read(90..101), Err(TsFileError::Truncated { .. })));
        assert_eq!(s.bytes_held(), 9);
        // Adjacent and overlapping inserts: a read across them is stitched, bytes held twice
        // are kept once.
        s.insert(56, Bytes::from_static(b"ghij"));
        s.insert(48, Bytes::from_static(b"??abcdefghij!"));
        assert_eq!(s.read(48..61).unwrap().as_ref(), b"??abcdefghij!");
        assert_eq!(s.bytes_held(), 3 + 13);
        assert_eq!(s.missing(0..100), vec![0..10, 13..48, 61..100]);
        assert_eq!(s.missing(0..200), vec![0..10, 13..48, 61..100]);
        assert!(s.contains(49..60));
        assert_eq!(s.read_up_to(58..70).unwrap().as_ref(), b"ij!");
        assert!(matches!(s.read_up_to(70..80), Err(TsFileError::NeedBytes { .. })));
        // Bytes past the file's end are dropped.
        s.insert(98, Bytes::from_static(b"12345"));
        assert_eq!(s.read(98..100).unwrap().as_ref(), b"12");
    }
}
