//! Version-3 TsFiles (IoTDB 1.x): the footer, the path-keyed device index and the chunk
//! group header, mapped onto the version-4 tree model.
//!
//! ```text
//! "TsFile" 0x03 | chunk groups ... | 0x02 | index area | TsFileMetadata | int32 L | "TsFile"
//!
//! ChunkGroupHeader := byte 0x00, VarString device_path          (v4: DeviceID)
//! TsFileMetadata   := MetadataIndexNode device_root, int64 meta_offset,
//!                     [UVarInt byte_length, bits[byte_length],
//!                      UVarInt bit_count, UVarInt hash_function_count]      (if bytes remain)
//! DeviceIndexEntry := VarString device_path, int64 offset         (node types 0 and 1)
//! ```
//!
//! Everything else (chunk and page headers, statistics, TimeseriesMetadata, ChunkMetadata,
//! measurement-level index nodes, markers, type/encoding/compression ids) has the v4 layout,
//! so the rest of the format layer reads v3 files unchanged. A v3 file has one device tree
//! over every device, keyed by path strings in Java `String` order; v4 has one tree per
//! DeviceID segment 0, keyed by DeviceIDs in segment order. At open, [`read_metadata`] walks
//! the device levels of the v3 tree once (never the measurement levels), splits each path
//! with [`DeviceId::from_tree_path`] and synthesizes one `LEAF_DEVICE` node per segment 0,
//! sorted by DeviceID, whose entries carry explicit byte ranges (`IndexEntry::end`). The
//! synthesized metadata has no table schemas and no properties, so the file reads as a v4
//! tree-model file. See `docs/format-v3.md` for the byte-level differences.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::error::{Result, TsFileError};
use crate::format::index::{IndexEntry, IndexKey, MetadataIndexNode, NodeType};
use crate::format::metadata::{TableIndexRoot, V3DeviceIndex};
use crate::format::{BloomFilter, ByteSource, Cursor, DeviceId, TsFileMetadata, VERSION_V3};

/// Deepest device tree followed (the index of a real file has a handful of levels).
const MAX_DEPTH: u32 = 64;

/// How many times over the walk of the device levels may read the index area.
const WALK_FACTOR: u64 = 4;

/// A device-level node of a v3 index: path keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathNode {
    /// `(device path, start offset)` per entry, in stored order.
    pub entries: Vec<(String, u64)>,
    /// End (exclusive) of the last entry's range.
    pub end_offset: u64,
    /// True for LEAF_DEVICE (entries point at measurement index roots), false for
    /// INTERNAL_DEVICE (entries point at child device nodes).
    pub leaf: bool,
}

impl PathNode {
    /// The byte range of entry `i`.
    pub fn entry_range(&self, i: usize) -> Option<Range<u64>> {
        let start = self.entries.get(i)?.1;
        let end = self.entries.get(i + 1).map_or(self.end_offset, |e| e.1);
        Some(start..end)
    }

    /// Parse a device-level node (`UVarInt count, (VarString path, int64 offset)*, int64
    /// end_offset, byte node_type`). Offsets must lie within `file_len`, be non-decreasing
    /// and end at `end_offset`; the node type must be 0 or 1.
    pub fn parse(c: &mut Cursor<'_>, file_len: u64) -> Result<PathNode> {
        let start = c.offset();
        let n = c.uvarint("index node child count")? as usize;
        // An entry takes at least 9 bytes (1-byte length + int64 offset).
        if n.saturating_mul(9) > c.remaining() {
            return Err(TsFileError::corrupt(
                "device index node",
                Some(start),
                format!("child_count {n} cannot fit in the {} bytes that follow", c.remaining()),
            ));
        }
        let mut entries = Vec::with_capacity(n);
        let mut prev = 0u64;
        for _ in 0..n {
            let path = c.var_string_required("device path")?;
            let offset = offset_field(c, "index entry offset", file_len)?;
            if offset < prev {
                return Err(TsFileError::corrupt(
                    "device index node",
                    Some(start),
                    format!("entry offsets not monotonic ({offset} after {prev})"),
                ));
            }
            prev = offset;
            entries.push((path, offset));
        }
        let end_at = c.offset();
        let raw_end = c.i64("index node end_offset")?;
        let type_at = c.offset();
        let node_type = c.u8("index node type")?;
        let leaf = match node_type {
            0 => false,
            1 => true,
            2 | 3 => {
                return Err(TsFileError::corrupt(
                    "device index node",
                    Some(start),
                    format!("expected a device-level node, found node type {node_type}"),
                ))
            }
            other => return Err(TsFileError::corrupt("device index node", Some(type_at), format!("unknown node type {other}"))),
        };
        // An empty index (a file without devices) may carry any end offset: it is never used.
        let end_offset = if entries.is_empty() {
            0
        } else {
            u64::try_from(raw_end).ok().filter(|&e| e <= file_len && e >= prev).ok_or_else(|| {
                TsFileError::corrupt(
                    "index node end_offset",
                    Some(end_at),
                    format!("{raw_end} is not between the last entry offset {prev} and the file end {file_len}"),
                )
            })?
        };
        Ok(PathNode { entries, end_offset, leaf })
    }
}

