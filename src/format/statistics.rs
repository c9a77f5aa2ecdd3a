//! Statistics: the summary stored for every page (of multi-page chunks), chunk and series.
//!
//! ```text
//! Statistics := UVarInt count, int64 start_time, int64 end_time, type-specific fields
//!
//! BOOLEAN            bool first, bool last, int64 true_count
//! INT32, DATE        int32 min, max, first, last, int64 sum
//! INT64, TIMESTAMP   int64 min, max, first, last, float64 sum
//! FLOAT              float32 min, max, first, last, float64 sum
//! DOUBLE             float64 min, max, first, last, sum
//! TEXT               Binary32 first, last
//! STRING             Binary32 first, last, min, max
//! BLOB, OBJECT, VECTOR (time)   nothing more
//! ```
//!
//! Statistics carry no type byte: the type comes from the chunk header or the
//! TimeseriesMetadata. `count` is the number of values (non-null values for an aligned value
//! column, timestamps for an aligned time column); `start_time`/`end_time` are inclusive.

use crate::error::{Result, TsFileError};
use crate::format::{Cursor, TsDataType};

/// Statistics of one page, chunk or series.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// Number of values covered.
    pub count: u64,
    /// Smallest timestamp covered (inclusive).
    pub start_time: i64,
    /// Largest timestamp covered (inclusive).
    pub end_time: i64,
    /// The type-specific part.
    pub values: ValueStatistics,
}

/// The type-specific part of [`Statistics`].
#[derive(Debug, Clone, PartialEq)]
pub enum ValueStatistics {
    /// No value fields (time column, BLOB, OBJECT).
    None,
    /// BOOLEAN.
    Boolean {
        /// Value at the first timestamp.
        first: bool,
        /// Value at the last timestamp.
        last: bool,
        /// Number of `true` values.
        true_count: i64,
    },
    /// INT32 and DATE (`YYYYMMDD` integers).
    Int32 {
        /// Minimum.
        min: i32,
        /// Maximum.
        max: i32,
        /// Value at the first timestamp.
        first: i32,
        /// Value at the last timestamp.
        last: i32,
        /// Sum (exact: stored as int64).
        sum: i64,
    },
    /// INT64 and TIMESTAMP.
    Int64 {
        /// Minimum.
        min: i64,
        /// Maximum.
        max: i64,
        /// Value at the first timestamp.
        first: i64,
        /// Value at the last timestamp.
        last: i64,
        /// Sum, stored as float64 (may be inexact).
        sum: f64,
    },
    /// FLOAT.
    Float {
        /// Minimum.
        min: f32,
        /// Maximum.
        max: f32,
        /// Value at the first timestamp.
        first: f32,
        /// Value at the last timestamp.
        last: f32,
        /// Sum (float64).
        sum: f64,
    },
    /// DOUBLE.
    Double {
        /// Minimum.
        min: f64,
        /// Maximum.
        max: f64,
        /// Value at the first timestamp.
        first: f64,
        /// Value at the last timestamp.
        last: f64,
        /// Sum.
        sum: f64,
    },
    /// TEXT: no min/max.
    Text {
        /// Value at the first timestamp (`None` = null).
        first: Option<Box<[u8]>>,
        /// Value at the last timestamp.
        last: Option<Box<[u8]>>,
    },
    /// STRING: min/max in byte-wise lexicographic order.
    String {
        /// Value at the first timestamp.
        first: Option<Box<[u8]>>,
        /// Value at the last timestamp.
        last: Option<Box<[u8]>>,
        /// Minimum.
        min: Option<Box<[u8]>>,
        /// Maximum.
        max: Option<Box<[u8]>>,
    },
}

