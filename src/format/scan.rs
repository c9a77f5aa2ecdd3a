//! Forward scan of the data section: the recovery state machine.
//!
//! Starting after the head (and the encryption header, if any), read one marker at a time:
//!
//! | marker | action                                                         |
//! |--------|----------------------------------------------------------------|
//! | `0x00` | read a DeviceID (v3: a path string); a new chunk group begins  |
//! | chunk  | read the chunk header, walk its page headers, skip `data_size` |
//! | `0x04` | read two `int64` (operation index range)                       |
//! | `0x02` | stop: the metadata section follows                             |
//! | other  | stop with an error (markers have no common length)             |
//!
//! The scan needs no footer, so it works on a file whose writer crashed. It records the
//! last offset at which a complete structure ended: everything before it can be trusted.

use std::collections::BTreeMap;

use crate::error::{Result, TsFileError};
use crate::format::chunk::{parse_operation_index_range, ChunkHeaderSuffix, OperationIndexRange, PageIter};
use crate::format::reader::{check_head, read_chunk_header_at, read_encryption_header};
use crate::format::{marker, ByteSource, ChunkHeader, Cursor, DeviceId, FileEncryptionHeader, HEAD_LEN, VERSION_V3};

/// A chunk seen by the scan.
#[derive(Debug, Clone)]
pub struct ScannedChunk {
    /// Its header.
    pub header: ChunkHeader,
    /// Number of pages.
    pub pages: u64,
    /// Number of empty (all-null) aligned value pages.
    pub empty_pages: u64,
}

/// A chunk group seen by the scan.
#[derive(Debug, Clone)]
pub struct ScannedChunkGroup {
    /// Offset of the `0x00` marker.
    pub offset: u64,
    /// The device.
    pub device: DeviceId,
    /// Complete chunks, in file order.
    pub chunks: Vec<ScannedChunk>,
    /// True when the group was closed by another top-level marker (not cut off).
    pub complete: bool,
}

/// The outcome of a forward scan.
#[derive(Debug)]
pub struct ScanReport {
    /// The Page-AEAD header, if present.
    pub encryption_header: Option<FileEncryptionHeader>,
    /// Offset of the first data-section marker.
    pub data_start: u64,
    /// Chunk groups in file order (the last may be incomplete).
    pub chunk_groups: Vec<ScannedChunkGroup>,
    /// Operation index range records.
    pub operation_index_ranges: Vec<OperationIndexRange>,
    /// Count of each top-level marker byte read.
    pub markers: BTreeMap<u8, u64>,
    /// Offset of the `0x02` separator, when reached.
    pub separator_offset: Option<u64>,
    /// End offset of the last complete structure.
    pub last_good_offset: u64,
    /// Why the scan stopped before the separator, if it did.
    pub error: Option<TsFileError>,
}

/// Scan the data section of `source` forward (no footer needed).
pub fn scan_data_section(source: &dyn ByteSource, suffix_if_encrypted: ChunkHeaderSuffix) -> Result<ScanReport> {
    let head = check_head(source)?;
    let v3 = head.get(6) == Some(&VERSION_V3);
    let (encryption_header, data_start) = if v3 { (None, HEAD_LEN) } else { read_encryption_header(source, &head)? };
    let suffix = if encryption_header.is_some() { suffix_if_encrypted } else { ChunkHeaderSuffix::None };
    let mut report = ScanReport {
        encryption_header,
        data_start,
        chunk_groups: Vec::new(),
        operation_index_ranges: Vec::new(),
        markers: BTreeMap::new(),
        separator_offset: None,
        last_good_offset: data_start,
        error: None,
    };
    let len = source.len();
    let mut pos = data_start;
    loop {
        if pos >= len {
            report.error = Some(TsFileError::Truncated {
                what: "data section (no 0x02 separator before the end of the file)".into(),
                offset: pos,
                needed: 1,
                available: 0,
            });
            break;
        }
        match step(source, pos, suffix, v3, &mut report) {
            Ok(Some(next)) => {
                pos = next;
                report.last_good_offset = next;
            }
            Ok(None) => break,
            Err(e) => {
                report.error = Some(e);
                break;
            }
        }
    }
    Ok(report)
}

/// Read the structure at `pos`; `Ok(None)` at the separator.
fn step(source: &dyn ByteSource, pos: u64, suffix: ChunkHeaderSuffix, v3: bool, report: &mut ScanReport) -> Result<Option<u64>> {
    let len = source.len();
    let m = source.read(pos..pos + 1)?.first().copied().unwrap_or(0xff);
    let close_group = |report: &mut ScanReport| {
        if let Some(g) = report.chunk_groups.last_mut() {
            g.complete = true;
        }
    };
    match m {
        marker::SEPARATOR => {
            *report.markers.entry(m).or_default() += 1;
            close_group(report);
            report.separator_offset = Some(pos);
            Ok(None)
        }
        marker::CHUNK_GROUP_HEADER => {
            // A DeviceID is small; read a window and grow it when needed.
            let mut window = 256u64;
            let (device, next) = loop {
                let end = len.min(pos.saturating_add(window));
                let bytes = source.read(pos..end)?;
                let mut c = Cursor::new(&bytes, pos);
                let device = if v3 {
                    crate::format::v3::parse_chunk_group_header(&mut c)
                } else {
                    c.u8("chunk group marker").and_then(|_| DeviceId::parse(&mut c))
                };
                match device {
                    Ok(d) => break (d, c.offset()),
                    Err(TsFileError::Truncated { .. }) if end < len => window = window.saturating_mul(4),
                    Err(e) => return Err(e),
                }
            };
            *report.markers.entry(m).or_default() += 1;
            close_group(report);
            report.chunk_groups.push(ScannedChunkGroup { offset: pos, device, chunks: Vec::new(), complete: false });
            Ok(Some(next))
        }
        marker::OPERATION_INDEX_RANGE => {
            let end = pos.checked_add(17).filter(|&e| e <= len).ok_or_else(|| TsFileError::Truncated {
                what: "operation index range".into(),
                offset: pos,
                needed: 17,
                available: len - pos,
            })?;
            let bytes = source.read(pos..end)?;
            let r = parse_operation_index_range(&mut Cursor::new(&bytes, pos))?;
            *report.markers.entry(m).or_default() += 1;
            close_group(report);
            report.operation_index_ranges.push(r);
            Ok(Some(end))
        }
        m if marker::is_chunk(m) => {
            if report.chunk_groups.last().is_none_or(|g| g.complete) {
                return Err(TsFileError::corrupt("data section", Some(pos), "chunk outside a chunk group"));
            }
            let header = read_chunk_header_at(source, pos, len, suffix)?;
            let end = header.end_offset();
            if end > len {
                return Err(TsFileError::Truncated {
                    what: format!("chunk '{}'", header.measurement),
                    offset: pos,
                    needed: end - pos,
                    available: len - pos,
                });
            }
            let data = source.read(header.data_offset()..end)?;
            let mut pages = 0u64;
            let mut empty_pages = 0u64;
            for p in PageIter::new(&header, &data)? {
                let p = p.map_err(|e| e.context(format!("chunk '{}' at offset {pos}", header.measurement)))?;
                pages += 1;
                if p.header.is_empty_value_page {
                    empty_pages += 1;
                }
            }
            *report.markers.entry(m).or_default() += 1;
            if let Some(g) = report.chunk_groups.last_mut() {
                g.chunks.push(ScannedChunk { header, pages, empty_pages });
            }
            Ok(Some(end))
        }
        other => Err(TsFileError::corrupt("data section", Some(pos), format!("unknown top-level marker 0x{other:02x}"))),
    }
}
