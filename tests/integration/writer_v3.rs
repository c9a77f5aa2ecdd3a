//! A minimal writer of version-3 TsFiles (the IoTDB 1.x layout) for tests, built from the
//! layout in `docs/format-v3.md`: head `TsFile` 0x03, chunk groups whose header holds the
//! device path as one VarString, a path-keyed device index built the way the 1.x writer
//! builds it (TimeseriesMetadata runs of `max_degree` records, nodes of at most `max_degree`
//! entries, internal levels until one root is left), and a TsFileMetadata of the root node,
//! `meta_offset` and an optional bloom filter.
//!
//! PLAIN values and PLAIN time streams (read non-aligned pages with
//! `nonaligned_time_encoding = PLAIN`); pages are compressed with the codec of the layout;
//! a series is cut into chunks of `chunk_points` points, chunk `k` of every series of a
//! device going into the device's `k`-th chunk group, and chunks into pages of
//! `page_points` points (multi-page chunks carry page statistics). In an aligned device an
//! all-null page of a value column is written as the empty page (`UVarInt 0`).

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Bool(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Text(String),
}

pub const BOOLEAN: u8 = 0;
pub const INT32: u8 = 1;
pub const INT64: u8 = 2;
pub const FLOAT: u8 = 3;
pub const DOUBLE: u8 = 4;
pub const TEXT: u8 = 5;
const VECTOR: u8 = 6;

pub const UNCOMPRESSED: u8 = 0;
pub const SNAPPY: u8 = 1;
pub const GZIP: u8 = 2;
pub const LZ4: u8 = 7;
pub const ZSTD: u8 = 8;

/// A non-aligned series: name, type, points in time order.
pub type Series = (String, u8, Vec<(i64, V)>);
/// An aligned value column: name, type, one value or null per row.
pub type Column = (String, u8, Vec<Option<V>>);

/// One device of the file.
#[derive(Debug, Clone)]
pub enum Dev {
    NonAligned { path: String, series: Vec<Series> },
    Aligned { path: String, times: Vec<i64>, columns: Vec<Column> },
}

impl Dev {
    fn path(&self) -> &str {
        match self {
            Dev::NonAligned { path, .. } | Dev::Aligned { path, .. } => path,
        }
    }
}

/// The bloom filter written after `meta_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bloom {
    /// Nothing after `meta_offset`.
    Absent,
    /// An empty bit set, still followed by its size and hash count.
    Empty,
}

/// How the file is laid out.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub page_points: usize,
    pub chunk_points: usize,
    pub compression: u8,
    /// Entries per index node (IoTDB's `max_degree_of_index_node`, 256 by default).
    pub max_degree: usize,
    pub bloom: Bloom,
}

impl Default for Layout {
    fn default() -> Self {
        Layout { page_points: 3, chunk_points: 7, compression: UNCOMPRESSED, max_degree: 256, bloom: Bloom::Absent }
    }
}

#[derive(Default)]
struct Buf(Vec<u8>);

