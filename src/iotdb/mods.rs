//! Deletions IoTDB keeps beside a data file, and what they delete.
//!
//! * IoTDB 1.x, `X.tsfile.mods`: text lines `DELETION,<path pattern>,<file offset>,<start>,<end>`
//!   (the path may contain commas; the numbers are taken from the end), or the legacy
//!   `DELETION,<path>,<version>,<end>` meaning `[i64::MIN, end]`. Reading stops at the first
//!   line that does not decode, as IoTDB's does. An entry applies to a chunk only when its
//!   file offset is greater than the chunk header's offset (chunks written later are kept).
//! * IoTDB 2.x, `X.tsfile.mods2`: binary entries back to back, `u8 type` (0 table, 1 tree),
//!   `i64 start`, `i64 end`, then a tree path pattern (`VarString`) or a table name, a TAG
//!   predicate and a measurement list (empty: whole rows). Every entry applies to every chunk
//!   of its file. A cut last entry is dropped, as IoTDB drops it.
//!
//! Time bounds are inclusive. Path patterns match node by node: `*` one node, a node with `*`
//! inside one node by glob, `**` one or more nodes.

use crate::error::{Result, TsFileError};
use crate::format::device::split_tree_path;
use crate::format::{Cursor, DeviceId};

/// One deletion: what it deletes, over `[start, end]` (inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deletion {
    /// The series or rows it deletes.
    pub target: DeletionTarget,
    /// First deleted time.
    pub start: i64,
    /// Last deleted time.
    pub end: i64,
    /// IoTDB 1.x: the entry applies to chunks whose header starts before this file offset;
    /// `None` (IoTDB 2.x): to every chunk of the file.
    pub file_offset: Option<i64>,
}

/// What a deletion deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeletionTarget {
    /// Tree-model series whose full path (`device.measurement`) the pattern matches.
    Tree(PathPattern),
    /// Table-model columns of the devices of `table` that `tags` matches; every column
    /// (whole rows) when `measurements` is empty.
    Table {
        /// The table (segment 0 of its device ids).
        table: String,
        /// Which devices.
        tags: TagPredicate,
        /// Which FIELD columns; empty for whole rows.
        measurements: Vec<String>,
    },
}

impl Deletion {
    /// Whether this deletion removes the value of `measurement` of `device` at `time` in a
    /// chunk whose header starts at `chunk_offset`. For whole-row table deletions, any
    /// measurement (the time column included, as `""`) matches.
    pub fn deletes(&self, device: &DeviceId, measurement: &str, time: i64, chunk_offset: u64) -> bool {
        self.start <= time && time <= self.end && self.applies_to_chunk(chunk_offset) && self.matches(device, measurement)
    }

    /// Whether this deletion can touch a chunk starting at `chunk_offset` (1.x offsets).
    pub fn applies_to_chunk(&self, chunk_offset: u64) -> bool {
        self.file_offset.is_none_or(|o| i128::from(o) > i128::from(chunk_offset))
    }

    /// Whether this deletion targets `measurement` of `device` (whatever the time).
    pub fn matches(&self, device: &DeviceId, measurement: &str) -> bool {
        match &self.target {
            DeletionTarget::Tree(p) => {
                let mut nodes = tree_nodes(device);
                nodes.push(measurement.to_string());
                p.matches(&nodes)
            }
            DeletionTarget::Table { table, tags, measurements } => {
                device.table_name() == Some(table.as_str())
                    && tags.matches(device)
                    && (measurements.is_empty() || measurements.iter().any(|m| m == measurement))
            }
        }
    }
}

/// The nodes of a tree-model device path: segment 0 split on `.` outside backticks, then the
/// other segments.
fn tree_nodes(device: &DeviceId) -> Vec<String> {
    let mut out = Vec::new();
    for (i, seg) in device.segments().iter().enumerate() {
        let seg = seg.as_deref().unwrap_or("null");
        if i == 0 {
            out.extend(split_tree_path(seg).into_iter().map(str::to_string));
        } else {
            out.push(seg.to_string());
        }
    }
    out
}

/// A tree path pattern such as `root.sg.*.s1` or `root.sg.**`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern {
    nodes: Vec<String>,
}

