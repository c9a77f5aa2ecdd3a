//! Opening a TsFile and walking its metadata on demand.
//!
//! ```text
//! offset 0        "TsFile" 0x04 [0x06 FileEncryptionHeader]
//!                 data section ... 0x02 (at meta_offset)
//!                 index area: TimeseriesMetadata runs and index nodes
//! F-10-L          TsFileMetadata (exactly L bytes)
//! F-10            int32 L
//! F-6             "TsFile"
//! ```
//!
//! [`FileReader::open`] reads the head, the tail and TsFileMetadata only, through the
//! sans-IO decoder of [`crate::format::open`] (the one footer parser of the crate). Index nodes and
//! TimeseriesMetadata are read when asked for, so finding one device costs one read per
//! index level, not one per device.

use std::ops::Range;

use bytes::Bytes;

use crate::error::{Result, TsFileError};
use crate::format::chunk::{ChunkHeader, ChunkHeaderSuffix, FileEncryptionHeader, PageHeader};
use crate::format::index::{IndexKey, IndexLevel, MetadataIndexNode, NodeType};
use crate::format::provenance::{FooterSignature, WriterEvidence};
use crate::format::timeseries::StatisticsVisitor;
use crate::format::{ByteSource, Cursor, DeviceId, TimeseriesMetadata, TsFileMetadata};

pub use crate::format::open::{check_head, read_encryption_header, StructureOptions, DEFAULT_MAX_METADATA_SIZE};

/// How many times over one index walk may read the index area (see [`Walk`]).
const WALK_FACTOR: u64 = 4;

/// The bytes one walk of the metadata index may still read. In a well-formed index the
/// ranges of sibling entries are disjoint, so a walk reads about the index area once (each
/// level at most once more where a range also spans its children). Entries of a crafted
/// index can point at shared or overlapping nodes; without an allowance a walk of such a
/// DAG is exponential in its depth (2^64 node reads for a chain of 64 two-way nodes).
#[derive(Debug)]
struct Walk {
    left: std::cell::Cell<u64>,
    area: u64,
}

impl Walk {
    fn take(&self, n: u64, at: u64) -> Result<()> {
        match self.left.get().checked_sub(n) {
            Some(l) => {
                self.left.set(l);
                Ok(())
            }
            None => Err(TsFileError::corrupt(
                "metadata index",
                Some(at),
                format!(
                    "index walk reads more than {WALK_FACTOR} times the {} bytes of the index area: entries point at shared or overlapping nodes",
                    self.area
                ),
            )),
        }
    }
}

/// Where a walk over a device's series puts what it reads: the records `keep` accepts go
/// to `out`; every record's chunk offsets to `chunk_offsets` when given.
struct SeriesSink<'a> {
    keep: &'a dyn Fn(&str) -> bool,
    out: &'a mut Vec<TimeseriesMetadata>,
    chunk_offsets: Option<&'a mut Vec<u64>>,
    visit: Option<&'a mut StatisticsVisitor<'a>>,
}

/// A device found in the index: its id and the byte range holding its measurement index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceEntry {
    /// The device.
    pub device: DeviceId,
    /// Byte range starting at the device's measurement index root node.
    pub measurement_root: Range<u64>,
}

/// Counts describing the shape of the metadata index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexShape {
    /// INTERNAL_DEVICE nodes over all tables.
    pub internal_device_nodes: u64,
    /// INTERNAL_MEASUREMENT nodes over all devices.
    pub internal_measurement_nodes: u64,
    /// Deepest device tree (levels, leaf level included).
    pub device_levels: u32,
    /// Deepest measurement tree.
    pub measurement_levels: u32,
}

/// A chunk read from the data section: header plus its page bytes.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// The chunk header.
    pub header: ChunkHeader,
    /// Exactly `data_size` bytes of page headers and payloads.
    pub data: Bytes,
}