impl Buf {
    fn pos(&self) -> i64 {
        self.0.len() as i64
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn uvarint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn varint(&mut self, v: i32) {
        self.uvarint(((v << 1) ^ (v >> 31)) as u32 as u64);
    }
    fn var_str(&mut self, s: &str) {
        self.varint(s.len() as i32);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
}

fn plain(b: &mut Buf, v: &V) {
    match v {
        V::Bool(x) => b.u8(u8::from(*x)),
        V::I32(x) => b.varint(*x),
        V::I64(x) => b.i64(*x),
        V::F32(x) => b.bytes(&x.to_be_bytes()),
        V::F64(x) => b.bytes(&x.to_be_bytes()),
        V::Text(s) => b.var_str(s),
    }
}

/// Statistics of the non-null points of a page, chunk or series (`VECTOR`: time only).
fn stats(ty: u8, points: &[(i64, &V)]) -> Vec<u8> {
    let mut b = Buf::default();
    b.uvarint(points.len() as u64);
    b.i64(points.first().map_or(i64::MAX, |p| p.0));
    b.i64(points.last().map_or(i64::MIN, |p| p.0));
    let vals: Vec<&V> = points.iter().map(|p| p.1).collect();
    match ty {
        VECTOR => {}
        BOOLEAN => {
            let t = |v: Option<&&V>| matches!(v, Some(V::Bool(true)));
            b.u8(u8::from(t(vals.first())));
            b.u8(u8::from(t(vals.last())));
            b.i64(vals.iter().filter(|v| matches!(v, V::Bool(true))).count() as i64);
        }
        INT32 => {
            let xs: Vec<i32> = vals.iter().map(|v| if let V::I32(x) = v { *x } else { 0 }).collect();
            for x in [xs.iter().min(), xs.iter().max(), xs.first(), xs.last()] {
                b.i32(x.copied().unwrap_or(0));
            }
            b.i64(xs.iter().map(|x| i64::from(*x)).sum());
        }
        INT64 => {
            let xs: Vec<i64> = vals.iter().map(|v| if let V::I64(x) = v { *x } else { 0 }).collect();
            for x in [xs.iter().min(), xs.iter().max(), xs.first(), xs.last()] {
                b.i64(x.copied().unwrap_or(0));
            }
            b.bytes(&xs.iter().map(|x| *x as f64).sum::<f64>().to_be_bytes());
        }
        FLOAT => {
            let xs: Vec<f32> = vals.iter().map(|v| if let V::F32(x) = v { *x } else { 0.0 }).collect();
            let min = xs.iter().copied().fold(f32::INFINITY, f32::min);
            let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for x in [min, max, xs.first().copied().unwrap_or(0.0), xs.last().copied().unwrap_or(0.0)] {
                b.bytes(&x.to_be_bytes());
            }
            b.bytes(&xs.iter().map(|x| f64::from(*x)).sum::<f64>().to_be_bytes());
        }
        DOUBLE => {
            let xs: Vec<f64> = vals.iter().map(|v| if let V::F64(x) = v { *x } else { 0.0 }).collect();
            let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            for x in [min, max, xs.first().copied().unwrap_or(0.0), xs.last().copied().unwrap_or(0.0), xs.iter().sum()] {
                b.bytes(&x.to_be_bytes());
            }
        }
        TEXT => {
            for s in [vals.first(), vals.last()] {
                let s = match s {
                    Some(V::Text(s)) => s.as_str(),
                    _ => "",
                };
                b.i32(s.len() as i32);
                b.bytes(s.as_bytes());
            }
        }
        other => panic!("writer_v3: type {other} not supported"),
    }
    b.0
}

fn compress(codec: u8, raw: &[u8]) -> Vec<u8> {
    use std::io::Write;
    match codec {
        UNCOMPRESSED => raw.to_vec(),
        SNAPPY => snap::raw::Encoder::new().compress_vec(raw).unwrap(),
        GZIP => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(raw).unwrap();
            e.finish().unwrap()
        }
        LZ4 => lz4_flex::block::compress(raw),
        ZSTD => zstd::bulk::compress(raw, 3).unwrap(),
        other => panic!("writer_v3: compression {other} not supported"),
    }
}

/// A page: its uncompressed payload and statistics (`None`: the empty value page).
type Page = Option<(Vec<u8>, Vec<u8>)>;

/// Write one chunk and return its offset.
fn chunk(b: &mut Buf, layout: &Layout, mask: u8, name: &str, ty: u8, pages: &[Page]) -> i64 {
    let offset = b.pos();
    let multi = pages.len() > 1;
    let mut data = Buf::default();
    for p in pages {
        match p {
            None => data.uvarint(0),
            Some((payload, st)) => {
                let stored = compress(layout.compression, payload);
                data.uvarint(payload.len() as u64);
                data.uvarint(stored.len() as u64);
                if multi {
                    data.bytes(st);
                }
                data.bytes(&stored);
            }
        }
    }
    b.u8(mask | if multi { 0x01 } else { 0x05 });
    b.var_str(name);
    b.uvarint(data.0.len() as u64);
    b.u8(ty);
    b.u8(layout.compression);
    b.u8(0); // PLAIN
    b.bytes(&data.0);
    offset
}

/// A series as the index sees it: name, type, TimeseriesMetadata mask, chunk offsets with
/// their statistics, and the series statistics.
struct Written {
    name: String,
    ty: u8,
    mask: u8,
    chunks: Vec<(i64, Vec<u8>)>,
    stats: Vec<u8>,
}

fn non_aligned(b: &mut Buf, layout: &Layout, series: &[Series], k: usize, written: &mut Vec<Written>) {
    let mut series: Vec<&Series> = series.iter().collect();
    series.sort_by(|a, c| a.0.cmp(&c.0));
    for (name, ty, points) in series {
        let refs: Vec<(i64, &V)> = points.iter().map(|(t, v)| (*t, v)).collect();
        let Some(part) = refs.chunks(layout.chunk_points).nth(k) else { continue };
        let pages: Vec<Page> = part
            .chunks(layout.page_points)
            .map(|page| {
                let mut times = Buf::default();
                let mut values = Buf::default();
                for (t, v) in page {
                    times.i64(*t);
                    plain(&mut values, v);
                }
                let mut p = Buf::default();
                p.uvarint(times.0.len() as u64);
                p.bytes(&times.0);
                p.bytes(&values.0);
                Some((p.0, stats(*ty, page)))
            })
            .collect();
        let offset = chunk(b, layout, 0x00, name, *ty, &pages);
        let w = written_entry(written, name, *ty, 0x00, stats(*ty, &refs));
        w.chunks.push((offset, stats(*ty, part)));
    }
}

fn written_entry<'a>(written: &'a mut Vec<Written>, name: &str, ty: u8, mask: u8, series_stats: Vec<u8>) -> &'a mut Written {
    let i = match written.iter().position(|w| w.name == name) {
        Some(i) => i,
        None => {
            written.push(Written { name: name.to_string(), ty, mask, chunks: Vec::new(), stats: series_stats });
            written.len() - 1
        }
    };
    &mut written[i]
}