impl PathPattern {
    /// The pattern of `path` (nodes cut on `.` outside backticks).
    pub fn parse(path: &str) -> PathPattern {
        PathPattern { nodes: split_tree_path(path).into_iter().map(str::to_string).collect() }
    }

    /// The pattern's text.
    pub fn text(&self) -> String {
        self.nodes.join(".")
    }

    /// Whether the pattern matches the full path `nodes`.
    pub fn matches<S: AsRef<str>>(&self, nodes: &[S]) -> bool {
        let nodes: Vec<&str> = nodes.iter().map(AsRef::as_ref).collect();
        let pattern: Vec<&str> = self.nodes.iter().map(String::as_str).collect();
        match_nodes(&pattern, &nodes)
    }
}

/// Node-by-node match, `**` taking one or more nodes (a table of (pattern, path) suffixes:
/// no exponential backtracking on many `**`).
fn match_nodes(pattern: &[&str], path: &[&str]) -> bool {
    let (p, n) = (pattern.len(), path.len());
    // ok[i][j]: pattern[i..] matches path[j..].
    let mut ok = vec![vec![false; n + 1]; p + 1];
    if let Some(row) = ok.get_mut(p) {
        if let Some(cell) = row.get_mut(n) {
            *cell = true;
        }
    }
    for i in (0..p).rev() {
        for j in (0..n).rev() {
            let node = pattern.get(i).copied().unwrap_or_default();
            let here = path.get(j).copied().unwrap_or_default();
            let next = |a: usize, b: usize| ok.get(a).and_then(|r| r.get(b)).copied().unwrap_or(false);
            let v = if node == "**" {
                // One node, then either the rest of the pattern or more nodes for `**`.
                next(i + 1, j + 1) || next(i, j + 1)
            } else {
                glob(node, here) && next(i + 1, j + 1)
            };
            if let Some(cell) = ok.get_mut(i).and_then(|r| r.get_mut(j)) {
                *cell = v;
            }
        }
    }
    ok.first().and_then(|r| r.first()).copied().unwrap_or(false)
}

/// One node against one pattern node: `*` anywhere stands for any run of characters.
fn glob(pattern: &str, node: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == node;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts.first().copied().unwrap_or_default(), parts.last().copied().unwrap_or_default());
    if !node.starts_with(first) || node.len() < first.len() + last.len() || !node.ends_with(last) {
        return false;
    }
    let mut rest = node.get(first.len()..node.len() - last.len()).unwrap_or_default();
    for mid in parts.iter().skip(1).take(parts.len().saturating_sub(2)) {
        match rest.find(mid) {
            Some(at) => rest = rest.get(at + mid.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    true
}

/// Which devices of a table a 2.x table deletion names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagPredicate {
    /// Every device.
    All,
    /// The one device.
    Device(DeviceId),
    /// Devices whose segment `index` (1 = the first TAG) equals `value` (`None`: is null).
    Segment {
        /// The DeviceID segment (the table name is segment 0).
        index: usize,
        /// The value, or `None` for a null TAG.
        value: Option<String>,
    },
    /// Every predicate holds.
    And(Vec<TagPredicate>),
    /// The device is one of these.
    DeviceIn(Vec<DeviceId>),
    /// Segment `index` is not null.
    SegmentNotNull(usize),
}

impl TagPredicate {
    /// Whether `device` is one of the devices the predicate names. A segment past the
    /// device's last one reads as null (a trailing null TAG is not stored).
    pub fn matches(&self, device: &DeviceId) -> bool {
        match self {
            TagPredicate::All => true,
            TagPredicate::Device(d) => same_device(d, device),
            TagPredicate::Segment { index, value } => device.segment(*index) == value.as_deref(),
            TagPredicate::And(all) => all.iter().all(|p| p.matches(device)),
            TagPredicate::DeviceIn(set) => set.iter().any(|d| same_device(d, device)),
            TagPredicate::SegmentNotNull(index) => device.segment(*index).is_some(),
        }
    }

    fn parse(c: &mut Cursor<'_>, depth: usize) -> Result<TagPredicate> {
        let at = c.offset();
        if depth > 64 {
            return Err(TsFileError::corrupt("mods2 tag predicate", Some(at), "nested deeper than 64"));
        }
        let count = |c: &mut Cursor<'_>, what: &str| -> Result<usize> {
            let at = c.offset();
            let n = c.varint(what)?;
            let n = usize::try_from(n).map_err(|_| TsFileError::corrupt(what, Some(at), format!("count {n}")))?;
            // Every element takes at least one byte.
            if n > c.remaining() {
                return Err(truncated(what, at, n, c.remaining()));
            }
            Ok(n)
        };
        Ok(match c.u8("mods2 tag predicate type")? {
            0 => TagPredicate::All,
            1 => TagPredicate::Device(parse_device(c)?),
            2 => {
                let value = c.var_string("mods2 tag value")?;
                let index = count(c, "mods2 tag segment index")?;
                TagPredicate::Segment { index, value }
            }
            3 => {
                let n = count(c, "mods2 AND predicate")?;
                let mut all = Vec::with_capacity(n);
                for _ in 0..n {
                    all.push(TagPredicate::parse(c, depth + 1)?);
                }
                TagPredicate::And(all)
            }
            4 => {
                let n = count(c, "mods2 device list")?;
                let mut set = Vec::with_capacity(n);
                for _ in 0..n {
                    set.push(parse_device(c)?);
                }
                TagPredicate::DeviceIn(set)
            }
            5 => TagPredicate::SegmentNotNull(count(c, "mods2 tag segment index")?),
            t => return Err(TsFileError::corrupt("mods2 tag predicate", Some(at), format!("unknown type {t}"))),
        })
    }
}