/// An open TsFile: parsed head, tail and TsFileMetadata over a [`ByteSource`].
#[derive(Debug)]
pub struct FileReader<S> {
    source: S,
    len: u64,
    metadata: std::sync::Arc<TsFileMetadata>,
    metadata_len: u64,
    encryption_header: Option<FileEncryptionHeader>,
    data_start: u64,
    suffix: ChunkHeaderSuffix,
    decryptor: Option<std::sync::Arc<dyn PageDecryptor>>,
    writer: std::sync::Arc<WriterEvidence>,
}

/// Turns stored page bytes back into their (compressed) plaintext. Implemented by
/// `crate::crypto::PageCipher`; the format layer only carries it with the file.
pub trait PageDecryptor: Send + Sync + std::fmt::Debug {
    /// Decrypt the stored bytes of page `page_index` (0-based within its chunk, counting
    /// skipped pages) into `out`. `Ok(false)` means the pages are plaintext.
    fn decrypt_page(
        &self,
        chunk: &ChunkHeader,
        page_index: usize,
        page: &PageHeader,
        stored: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool>;

    /// Text to add to an error raised while decompressing or decoding a decrypted page.
    fn failure_hint(&self) -> Option<String>;

    /// `Err` when no page can be decrypted (no usable key), reported before any work.
    fn check_ready(&self) -> Result<()> {
        Ok(())
    }
}

impl<S: ByteSource> FileReader<S> {
    /// Open a file with default options.
    pub fn open(source: S) -> Result<Self> {
        Self::open_with(source, StructureOptions::default())
    }

    /// Open a file: validate head and tail and parse TsFileMetadata, reading only what
    /// [`crate::format::open::OpenDecoder`] asks for (head, tail, TsFileMetadata, separator).
    pub fn open_with(source: S, opts: StructureOptions) -> Result<Self> {
        let opened = crate::format::open::open_sync(&source, opts)?;
        Ok(Self::from_opened(source, opened))
    }

    /// A reader over `source` for a file opened by [`crate::format::open::OpenDecoder`]
    /// (`source` holds, or reads, the same file).
    pub fn from_opened(source: S, opened: crate::format::open::OpenedFile) -> Self {
        let writer = std::sync::Arc::new(WriterEvidence::new(FooterSignature::of(&opened.metadata)));
        FileReader {
            source,
            len: opened.len,
            metadata: std::sync::Arc::new(opened.metadata),
            metadata_len: opened.metadata_len,
            encryption_header: opened.encryption_header,
            data_start: opened.data_start,
            suffix: opened.suffix,
            decryptor: None,
            writer,
        }
    }

    /// The same file read through another byte source (e.g. one that also holds fetched
    /// chunk ranges); the parsed metadata is shared, not re-read.
    pub fn with_source<T: ByteSource>(&self, source: T) -> FileReader<T> {
        FileReader {
            source,
            len: self.len,
            metadata: self.metadata.clone(),
            metadata_len: self.metadata_len,
            encryption_header: self.encryption_header.clone(),
            data_start: self.data_start,
            suffix: self.suffix,
            decryptor: self.decryptor.clone(),
            writer: self.writer.clone(),
        }
    }

    /// What is known of the file's writer: its footer signature and the deciding pages read
    /// so far, shared by every reader of the file ([`crate::format::provenance`]).
    pub fn writer_evidence(&self) -> &std::sync::Arc<WriterEvidence> {
        &self.writer
    }

    /// The parsed TsFileMetadata.
    pub fn metadata(&self) -> &TsFileMetadata {
        &self.metadata
    }

    /// Serialized size of TsFileMetadata.
    pub fn metadata_len(&self) -> u64 {
        self.metadata_len
    }

    /// The file length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a zero-length file (never, once opened).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The byte source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The byte source, to add fetched bytes to a sparse one (see `crate::io::with_fetch`).
    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// The Page-AEAD encryption header, if the file has one.
    pub fn encryption_header(&self) -> Option<&FileEncryptionHeader> {
        self.encryption_header.as_ref()
    }

