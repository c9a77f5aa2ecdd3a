//! Pages and chunks → typed columns with nulls.
//!
//! * [`page`]: decompression and the three page payload layouts;
//! * [`column`]: Arrow-layout value buffers with validity;
//! * [`aligned`]: aligned devices (time chunk + value chunks per chunk group);
//! * [`nonaligned`]: non-aligned series (time and values in every page);
//! * [`tree`]: merging a tree device's series into rows on the union of timestamps.

pub mod aligned;
pub mod column;
pub mod nonaligned;
pub mod page;
pub mod tree;

use crate::encoding::DecodeOptions;
use crate::format::Encoding;

/// Options for decoding data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Encoding of the time streams of non-aligned pages (not stored in files).
    pub nonaligned_time_encoding: Encoding,
    /// Stream decoder options.
    pub decode: DecodeOptions,
    /// Inclusive time range; pages and chunks outside it are skipped, rows filtered.
    pub time_range: Option<(i64, i64)>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { nonaligned_time_encoding: Encoding::Ts2Diff, decode: DecodeOptions::default(), time_range: None }
    }
}
