//! The enumerations of TsFile v4: data types, encodings, compressions, column categories,
//! chunk markers and index node types.
//!
//! Each is stored as one byte (column category: an `int32`) and converted with `TryFrom`, so
//! an unknown id is an error naming the id, never a silent default.

use std::fmt;

use crate::error::TsFileError;

macro_rules! byte_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($(#[$vmeta:meta])* $variant:ident = $id:literal => $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $id),*
        }

        impl $name {
            /// Every variant, in id order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The on-disk id.
            pub fn id(self) -> u8 {
                self as u8
            }

            /// The name used by the Apache TsFile implementations.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),*
                }
            }

            /// Parse a name (as printed by [`Self::name`]), case-insensitively.
            pub fn from_name(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.name().eq_ignore_ascii_case(s))
            }
        }

        impl TryFrom<u8> for $name {
            type Error = TsFileError;
            fn try_from(b: u8) -> Result<Self, TsFileError> {
                match b {
                    $($id => Ok($name::$variant),)*
                    other => Err(TsFileError::corrupt($what, None, format!("unknown id {other}"))),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

byte_enum!(
    /// The `data_type` byte of chunk headers, TimeseriesMetadata and table schemas.
    TsDataType, "data type", {
        /// 1-byte boolean.
        Boolean = 0 => "BOOLEAN",
        /// 32-bit integer.
        Int32 = 1 => "INT32",
        /// 64-bit integer.
        Int64 = 2 => "INT64",
        /// 32-bit IEEE float.
        Float = 3 => "FLOAT",
        /// 64-bit IEEE float.
        Double = 4 => "DOUBLE",
        /// Byte string without min/max statistics.
        Text = 5 => "TEXT",
        /// Type marker of an aligned time chunk; never a value type.
        Vector = 6 => "VECTOR",
        /// Sentinel; never decodable.
        Unknown = 7 => "UNKNOWN",
        /// 64-bit timestamp; the unit is not stored in the file.
        Timestamp = 8 => "TIMESTAMP",
        /// Date stored as the decimal integer `YYYYMMDD`.
        Date = 9 => "DATE",
        /// Opaque bytes.
        Blob = 10 => "BLOB",
        /// UTF-8 string with min/max statistics.
        String = 11 => "STRING",
        /// Opaque object bytes.
        Object = 12 => "OBJECT",
    }
);

impl TsDataType {
    /// The physical representation of values of this type.
    pub fn physical(self) -> Option<PhysicalType> {
        Some(match self {
            TsDataType::Boolean => PhysicalType::Boolean,
            TsDataType::Int32 | TsDataType::Date => PhysicalType::Int32,
            TsDataType::Int64 | TsDataType::Timestamp => PhysicalType::Int64,
            TsDataType::Float => PhysicalType::Float,
            TsDataType::Double => PhysicalType::Double,
            TsDataType::Text | TsDataType::String | TsDataType::Blob | TsDataType::Object => PhysicalType::Binary,
            TsDataType::Vector | TsDataType::Unknown => return None,
        })
    }
}

/// How the values of a data type are laid out in memory and in encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PhysicalType {
    /// `bool`.
    Boolean,
    /// `i32` (INT32, DATE).
    Int32,
    /// `i64` (INT64, TIMESTAMP, time).
    Int64,
    /// `f32`.
    Float,
    /// `f64`.
    Double,
    /// Byte strings (TEXT, STRING, BLOB, OBJECT).
    Binary,
}

byte_enum!(
    /// The `encoding_type` byte of a chunk header or column schema.
    Encoding, "encoding", {
        /// Values back to back.
        Plain = 0 => "PLAIN",
        /// Per-page dictionary + RLE indices (TEXT, STRING).
        Dictionary = 1 => "DICTIONARY",
        /// RLE / bit-packing hybrid.
        Rle = 2 => "RLE",
        /// Reserved: no codec exists in any implementation.
        Diff = 3 => "DIFF",
        /// Block delta-of-delta with bit packing.
        Ts2Diff = 4 => "TS_2DIFF",
        /// Legacy bitmap encoding.
        Bitmap = 5 => "BITMAP",
        /// Legacy Gorilla (Java only).
        GorillaV1 = 6 => "GORILLA_V1",
        /// Legacy arithmetic-progression encoding.
        Regular = 7 => "REGULAR",
        /// Gorilla XOR encoding (v2).
        Gorilla = 8 => "GORILLA",
        /// Zig-zag LEB128 groups.
        Zigzag = 9 => "ZIGZAG",
        /// Deprecated, no codec.
        Freq = 10 => "FREQ",
        /// Chimp128 XOR encoding.
        Chimp = 11 => "CHIMP",
        /// SPRINTZ with the FIRE predictor.
        Sprintz = 12 => "SPRINTZ",
        /// Run-length on bit length + Fibonacci codes.
        Rlbe = 13 => "RLBE",
        /// CAMEL decimal/XOR encoding (DOUBLE).
        Camel = 14 => "CAMEL",
    }
);

byte_enum!(
    /// The `compression_type` byte of a chunk header or column schema.
    Compression, "compression", {
        /// Stored as is.
        Uncompressed = 0 => "UNCOMPRESSED",
        /// Raw snappy block.
        Snappy = 1 => "SNAPPY",
        /// One gzip member.
        Gzip = 2 => "GZIP",
        /// LZO1X block.
        Lzo = 3 => "LZO",
        /// Raw LZ4 block.
        Lz4 = 7 => "LZ4",
        /// One zstd frame.
        Zstd = 8 => "ZSTD",
        /// LZMA2 in an XZ container.
        Lzma2 = 9 => "LZMA2",
    }
);

/// The role of a column in a table schema (`int32` on disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnCategory {
    /// Identifies the device (one DeviceID segment per TAG column).
    Tag,
    /// A measured value with its own chunks.
    Field,
    /// Describes the entity; values are not stored in TsFiles.
    Attribute,
    /// The time column (schema only; it has no chunk of its own).
    Time,
}

impl ColumnCategory {
    /// The category's name: `TAG`, `FIELD`, `ATTRIBUTE` or `TIME`.
    pub fn name(self) -> &'static str {
        match self {
            ColumnCategory::Tag => "TAG",
            ColumnCategory::Field => "FIELD",
            ColumnCategory::Attribute => "ATTRIBUTE",
            ColumnCategory::Time => "TIME",
        }
    }
}

