//! DeviceID: the identity of a device, an ordered list of nullable string segments.
//!
//! ```text
//! DeviceID := UVarInt segment_count, VarString segment[segment_count]   (-1 length = null)
//! ```
//!
//! `segment_count = 0` is read as one empty-string segment. In table-model files segment 0 is
//! the table name and the rest are TAG values in schema order (a null tag is a null
//! segment); in tree-model files the path is split as [`DeviceId::from_tree_path`] describes
//! (segment 0 is the first up-to-three path nodes). Version-3 files store tree paths as one
//! string; they are split the same way when read.
//!
//! Devices are ordered segment by segment, a null segment before any string, strings by
//! their bytes, and a shorter tuple before a longer one when their common prefix is equal.
//! This is the order of the device index and of the rows a reader returns.

use std::cmp::Ordering;
use std::fmt;

use crate::error::{Result, TsFileError};
use crate::format::Cursor;

/// A device identifier: nullable string segments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeviceId {
    segments: Vec<Option<String>>,
}

impl DeviceId {
    /// A device from its segments.
    pub fn new(segments: Vec<Option<String>>) -> Self {
        DeviceId { segments }
    }

    /// A device whose segments are all non-null.
    pub fn from_strs(segments: &[&str]) -> Self {
        DeviceId { segments: segments.iter().map(|s| Some((*s).to_string())).collect() }
    }

    /// The DeviceID of a tree-model path (`root.sg.d1`), split the way tree devices are
    /// stored in version-4 files: the path is cut on `.` outside backticks (a quoted node
    /// keeps its backticks); at most 3 nodes give `[first n-1 nodes joined, last node]`,
    /// more give `[first 3 nodes joined, remaining nodes...]`, one node gives one segment.
    /// Joining the segments with `.` gives the path back, so distinct paths stay distinct.
    pub fn from_tree_path(path: &str) -> DeviceId {
        let nodes = split_tree_path(path);
        let head = match nodes.len() {
            0 | 1 => return DeviceId { segments: vec![Some(path.to_string())] },
            2 | 3 => nodes.len() - 1,
            _ => 3,
        };
        let mut segments = Vec::with_capacity(nodes.len() - head + 1);
        segments.push(Some(nodes.get(..head).unwrap_or_default().join(".")));
        segments.extend(nodes.get(head..).unwrap_or_default().iter().map(|n| Some((*n).to_string())));
        DeviceId { segments }
    }

    /// Parse a serialized DeviceID.
    pub fn parse(c: &mut Cursor<'_>) -> Result<DeviceId> {
        let start = c.offset();
        let n = c.uvarint("device id segment count")? as usize;
        if n == 0 {
            return Ok(DeviceId { segments: vec![Some(String::new())] });
        }
        // Every segment takes at least one byte: bound the allocation by the input.
        if n > c.remaining() {
            return Err(TsFileError::corrupt(
                "device id",
                Some(start),
                format!("{n} segments cannot fit in {} bytes", c.remaining()),
            ));
        }
        let mut segments = Vec::with_capacity(n);
        for _ in 0..n {
            segments.push(c.var_string("device id segment")?);
        }
        Ok(DeviceId { segments })
    }

    /// The segments.
    pub fn segments(&self) -> &[Option<String>] {
        &self.segments
    }

    /// The same device without trailing null segments (writers may or may not store them):
    /// the form in which ids from different sources are compared.
    pub fn trimmed(&self) -> DeviceId {
        let keep = self.segments.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        DeviceId { segments: self.segments.get(..keep).unwrap_or_default().to_vec() }
    }

    /// Segment 0: the table name (table model) or the path prefix (tree model).
    pub fn table_name(&self) -> Option<&str> {
        self.segments.first().and_then(|s| s.as_deref())
    }

    /// Segment `i`, or `None` when it is null or absent.
    pub fn segment(&self, i: usize) -> Option<&str> {
        self.segments.get(i).and_then(|s| s.as_deref())
    }

