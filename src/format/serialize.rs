//! Structs → bytes: the serializers of the writer, the exact inverse of this layer's parsers.
//!
//! Every function appends to a `Vec<u8>` and writes the layout documented by the parser of the
//! same structure: primitives ([`put_uvarint`], [`put_varint`], [`put_var_str`], String32 and
//! Binary32), [`put_device_id`] (`device.rs`), [`put_statistics`] (`statistics.rs`),
//! [`put_chunk_header`] / [`put_page_header`] (`chunk.rs`), [`put_timeseries_metadata`]
//! (`timeseries.rs`), [`put_index_node`] (`index.rs`), [`put_table_schema`] and
//! [`put_properties`] (`metadata.rs`), and [`BloomFilterBuilder`] (`bloom.rs`).
//!
//! Lengths that do not fit their field (a name of more than `i32::MAX` bytes, more than
//! `u32::MAX` entries) are [`TsFileError::InvalidArgument`] errors: a writer checks before it
//! writes, so nothing here truncates silently.

use crate::error::{Result, TsFileError};
use crate::format::bloom::series_bit;
use crate::format::index::NodeType;
use crate::format::statistics::{Statistics, ValueStatistics};
use crate::format::{DeviceId, TableSchema};

/// Append a 32-bit UVarInt (LEB128, low group first).
#[inline]
// why: each byte takes the low 7 bits, masked before the cast.
#[allow(clippy::cast_possible_truncation)]
pub fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    out.push((v & 0x7f) as u8);
}

/// Append a VarInt (zig-zag of an `i32`, then UVarInt).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, v: i32) {
    put_uvarint(out, ((v << 1) ^ (v >> 31)).cast_unsigned());
}

fn len_i32(len: usize, what: &str) -> Result<i32> {
    i32::try_from(len).map_err(|_| TsFileError::InvalidArgument(format!("{what} of {len} bytes is too long to store")))
}

/// A count or byte length as a UVarInt field.
pub fn len_u32(len: usize, what: &str) -> Result<u32> {
    u32::try_from(len).map_err(|_| TsFileError::InvalidArgument(format!("{what} of {len} is too large to store")))
}

/// Append a VarString: VarInt byte length, then the UTF-8 bytes.
pub fn put_var_str(out: &mut Vec<u8>, s: &str) -> Result<()> {
    put_var_bytes(out, s.as_bytes())
}

/// Append a VarBinary: VarInt byte length, then the bytes.
pub fn put_var_bytes(out: &mut Vec<u8>, b: &[u8]) -> Result<()> {
    put_varint(out, len_i32(b.len(), "a string")?);
    out.extend_from_slice(b);
    Ok(())
}

