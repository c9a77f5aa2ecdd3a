//! # datafusion-tsfile
//!
//! A reader for Apache TsFile v4 files.
//!
//! Layers, from bytes up (a lower layer never imports a higher one):
//!
//! * [`format`] — bytes → structs: primitives, tail, metadata, index, statistics, chunk and
//!   page headers. Synchronous, no Arrow.
//! * [`compression`] and [`encoding`] — page bytes → typed values.
#![warn(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod compression;
pub mod encoding;
pub mod error;
pub mod format;

pub use error::{Result, TsFileError};