fn aligned(b: &mut Buf, layout: &Layout, times: &[i64], columns: &[Column], k: usize, written: &mut Vec<Written>) {
    let rows: Vec<usize> = (0..times.len()).collect();
    let Some(part) = rows.chunks(layout.chunk_points).nth(k) else { return };
    let dummy = V::I64(0);
    let tp = |rs: &[usize]| -> Vec<(i64, &V)> { rs.iter().map(|&r| (times[r], &dummy)).collect() };
    let pages: Vec<Page> = part
        .chunks(layout.page_points)
        .map(|page| {
            let mut p = Buf::default();
            for &r in page {
                p.i64(times[r]);
            }
            Some((p.0, stats(VECTOR, &tp(page))))
        })
        .collect();
    let offset = chunk(b, layout, 0x80, "", VECTOR, &pages);
    let w = written_entry(written, "", VECTOR, 0x80, stats(VECTOR, &tp(&rows)));
    w.chunks.push((offset, stats(VECTOR, &tp(part))));
    let mut columns: Vec<&Column> = columns.iter().collect();
    columns.sort_by(|a, c| a.0.cmp(&c.0));
    for (name, ty, values) in columns {
        let points =
            |rs: &[usize]| -> Vec<(i64, &V)> { rs.iter().filter_map(|&r| values[r].as_ref().map(|v| (times[r], v))).collect() };
        let pages: Vec<Page> = part
            .chunks(layout.page_points)
            .map(|page| {
                let pts = points(page);
                if pts.is_empty() {
                    return None;
                }
                let mut p = Buf::default();
                p.i32(page.len() as i32);
                let mut bitmap = vec![0u8; page.len().div_ceil(8)];
                let mut vals = Buf::default();
                for (i, &r) in page.iter().enumerate() {
                    if let Some(v) = &values[r] {
                        bitmap[i / 8] |= 0x80 >> (i % 8);
                        plain(&mut vals, v);
                    }
                }
                p.bytes(&bitmap);
                p.bytes(&vals.0);
                Some((p.0, stats(*ty, &pts)))
            })
            .collect();
        let offset = chunk(b, layout, 0x40, name, *ty, &pages);
        let w = written_entry(written, name, *ty, 0x40, stats(*ty, &points(&rows)));
        w.chunks.push((offset, stats(*ty, &points(part))));
    }
}

/// An index node not yet placed: entries `(first key, offset)`, end offset, type.
struct Node {
    entries: Vec<(String, i64)>,
    end: i64,
    ty: u8,
}