    /// The textual path: segments joined with `.`, a null segment written `null`.
    /// Ambiguous (a segment may contain a dot); use only for display and the bloom filter.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.segments.iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            out.push_str(s.as_deref().unwrap_or("null"));
        }
        out
    }
}

/// The nodes of a tree-model path: `path` cut on `.` outside backticks (a quoted node keeps
/// its backticks).
pub fn split_tree_path(path: &str) -> Vec<&str> {
    let mut nodes = Vec::new();
    let (mut quoted, mut start) = (false, 0);
    for (i, ch) in path.char_indices() {
        match ch {
            '`' => quoted = !quoted,
            '.' if !quoted => {
                nodes.push(path.get(start..i).unwrap_or_default());
                start = i + 1;
            }
            _ => {}
        }
    }
    nodes.push(path.get(start..).unwrap_or_default());
    nodes
}

impl Ord for DeviceId {
    fn cmp(&self, other: &Self) -> Ordering {
        for (a, b) in self.segments.iter().zip(other.segments.iter()) {
            let o = match (a, b) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(x), Some(y)) => x.as_bytes().cmp(y.as_bytes()),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        self.segments.len().cmp(&other.segments.len())
    }
}

impl PartialOrd for DeviceId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(s: &[Option<&str>]) -> DeviceId {
        DeviceId::new(s.iter().map(|x| x.map(str::to_string)).collect())
    }

    #[test]
    fn test_parse_segments_with_null() {
        // 3 segments: "t", null, ""
        let b = [0x03, 0x02, b't', 0x01, 0x00];
        let d = DeviceId::parse(&mut Cursor::new(&b, 0)).unwrap();
        assert_eq!(d, dev(&[Some("t"), None, Some("")]));
        assert_eq!(d.path(), "t.null.");
        assert_eq!(d.table_name(), Some("t"));
    }

    #[test]
    fn test_from_tree_path_splits_like_tree_devices() {
        assert_eq!(DeviceId::from_tree_path("solo"), dev(&[Some("solo")]));
        assert_eq!(DeviceId::from_tree_path("root.sg"), dev(&[Some("root"), Some("sg")]));
        assert_eq!(DeviceId::from_tree_path("root.sg.d1"), dev(&[Some("root.sg"), Some("d1")]));
        assert_eq!(DeviceId::from_tree_path("root.a.b.c"), dev(&[Some("root.a.b"), Some("c")]));
        assert_eq!(DeviceId::from_tree_path("root.a.b.c.d"), dev(&[Some("root.a.b"), Some("c"), Some("d")]));
        let q = DeviceId::from_tree_path("root.`x.y`.d.e");
        assert_eq!(q, dev(&[Some("root.`x.y`.d"), Some("e")]));
        for p in ["solo", "root.sg", "root.a.b.c.d", "root.`x.y`.d.e", "a..b", ""] {
            assert_eq!(DeviceId::from_tree_path(p).path(), p);
        }
    }

    #[test]
    fn test_parse_zero_segments_is_one_empty() {
        let d = DeviceId::parse(&mut Cursor::new(&[0x00], 0)).unwrap();
        assert_eq!(d, dev(&[Some("")]));
    }

    #[test]
    fn test_parse_too_many_segments() {
        let b = [0xff, 0xff, 0x03, 0x00];
        assert!(DeviceId::parse(&mut Cursor::new(&b, 0)).is_err());
        assert!(DeviceId::parse(&mut Cursor::new(&[0x02, 0x02], 0)).is_err());
    }

    #[test]
    fn test_order_null_first_shorter_first() {
        let mut v = [
            dev(&[Some("t"), Some("b")]),
            dev(&[Some("t"), Some("")]),
            dev(&[Some("t"), None]),
            dev(&[Some("t")]),
            dev(&[Some("t"), Some("a"), Some("x")]),
            dev(&[Some("t"), Some("a")]),
        ];
        v.sort();
        let paths: Vec<String> = v.iter().map(|d| d.path()).collect();
        assert_eq!(paths, vec!["t", "t.null", "t.", "t.a", "t.a.x", "t.b"]);
    }
}
