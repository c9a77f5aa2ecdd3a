//! A minimal TsFile v4 writer for tests: shapes the corpus lacks (aligned tree devices,
//! files holding table-model and tree-model data, a measurement typed differently on two
//! devices). FLOAT/DOUBLE statistics are computed as the Java and C++ writers do (`min`/`max`
//! start at the first value and follow IEEE `<`/`>`, so a NaN first value makes them NaN and
//! the first zero's sign stays; `sum` adds in float64). PLAIN encoding (also for time streams: read non-aligned pages with
//! `nonaligned_time_encoding = PLAIN`), no compression, no bloom filter, one chunk group per
//! device, pages of at most `page_points` points (multi-page chunks carry page statistics).

use std::collections::BTreeMap;

use datafusion_tsfile::crypto::aead::{aad_prefix, page_aad, AES_GCM_128_AES_WRAP_128_V1};
use datafusion_tsfile::crypto::{seal, LegacyAlgorithm};
use datafusion_tsfile::format::{Cursor, FileEncryptionHeader};

/// A value of a series.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Bool(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Text(String),
}

/// TsFile data type ids used here.
pub const BOOLEAN: u8 = 0;
pub const INT32: u8 = 1;
pub const INT64: u8 = 2;
pub const FLOAT: u8 = 3;
pub const DOUBLE: u8 = 4;
pub const TEXT: u8 = 5;
const VECTOR: u8 = 6;
pub const STRING: u8 = 11;

/// A non-aligned series: name, type, points.
pub type Series = (String, u8, Vec<(i64, Val)>);

/// One device's data.
#[derive(Debug, Clone)]
pub enum Device {
    /// Non-aligned series.
    NonAligned { segments: Vec<String>, series: Vec<Series> },
    /// Aligned: one time column and value columns `(name, type, one value or null per row)`.
    Aligned { segments: Vec<String>, times: Vec<i64>, columns: Vec<(String, u8, Vec<Option<Val>>)> },
}

impl Device {
    fn segments(&self) -> &[String] {
        match self {
            Device::NonAligned { segments, .. } | Device::Aligned { segments, .. } => segments,
        }
    }
}

/// A table-model table schema: TAG columns, then FIELD columns `(name, type)`.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub tags: Vec<String>,
    pub fields: Vec<(String, u8)>,
}

/// How pages are sealed (encrypted) by [`write_tsfile_sealed`].
#[derive(Debug, Clone)]
pub enum Sealing {
    /// Plaintext pages.
    None,
    /// Legacy footer properties; pages XORed with the algorithm's CTR keystream. Level 2
    /// stores `data_key` wrapped under `master`, level 1 in the clear.
    Legacy { level: u8, algorithm: LegacyAlgorithm, data_key: [u8; 16], master: [u8; 16], type_name: String },
    /// Page AEAD: FileEncryptionHeader at offset 7, an int64 ordinal after every chunk
    /// header (optionally also an empty authentication field), AES-128-GCM page bodies.
    Aead { provider: String, kek: [u8; 16], data_key: [u8; 16], file_id: [u8; 16], with_auth_field: bool },
}

/// State of sealing while a file is written.
struct Sealer<'a> {
    sealing: &'a Sealing,
    aad_prefix: Vec<u8>,
    next_ordinal: i64,
}

