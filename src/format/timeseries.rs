//! TimeseriesMetadata and ChunkMetadata: one record per series, listing its chunks.
//!
//! ```text
//! TimeseriesMetadata := byte timeseries_type, VarString measurement_id, byte data_type,
//!                       UVarInt chunk_metadata_list_size, Statistics series_statistics,
//!                       byte chunk_metadata_list[chunk_metadata_list_size]
//! ChunkMetadata      := int64 offset_of_chunk_header [Statistics chunk_statistics]
//! ```
//!
//! `timeseries_type`: bit 7 = aligned time column, bit 6 = aligned value column (the C++
//! writer does not set these); low 6 bits 0 = exactly one chunk whose ChunkMetadata omits
//! statistics (the series statistics apply), non-zero = several chunks, each with its own
//! statistics. `chunk_metadata_list_size` is a byte length, not a count.

use crate::error::{Result, TsFileError};
use crate::format::{Cursor, Statistics, TsDataType};

/// Sees a series record's measurement name and series statistics.
pub type StatisticsVisitor<'a> = dyn FnMut(&str, &Statistics) + 'a;

/// Metadata of one chunk of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkMetadata {
    /// Absolute offset of the chunk's marker byte.
    pub offset: u64,
    /// Statistics of the chunk (the series statistics for a one-chunk series).
    pub statistics: Statistics,
}

/// Metadata of one series of a device.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeseriesMetadata {
    /// The raw `timeseries_type` byte.
    pub timeseries_type: u8,
    /// Measurement name (empty for an aligned time column).
    pub measurement: String,
    /// Value type (`VECTOR` for an aligned time column).
    pub data_type: TsDataType,
    /// Statistics of the whole series.
    pub statistics: Statistics,
    /// The chunks, in file order.
    pub chunks: Vec<ChunkMetadata>,
}

impl TimeseriesMetadata {
    /// Parse one record; chunk offsets must lie within `file_len`.
    pub fn parse(c: &mut Cursor<'_>, file_len: u64) -> Result<TimeseriesMetadata> {
        let start = c.offset();
        let parsed = Self::parse_if(c, file_len, &|_| true, None, None)?;
        parsed.ok_or_else(|| TsFileError::corrupt("timeseries metadata", Some(start), "record skipped"))
    }

    /// Parse one record when `keep` accepts its measurement name; otherwise step over it
    /// (statistics are read for their length, nothing is allocated) and return `None`.
    /// The offsets of its chunks, kept or not, are appended to `chunk_offsets` when given,
    /// and `visit` sees every record's name and series statistics (kept or not).
    pub fn parse_if(
        c: &mut Cursor<'_>,
        file_len: u64,
        keep: &dyn Fn(&str) -> bool,
        chunk_offsets: Option<&mut Vec<u64>>,
        visit: Option<&mut StatisticsVisitor<'_>>,
    ) -> Result<Option<TimeseriesMetadata>> {
        let start = c.offset();
        let timeseries_type = c.u8("timeseries type")?;
        let name_at = c.offset();
        let name = c
            .var_str("timeseries measurement")?
            .ok_or_else(|| TsFileError::corrupt("timeseries measurement", Some(name_at), "unexpected null string"))?;
        let wanted = keep(name);
        let type_at = c.offset();
        let data_type = TsDataType::try_from(c.u8("timeseries data type")?)
            .map_err(|e| e.context(format!("timeseries metadata at offset {type_at}")))?;
        let list_size = c.uvarint("chunk metadata list size")? as usize;
        let statistics = Statistics::parse(c, data_type)?;
        let list_start = c.offset();
        let list = c.bytes(list_size, "chunk metadata list")?;
        let mut lc = Cursor::new(list, list_start);
        let multi = timeseries_type & 0x3f != 0;
        // One chunk unless `multi` (a first push would reserve room for four).
        let mut chunks = Vec::with_capacity(usize::from(wanted));
        let mut offsets = chunk_offsets;
        let mut count = 0usize;
        while !lc.is_empty() {
            let at = lc.offset();
            let raw = lc.i64("chunk offset")?;
            let offset = u64::try_from(raw).ok().filter(|&o| o < file_len).ok_or_else(|| {
                TsFileError::corrupt("chunk metadata", Some(at), format!("chunk offset {raw} outside the file"))
            })?;
            let stats = if multi { Some(Statistics::parse(&mut lc, data_type)?) } else { None };
            count += 1;
            if let Some(o) = offsets.as_deref_mut() {
                o.push(offset);
            }
            if wanted {
                chunks.push(ChunkMetadata { offset, statistics: stats.unwrap_or_else(|| statistics.clone()) });
            }
            if !multi && !lc.is_empty() {
                return Err(TsFileError::corrupt(
                    "timeseries metadata",
                    Some(start),
                    format!("one-chunk series '{name}' lists more than one chunk"),
                ));
            }
        }
        if count == 0 {
            return Err(TsFileError::corrupt("timeseries metadata", Some(start), format!("series '{name}' has no chunk")));
        }
        if let Some(v) = visit {
            v(name, &statistics);
        }
        if !wanted {
            return Ok(None);
        }
        Ok(Some(TimeseriesMetadata { timeseries_type, measurement: name.to_string(), data_type, statistics, chunks }))
    }

