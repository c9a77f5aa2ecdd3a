//! # datafusion-tsfile
//!
//! A reader for Apache TsFile files (version 4, and version 3 as written by IoTDB 1.x), with
//! SQL through Apache DataFusion.
//!
//! The public API:
//!
//! * [`TsFile`] — open a file and read tables and tree-model devices as `RecordBatch`es
//!   ([`TableRead`], [`TsFileOptions`], [`ReadOptions`], [`DecodeOptions`]);
//! * [`datafusion`] — the `FileFormat` (`STORED AS TSFILE`), the `TableProvider`, registration
//!   helpers, the `tsfile_metadata` table function and plan codecs (feature `datafusion`);
//! * [`format`](mod@format) — the file's structure: head and tail, TsFileMetadata, the metadata index,
//!   statistics, chunk and page headers, a forward scan (synchronous, no Arrow);
//! * [`iotdb`] — IoTDB's files beside its TsFiles: data-file names, `.resource` time indexes,
//!   `.mods`/`.mods2` deletions (the building blocks of reading a data directory);
//! * [`writer`] — write `RecordBatch`es as a table-model TsFile ([`TsFileWriter`],
//!   [`LocalTsFileWriter`], [`TsFileWriterOptions`]);
//! * [`arrow`] — the TsFile → Arrow type mapping; [`crypto`] — keys for encrypted files;
//! * [`stores`] — object stores for `s3://`, `gs://` and `http(s)://` URLs from
//!   `object_store` configuration keys (feature `object_store`);
//! * [`TsFileError`] — the one error type.
//!
//! Internal layers, public only with the feature `experimental` (no stability promise):
//! `compression` and `encoding` (page bytes → typed values and back), `read` (pages and chunks → typed
//! columns with nulls), `write` (typed columns → TsFile bytes) and `io` (async range reads from an `object_store`). A lower layer
//! never imports a higher one; ARCHITECTURE.md has the table.
#![warn(missing_docs)]
// Test code may unwrap, index and cast freely. The format, compression, encoding and read
// layers warn on truncating casts and indexing with `cfg_attr(not(test), ..)`: a module's own
// `warn` would override this crate-level `allow` in its `mod tests`.
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_possible_truncation, clippy::indexing_slicing)
)]

/// An internal layer: a public module with the feature `experimental` (benches, fuzz targets,
/// tools that decode pages themselves; no stability promise), private to the crate otherwise.
macro_rules! internal_layer {
    ($(#[$attr:meta])* mod $name:ident;) => {
        $(#[$attr])*
        #[cfg(feature = "experimental")]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "experimental"))]
        pub(crate) mod $name;
    };
}

pub mod arrow;
internal_layer! { mod compression; }
pub mod crypto;
pub mod datadir;
#[cfg(feature = "datafusion")]
pub mod datafusion;
internal_layer! { mod encoding; }
pub mod error;
mod file;
pub mod format;
pub mod iotdb;
internal_layer! {
    #[cfg(feature = "object_store")]
    mod io;
}
pub mod plan;
internal_layer! { mod read; }
pub mod stats;
#[cfg(feature = "object_store")]
pub mod stores;
pub mod summary;
internal_layer! { mod write; }
pub mod writer;

pub use encoding::{DecodeOptions, SprintzProduct, WriterLayout};
pub use error::{Result, TsFileError};
pub use file::{TableBatches, TableRead, TsFile, TsFileOptions};
pub use read::survey::{survey_writer, WriterSurvey};
pub use read::ReadOptions;
pub use writer::{LocalTsFileWriter, TsFileWriter, TsFileWriterOptions};

/// The README's Rust examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
