//! MetadataIndexNode: the B-tree-like index from devices to measurements to
//! TimeseriesMetadata.
//!
//! ```text
//! MetadataIndexNode := UVarInt child_count, MetadataEntry child[child_count],
//!                      int64 end_offset, byte node_type
//! DeviceIndexEntry      := DeviceID first_device_id, int64 offset     (node types 0, 1)
//! MeasurementIndexEntry := VarString first_measurement_id, int64 offset (node types 2, 3)
//! ```
//!
//! | type | name                 | entry points at                       |
//! |------|----------------------|---------------------------------------|
//! | 0    | INTERNAL_DEVICE      | a child device node                   |
//! | 1    | LEAF_DEVICE          | the device's measurement index root   |
//! | 2    | INTERNAL_MEASUREMENT | a child measurement node              |
//! | 3    | LEAF_MEASUREMENT     | a run of TimeseriesMetadata records   |
//!
//! Entry `i` covers the half-open byte range `[offset_i, offset_{i+1})`, the last one
//! `[offset_last, end_offset)`. Since the node type comes after the entries, the caller says
//! which level (device or measurement) it expects; the type byte is then checked. To find
//! key `K`, take the last entry whose first key is `<= K`.

use std::ops::Range;

use crate::error::{Result, TsFileError};
use crate::format::{Cursor, DeviceId};

/// The four node types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeType {
    /// Entries point at child device nodes.
    InternalDevice,
    /// Entries point at a device's measurement index root.
    LeafDevice,
    /// Entries point at child measurement nodes.
    InternalMeasurement,
    /// Entries point at runs of TimeseriesMetadata.
    LeafMeasurement,
}

impl NodeType {
    fn from_byte(b: u8, offset: u64) -> Result<NodeType> {
        Ok(match b {
            0 => NodeType::InternalDevice,
            1 => NodeType::LeafDevice,
            2 => NodeType::InternalMeasurement,
            3 => NodeType::LeafMeasurement,
            other => return Err(TsFileError::corrupt("metadata index node", Some(offset), format!("unknown node type {other}"))),
        })
    }

    /// True for the device levels (types 0 and 1).
    pub fn is_device_level(self) -> bool {
        matches!(self, NodeType::InternalDevice | NodeType::LeafDevice)
    }

    /// True for leaves (types 1 and 3).
    pub fn is_leaf(self) -> bool {
        matches!(self, NodeType::LeafDevice | NodeType::LeafMeasurement)
    }

    /// The name used by the specification.
    pub fn name(self) -> &'static str {
        match self {
            NodeType::InternalDevice => "INTERNAL_DEVICE",
            NodeType::LeafDevice => "LEAF_DEVICE",
            NodeType::InternalMeasurement => "INTERNAL_MEASUREMENT",
            NodeType::LeafMeasurement => "LEAF_MEASUREMENT",
        }
    }
}

/// Which kind of keys a node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexLevel {
    /// DeviceID keys (node types 0 and 1).
    Device,
    /// Measurement-name keys (node types 2 and 3).
    Measurement,
}

/// The first key of an index entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexKey {
    /// A device-level key.
    Device(DeviceId),
    /// A measurement-level key.
    Measurement(String),
}

/// One entry of a node: its first key and the start of its byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The first key covered by the entry.
    pub key: IndexKey,
    /// Absolute start offset of the entry's byte range.
    pub offset: u64,
    /// Explicit end of the entry's range. `None` (every node parsed from a file) means the
    /// next entry's offset, or the node's `end_offset` for the last entry; only nodes
    /// synthesized for version-3 files (see `format::v3`) set it.
    pub end: Option<u64>,
}

/// A parsed MetadataIndexNode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataIndexNode {
    /// The entries, in key order.
    pub entries: Vec<IndexEntry>,
    /// End (exclusive) of the last entry's range.
    pub end_offset: u64,
    /// The node type.
    pub node_type: NodeType,
}

fn offset_field(c: &mut Cursor<'_>, what: &str, file_len: u64) -> Result<u64> {
    let at = c.offset();
    let v = c.i64(what)?;
    let v = u64::try_from(v).map_err(|_| TsFileError::corrupt(what, Some(at), format!("negative offset {v}")))?;
    if v > file_len {
        return Err(TsFileError::corrupt(what, Some(at), format!("offset {v} is past the end of the file ({file_len} bytes)")));
    }
    Ok(v)
}

