//! The on-disk model of TsFile v4: bytes in, plain structs out.
//!
//! This layer is synchronous and knows nothing of Arrow, async I/O or DataFusion. It parses
//! the file tail and `TsFileMetadata`, walks the metadata index tree on demand, reads
//! TimeseriesMetadata, ChunkMetadata and Statistics, and parses the data section (chunk group
//! headers, chunk headers, page headers), including a forward recovery scan.
//!
//! Version-3 files (IoTDB 1.x) differ only in the footer, the device index keys and the
//! chunk group header; [`v3`] parses those and presents the file as a v4 tree-model file
//! (`docs/format-v3.md`).
//!
//! ```text
//! "TsFile" 0x04 [FileEncryptionHeader] | chunk groups ... 0x04 range | 0x02 | index area |
//! TsFileMetadata | int32 L | "TsFile"
//! ```
#![cfg_attr(not(test), warn(clippy::cast_possible_truncation, clippy::indexing_slicing))]

pub mod bloom;
pub mod chunk;
pub mod cursor;
pub mod device;
pub mod index;
pub mod metadata;
pub mod open;
pub mod provenance;
pub mod reader;
pub mod scan;
pub mod serialize;
pub mod source;
pub mod statistics;
pub mod timeseries;
pub mod types;
pub mod v3;

pub use bloom::BloomFilter;
pub use chunk::{ChunkHeader, ChunkRole, FileEncryptionHeader, PageHeader};
pub use cursor::Cursor;
pub use device::DeviceId;
pub use metadata::{ColumnSchema, Property, TableSchema, TsFileMetadata};
pub use open::{OpenDecoder, OpenStep, OpenedFile, RangeSource};
pub use provenance::{FooterSignature, WriterEvidence, WriterKind};
pub use reader::{Chunk, DeviceEntry, FileReader};
pub use source::{ByteSource, LocalFile};
pub use statistics::{Statistics, ValueStatistics};
pub use timeseries::{ChunkMetadata, TimeseriesMetadata};
pub use types::{marker, ColumnCategory, Compression, Encoding, PhysicalType, TsDataType};

/// The six magic bytes at both ends of a TsFile.
pub const MAGIC: &[u8; 6] = b"TsFile";
/// The version byte of current files (IoTDB 2.x, TsFile 2.x).
pub const VERSION_V4: u8 = 0x04;
/// The version byte of IoTDB 1.x files, read through [`v3`] (tree model only).
pub const VERSION_V3: u8 = 0x03;
/// Length of magic + version at the head of the file.
pub const HEAD_LEN: u64 = 7;
/// Length of the metadata length field + tail magic.
pub const TAIL_LEN: u64 = 10;