    /// Offset of the first data-section marker.
    pub fn data_start(&self) -> u64 {
        self.data_start
    }

    /// True when the file declares encrypted pages (a Page-AEAD header, or a footer
    /// `encryptLevel` other than 0); its pages need a decryptor.
    pub fn declares_encryption(&self) -> bool {
        self.encryption_header.is_some()
            || matches!(self.metadata.property("encryptLevel"), Some(Some(v)) if v.trim_ascii() != b"0")
    }

    /// The page decryptor given with [`FileReader::set_decryptor`], if any.
    pub fn decryptor(&self) -> Option<&std::sync::Arc<dyn PageDecryptor>> {
        self.decryptor.as_ref()
    }

    /// Decrypt pages with `d` (see `crate::crypto::unlock`).
    pub fn set_decryptor(&mut self, d: std::sync::Arc<dyn PageDecryptor>) {
        self.decryptor = Some(d);
    }

    /// The chunk-header suffix layout in force.
    pub fn chunk_header_suffix(&self) -> ChunkHeaderSuffix {
        self.suffix
    }

    fn read_node(&self, range: Range<u64>, level: IndexLevel, walk: &Walk) -> Result<MetadataIndexNode> {
        let start = range.start;
        if range.end > self.len || range.start >= range.end {
            return Err(TsFileError::corrupt("index node range", Some(start), format!("empty or outside the file: {range:?}")));
        }
        walk.take(range.end - range.start, start)?;
        let bytes = self.source.read(range)?;
        MetadataIndexNode::parse(&mut Cursor::new(&bytes, start), level, self.len)
    }

    fn child_range(&self, node: &MetadataIndexNode, i: usize, at: u64) -> Result<Range<u64>> {
        node.entry_range(i).ok_or_else(|| TsFileError::corrupt("index node", Some(at), format!("no entry {i}")))
    }

    /// The read allowance of one index walk (see [`Walk`]).
    fn walk(&self) -> Walk {
        let area = self.len.saturating_sub(self.metadata.meta_offset);
        Walk { left: std::cell::Cell::new(area.saturating_mul(WALK_FACTOR)), area }
    }

    /// Every device of table (or tree path prefix) `table`, in index order.
    pub fn devices(&self, table: &str) -> Result<Vec<DeviceEntry>> {
        let Some(root) = self.metadata.table_root(table) else {
            // A table with a schema and no rows has no index tree: it has no devices.
            if self.metadata.table_schema(table).is_some() {
                return Ok(Vec::new());
            }
            return Err(TsFileError::NotFound { what: format!("table '{table}' in the device index") });
        };
        let mut out = Vec::new();
        self.collect_devices(std::borrow::Cow::Borrowed(root), 0, &mut out, &self.walk())?;
        Ok(out)
    }

    /// Every device of every table-index key, in file order of the keys.
    pub fn all_devices(&self) -> Result<Vec<DeviceEntry>> {
        let mut out = Vec::new();
        let walk = self.walk();
        for t in &self.metadata.table_index {
            self.collect_devices(std::borrow::Cow::Borrowed(&t.root), 0, &mut out, &walk)?;
        }
        Ok(out)
    }