/// A count of `n` one-byte-or-more elements where `available` bytes are left: the input ends
/// too early (a cut last entry, which readers drop).
fn truncated(what: &str, offset: u64, n: usize, available: usize) -> TsFileError {
    TsFileError::Truncated { what: what.to_string(), offset, needed: n as u64, available: available as u64 }
}

/// A DeviceID; more segments than bytes left is a cut entry, not a corrupt one.
fn parse_device(c: &mut Cursor<'_>) -> Result<DeviceId> {
    let mut peek = Cursor::new(c.rest(), c.offset());
    let n = peek.uvarint("device id segment count")? as usize;
    if n > peek.remaining() {
        return Err(truncated("mods2 device id", c.offset(), n, peek.remaining()));
    }
    DeviceId::parse(c)
}

/// Devices equal up to trailing null segments (a writer may drop them).
fn same_device(a: &DeviceId, b: &DeviceId) -> bool {
    a.trimmed() == b.trimmed()
}

/// The suffixes of the modifications files beside a data file (`{name}.mods`,
/// `{name}.mods2`), in the order their deletions are read.
pub const MODS_SUFFIXES: [&str; 2] = ["mods", "mods2"];

/// The deletions of the modifications file with suffix `suffix` ([`MODS_SUFFIXES`]): 1.x text
/// (bytes that are not UTF-8 replaced) or 2.x binary.
pub fn parse_mods_file(suffix: &str, bytes: &[u8]) -> Result<Vec<Deletion>> {
    match suffix {
        "mods" => Ok(parse_mods_v1(&String::from_utf8_lossy(bytes))),
        "mods2" => parse_mods_v2(bytes),
        other => Err(TsFileError::unsupported(format!("modifications file suffix '{other}'"))),
    }
}

/// The deletions of a 1.x `.mods` file, up to the first line that does not decode.
pub fn parse_mods_v1(text: &str) -> Vec<Deletion> {
    let mut out = Vec::new();
    for line in text.lines() {
        match parse_v1_line(line.trim_end_matches('\r')) {
            Some(d) => out.push(d),
            None => break,
        }
    }
    out
}

fn parse_v1_line(line: &str) -> Option<Deletion> {
    let fields: Vec<&str> = line.split(',').collect();
    if fields.len() < 4 || fields.first() != Some(&"DELETION") {
        return None;
    }
    let num = |i: usize| fields.get(i).and_then(|f| f.trim().parse::<i64>().ok());
    let n = fields.len();
    if n >= 5 {
        if let (Some(offset), Some(start), Some(end)) = (num(n - 3), num(n - 2), num(n - 1)) {
            let path = fields.get(1..n - 3)?.join(",");
            return Some(Deletion {
                target: DeletionTarget::Tree(PathPattern::parse(&path)),
                start,
                end,
                file_offset: Some(offset),
            });
        }
    }
    // Legacy: DELETION,<path>,<version>,<end> deletes everything up to `end`.
    let (version, end) = (num(n - 2)?, num(n - 1)?);
    let path = fields.get(1..n - 2)?.join(",");
    Some(Deletion { target: DeletionTarget::Tree(PathPattern::parse(&path)), start: i64::MIN, end, file_offset: Some(version) })
}