fn offset_field(c: &mut Cursor<'_>, what: &str, file_len: u64) -> Result<u64> {
    let at = c.offset();
    let v = c.i64(what)?;
    u64::try_from(v)
        .ok()
        .filter(|&o| o <= file_len)
        .ok_or_else(|| TsFileError::corrupt(what, Some(at), format!("offset {v} is outside the file ({file_len} bytes)")))
}

/// A parsed version-3 TsFileMetadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footer {
    /// The root of the device index.
    pub root: PathNode,
    /// Offset of the `0x02` separator.
    pub meta_offset: u64,
    /// The series bloom filter, if any (keys as in v4: `device path + "." + measurement`).
    pub bloom_filter: Option<BloomFilter>,
}

impl Footer {
    /// Parse exactly the `L` bytes of a v3 TsFileMetadata.
    pub fn parse(c: &mut Cursor<'_>, file_len: u64) -> Result<Footer> {
        let root = PathNode::parse(c, file_len).map_err(|e| e.context("device index root"))?;
        let mo_at = c.offset();
        let raw = c.i64("meta_offset")?;
        let meta_offset = u64::try_from(raw)
            .ok()
            .filter(|&o| o < file_len)
            .ok_or_else(|| TsFileError::corrupt("meta_offset", Some(mo_at), format!("{raw} is outside the file")))?;
        // The bloom filter is optional; unlike v4 its size and hash count follow even an
        // empty bit set.
        let bloom_filter = match c.peek_u8() {
            None => None,
            Some(0) => {
                c.u8("bloom filter length")?;
                c.uvarint("bloom filter size")?;
                c.uvarint("bloom filter hash function count")?;
                None
            }
            Some(_) => BloomFilter::parse(c)?,
        };
        c.expect_end("file metadata")?;
        Ok(Footer { root, meta_offset, bloom_filter })
    }
}

/// Parse a v3 chunk group header starting at its `0x00` marker: the device path, split as
/// a tree device.
pub fn parse_chunk_group_header(c: &mut Cursor<'_>) -> Result<DeviceId> {
    let at = c.offset();
    let m = c.u8("chunk group marker")?;
    if m != crate::format::marker::CHUNK_GROUP_HEADER {
        return Err(TsFileError::corrupt("chunk group header", Some(at), format!("marker 0x{m:02x}")));
    }
    Ok(DeviceId::from_tree_path(&c.var_string_required("chunk group device path")?))
}

/// State of the walk over the device levels.
struct Walk<'a> {
    source: &'a dyn ByteSource,
    file_len: u64,
    left: u64,
    area: u64,
    shape: V3DeviceIndex,
    /// `(device path, measurement root range)` per LEAF_DEVICE entry.
    devices: Vec<(String, Range<u64>)>,
}