    /// Append the devices under `node` to `out`. Device keys of nodes read here are moved
    /// into the entries (a borrowed root's are copied).
    fn collect_devices(
        &self,
        node: std::borrow::Cow<'_, MetadataIndexNode>,
        depth: u32,
        out: &mut Vec<DeviceEntry>,
        walk: &Walk,
    ) -> Result<()> {
        if depth > 64 {
            return Err(TsFileError::corrupt("device index", None, "deeper than 64 levels (cycle?)"));
        }
        let ranges = (0..node.entries.len()).map(|i| self.child_range(&node, i, node.end_offset)).collect::<Result<Vec<_>>>()?;
        match node.node_type {
            NodeType::LeafDevice => {
                for (entry, range) in node.into_owned().entries.into_iter().zip(ranges) {
                    let IndexKey::Device(device) = entry.key else {
                        return Err(TsFileError::corrupt("device index", Some(range.start), "measurement key in a device node"));
                    };
                    out.push(DeviceEntry { device, measurement_root: range });
                }
            }
            NodeType::InternalDevice => {
                for range in ranges {
                    let child = self.read_node(range, IndexLevel::Device, walk)?;
                    self.collect_devices(std::borrow::Cow::Owned(child), depth + 1, out, walk)?;
                }
            }
            t => {
                return Err(TsFileError::corrupt(
                    "device index",
                    ranges.first().map(|r| r.start),
                    format!("unexpected node type {}", t.name()),
                ));
            }
        }
        Ok(())
    }

    /// Find one device by descending the index of its table (DeviceID segment 0).
    pub fn find_device(&self, device: &DeviceId) -> Result<Option<DeviceEntry>> {
        let Some(table) = device.table_name() else { return Ok(None) };
        let Some(root) = self.metadata.table_root(table) else { return Ok(None) };
        // Borrow the root (it can hold thousands of entries): only descendants are owned.
        let mut node = std::borrow::Cow::Borrowed(root);
        let walk = self.walk();
        for _ in 0..64 {
            let Some(i) = node.find_device(device) else { return Ok(None) };
            let range = self.child_range(&node, i, node.end_offset)?;
            let node_type = node.node_type;
            match node_type {
                NodeType::LeafDevice => {
                    let found = matches!(node.entries.get(i).map(|e| &e.key), Some(IndexKey::Device(d)) if d == device);
                    return Ok(found.then(|| DeviceEntry { device: device.clone(), measurement_root: range }));
                }
                NodeType::InternalDevice => node = std::borrow::Cow::Owned(self.read_node(range, IndexLevel::Device, &walk)?),
                t => {
                    return Err(TsFileError::corrupt(
                        "device index",
                        Some(range.start),
                        format!("unexpected node type {}", t.name()),
                    ));
                }
            }
        }
        Err(TsFileError::corrupt("device index", None, "deeper than 64 levels (cycle?)"))
    }

    /// The measurement index root node of a device.
    pub fn measurement_root(&self, device: &DeviceEntry) -> Result<MetadataIndexNode> {
        self.read_node(device.measurement_root.clone(), IndexLevel::Measurement, &self.walk())
            .map_err(|e| e.context(format!("measurement index of device {}", device.device)))
    }

    /// All TimeseriesMetadata of a device (an aligned device's time column first).
    pub fn series(&self, device: &DeviceEntry) -> Result<Vec<TimeseriesMetadata>> {
        let mut out = Vec::new();
        self.series_into(device, &mut out)?;
        Ok(out)
    }

    /// [`FileReader::series`] appended to `out` (a buffer reused across devices saves its
    /// growth per device).
    pub fn series_into(&self, device: &DeviceEntry, out: &mut Vec<TimeseriesMetadata>) -> Result<()> {
        self.series_where(device.measurement_root.clone(), &|_| true, out, None)
            .map_err(|e| e.context(format!("series of device {}", device.device)))
    }

    /// The series whose measurement names `keep` accepts (`""` is an aligned time column),
    /// of the device whose measurement index root starts `measurement_root`
    /// ([`DeviceEntry::measurement_root`]), appended to `out` in index order. The other
    /// records are stepped over without being kept. The chunk offsets of every series of
    /// the device, kept or not, are appended to `chunk_offsets` when given.
    pub fn series_where(
        &self,
        measurement_root: Range<u64>,
        keep: &dyn Fn(&str) -> bool,
        out: &mut Vec<TimeseriesMetadata>,
        chunk_offsets: Option<&mut Vec<u64>>,
    ) -> Result<()> {
        let walk = self.walk();
        let root = self.read_node(measurement_root, IndexLevel::Measurement, &walk)?;
        self.collect_series(&root, 0, &mut SeriesSink { keep, out, chunk_offsets, visit: None }, &walk)
    }