/// Append a String32/Binary32: `int32` byte length (−1 for `None`), then the bytes.
pub fn put_binary32(out: &mut Vec<u8>, b: Option<&[u8]>) -> Result<()> {
    match b {
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(b) => {
            out.extend_from_slice(&len_i32(b.len(), "a string")?.to_be_bytes());
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

/// Append a DeviceID: UVarInt segment count, then a VarString per segment (null as length
/// −1). Trailing null segments are not written, as the reference writers do.
pub fn put_device_id(out: &mut Vec<u8>, device: &DeviceId) -> Result<()> {
    let segments = device.segments();
    let n = segments.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    put_uvarint(out, len_u32(n, "device segment count")?);
    for s in segments.iter().take(n) {
        match s {
            Some(s) => put_var_str(out, s)?,
            None => put_varint(out, -1),
        }
    }
    Ok(())
}

/// Append statistics in the layout of their value type (no type byte).
pub fn put_statistics(out: &mut Vec<u8>, s: &Statistics) -> Result<()> {
    put_uvarint(
        out,
        u32::try_from(s.count).map_err(|_| TsFileError::InvalidArgument(format!("{} values in one unit", s.count)))?,
    );
    out.extend_from_slice(&s.start_time.to_be_bytes());
    out.extend_from_slice(&s.end_time.to_be_bytes());
    match &s.values {
        ValueStatistics::None => {}
        ValueStatistics::Boolean { first, last, true_count } => {
            out.push(u8::from(*first));
            out.push(u8::from(*last));
            out.extend_from_slice(&true_count.to_be_bytes());
        }
        ValueStatistics::Int32 { min, max, first, last, sum } => {
            for v in [min, max, first, last] {
                out.extend_from_slice(&v.to_be_bytes());
            }
            out.extend_from_slice(&sum.to_be_bytes());
        }
        ValueStatistics::Int64 { min, max, first, last, sum } => {
            for v in [min, max, first, last] {
                out.extend_from_slice(&v.to_be_bytes());
            }
            out.extend_from_slice(&sum.to_bits().to_be_bytes());
        }
        ValueStatistics::Float { min, max, first, last, sum } => {
            for v in [min, max, first, last] {
                out.extend_from_slice(&v.to_bits().to_be_bytes());
            }
            out.extend_from_slice(&sum.to_bits().to_be_bytes());
        }
        ValueStatistics::Double { min, max, first, last, sum } => {
            for v in [min, max, first, last, sum] {
                out.extend_from_slice(&v.to_bits().to_be_bytes());
            }
        }
        ValueStatistics::Text { first, last } => {
            put_binary32(out, first.as_deref())?;
            put_binary32(out, last.as_deref())?;
        }
        ValueStatistics::String { first, last, min, max } => {
            for v in [first, last, min, max] {
                put_binary32(out, v.as_deref())?;
            }
        }
    }
    Ok(())
}

/// The fixed part of a chunk header.
#[derive(Debug, Clone, Copy)]
pub struct ChunkHeaderFields<'a> {
    /// The marker: role bits (`0x80` time, `0x40` value, `0` non-aligned) | `0x01` (several
    /// pages) or `0x05` (one page or none).
    pub marker: u8,
    /// Measurement id (empty for an aligned time chunk).
    pub measurement: &'a str,
    /// Bytes of all page headers and payloads.
    pub data_size: usize,
    /// Data type id (`VECTOR` for a time chunk).
    pub data_type: u8,
    /// Compression id.
    pub compression: u8,
    /// Encoding id.
    pub encoding: u8,
}

/// Append a chunk header (plaintext files: no AEAD suffix).
pub fn put_chunk_header(out: &mut Vec<u8>, h: &ChunkHeaderFields<'_>) -> Result<()> {
    out.push(h.marker);
    put_var_str(out, h.measurement)?;
    put_uvarint(out, len_u32(h.data_size, "chunk data size")?);
    out.extend_from_slice(&[h.data_type, h.compression, h.encoding]);
    Ok(())
}

/// Append a page header: sizes, then the statistics when the chunk has several pages.
pub fn put_page_header(out: &mut Vec<u8>, uncompressed: usize, compressed: usize, stats: Option<&Statistics>) -> Result<()> {
    put_uvarint(out, len_u32(uncompressed, "page size")?);
    put_uvarint(out, len_u32(compressed, "page size")?);
    if let Some(s) = stats {
        put_statistics(out, s)?;
    }
    Ok(())
}

/// Append a TimeseriesMetadata record. `role` is `0x80` (aligned time), `0x40` (aligned
/// value) or `0`; the low bits say whether the chunk list carries statistics (more than one
/// chunk). `chunks` are `(chunk header offset, chunk statistics)` in file order; `scratch` is
/// a reusable buffer.
pub fn put_timeseries_metadata(
    out: &mut Vec<u8>,
    role: u8,
    measurement: &str,
    data_type: u8,
    series: &Statistics,
    chunks: &[(u64, Statistics)],
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let many = chunks.len() > 1;
    out.push(role | u8::from(many));
    put_var_str(out, measurement)?;
    out.push(data_type);
    scratch.clear();
    for (offset, stats) in chunks {
        let offset = i64::try_from(*offset).map_err(|_| TsFileError::InvalidArgument(format!("chunk offset {offset}")))?;
        scratch.extend_from_slice(&offset.to_be_bytes());
        if many {
            put_statistics(scratch, stats)?;
        }
    }
    put_uvarint(out, len_u32(scratch.len(), "chunk metadata list")?);
    put_statistics(out, series)?;
    out.extend_from_slice(scratch);
    Ok(())
}

/// The first key of an index entry to write.
#[derive(Debug, Clone, Copy)]
pub enum EntryKey<'a> {
    /// A device key (node types 0 and 1).
    Device(&'a DeviceId),
    /// A measurement key (node types 2 and 3).
    Measurement(&'a str),
}

/// Append a MetadataIndexNode: the entries `(first key, offset)`, the end offset and the type.
pub fn put_index_node(out: &mut Vec<u8>, entries: &[(EntryKey<'_>, u64)], end_offset: u64, node_type: NodeType) -> Result<()> {
    put_uvarint(out, len_u32(entries.len(), "index node entries")?);
    let off = |v: u64| i64::try_from(v).map_err(|_| TsFileError::InvalidArgument(format!("offset {v}")));
    for (key, offset) in entries {
        match key {
            EntryKey::Device(d) => put_device_id(out, d)?,
            EntryKey::Measurement(m) => put_var_str(out, m)?,
        }
        out.extend_from_slice(&off(*offset)?.to_be_bytes());
    }
    out.extend_from_slice(&off(end_offset)?.to_be_bytes());
    out.push(match node_type {
        NodeType::InternalDevice => 0,
        NodeType::LeafDevice => 1,
        NodeType::InternalMeasurement => 2,
        NodeType::LeafMeasurement => 3,
    });
    Ok(())
}

/// Append a TableSchema (without its name): column count, then per column its
/// MeasurementSchema (String32 name, type, encoding, compression, properties) and category.
pub fn put_table_schema(out: &mut Vec<u8>, schema: &TableSchema) -> Result<()> {
    put_uvarint(out, len_u32(schema.columns.len(), "table columns")?);
    for c in &schema.columns {
        put_binary32(out, Some(c.name.as_bytes()))?;
        out.extend_from_slice(&[c.data_type.id(), c.encoding, c.compression]);
        out.extend_from_slice(&len_i32(c.properties.len(), "column properties")?.to_be_bytes());
        for (k, v) in &c.properties {
            put_binary32(out, Some(k.as_bytes()))?;
            put_binary32(out, v.as_deref().map(str::as_bytes))?;
        }
        let category: i32 = match c.category {
            crate::format::ColumnCategory::Tag => 0,
            crate::format::ColumnCategory::Field => 1,
            crate::format::ColumnCategory::Attribute => 2,
            crate::format::ColumnCategory::Time => 3,
        };
        out.extend_from_slice(&category.to_be_bytes());
    }
    Ok(())
}

/// Append the footer properties: VarInt count, then `(VarString key, VarBinary value)` pairs
/// (a `None` value is written as null, length −1).
pub fn put_properties(out: &mut Vec<u8>, props: &[(&str, Option<&[u8]>)]) -> Result<()> {
    put_varint(out, len_i32(props.len(), "properties")?);
    for (k, v) in props {
        put_var_str(out, k)?;
        match v {
            Some(v) => put_var_bytes(out, v)?,
            None => put_varint(out, -1),
        }
    }
    Ok(())
}

/// Builds the series bloom filter as the Java writer sizes it: for `n` series and error rate
/// `p` (0.05 by default), `max(256, floor(-n·ln p / ln²2) + 1)` bits and
/// `min(8, floor(-ln p / ln 2) + 1)` hash functions; stored with trailing zero bytes trimmed.
#[derive(Debug, Clone)]
pub struct BloomFilterBuilder {
    bits: Vec<u8>,
    size_bits: u32,
    hash_functions: u32,
}

impl BloomFilterBuilder {
    /// A filter for `series` keys at error rate `error_rate` (clamped to `0.01..=0.1`, the
    /// Java writer's bounds).
    pub fn new(series: usize, error_rate: f64) -> Self {
        let p = error_rate.clamp(0.01, 0.1);
        let ln2 = std::f64::consts::LN_2;
        // why: float → int casts saturate; both values are small and positive here.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
        let (size, k) = (((-(series as f64) * p.ln() / ln2 / ln2) as u64 + 1).max(256), ((-p.ln() / ln2) as u32 + 1).min(8));
        let size_bits = u32::try_from(size).unwrap_or(u32::MAX);
        BloomFilterBuilder { bits: vec![0; size_bits.div_ceil(8) as usize], size_bits, hash_functions: k }
    }

    /// Add the series `device_path.measurement` (a table device's path joins its segments
    /// with `.`; the aligned time column has an empty measurement).
    pub fn add(&mut self, device_path: &str, measurement: &str) {
        let mut key = Vec::with_capacity(device_path.len() + measurement.len() + 1);
        key.extend_from_slice(device_path.as_bytes());
        key.push(b'.');
        key.extend_from_slice(measurement.as_bytes());
        for i in 0..self.hash_functions {
            let bit = series_bit(&key, i, self.size_bits);
            if let Some(b) = self.bits.get_mut((bit / 8) as usize) {
                *b |= 1 << (bit % 8);
            }
        }
    }

    /// Append the filter: UVarInt byte length, the bits (trailing zero bytes trimmed), then
    /// the bit count and the hash function count.
    pub fn put(&self, out: &mut Vec<u8>) -> Result<()> {
        let used = self.bits.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        let bits = self.bits.get(..used).unwrap_or_default();
        if bits.is_empty() {
            // An empty bitset would read as "no filter": keep one byte.
            put_uvarint(out, 1);
            out.push(0);
        } else {
            put_uvarint(out, len_u32(bits.len(), "bloom filter")?);
            out.extend_from_slice(bits);
        }
        put_uvarint(out, self.size_bits);
        put_uvarint(out, self.hash_functions);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{BloomFilter, Cursor, TsDataType};

    #[test]
    fn test_primitives_match_the_spec_examples() {
        let mut b = Vec::new();
        put_uvarint(&mut b, 300);
        put_varint(&mut b, -1);
        put_var_bytes(&mut b, &[0xff, 0xfe, 0x00, 0x80]).unwrap();
        put_varint(&mut b, -1);
        assert_eq!(b, [0xac, 0x02, 0x01, 0x08, 0xff, 0xfe, 0x00, 0x80, 0x01]);
    }

    #[test]
    fn test_device_id_round_trips_and_drops_trailing_nulls() {
        let d = DeviceId::new(vec![Some("t".into()), None, Some("".into()), None, None]);
        let mut b = Vec::new();
        put_device_id(&mut b, &d).unwrap();
        let back = DeviceId::parse(&mut Cursor::new(&b, 0)).unwrap();
        assert_eq!(back.segments(), &d.segments()[..3]);
    }

    #[test]
    fn test_statistics_round_trip_every_type() {
        let base = |values| Statistics { count: 3, start_time: -5, end_time: 9, values };
        let cases = [
            (TsDataType::Vector, base(ValueStatistics::None)),
            (TsDataType::Boolean, base(ValueStatistics::Boolean { first: true, last: false, true_count: 2 })),
            (TsDataType::Int32, base(ValueStatistics::Int32 { min: i32::MIN, max: 7, first: 1, last: 2, sum: -9 })),
            (TsDataType::Int64, base(ValueStatistics::Int64 { min: i64::MIN, max: 7, first: 1, last: 2, sum: 1e300 })),
            (TsDataType::Float, base(ValueStatistics::Float { min: -0.0, max: f32::NAN, first: 1.5, last: 2.0, sum: 3.5 })),
            (
                TsDataType::Double,
                base(ValueStatistics::Double { min: -1.0, max: f64::INFINITY, first: 0.0, last: 2.0, sum: f64::NAN }),
            ),
            (
                TsDataType::Text,
                base(ValueStatistics::Text { first: Some(b"a".to_vec().into()), last: Some(Box::from(&b""[..])) }),
            ),
            (
                TsDataType::String,
                base(ValueStatistics::String {
                    first: Some(b"b".to_vec().into()),
                    last: Some(b"a\0".to_vec().into()),
                    min: Some(b"a".to_vec().into()),
                    max: Some("\u{e9}".as_bytes().to_vec().into()),
                }),
            ),
        ];
        for (ty, s) in cases {
            let mut b = Vec::new();
            put_statistics(&mut b, &s).unwrap();
            let back = Statistics::parse(&mut Cursor::new(&b, 0), ty).unwrap();
            let mut again = Vec::new();
            put_statistics(&mut again, &back).unwrap();
            assert_eq!(b, again, "{ty}");
            assert_eq!(back.count, 3);
        }
    }

    #[test]
    fn test_bloom_filter_sizes_like_java_and_answers_membership() {
        // Java: 0.05 → 5 hash functions; 10 series → 256 bits (the minimum).
        let mut f = BloomFilterBuilder::new(10, 0.05);
        assert_eq!((f.size_bits, f.hash_functions), (256, 5));
        assert_eq!(BloomFilterBuilder::new(1000, 0.05).size_bits, 6236);
        f.add("t.a.b", "");
        f.add("t.a.b", "s1");
        let mut b = Vec::new();
        f.put(&mut b).unwrap();
        let parsed = BloomFilter::parse(&mut Cursor::new(&b, 0)).unwrap().unwrap();
        assert!(parsed.may_contain("t.a.b", "s1"));
        assert!(parsed.may_contain("t.a.b", ""));
        let misses = (0..200).filter(|i| !parsed.may_contain("t.a.b", &format!("x{i}"))).count();
        assert!(misses > 150, "{misses} of 200 absent keys rejected");
        // An empty filter still reads as a filter (of one zero byte).
        let mut b = Vec::new();
        BloomFilterBuilder::new(0, 0.05).put(&mut b).unwrap();
        assert!(BloomFilter::parse(&mut Cursor::new(&b, 0)).unwrap().is_some());
    }
}