impl Sealer<'_> {
    /// The chunk-header suffix to write and the ordinal of the chunk (AEAD only).
    fn chunk_suffix(&mut self, b: &mut Buf) -> i64 {
        let ord = self.next_ordinal;
        if let Sealing::Aead { with_auth_field, .. } = self.sealing {
            b.i64(ord);
            if *with_auth_field {
                b.i32(0);
            }
            self.next_ordinal += 1;
        }
        ord
    }

    fn seal(&self, ordinal: i64, page_index: usize, plain: &[u8]) -> Vec<u8> {
        match self.sealing {
            Sealing::None => plain.to_vec(),
            Sealing::Legacy { algorithm, data_key, .. } => seal::seal_legacy(*algorithm, data_key, plain).unwrap(),
            Sealing::Aead { data_key, .. } => {
                let mut aad = Vec::new();
                page_aad(&self.aad_prefix, ordinal, page_index as u32, plain.len() as u32, plain.len() as u32, &mut aad);
                // A distinct IV per page (real writers draw them at random).
                let mut iv = [0u8; 12];
                iv[..8].copy_from_slice(&ordinal.to_be_bytes());
                iv[8..].copy_from_slice(&(page_index as u32).to_be_bytes());
                seal::seal_aes_gcm(data_key, &iv, &aad, plain).unwrap()
            }
        }
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
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn f64(&mut self, v: f64) {
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
    fn str32(&mut self, s: &str) {
        self.i32(s.len() as i32);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
}

fn device_id(b: &mut Buf, segs: &[String]) {
    b.uvarint(segs.len() as u64);
    for s in segs {
        b.var_str(s);
    }
}

fn plain_value(b: &mut Buf, v: &Val) {
    match v {
        Val::Bool(x) => b.u8(u8::from(*x)),
        Val::I32(x) => b.varint(*x),
        Val::I64(x) => b.i64(*x),
        Val::F32(x) => b.f32(*x),
        Val::F64(x) => b.f64(*x),
        Val::Text(s) => b.var_str(s),
    }
}

/// `(min, max, sum)` of float values as the writers compute them: from the first value, with
/// IEEE `<`/`>` (NaN never replaces a bound; a NaN first value stays) and IEEE `+`.
fn float_min_max_sum(xs: &[f64]) -> (f64, f64, f64) {
    let Some((&first, rest)) = xs.split_first() else { return (0.0, 0.0, 0.0) };
    let (mut min, mut max, mut sum) = (first, first, first);
    for &x in rest {
        if x < min {
            min = x;
        }
        if x > max {
            max = x;
        }
        sum += x;
    }
    (min, max, sum)
}

/// Statistics the writer falsifies on purpose (the trust tests): every unit it writes while
/// [`with_tampered_statistics`] runs gets them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tamper {
    /// Added to the value count of value columns.
    pub count_delta: u64,
    /// Integer, float and STRING `min`/`max` written swapped (min > max).
    pub swap_min_max: bool,
    /// Added to BOOLEAN `true_count`.
    pub true_count_delta: i64,
    /// The time column's `start_time`/`end_time` written swapped.
    pub swap_time: bool,
}

thread_local! {
    static TAMPER: std::cell::Cell<Tamper> = const { std::cell::Cell::new(Tamper { count_delta: 0, swap_min_max: false, true_count_delta: 0, swap_time: false }) };
}

/// Run `f` (which writes files) with statistics falsified as `t` says.
pub fn with_tampered_statistics<R>(t: Tamper, f: impl FnOnce() -> R) -> R {
    let before = TAMPER.with(|c| c.replace(t));
    let r = f();
    TAMPER.with(|c| c.set(before));
    r
}

/// `(lo, hi)`, or `(hi, lo)` when `swap`.
fn swapped<T>(swap: bool, lo: T, hi: T) -> (T, T) {
    if swap {
        (hi, lo)
    } else {
        (lo, hi)
    }
}

/// Statistics of `points` (non-null values with their times) for type `ty`.
fn statistics(b: &mut Buf, ty: u8, points: &[(i64, &Val)], time_only: bool) {
    let t = TAMPER.with(|c| c.get());
    let count = points.len() as u64 + if time_only { 0 } else { t.count_delta };
    b.uvarint(count);
    let (start, end) = (points.first().map_or(0, |p| p.0), points.last().map_or(0, |p| p.0));
    let (start, end) = if time_only && t.swap_time { (end, start) } else { (start, end) };
    b.i64(start);
    b.i64(end);
    if time_only {
        return;
    }
    let vals: Vec<&Val> = points.iter().map(|p| p.1).collect();
    match ty {
        BOOLEAN => {
            let f = |v: Option<&&Val>| matches!(v, Some(Val::Bool(true)));
            b.u8(u8::from(f(vals.first())));
            b.u8(u8::from(f(vals.last())));
            b.i64(vals.iter().filter(|v| matches!(v, Val::Bool(true))).count() as i64 + t.true_count_delta);
        }
        INT32 => {
            let xs: Vec<i32> = vals.iter().map(|v| if let Val::I32(x) = v { *x } else { 0 }).collect();
            let (lo, hi) = swapped(t.swap_min_max, xs.iter().min(), xs.iter().max());
            for x in [lo, hi, xs.first(), xs.last()] {
                b.i32(x.copied().unwrap_or(0));
            }
            b.i64(xs.iter().map(|x| i64::from(*x)).sum());
        }
        INT64 => {
            let xs: Vec<i64> = vals.iter().map(|v| if let Val::I64(x) = v { *x } else { 0 }).collect();
            let (lo, hi) = swapped(t.swap_min_max, xs.iter().min(), xs.iter().max());
            for x in [lo, hi, xs.first(), xs.last()] {
                b.i64(x.copied().unwrap_or(0));
            }
            b.f64(xs.iter().map(|x| *x as f64).sum());
        }
        FLOAT => {
            let xs: Vec<f32> = vals.iter().map(|v| if let Val::F32(x) = v { *x } else { 0.0 }).collect();
            let (min, max, sum) = float_min_max_sum(&xs.iter().map(|x| f64::from(*x)).collect::<Vec<_>>());
            for x in [min as f32, max as f32, xs.first().copied().unwrap_or(0.0), xs.last().copied().unwrap_or(0.0)] {
                b.f32(x);
            }
            b.f64(sum);
        }
        DOUBLE => {
            let xs: Vec<f64> = vals.iter().map(|v| if let Val::F64(x) = v { *x } else { 0.0 }).collect();
            let (min, max, sum) = float_min_max_sum(&xs);
            let (min, max) = if t.swap_min_max { (max, min) } else { (min, max) };
            for x in [min, max, xs.first().copied().unwrap_or(0.0), xs.last().copied().unwrap_or(0.0), sum] {
                b.f64(x);
            }
        }
        TEXT | STRING => {
            let xs: Vec<&str> = vals.iter().map(|v| if let Val::Text(s) = v { s.as_str() } else { "" }).collect();
            b.str32(xs.first().copied().unwrap_or(""));
            b.str32(xs.last().copied().unwrap_or(""));
            if ty == STRING {
                let (lo, hi) = swapped(t.swap_min_max, xs.iter().min(), xs.iter().max());
                b.str32(lo.copied().unwrap_or(""));
                b.str32(hi.copied().unwrap_or(""));
            }
        }
        other => panic!("writer: type {other} not supported"),
    }
}

/// A written series: name, type, chunk offset, the statistics bytes of the series.
struct Written {
    name: String,
    ty: u8,
    offset: i64,
    stats: Vec<u8>,
}

/// Write one chunk: `pages` = list of (page payload, page statistics bytes).
fn chunk(b: &mut Buf, sealer: &mut Sealer<'_>, marker_base: u8, name: &str, ty: u8, pages: Vec<(Vec<u8>, Vec<u8>)>) -> i64 {
    let offset = b.pos();
    let multi = pages.len() > 1;
    let mut header = Buf::default();
    header.u8(marker_base | if multi { 0x01 } else { 0x05 });
    header.var_str(name);
    let mut suffix = Buf::default();
    let ordinal = sealer.chunk_suffix(&mut suffix);
    let mut data = Buf::default();
    for (i, (payload, stats)) in pages.iter().enumerate() {
        let stored = sealer.seal(ordinal, i, payload);
        data.uvarint(payload.len() as u64);
        data.uvarint(stored.len() as u64);
        if multi {
            data.bytes(stats);
        }
        data.bytes(&stored);
    }
    b.bytes(&header.0);
    b.uvarint(data.0.len() as u64);
    b.u8(ty);
    b.u8(0); // UNCOMPRESSED
    b.u8(0); // PLAIN
    b.bytes(&suffix.0);
    b.bytes(&data.0);
    offset
}

fn stats_bytes(ty: u8, points: &[(i64, &Val)], time_only: bool) -> Vec<u8> {
    let mut s = Buf::default();
    statistics(&mut s, ty, points, time_only);
    s.0
}

/// Write a TsFile holding `devices` (one chunk group each, in this order) and `tables`.
pub fn write_tsfile(devices: &[Device], tables: &[Table], page_points: usize) -> Vec<u8> {
    write_tsfile_sealed(devices, tables, page_points, &Sealing::None)
}

/// [`write_tsfile`] with encrypted pages.
pub fn write_tsfile_sealed(devices: &[Device], tables: &[Table], page_points: usize, sealing: &Sealing) -> Vec<u8> {
    let mut b = Buf::default();
    b.bytes(b"TsFile");
    b.u8(4);
    let mut sealer = Sealer { sealing, aad_prefix: Vec::new(), next_ordinal: 0 };
    if let Sealing::Aead { provider, kek, data_key, file_id, .. } = sealing {
        let wrapped = seal::wrap_aes_kw(kek, data_key).unwrap();
        let h = seal::encryption_header(provider, AES_GCM_128_AES_WRAP_128_V1, "test-key", "1", file_id, &wrapped);
        let parsed = FileEncryptionHeader::parse(&mut Cursor::new(&h, 7)).unwrap();
        sealer.aad_prefix = aad_prefix(&parsed);
        b.bytes(&h);
    }
    // Per device (by segments): its written series (time column first for aligned).
    let mut index: BTreeMap<Vec<String>, Vec<Written>> = BTreeMap::new();
    for d in devices {
        b.u8(0);
        device_id(&mut b, d.segments());
        let mut written = Vec::new();
        match d {
            Device::NonAligned { series, .. } => {
                let mut series = series.clone();
                series.sort_by(|a, c| a.0.cmp(&c.0));
                for (name, ty, points) in &series {
                    let refs: Vec<(i64, &Val)> = points.iter().map(|(t, v)| (*t, v)).collect();
                    let pages = refs
                        .chunks(page_points)
                        .map(|page| {
                            let mut times = Buf::default();
                            let mut values = Buf::default();
                            for (t, v) in page {
                                times.i64(*t);
                                plain_value(&mut values, v);
                            }
                            let mut payload = Buf::default();
                            payload.uvarint(times.0.len() as u64);
                            payload.bytes(&times.0);
                            payload.bytes(&values.0);
                            (payload.0, stats_bytes(*ty, page, false))
                        })
                        .collect();
                    let offset = chunk(&mut b, &mut sealer, 0x00, name, *ty, pages);
                    written.push(Written { name: name.clone(), ty: *ty, offset, stats: stats_bytes(*ty, &refs, false) });
                }
            }
            Device::Aligned { times, columns, .. } => {
                let dummy = Val::I64(0);
                let rows: Vec<usize> = (0..times.len()).collect();
                let time_points: Vec<(i64, &Val)> = times.iter().map(|t| (*t, &dummy)).collect();
                let pages = rows
                    .chunks(page_points)
                    .map(|page| {
                        let mut p = Buf::default();
                        for &r in page {
                            p.i64(times[r]);
                        }
                        let pts: Vec<(i64, &Val)> = page.iter().map(|&r| (times[r], &dummy)).collect();
                        (p.0, stats_bytes(VECTOR, &pts, true))
                    })
                    .collect();
                let offset = chunk(&mut b, &mut sealer, 0x80, "", VECTOR, pages);
                written.push(Written { name: String::new(), ty: VECTOR, offset, stats: stats_bytes(VECTOR, &time_points, true) });
                let mut columns = columns.clone();
                columns.sort_by(|a, c| a.0.cmp(&c.0));
                for (name, ty, values) in &columns {
                    let pages = rows
                        .chunks(page_points)
                        .map(|page| {
                            let mut p = Buf::default();
                            p.i32(page.len() as i32);
                            let mut bitmap = vec![0u8; page.len().div_ceil(8)];
                            let mut vals = Buf::default();
                            let mut pts = Vec::new();
                            for (i, &r) in page.iter().enumerate() {
                                if let Some(v) = &values[r] {
                                    bitmap[i / 8] |= 0x80 >> (i % 8);
                                    plain_value(&mut vals, v);
                                    pts.push((times[r], v));
                                }
                            }
                            p.bytes(&bitmap);
                            p.bytes(&vals.0);
                            (p.0, stats_bytes(*ty, &pts, false))
                        })
                        .collect();
                    let offset = chunk(&mut b, &mut sealer, 0x40, name, *ty, pages);
                    let all: Vec<(i64, &Val)> = rows.iter().filter_map(|&r| values[r].as_ref().map(|v| (times[r], v))).collect();
                    written.push(Written { name: name.clone(), ty: *ty, offset, stats: stats_bytes(*ty, &all, false) });
                }
            }
        }
        index.insert(d.segments().to_vec(), written);
    }
    // Operation index range, then the separator.
    b.u8(4);
    b.i64(0);
    b.i64(0);
    let meta_offset = b.pos();
    b.u8(2);
    // Index area: per device its TimeseriesMetadata run and a leaf measurement node.
    let mut keys: BTreeMap<String, Vec<(Vec<String>, i64, i64)>> = BTreeMap::new();
    for (segs, written) in &index {
        let run = b.pos();
        for w in written {
            b.u8(0); // one chunk
            b.var_str(&w.name);
            b.u8(w.ty);
            b.uvarint(8);
            b.bytes(&w.stats);
            b.i64(w.offset);
        }
        let node = b.pos();
        b.uvarint(1);
        b.var_str(&written[0].name);
        b.i64(run);
        b.i64(node);
        b.u8(3);
        keys.entry(segs[0].clone()).or_default().push((segs.clone(), node, b.pos()));
    }
    let mut m = Buf::default();
    m.uvarint(keys.len() as u64);
    for (key, devs) in &keys {
        m.var_str(key);
        m.uvarint(devs.len() as u64);
        for (segs, node, _) in devs {
            device_id(&mut m, segs);
            m.i64(*node);
        }
        m.i64(devs.last().map_or(0, |d| d.2));
        m.u8(1);
    }
    m.uvarint(tables.len() as u64);
    for t in tables {
        m.var_str(&t.name);
        m.uvarint((t.tags.len() + t.fields.len()) as u64);
        let mut col = |name: &str, ty: u8, category: i32| {
            m.str32(name);
            m.u8(ty);
            m.u8(0);
            m.u8(0);
            m.i32(0);
            m.i32(category);
        };
        for tag in &t.tags {
            col(tag, STRING, 0);
        }
        for (f, ty) in &t.fields {
            col(f, *ty, 1);
        }
    }
    m.i64(meta_offset);
    m.uvarint(0); // no bloom filter
    match sealing {
        Sealing::Legacy { level, algorithm, data_key, master, type_name } => {
            let key = if *level == 2 { seal::wrap_legacy_key(*algorithm, master, data_key).unwrap() } else { *data_key };
            let props = [
                ("encryptLevel", level.to_string()),
                ("encryptType", type_name.clone()),
                ("encryptKey", seal::key_property(&key)),
            ];
            m.varint(props.len() as i32);
            for (k, v) in props {
                m.var_str(k);
                m.var_str(&v);
            }
        }
        _ => m.varint(0), // no properties
    }
    let len = m.0.len() as i32;
    b.bytes(&m.0);
    b.i32(len);
    b.bytes(b"TsFile");
    b.0
}