    /// Call `visit` with the measurement name and series statistics of every series of the
    /// device whose measurement index root starts `measurement_root` (nothing is kept).
    pub fn visit_series(&self, measurement_root: Range<u64>, visit: &mut StatisticsVisitor<'_>) -> Result<()> {
        let walk = self.walk();
        let root = self.read_node(measurement_root, IndexLevel::Measurement, &walk)?;
        let mut none = Vec::new();
        let sink = &mut SeriesSink { keep: &|_| false, out: &mut none, chunk_offsets: None, visit: Some(visit) };
        self.collect_series(&root, 0, sink, &walk)
    }

    fn read_timeseries_run(&self, range: Range<u64>, sink: &mut SeriesSink<'_>, walk: &Walk) -> Result<()> {
        if range.end > self.len || range.start > range.end {
            return Err(TsFileError::corrupt(
                "timeseries metadata range",
                Some(range.start),
                format!("outside the file: {range:?}"),
            ));
        }
        walk.take(range.end - range.start, range.start)?;
        let start = range.start;
        let bytes = self.source.read(range)?;
        let mut c = Cursor::new(&bytes, start);
        while !c.is_empty() {
            let visit = sink.visit.as_mut().map(|v| &mut **v as &mut StatisticsVisitor<'_>);
            if let Some(t) = TimeseriesMetadata::parse_if(&mut c, self.len, sink.keep, sink.chunk_offsets.as_deref_mut(), visit)?
            {
                sink.out.push(t);
            }
        }
        Ok(())
    }

    fn collect_series(&self, node: &MetadataIndexNode, depth: u32, sink: &mut SeriesSink<'_>, walk: &Walk) -> Result<()> {
        if depth > 64 {
            return Err(TsFileError::corrupt("measurement index", None, "deeper than 64 levels (cycle?)"));
        }
        for i in 0..node.entries.len() {
            let range = self.child_range(node, i, node.end_offset)?;
            match node.node_type {
                NodeType::LeafMeasurement => self.read_timeseries_run(range, sink, walk)?,
                NodeType::InternalMeasurement => {
                    let child = self.read_node(range, IndexLevel::Measurement, walk)?;
                    self.collect_series(&child, depth + 1, sink, walk)?;
                }
                t => {
                    return Err(TsFileError::corrupt(
                        "measurement index",
                        Some(range.start),
                        format!("unexpected node type {}", t.name()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Find one series of a device by measurement name (`""` for an aligned time column).
    pub fn find_series(&self, device: &DeviceEntry, measurement: &str) -> Result<Option<TimeseriesMetadata>> {
        let mut node = self.measurement_root(device)?;
        let walk = self.walk();
        for _ in 0..64 {
            let Some(i) = node.find_measurement(measurement) else { return Ok(None) };
            let range = self.child_range(&node, i, node.end_offset)?;
            match node.node_type {
                NodeType::LeafMeasurement => {
                    let mut out = Vec::new();
                    let keep = |n: &str| n == measurement;
                    self.read_timeseries_run(
                        range,
                        &mut SeriesSink { keep: &keep, out: &mut out, chunk_offsets: None, visit: None },
                        &walk,
                    )?;
                    return Ok(out.into_iter().next());
                }
                NodeType::InternalMeasurement => node = self.read_node(range, IndexLevel::Measurement, &walk)?,
                t => {
                    return Err(TsFileError::corrupt(
                        "measurement index",
                        Some(range.start),
                        format!("unexpected node type {}", t.name()),
                    ));
                }
            }
        }
        Err(TsFileError::corrupt("measurement index", None, "deeper than 64 levels (cycle?)"))
    }

    /// Counts of internal nodes and the depth of the device and measurement trees.
    pub fn index_shape(&self) -> Result<IndexShape> {
        let mut shape = IndexShape::default();
        let walk = self.walk();
        for t in &self.metadata.table_index {
            self.shape_walk(&t.root, 1, &mut shape, &walk)?;
        }
        // A version-3 file's device levels are one stored tree, not the synthesized leaves.
        if let Some(v3) = &self.metadata.v3_device_index {
            shape.internal_device_nodes = v3.internal_device_nodes;
            shape.device_levels = v3.device_levels;
        }
        Ok(shape)
    }

    fn shape_walk(&self, node: &MetadataIndexNode, depth: u32, shape: &mut IndexShape, walk: &Walk) -> Result<()> {
        if depth > 64 {
            return Err(TsFileError::corrupt("metadata index", None, "deeper than 64 levels (cycle?)"));
        }
        match node.node_type {
            NodeType::InternalDevice => shape.internal_device_nodes += 1,
            NodeType::InternalMeasurement => shape.internal_measurement_nodes += 1,
            _ => {}
        }
        if node.node_type.is_device_level() {
            shape.device_levels = shape.device_levels.max(depth);
        } else {
            shape.measurement_levels = shape.measurement_levels.max(depth);
        }
        for i in 0..node.entries.len() {
            let range = self.child_range(node, i, node.end_offset)?;
            match node.node_type {
                NodeType::InternalDevice => {
                    let child = self.read_node(range, IndexLevel::Device, walk)?;
                    self.shape_walk(&child, depth + 1, shape, walk)?;
                }
                NodeType::LeafDevice => {
                    let child = self.read_node(range, IndexLevel::Measurement, walk)?;
                    self.shape_walk(&child, 1, shape, walk)?;
                }
                NodeType::InternalMeasurement => {
                    let child = self.read_node(range, IndexLevel::Measurement, walk)?;
                    self.shape_walk(&child, depth + 1, shape, walk)?;
                }
                NodeType::LeafMeasurement => {}
            }
        }
        Ok(())
    }

    /// Read the chunk header at `offset` (absolute, pointing at the marker) and its pages.
    pub fn read_chunk(&self, offset: u64) -> Result<Chunk> {
        let header = self.read_chunk_header(offset)?;
        let end = header.end_offset();
        if end > self.metadata.meta_offset {
            return Err(TsFileError::corrupt(
                "chunk",
                Some(offset),
                format!("chunk '{}' ends at {end}, past the data section end {}", header.measurement, self.metadata.meta_offset),
            ));
        }
        let data = self.source.read(header.data_offset()..end)?;
        Ok(Chunk { header, data })
    }

    /// Read only the chunk header at `offset`.
    pub fn read_chunk_header(&self, offset: u64) -> Result<ChunkHeader> {
        read_chunk_header_at(&self.source, offset, self.metadata.meta_offset, self.suffix)
    }
}

/// Parse a chunk header at `offset`, reading a small window and growing it for long names.
pub fn read_chunk_header_at(source: &dyn ByteSource, offset: u64, limit: u64, suffix: ChunkHeaderSuffix) -> Result<ChunkHeader> {
    let mut window: u64 = 256;
    loop {
        let end = limit.min(offset.saturating_add(window));
        if offset >= end {
            return Err(TsFileError::corrupt("chunk header", Some(offset), "offset outside the data section"));
        }
        let bytes = source.read_up_to(offset..end)?;
        let got_end = offset + bytes.len() as u64;
        match ChunkHeader::parse(&mut Cursor::new(&bytes, offset), suffix) {
            Err(TsFileError::Truncated { .. }) if end < limit && got_end == end => window = window.saturating_mul(4),
            // A sparse source stopped short of the window: fetch the rest and retry.
            Err(TsFileError::Truncated { .. }) if got_end < end => return Err(TsFileError::NeedBytes { range: got_end..end }),
            r => return r,
        }
    }
}
