//! Typed columns → TsFile bytes: the format-level streaming writer (no Arrow).
//!
//! * [`options`]: [`WriteOptions`], per-column [`ColumnOptions`] and the Java writer's
//!   defaults (TS_2DIFF time and integers, GORILLA floats, PLAIN strings and booleans, LZ4,
//!   pages of at most 10,000 points or about 64 KiB);
//! * [`buffer`]: [`DeviceBuffer`], the rows of one device awaiting a flush (time column plus
//!   one [`ColumnBuffer`] per field: presence per row and the non-null values densely);
//! * [`stats`]: statistics of pages as the reference writers compute them and their merging
//!   into chunk and series statistics;
//! * [`page`]: value and time page payloads (encode, then compress);
//! * [`file`]: [`FileWriter`], which writes one chunk group per flushed device (an aligned
//!   time chunk and a value chunk per non-null column) and, on [`FileWriter::finish`], the
//!   index area (TimeseriesMetadata, measurement and device index nodes with the Java
//!   writer's fan-out of 256), the table schema, the bloom filter and the Java writer's
//!   footer properties.
//!
//! The writer writes to any `std::io::Write`; it never seeks and keeps in memory only the
//! rows it is given and, per series, the offsets and statistics of its chunks.
#![cfg_attr(not(test), warn(clippy::cast_possible_truncation, clippy::indexing_slicing))]

pub mod buffer;
pub mod file;
pub mod options;
pub mod page;
pub mod stats;

pub use buffer::{ColumnBuffer, DeviceBuffer, ValueBuffer};
pub use file::{FieldSpec, FileWriter};
pub use options::{ColumnOptions, WriteOptions};