impl Walk<'_> {
    fn read_node(&mut self, range: Range<u64>) -> Result<PathNode> {
        if range.end > self.file_len || range.start >= range.end {
            return Err(TsFileError::corrupt(
                "device index node range",
                Some(range.start),
                format!("empty or outside the file: {range:?}"),
            ));
        }
        let n = range.end - range.start;
        self.left = self.left.checked_sub(n).ok_or_else(|| {
            TsFileError::corrupt(
                "device index",
                Some(range.start),
                format!("walk reads more than {WALK_FACTOR} times the {} bytes of the index area: entries point at shared or overlapping nodes", self.area),
            )
        })?;
        let start = range.start;
        let bytes = self.source.read(range)?;
        PathNode::parse(&mut Cursor::new(&bytes, start), self.file_len)
    }

    fn visit(&mut self, node: &PathNode, depth: u32) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(TsFileError::corrupt("device index", None, format!("deeper than {MAX_DEPTH} levels (cycle?)")));
        }
        self.shape.device_levels = self.shape.device_levels.max(depth);
        if !node.leaf {
            self.shape.internal_device_nodes += 1;
        }
        for i in 0..node.entries.len() {
            let Some(range) = node.entry_range(i) else { break };
            if node.leaf {
                let path = node.entries.get(i).map(|e| e.0.clone()).unwrap_or_default();
                self.devices.push((path, range));
            } else {
                let child = self.read_node(range)?;
                self.visit(&child, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// Parse a v3 TsFileMetadata (`footer` holds its `L` bytes, starting at `footer_start`) and
/// walk the device levels of its index through `source`; returns the metadata of the
/// equivalent v4 tree-model file (see the module doc).
pub fn read_metadata(source: &dyn ByteSource, footer: &[u8], footer_start: u64, file_len: u64) -> Result<TsFileMetadata> {
    let f = Footer::parse(&mut Cursor::new(footer, footer_start), file_len)?;
    let area = file_len.saturating_sub(f.meta_offset);
    let mut walk = Walk {
        source,
        file_len,
        left: area.saturating_mul(WALK_FACTOR),
        area,
        shape: V3DeviceIndex { root_offset: footer_start, ..V3DeviceIndex::default() },
        devices: Vec::new(),
    };
    walk.visit(&f.root, 1)?;
    let mut shape = walk.shape;
    shape.devices = walk.devices.len() as u64;
    let mut tables: BTreeMap<String, Vec<(DeviceId, Range<u64>)>> = BTreeMap::new();
    for (path, range) in walk.devices {
        let device = DeviceId::from_tree_path(&path);
        let table = device.table_name().unwrap_or_default().to_string();
        tables.entry(table).or_default().push((device, range));
    }
    let mut table_index = Vec::with_capacity(tables.len());
    for (name, mut devices) in tables {
        devices.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(w) = devices.windows(2).find(|w| w.first().map(|d| &d.0) == w.get(1).map(|d| &d.0)) {
            let (path, at) = w.first().map(|d| (d.0.path(), d.1.start)).unwrap_or_default();
            return Err(TsFileError::corrupt("device index", Some(at), format!("device '{path}' is listed twice")));
        }
        let end_offset = devices.iter().map(|d| d.1.end).max().unwrap_or(0);
        let entries = devices
            .into_iter()
            .map(|(device, range)| IndexEntry { key: IndexKey::Device(device), offset: range.start, end: Some(range.end) })
            .collect();
        table_index
            .push(TableIndexRoot { name, root: MetadataIndexNode { entries, end_offset, node_type: NodeType::LeafDevice } });
    }
    Ok(TsFileMetadata {
        table_index,
        table_schemas: Vec::new(),
        meta_offset: f.meta_offset,
        bloom_filter: f.bloom_filter,
        properties: Vec::new(),
        version: VERSION_V3,
        v3_device_index: Some(shape),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn var_str(b: &mut Vec<u8>, s: &str) {
        b.push((s.len() * 2) as u8);
        b.extend_from_slice(s.as_bytes());
    }

    fn node(keys: &[(&str, i64)], end: i64, ty: u8) -> Vec<u8> {
        let mut b = vec![keys.len() as u8];
        for (k, off) in keys {
            var_str(&mut b, k);
            b.extend_from_slice(&off.to_be_bytes());
        }
        b.extend_from_slice(&end.to_be_bytes());
        b.push(ty);
        b
    }

    #[test]
    fn test_path_node_parse_and_checks() {
        let b = node(&[("root.sg.d1", 10), ("root.sg.d2", 20)], 30, 1);
        let n = PathNode::parse(&mut Cursor::new(&b, 0), 100).unwrap();
        assert!(n.leaf);
        assert_eq!(n.entries[1], ("root.sg.d2".to_string(), 20));
        assert_eq!(n.entry_range(0), Some(10..20));
        assert_eq!(n.entry_range(1), Some(20..30));
        assert!(PathNode::parse(&mut Cursor::new(&node(&[("a", 10)], 30, 3), 0), 100).is_err());
        assert!(PathNode::parse(&mut Cursor::new(&node(&[("a", 10)], 30, 7), 0), 100).is_err());
        assert!(PathNode::parse(&mut Cursor::new(&node(&[("a", 20), ("b", 10)], 30, 1), 0), 100).is_err());
        assert!(PathNode::parse(&mut Cursor::new(&node(&[("a", 10)], 5, 1), 0), 100).is_err());
        assert!(PathNode::parse(&mut Cursor::new(&node(&[("a", 10)], 300, 1), 0), 100).is_err());
        assert!(PathNode::parse(&mut Cursor::new(&node(&[("a", -1)], 30, 1), 0), 100).is_err());
        // An empty index may carry any end offset.
        assert!(PathNode::parse(&mut Cursor::new(&node(&[], -1, 1), 0), 100).unwrap().entries.is_empty());
        let mut b = node(&[("a", 10)], 30, 1);
        b[0] = 9;
        assert!(PathNode::parse(&mut Cursor::new(&b, 0), 100).is_err());
    }

    #[test]
    fn test_footer_bloom_filter_forms() {
        let mut b = node(&[("d1", 10)], 20, 1);
        b.extend_from_slice(&5i64.to_be_bytes());
        let f = Footer::parse(&mut Cursor::new(&b, 0), 100).unwrap();
        assert_eq!((f.meta_offset, f.bloom_filter.is_none()), (5, true));
        let mut e = b.clone();
        e.extend_from_slice(&[0, 0x80, 0x02, 5]);
        assert!(Footer::parse(&mut Cursor::new(&e, 0), 100).unwrap().bloom_filter.is_none());
        let mut full = b.clone();
        full.extend_from_slice(&[2, 0xff, 0x01, 16, 5]);
        let bf = Footer::parse(&mut Cursor::new(&full, 0), 100).unwrap().bloom_filter.unwrap();
        assert_eq!((bf.size_bits, bf.hash_functions, bf.bits.len()), (16, 5, 2));
        let mut extra = full.clone();
        extra.push(0);
        assert!(Footer::parse(&mut Cursor::new(&extra, 0), 100).is_err());
        let mut bad = node(&[("d1", 10)], 20, 1);
        bad.extend_from_slice(&500i64.to_be_bytes());
        assert!(Footer::parse(&mut Cursor::new(&bad, 0), 100).is_err());
    }

    #[test]
    fn test_read_metadata_regroups_devices_by_segment_0() {
        // Index area: an internal root over two leaves, as a v3 writer lays it out.
        let leaf_a = node(&[("root.b.x", 1), ("root.sg.d1", 2)], 3, 1);
        let leaf_b = node(&[("root.sg.d1.e", 3), ("root.sg.d10", 4), ("solo", 5)], 6, 1);
        let mut file = vec![0u8; 10];
        let a_at = file.len() as i64;
        file.extend(&leaf_a);
        let b_at = file.len() as i64;
        file.extend(&leaf_b);
        let root_at = file.len() as u64;
        let mut footer = node(&[("root.b.x", a_at), ("root.sg.d1.e", b_at)], root_at as i64, 0);
        footer.extend_from_slice(&9i64.to_be_bytes());
        file.extend(&footer);
        let len = file.len() as u64;
        let src = Bytes::from(file);
        let md = read_metadata(&src, &footer, root_at, len).unwrap();
        assert_eq!(md.version, 3);
        let names: Vec<&str> = md.table_index.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["root.b", "root.sg", "root.sg.d1", "solo"]);
        let sg = md.table_root("root.sg").unwrap();
        let keys: Vec<(String, Option<Range<u64>>)> = (0..sg.entries.len())
            .map(|i| match &sg.entries[i].key {
                IndexKey::Device(d) => (d.path(), sg.entry_range(i)),
                IndexKey::Measurement(m) => (m.clone(), None),
            })
            .collect();
        assert_eq!(keys, [("root.sg.d1".to_string(), Some(2..3)), ("root.sg.d10".to_string(), Some(4..5))]);
        assert_eq!(sg.find_device(&DeviceId::from_tree_path("root.sg.d10")), Some(1));
        let shape = md.v3_device_index.unwrap();
        assert_eq!((shape.devices, shape.internal_device_nodes, shape.device_levels), (5, 1, 2));
        // A self-referencing internal node stops at the depth or read allowance.
        let mut file = vec![0u8; 10];
        let at = file.len() as i64;
        let looping = node(&[("a", at)], at + 20, 0);
        assert_eq!(looping.len(), 20);
        file.extend(&looping);
        let len = file.len() as u64;
        let mut footer = node(&[("a", at)], at + looping.len() as i64, 0);
        footer.extend_from_slice(&2i64.to_be_bytes());
        let e = read_metadata(&Bytes::from(file), &footer, len, len).unwrap_err();
        assert!(e.to_string().contains("shared or overlapping nodes"), "{e}");
    }
}