/// The deletions of a 2.x `.mods2` file's bytes. A cut last entry is dropped; an entry of an
/// unknown type or a malformed one before the end is an error.
pub fn parse_mods_v2(bytes: &[u8]) -> Result<Vec<Deletion>> {
    let mut c = Cursor::new(bytes, 0);
    let mut out = Vec::new();
    while !c.is_empty() {
        let mut entry = Cursor::new(c.rest(), c.offset());
        match parse_v2_entry(&mut entry) {
            Ok(d) => {
                out.push(d);
                let used = entry.position();
                c.skip(used, "mods2 entry")?;
            }
            Err(TsFileError::Truncated { .. }) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

fn parse_v2_entry(c: &mut Cursor<'_>) -> Result<Deletion> {
    let at = c.offset();
    let kind = c.u8("mods2 entry type")?;
    let (start, end) = (c.i64("mods2 start time")?, c.i64("mods2 end time")?);
    let target = match kind {
        0 => {
            let table = c.var_string_required("mods2 table name")?;
            let tags = TagPredicate::parse(c, 0)?;
            let m_at = c.offset();
            let n = c.varint("mods2 measurement count")?;
            let n =
                usize::try_from(n).map_err(|_| TsFileError::corrupt("mods2", Some(m_at), format!("measurement count {n}")))?;
            if n > c.remaining() {
                return Err(truncated("mods2 measurements", m_at, n, c.remaining()));
            }
            let mut measurements = Vec::with_capacity(n);
            for _ in 0..n {
                measurements.push(c.var_string_required("mods2 measurement")?);
            }
            DeletionTarget::Table { table, tags, measurements }
        }
        1 => DeletionTarget::Tree(PathPattern::parse(&c.var_string_required("mods2 path pattern")?)),
        t => return Err(TsFileError::corrupt("mods2 entry", Some(at), format!("unknown type {t}"))),
    };
    Ok(Deletion { target, start, end, file_offset: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iotdb::test_bytes::{var_string, varint};

    fn pat(p: &str, path: &str) -> bool {
        PathPattern::parse(p).matches(&split_tree_path(path))
    }

    #[test]
    fn path_patterns() {
        assert!(pat("root.sg.d1.s1", "root.sg.d1.s1"));
        assert!(!pat("root.sg.d1.s1", "root.sg.d1.s2"));
        assert!(pat("root.sg.*.s1", "root.sg.d9.s1"));
        assert!(!pat("root.sg.*.s1", "root.sg.a.b.s1"));
        assert!(pat("root.sg.**", "root.sg.d1.s1"));
        assert!(pat("root.sg.**.s1", "root.sg.a.b.s1"));
        assert!(!pat("root.sg.**.s1", "root.sg.s1"), "** takes at least one node");
        assert!(!pat("root.sg.**", "root.sg"));
        assert!(pat("root.sg.d*.s1", "root.sg.d12.s1"));
        assert!(pat("root.sg.*x*y.s1", "root.sg.axbxy.s1"));
        assert!(!pat("root.sg.d*.s1", "root.sg.e1.s1"));
        assert!(pat("root.`a.b`.s1", "root.`a.b`.s1"));
        assert!(pat("root.**.**.s", "root.a.b.c.s"));
        assert!(!pat("root.**.**.s", "root.a.s"));
        let many = format!("root{}.x", ".**".repeat(30));
        assert!(!pat(&many, &format!("root{}", ".a".repeat(40))), "no exponential blow-up");
    }

    #[test]
    fn v1_lines_with_commas_legacy_and_a_bad_line() {
        let text = "DELETION,root.sg.d1.s1,100,5,10\nDELETION,root.sg.`a,b`.s1,200,-3,4\r\nDELETION,root.sg.d2.s1,7,99\nnot a deletion\nDELETION,root.sg.d3.s1,1,1,1\n";
        let got = parse_mods_v1(text);
        assert_eq!(got.len(), 3, "stops at the line that does not decode");
        assert_eq!((got[0].start, got[0].end, got[0].file_offset), (5, 10, Some(100)));
        assert_eq!(got[1].target, DeletionTarget::Tree(PathPattern::parse("root.sg.`a,b`.s1")));
        assert_eq!((got[1].start, got[1].end), (-3, 4));
        assert_eq!((got[2].start, got[2].end, got[2].file_offset), (i64::MIN, 99, Some(7)));
        let d1 = DeviceId::from_tree_path("root.sg.d1");
        assert!(got[0].deletes(&d1, "s1", 5, 99));
        assert!(got[0].deletes(&d1, "s1", 10, 0));
        assert!(!got[0].deletes(&d1, "s1", 11, 0), "end is inclusive, not beyond");
        assert!(!got[0].deletes(&d1, "s1", 7, 100), "offset must be greater than the chunk's");
        assert!(!got[0].deletes(&d1, "s2", 7, 0));
    }

    fn device(out: &mut Vec<u8>, segs: &[Option<&str>]) {
        out.push(segs.len() as u8);
        for s in segs {
            var_string(out, *s);
        }
    }

    fn head(out: &mut Vec<u8>, kind: u8, start: i64, end: i64) {
        out.push(kind);
        out.extend_from_slice(&start.to_be_bytes());
        out.extend_from_slice(&end.to_be_bytes());
    }

    #[test]
    fn v2_entries_tree_and_table() {
        let mut b = Vec::new();
        head(&mut b, 1, 0, 100);
        var_string(&mut b, Some("root.db.**"));
        // table t, tag1 = 'a' AND tag2 IS NULL, columns v: one entry.
        head(&mut b, 0, 10, 20);
        var_string(&mut b, Some("t"));
        b.push(3);
        varint(&mut b, 2);
        b.push(2);
        var_string(&mut b, Some("a"));
        varint(&mut b, 1);
        b.push(2);
        var_string(&mut b, None);
        varint(&mut b, 2);
        varint(&mut b, 1);
        var_string(&mut b, Some("v"));
        // whole rows of devices in a list.
        head(&mut b, 0, i64::MIN, i64::MAX);
        var_string(&mut b, Some("t"));
        b.push(4);
        varint(&mut b, 1);
        device(&mut b, &[Some("t"), Some("b"), Some("x")]);
        varint(&mut b, 0);
        let full = b.len();
        // A cut entry at the end is dropped.
        head(&mut b, 1, 0, 1);
        var_string(&mut b, Some("root.db.d9.s"));
        b.truncate(b.len() - 3);
        let got = parse_mods_v2(&b).unwrap();
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|d| d.file_offset.is_none()));
        let a_null = DeviceId::new(vec![Some("t".into()), Some("a".into())]);
        let a_x = DeviceId::from_strs(&["t", "a", "x"]);
        assert!(got[1].deletes(&a_null, "v", 15, 1 << 40), "a trailing null TAG is not stored");
        assert!(!got[1].deletes(&a_x, "v", 15, 0));
        assert!(!got[1].deletes(&a_null, "w", 15, 0));
        assert!(!got[1].deletes(&a_null, "v", 21, 0));
        assert!(got[2].deletes(&DeviceId::from_strs(&["t", "b", "x"]), "", 0, 0), "whole rows: the time column too");
        assert!(!got[2].deletes(&DeviceId::from_strs(&["u", "b", "x"]), "v", 0, 0), "another table");
        assert!(got[0].deletes(&DeviceId::from_tree_path("root.db.d1"), "s", 50, 0));
        assert!(!got[0].deletes(&DeviceId::from_tree_path("root.other.d1"), "s", 50, 0));
        assert_eq!(parse_mods_v2(&b[..full]).unwrap(), got);
        // Every cut gives the whole entries before it, never a panic.
        for cut in 0..b.len() {
            let n = parse_mods_v2(&b[..cut]).unwrap().len();
            assert!(n <= 3);
        }
        let mut bad = b[..full].to_vec();
        bad.push(9);
        bad.extend_from_slice(&[0; 16]);
        assert!(parse_mods_v2(&bad).unwrap_err().to_string().contains("unknown type 9"));
        assert!(parse_mods_v2(&[]).unwrap().is_empty());
    }
}