    /// True for the time column of an aligned device (empty name, type VECTOR).
    pub fn is_aligned_time(&self) -> bool {
        self.timeseries_type & 0x80 != 0 || (self.data_type == TsDataType::Vector && self.measurement.is_empty())
    }

    /// True when the record says it has several chunks (each with statistics).
    pub fn has_multiple_chunks(&self) -> bool {
        self.timeseries_type & 0x3f != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats_bytes(count: u8, t0: i64, t1: i64) -> Vec<u8> {
        let mut v = vec![count];
        v.extend_from_slice(&t0.to_be_bytes());
        v.extend_from_slice(&t1.to_be_bytes());
        v
    }

    #[test]
    fn test_parse_single_chunk_series() {
        let mut b = vec![0x00, 0x04, b's', b'1', 10]; // BLOB: time-only stats
        let list = 42i64.to_be_bytes();
        b.push(list.len() as u8);
        b.extend(stats_bytes(5, 1, 9));
        b.extend_from_slice(&list);
        let mut c = Cursor::new(&b, 0);
        let t = TimeseriesMetadata::parse(&mut c, 1000).unwrap();
        assert!(c.is_empty());
        assert_eq!(t.measurement, "s1");
        assert_eq!(t.chunks.len(), 1);
        assert_eq!(t.chunks[0].offset, 42);
        assert_eq!(t.chunks[0].statistics.count, 5);
    }

    #[test]
    fn test_parse_multi_chunk_series() {
        let mut list = Vec::new();
        for (off, cnt) in [(10i64, 2u8), (50, 3)] {
            list.extend_from_slice(&off.to_be_bytes());
            list.extend(stats_bytes(cnt, 0, 1));
        }
        let mut b = vec![0x01, 0x00, 6];
        b.push(list.len() as u8);
        b.extend(stats_bytes(5, 0, 1));
        b.extend(&list);
        let t = TimeseriesMetadata::parse(&mut Cursor::new(&b, 0), 1000).unwrap();
        assert!(t.is_aligned_time());
        assert_eq!(t.chunks.iter().map(|c| c.offset).collect::<Vec<_>>(), vec![10, 50]);
        assert_eq!(t.chunks[1].statistics.count, 3);
    }

    #[test]
    fn test_parse_if_steps_over_unwanted_records_and_collects_chunk_offsets() {
        // A multi-chunk series "ab" then a one-chunk series "c".
        let mut list = Vec::new();
        for (off, cnt) in [(10i64, 2u8), (50, 3)] {
            list.extend_from_slice(&off.to_be_bytes());
            list.extend(stats_bytes(cnt, 0, 1));
        }
        let mut b = vec![0x01, 0x04, b'a', b'b', 10];
        b.push(list.len() as u8);
        b.extend(stats_bytes(5, 0, 1));
        b.extend(&list);
        b.extend([0x00, 0x02, b'c', 10, 8]);
        b.extend(stats_bytes(1, 0, 0));
        b.extend_from_slice(&70i64.to_be_bytes());
        let mut offsets = Vec::new();
        let mut c = Cursor::new(&b, 0);
        let skipped = TimeseriesMetadata::parse_if(&mut c, 1000, &|n| n == "c", Some(&mut offsets), None).unwrap();
        assert!(skipped.is_none());
        let kept = TimeseriesMetadata::parse_if(&mut c, 1000, &|n| n == "c", Some(&mut offsets), None).unwrap().unwrap();
        assert!(c.is_empty(), "a skipped record is stepped over whole");
        assert_eq!((kept.measurement.as_str(), kept.chunks.len(), kept.chunks[0].offset), ("c", 1, 70));
        assert_eq!(offsets, vec![10, 50, 70]);
        // A skipped record is still checked: an offset outside the file is an error.
        let mut c = Cursor::new(&b, 0);
        assert!(TimeseriesMetadata::parse_if(&mut c, 40, &|_| false, None, None).is_err());
    }

    #[test]
    fn test_parse_rejects_bad_chunk_offsets_and_sizes() {
        let mut b = vec![0x00, 0x02, b's', 10, 8];
        b.extend(stats_bytes(1, 0, 0));
        b.extend_from_slice(&5000i64.to_be_bytes());
        assert!(TimeseriesMetadata::parse(&mut Cursor::new(&b, 0), 1000).is_err());
        // list size 9: one offset + a stray byte in a one-chunk series
        let mut b = vec![0x00, 0x02, b's', 10, 9];
        b.extend(stats_bytes(1, 0, 0));
        b.extend_from_slice(&5i64.to_be_bytes());
        b.push(0);
        assert!(TimeseriesMetadata::parse(&mut Cursor::new(&b, 0), 1000).is_err());
        // list size past the end
        let mut b = vec![0x00, 0x02, b's', 10, 100];
        b.extend(stats_bytes(1, 0, 0));
        assert!(TimeseriesMetadata::parse(&mut Cursor::new(&b, 0), 1000).is_err());
    }
}