fn put_node(b: &mut Buf, n: &Node) {
    b.uvarint(n.entries.len() as u64);
    for (k, o) in &n.entries {
        b.var_str(k);
        b.i64(*o);
    }
    b.i64(n.end);
    b.u8(n.ty);
}

/// Place the nodes of one level and build parents of type `ty` until one node is left.
fn root_of(b: &mut Buf, mut level: Vec<Node>, ty: u8, degree: usize) -> Node {
    while level.len() > 1 {
        let mut parents = Vec::new();
        let mut cur = Node { entries: Vec::new(), end: 0, ty };
        for n in level {
            if cur.entries.len() == degree {
                cur.end = b.pos();
                parents.push(std::mem::replace(&mut cur, Node { entries: Vec::new(), end: 0, ty }));
            }
            cur.entries.push((n.entries[0].0.clone(), b.pos()));
            put_node(b, &n);
        }
        cur.end = b.pos();
        parents.push(cur);
        level = parents;
    }
    level.pop().unwrap()
}

/// Write a version-3 TsFile holding `devices`.
pub fn write_v3(devices: &[Dev], layout: &Layout) -> Vec<u8> {
    let mut b = Buf::default();
    b.bytes(b"TsFile");
    b.u8(3);
    let mut index: Vec<(String, Vec<Written>)> = Vec::new();
    for d in devices {
        let groups = match d {
            Dev::NonAligned { series, .. } => series.iter().map(|s| s.2.len().div_ceil(layout.chunk_points)).max().unwrap_or(0),
            Dev::Aligned { times, .. } => times.len().div_ceil(layout.chunk_points),
        };
        let mut written = Vec::new();
        for k in 0..groups {
            b.u8(0);
            b.var_str(d.path());
            match d {
                Dev::NonAligned { series, .. } => non_aligned(&mut b, layout, series, k, &mut written),
                Dev::Aligned { times, columns, .. } => aligned(&mut b, layout, times, columns, k, &mut written),
            }
        }
        index.push((d.path().to_string(), written));
    }
    let meta_offset = b.pos();
    b.u8(2);
    index.sort_by(|a, c| a.0.cmp(&c.0));
    let degree = layout.max_degree;
    // Per device: TimeseriesMetadata runs and the measurement levels below the root.
    let mut roots = Vec::new();
    for (path, written) in &index {
        let mut leaves = Vec::new();
        let mut cur = Node { entries: Vec::new(), end: 0, ty: 3 };
        for (i, w) in written.iter().enumerate() {
            if i % degree == 0 {
                if cur.entries.len() == degree {
                    cur.end = b.pos();
                    leaves.push(std::mem::replace(&mut cur, Node { entries: Vec::new(), end: 0, ty: 3 }));
                }
                cur.entries.push((w.name.clone(), b.pos()));
            }
            let multi = w.chunks.len() > 1;
            let mut list = Buf::default();
            for (off, st) in &w.chunks {
                list.i64(*off);
                if multi {
                    list.bytes(st);
                }
            }
            b.u8(w.mask | u8::from(multi));
            b.var_str(&w.name);
            b.u8(w.ty);
            b.uvarint(list.0.len() as u64);
            b.bytes(&w.stats);
            b.bytes(&list.0);
        }
        cur.end = b.pos();
        leaves.push(cur);
        roots.push((path.clone(), root_of(&mut b, leaves, 2, degree)));
    }
    // Device level: each device's measurement root, in path order.
    let mut leaves = Vec::new();
    let mut cur = Node { entries: Vec::new(), end: 0, ty: 1 };
    for (path, root) in &roots {
        if cur.entries.len() == degree {
            cur.end = b.pos();
            leaves.push(std::mem::replace(&mut cur, Node { entries: Vec::new(), end: 0, ty: 1 }));
        }
        cur.entries.push((path.clone(), b.pos()));
        put_node(&mut b, root);
    }
    cur.end = b.pos();
    leaves.push(cur);
    let root = root_of(&mut b, leaves, 0, degree);
    let mut m = Buf::default();
    put_node(&mut m, &root);
    m.i64(meta_offset);
    if layout.bloom == Bloom::Empty {
        m.uvarint(0);
        m.uvarint(256);
        m.uvarint(5);
    }
    let len = m.0.len() as i32;
    b.bytes(&m.0);
    b.i32(len);
    b.bytes(b"TsFile");
    b.0
}