impl Statistics {
    /// Parse statistics of a series of type `data_type` (`VECTOR` for an aligned time column).
    pub fn parse(c: &mut Cursor<'_>, data_type: TsDataType) -> Result<Statistics> {
        let start = c.offset();
        let count = u64::from(c.uvarint("statistics count")?);
        let start_time = c.i64("statistics start_time")?;
        let end_time = c.i64("statistics end_time")?;
        let values = match data_type {
            TsDataType::Vector | TsDataType::Blob | TsDataType::Object => ValueStatistics::None,
            TsDataType::Boolean => ValueStatistics::Boolean {
                first: c.bool("statistics first")?,
                last: c.bool("statistics last")?,
                true_count: c.i64("statistics true_count")?,
            },
            TsDataType::Int32 | TsDataType::Date => ValueStatistics::Int32 {
                min: c.i32("statistics min")?,
                max: c.i32("statistics max")?,
                first: c.i32("statistics first")?,
                last: c.i32("statistics last")?,
                sum: c.i64("statistics sum")?,
            },
            TsDataType::Int64 | TsDataType::Timestamp => ValueStatistics::Int64 {
                min: c.i64("statistics min")?,
                max: c.i64("statistics max")?,
                first: c.i64("statistics first")?,
                last: c.i64("statistics last")?,
                sum: c.f64("statistics sum")?,
            },
            TsDataType::Float => ValueStatistics::Float {
                min: c.f32("statistics min")?,
                max: c.f32("statistics max")?,
                first: c.f32("statistics first")?,
                last: c.f32("statistics last")?,
                sum: c.f64("statistics sum")?,
            },
            TsDataType::Double => ValueStatistics::Double {
                min: c.f64("statistics min")?,
                max: c.f64("statistics max")?,
                first: c.f64("statistics first")?,
                last: c.f64("statistics last")?,
                sum: c.f64("statistics sum")?,
            },
            TsDataType::Text => ValueStatistics::Text {
                first: c.binary32("statistics first")?.map(Box::from),
                last: c.binary32("statistics last")?.map(Box::from),
            },
            TsDataType::String => ValueStatistics::String {
                first: c.binary32("statistics first")?.map(Box::from),
                last: c.binary32("statistics last")?.map(Box::from),
                min: c.binary32("statistics min")?.map(Box::from),
                max: c.binary32("statistics max")?.map(Box::from),
            },
            TsDataType::Unknown => {
                return Err(TsFileError::corrupt("statistics", Some(start), "data type UNKNOWN has no statistics layout"))
            }
        };
        if count > 0 && start_time > end_time {
            return Err(TsFileError::corrupt(
                "statistics",
                Some(start),
                format!("start_time {start_time} > end_time {end_time}"),
            ));
        }
        Ok(Statistics { count, start_time, end_time, values })
    }

    /// True when `[start_time, end_time]` intersects `[lo, hi]` (both inclusive), or when the
    /// unit has rows but its time statistics contradict themselves (`start_time > end_time`):
    /// such a unit is never skipped (`crate::stats::facts::time_consistent`).
    pub fn overlaps_time(&self, lo: i64, hi: i64) -> bool {
        if self.count > 0 && self.start_time > self.end_time {
            return true;
        }
        self.start_time <= hi && self.end_time >= lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(count: u8, start: i64, end: i64) -> Vec<u8> {
        let mut v = vec![count];
        v.extend_from_slice(&start.to_be_bytes());
        v.extend_from_slice(&end.to_be_bytes());
        v
    }

    #[test]
    fn test_parse_time_only() {
        let b = header(3, -5, 10);
        let s = Statistics::parse(&mut Cursor::new(&b, 0), TsDataType::Vector).unwrap();
        assert_eq!((s.count, s.start_time, s.end_time), (3, -5, 10));
        assert_eq!(s.values, ValueStatistics::None);
    }

    #[test]
    fn test_parse_int32() {
        let mut b = header(2, 1, 2);
        for v in [-7i32, 9, 9, -7] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(&2i64.to_be_bytes());
        let mut c = Cursor::new(&b, 0);
        let s = Statistics::parse(&mut c, TsDataType::Date).unwrap();
        assert!(c.is_empty());
        assert_eq!(s.values, ValueStatistics::Int32 { min: -7, max: 9, first: 9, last: -7, sum: 2 });
    }

    #[test]
    fn test_parse_string_with_null() {
        let mut b = header(1, 0, 0);
        for s in [&b"a"[..], b"b"] {
            b.extend_from_slice(&(s.len() as i32).to_be_bytes());
            b.extend_from_slice(s);
        }
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b.extend_from_slice(&0i32.to_be_bytes());
        let s = Statistics::parse(&mut Cursor::new(&b, 0), TsDataType::String).unwrap();
        assert_eq!(
            s.values,
            ValueStatistics::String {
                first: Some(Box::from(&b"a"[..])),
                last: Some(Box::from(&b"b"[..])),
                min: None,
                max: Some(Box::from(&[][..]))
            }
        );
    }

    #[test]
    fn test_parse_truncated_and_bad_range() {
        let mut b = header(1, 0, 0);
        b.extend_from_slice(&[0, 1]);
        assert!(Statistics::parse(&mut Cursor::new(&b, 0), TsDataType::Double).is_err());
        let b = header(1, 10, 0);
        assert!(Statistics::parse(&mut Cursor::new(&b, 0), TsDataType::Blob).is_err());
        assert!(Statistics::parse(&mut Cursor::new(&header(0, 0, 0), 0), TsDataType::Unknown).is_err());
    }
}