impl TryFrom<i32> for ColumnCategory {
    type Error = TsFileError;
    fn try_from(v: i32) -> Result<Self, TsFileError> {
        Ok(match v {
            0 => ColumnCategory::Tag,
            1 => ColumnCategory::Field,
            2 => ColumnCategory::Attribute,
            3 => ColumnCategory::Time,
            other => return Err(TsFileError::corrupt("column category", None, format!("unknown id {other}"))),
        })
    }
}

impl fmt::Display for ColumnCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Top-level markers of the data section.
pub mod marker {
    /// Chunk group header: a DeviceID follows.
    pub const CHUNK_GROUP_HEADER: u8 = 0x00;
    /// Multi-page non-aligned chunk.
    pub const CHUNK_HEADER: u8 = 0x01;
    /// End of the data section.
    pub const SEPARATOR: u8 = 0x02;
    /// Unused since v3.
    pub const VERSION: u8 = 0x03;
    /// Operation index range: two `int64` follow.
    pub const OPERATION_INDEX_RANGE: u8 = 0x04;
    /// Single-page non-aligned chunk.
    pub const ONLY_ONE_PAGE_CHUNK_HEADER: u8 = 0x05;
    /// File encryption header (offset 7 only).
    pub const ENCRYPTION_HEADER: u8 = 0x06;
    /// Multi-page aligned value chunk.
    pub const VALUE_CHUNK_HEADER: u8 = 0x41;
    /// Single-page aligned value chunk.
    pub const ONLY_ONE_PAGE_VALUE_CHUNK_HEADER: u8 = 0x45;
    /// Multi-page aligned time chunk.
    pub const TIME_CHUNK_HEADER: u8 = 0x81;
    /// Single-page aligned time chunk.
    pub const ONLY_ONE_PAGE_TIME_CHUNK_HEADER: u8 = 0x85;

    /// True for the six chunk header markers.
    pub fn is_chunk(m: u8) -> bool {
        matches!(
            m,
            CHUNK_HEADER
                | ONLY_ONE_PAGE_CHUNK_HEADER
                | VALUE_CHUNK_HEADER
                | ONLY_ONE_PAGE_VALUE_CHUNK_HEADER
                | TIME_CHUNK_HEADER
                | ONLY_ONE_PAGE_TIME_CHUNK_HEADER
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_data_type_round_trip_and_unknown() {
        for t in TsDataType::ALL {
            assert_eq!(TsDataType::try_from(t.id()).unwrap(), *t);
        }
        assert!(TsDataType::try_from(13).is_err());
        assert_eq!(TsDataType::Date.physical(), Some(PhysicalType::Int32));
        assert_eq!(TsDataType::Vector.physical(), None);
    }

    #[test]
    fn test_compression_gaps_are_errors() {
        for id in [4u8, 5, 6, 10, 255] {
            let e = Compression::try_from(id).unwrap_err();
            assert!(e.to_string().contains(&format!("unknown id {id}")), "{e}");
        }
        assert_eq!(Compression::try_from(7).unwrap(), Compression::Lz4);
    }

    #[test]
    fn test_encoding_names() {
        assert_eq!(Encoding::Ts2Diff.name(), "TS_2DIFF");
        assert_eq!(Encoding::from_name("gorilla"), Some(Encoding::Gorilla));
        assert!(Encoding::try_from(15).is_err());
    }

    #[test]
    fn test_column_category() {
        assert_eq!(ColumnCategory::try_from(3).unwrap(), ColumnCategory::Time);
        assert!(ColumnCategory::try_from(4).is_err());
        assert!(ColumnCategory::try_from(-1).is_err());
    }
}
