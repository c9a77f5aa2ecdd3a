//! Writer options: page size limits and the encoding and compression of each column.
//!
//! Defaults follow the Java writer (apache/tsfile `TSFileConfig`), except BOOLEAN:
//!
//! | column | encoding | compression |
//! | --- | --- | --- |
//! | time | TS_2DIFF | LZ4 |
//! | INT32, INT64, DATE, TIMESTAMP | TS_2DIFF | LZ4 |
//! | FLOAT, DOUBLE | GORILLA | LZ4 |
//! | TEXT, STRING, BLOB | PLAIN | LZ4 |
//! | BOOLEAN | PLAIN (Java: RLE, which the official C++ reader 2.5.0 misreads) | LZ4 |
//!
//! Pages hold at most [`WriteOptions::page_max_points`] rows (10,000) and close earlier when a
//! PLAIN-encoded column of the page reaches [`WriteOptions::page_max_bytes`] (64 KiB) of
//! encoded values. TS_2DIFF and GORILLA columns are not measured: 10,000 of their values take
//! at most about 80 KiB, usually a few KiB.
//!
//! Encodings a writer may choose here: PLAIN (every type), TS_2DIFF (INT32, INT64, DATE,
//! TIMESTAMP) and GORILLA (INT32, INT64, FLOAT, DOUBLE, DATE, TIMESTAMP). Compressions:
//! UNCOMPRESSED, SNAPPY, GZIP, LZ4, ZSTD, LZMA2.

use crate::compression::can_compress;
use crate::error::{Result, TsFileError};
use crate::format::{Compression, Encoding, TsDataType};

/// Encoding and compression of one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnOptions {
    /// The value encoding.
    pub encoding: Encoding,
    /// The page compression.
    pub compression: Compression,
}

impl ColumnOptions {
    /// The Java writer's default for a value type (BOOLEAN: PLAIN).
    pub fn default_for(data_type: TsDataType) -> ColumnOptions {
        let encoding = match data_type {
            TsDataType::Int32 | TsDataType::Int64 | TsDataType::Date | TsDataType::Timestamp => Encoding::Ts2Diff,
            TsDataType::Float | TsDataType::Double => Encoding::Gorilla,
            _ => Encoding::Plain,
        };
        ColumnOptions { encoding, compression: Compression::Lz4 }
    }

    /// Check that the writer can write `data_type` values with these options.
    pub fn check(&self, data_type: TsDataType) -> Result<()> {
        let ok = match self.encoding {
            Encoding::Plain => true,
            Encoding::Ts2Diff => {
                matches!(data_type, TsDataType::Int32 | TsDataType::Int64 | TsDataType::Date | TsDataType::Timestamp)
            }
            Encoding::Gorilla => matches!(
                data_type,
                TsDataType::Int32 | TsDataType::Int64 | TsDataType::Date | TsDataType::Timestamp | TsDataType::Float | TsDataType::Double
            ),
            _ => false,
        };
        if !ok {
            return Err(TsFileError::unsupported(format!(
                "writing {data_type} values with encoding {} (the writer offers PLAIN for every type, TS_2DIFF for \
                 INT32/INT64/DATE/TIMESTAMP, GORILLA for those and FLOAT/DOUBLE)",
                self.encoding
            )));
        }
        if !can_compress(self.compression) {
            return Err(TsFileError::unsupported(format!("writing {} pages", self.compression)));
        }
        Ok(())
    }
}

/// Options of a [`FileWriter`](crate::write::FileWriter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WriteOptions {
    /// Most rows in one page (10,000, as the Java writer).
    pub page_max_points: usize,
    /// A page closes once a PLAIN column's encoded values reach this many bytes (64 KiB).
    pub page_max_bytes: usize,
    /// Encoding and compression of the time column (TS_2DIFF, LZ4).
    pub time: ColumnOptions,
    /// The bloom filter's error rate (0.05, clamped to 0.01..=0.1 as in Java).
    pub bloom_filter_error_rate: f64,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            page_max_points: 10_000,
            page_max_bytes: 64 * 1024,
            time: ColumnOptions { encoding: Encoding::Ts2Diff, compression: Compression::Lz4 },
            bloom_filter_error_rate: 0.05,
        }
    }
}

impl WriteOptions {
    /// Check the options: page limits positive, the time encoding one for INT64.
    pub fn check(&self) -> Result<()> {
        if self.page_max_points == 0 || self.page_max_bytes == 0 {
            return Err(TsFileError::InvalidArgument("page_max_points and page_max_bytes must be positive".into()));
        }
        self.time.check(TsDataType::Int64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_defaults_are_the_java_writers_and_valid() {
        assert_eq!(ColumnOptions::default_for(TsDataType::Int64).encoding, Encoding::Ts2Diff);
        assert_eq!(ColumnOptions::default_for(TsDataType::Double).encoding, Encoding::Gorilla);
        assert_eq!(ColumnOptions::default_for(TsDataType::String).encoding, Encoding::Plain);
        for ty in TsDataType::ALL.iter().copied().filter(|t| t.physical().is_some()) {
            ColumnOptions::default_for(ty).check(ty).unwrap();
        }
        WriteOptions::default().check().unwrap();
        let bad = ColumnOptions { encoding: Encoding::Ts2Diff, compression: Compression::Lz4 };
        assert!(bad.check(TsDataType::Double).is_err());
        let lzo = ColumnOptions { encoding: Encoding::Plain, compression: Compression::Lzo };
        assert!(lzo.check(TsDataType::Int32).is_err());
        assert!(WriteOptions { page_max_points: 0, ..WriteOptions::default() }.check().is_err());
    }
}