impl MetadataIndexNode {
    /// Parse a node of the given level. Offsets must lie within `file_len`, be
    /// non-decreasing, and end at `end_offset`.
    pub fn parse(c: &mut Cursor<'_>, level: IndexLevel, file_len: u64) -> Result<MetadataIndexNode> {
        let start = c.offset();
        let n = c.uvarint("index node child count")? as usize;
        // An entry takes at least 9 bytes (1-byte key + int64 offset).
        if n.saturating_mul(9) > c.remaining() {
            return Err(TsFileError::corrupt(
                "metadata index node",
                Some(start),
                format!("child_count {n} cannot fit in the {} bytes that follow", c.remaining()),
            ));
        }
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let key = match level {
                IndexLevel::Device => IndexKey::Device(DeviceId::parse(c)?),
                IndexLevel::Measurement => IndexKey::Measurement(c.var_string_required("index entry measurement")?),
            };
            let offset = offset_field(c, "index entry offset", file_len)?;
            entries.push(IndexEntry { key, offset, end: None });
        }
        let end_offset = offset_field(c, "index node end_offset", file_len)?;
        let type_at = c.offset();
        let node_type = NodeType::from_byte(c.u8("index node type")?, type_at)?;
        if node_type.is_device_level() != (level == IndexLevel::Device) {
            return Err(TsFileError::corrupt(
                "metadata index node",
                Some(start),
                format!("expected a {level:?}-level node, found {}", node_type.name()),
            ));
        }
        let mut prev = 0u64;
        for e in &entries {
            if e.offset < prev {
                return Err(TsFileError::corrupt(
                    "metadata index node",
                    Some(start),
                    format!("entry offsets not monotonic ({} after {prev})", e.offset),
                ));
            }
            prev = e.offset;
        }
        if end_offset < prev {
            return Err(TsFileError::corrupt(
                "metadata index node",
                Some(start),
                format!("end_offset {end_offset} before the last entry offset {prev}"),
            ));
        }
        Ok(MetadataIndexNode { entries, end_offset, node_type })
    }

    /// The byte range of entry `i`.
    pub fn entry_range(&self, i: usize) -> Option<Range<u64>> {
        let entry = self.entries.get(i)?;
        let start = entry.offset;
        let end = entry.end.unwrap_or_else(|| self.entries.get(i + 1).map_or(self.end_offset, |e| e.offset));
        Some(start..end)
    }

    /// Index of the last entry whose first device is `<=` `key` (device-level nodes).
    pub fn find_device(&self, key: &DeviceId) -> Option<usize> {
        let n = self.entries.partition_point(|e| match &e.key {
            IndexKey::Device(d) => d <= key,
            IndexKey::Measurement(_) => false,
        });
        n.checked_sub(1)
    }

    /// Index of the last entry whose first measurement is `<=` `key` (measurement-level).
    pub fn find_measurement(&self, key: &str) -> Option<usize> {
        let n = self.entries.partition_point(|e| match &e.key {
            IndexKey::Measurement(m) => m.as_bytes() <= key.as_bytes(),
            IndexKey::Device(_) => false,
        });
        n.checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measurement_node(keys: &[(&str, i64)], end: i64, ty: u8) -> Vec<u8> {
        let mut b = vec![keys.len() as u8];
        for (k, off) in keys {
            b.push((k.len() * 2) as u8);
            b.extend_from_slice(k.as_bytes());
            b.extend_from_slice(&off.to_be_bytes());
        }
        b.extend_from_slice(&end.to_be_bytes());
        b.push(ty);
        b
    }

    #[test]
    fn test_parse_measurement_leaf_and_find() {
        let b = measurement_node(&[("a", 10), ("m", 20), ("t", 30)], 40, 3);
        let n = MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).unwrap();
        assert_eq!(n.node_type, NodeType::LeafMeasurement);
        assert_eq!(n.find_measurement("0"), None);
        assert_eq!(n.find_measurement("a"), Some(0));
        assert_eq!(n.find_measurement("l"), Some(0));
        assert_eq!(n.find_measurement("m"), Some(1));
        assert_eq!(n.find_measurement("zz"), Some(2));
        assert_eq!(n.entry_range(1), Some(20..30));
        assert_eq!(n.entry_range(2), Some(30..40));
        assert_eq!(n.entry_range(3), None);
    }

    #[test]
    fn test_parse_rejects_non_monotonic_offsets() {
        let b = measurement_node(&[("a", 20), ("b", 10)], 40, 3);
        let e = MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).unwrap_err();
        assert!(e.to_string().contains("not monotonic"), "{e}");
        let b = measurement_node(&[("a", 20)], 10, 3);
        assert!(MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).is_err());
    }

    #[test]
    fn test_parse_rejects_offsets_past_file_and_negative() {
        let b = measurement_node(&[("a", 20)], 400, 3);
        assert!(MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).is_err());
        let b = measurement_node(&[("a", -1)], 40, 3);
        assert!(MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).is_err());
    }

    #[test]
    fn test_parse_rejects_wrong_level_and_type() {
        let b = measurement_node(&[("a", 20)], 40, 1);
        assert!(MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).is_err());
        let b = measurement_node(&[("a", 20)], 40, 9);
        assert!(MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).is_err());
    }

    #[test]
    fn test_parse_child_count_inconsistent() {
        let mut b = measurement_node(&[("a", 20)], 40, 3);
        b[0] = 5;
        assert!(MetadataIndexNode::parse(&mut Cursor::new(&b, 0), IndexLevel::Measurement, 100).is_err());
    }

    #[test]
    fn test_find_device_order() {
        let d = |s: &[Option<&str>]| DeviceId::new(s.iter().map(|x| x.map(str::to_string)).collect());
        let node = MetadataIndexNode {
            entries: vec![
                IndexEntry { key: IndexKey::Device(d(&[Some("t"), None])), offset: 0, end: None },
                IndexEntry { key: IndexKey::Device(d(&[Some("t"), Some("b")])), offset: 5, end: None },
            ],
            end_offset: 9,
            node_type: NodeType::LeafDevice,
        };
        assert_eq!(node.find_device(&d(&[Some("t")])), None);
        assert_eq!(node.find_device(&d(&[Some("t"), Some("a")])), Some(0));
        assert_eq!(node.find_device(&d(&[Some("t"), Some("b"), None])), Some(1));
    }
}
