//! # datafusion-tsfile
//!
//! A reader for Apache TsFile v4 files.
//!
//! Layers, from bytes up (a lower layer never imports a higher one):
//!
//! * [`format`] — bytes → structs: primitives, tail, metadata, index, statistics, chunk and
//!   page headers. Synchronous, no Arrow.
//! * [`crypto`] — encrypted pages: scheme detection, user keys, page decryption.
//! * [`compression`] and [`encoding`] — page bytes → typed values.
//! * [`read`] — pages and chunks → typed columns with nulls.
//! * [`arrow`] — TsFile types → Arrow schema and arrays.
//! * [`file`] — [`TsFile`]: open a file and read tables and devices as `RecordBatch`es.
//! * `io` — async range reads from an `object_store` (feature `object_store`).
//! * `datafusion` — `FileFormat`, scan, pruning and `TableProvider` (feature `datafusion`).
#![warn(missing_docs)]
// Test code may unwrap, index and cast freely. The format, compression, encoding and read
// layers warn on truncating casts and indexing with `cfg_attr(not(test), ..)`: a module's own
// `warn` would override this crate-level `allow` in its `mod tests`.
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_possible_truncation, clippy::indexing_slicing)
)]

pub mod arrow;
pub mod compression;
pub mod crypto;
#[cfg(feature = "datafusion")]
pub mod datafusion;
pub mod encoding;
pub mod error;
pub mod file;
pub mod format;
#[cfg(feature = "object_store")]
pub mod io;
pub mod read;

pub use error::{Result, TsFileError};
pub use file::{TableBatches, TableRead, TsFile, TsFileOptions};

/// The README's Rust examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
