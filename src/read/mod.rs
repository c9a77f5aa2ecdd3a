//! Pages and chunks → typed columns with nulls.
//!
//! * [`page`]: decompression and the three page payload layouts;
//! * [`check`]: page statistics as a check on decoded values, and the per-file decision of
//!   the writer's semantics where the Java and C++ writers differ;
//! * [`column`]: Arrow-layout value buffers with validity;
//! * [`aligned`]: aligned devices (time chunk + value chunks per chunk group);
//! * [`nonaligned`]: non-aligned series (time and values in every page);
//! * [`tree`]: merging a tree device's series into rows on the union of timestamps.
//! * [`merge`]: the same merge streamed a batch at a time, page by page (the SQL scan);
//! * [`survey`]: every writer-dependent page of a file judged both ways (`tsfile inspect`).
//!
//! # Resource limits
//!
//! Input is untrusted: a few kilobytes can claim gigabytes. Every limit is a field of
//! [`ReadOptions`] (or of its [`DecodeOptions`]) with a default well above what real writers
//! produce, and each is a DataFusion table option of the same name:
//!
//! | limit | bounds | default |
//! | --- | --- | --- |
//! | `max_metadata_bytes` | the TsFileMetadata block, checked on open | 256 MiB |
//! | `max_page_values` | values of one page | 16 Mi |
//! | `max_page_bytes` | one page, decompressed and decoded | 256 MiB |
//! | `max_dictionary_bytes` | entries of one DICTIONARY page | 64 MiB |
//! | `max_string_bytes` | one string/blob value or dictionary entry | 64 MiB |
//! | `max_decoded_bytes` | all values decoded by one read or SQL query ([`DecodeBudget`]) | 4 GiB |
//!
//! Exceeding one is [`TsFileError::LimitExceeded`] whose `what` names the option key.
#![cfg_attr(not(test), warn(clippy::cast_possible_truncation, clippy::indexing_slicing))]

pub mod aligned;
pub mod check;
pub mod column;
pub mod merge;
#[cfg(any(test, feature = "experimental"))]
pub mod nonaligned;
pub mod page;
pub mod survey;
pub mod tree;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::encoding::DecodeOptions;
use crate::error::{Result, TsFileError};
use crate::format::Encoding;

/// Default of [`ReadOptions::max_metadata_bytes`]: 256 MiB.
pub const DEFAULT_MAX_METADATA_BYTES: u64 = crate::format::reader::DEFAULT_MAX_METADATA_SIZE;
/// Default of [`ReadOptions::max_decoded_bytes`]: 4 GiB, about 100 million rows of a time
/// column and four 8-byte fields. A query that legitimately decodes more raises the option;
/// a small crafted file cannot make one read or query decode more than this.
pub const DEFAULT_MAX_DECODED_BYTES: u64 = 4 << 30;

/// Options for reading data: decoding choices and resource limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Encoding of the time streams of non-aligned pages (not stored in files).
    pub nonaligned_time_encoding: Encoding,
    /// Stream decoder options, with the per-page limits.
    pub decode: DecodeOptions,
    /// Inclusive time range; pages and chunks outside it are skipped, rows filtered.
    pub time_range: Option<(i64, i64)>,
    /// Upper bound on the size of the TsFileMetadata block (the `L` before the tail magic),
    /// checked when a file is opened, before it is read (0 is read as the default). Option
    /// `max_metadata_bytes`. All metadata fetched to open a file from an object store (with
    /// the index area) is bounded by four times this, at least 64 MiB
    /// ([`crate::format::open::metadata_fetch_limit`]).
    pub max_metadata_bytes: u64,
    /// Upper bound on the bytes of values decoded by one read ([`crate::TsFile::read_table`],
    /// [`crate::TsFile::read_tree_device`]) or one SQL query over all its partitions:
    /// timestamps, fixed-width values, string offsets and bytes, validity bits. Option
    /// `max_decoded_bytes`.
    pub max_decoded_bytes: u64,
    /// Bytes read from the end of a file in the first request when it is opened from an
    /// object store (option `metadata_size_hint`); the footer and, when they fit, the index
    /// area come with it. 0 (the default) reads 64 KiB of a local file and 512 KiB of a
    /// remote one (`io::OpenOptions::for_store`).
    pub metadata_size_hint: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            nonaligned_time_encoding: Encoding::Ts2Diff,
            decode: DecodeOptions::default(),
            time_range: None,
            max_metadata_bytes: DEFAULT_MAX_METADATA_BYTES,
            max_decoded_bytes: DEFAULT_MAX_DECODED_BYTES,
            metadata_size_hint: 0,
        }
    }
}

/// The bytes decoded so far by one read or query, counted against a limit
/// ([`ReadOptions::max_decoded_bytes`]). Shared (`&`/`Arc`) by every partition of a scan.
#[derive(Debug)]
pub struct DecodeBudget {
    used: AtomicU64,
    limit: u64,
}

impl DecodeBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Self {
        DecodeBudget { used: AtomicU64::new(0), limit }
    }

    /// A budget of `opts.max_decoded_bytes`.
    pub fn for_options(opts: &ReadOptions) -> Self {
        Self::new(opts.max_decoded_bytes)
    }

    /// Bytes charged so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// The limit.
    #[cfg(any(test, feature = "experimental"))]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn exceeded(&self, value: u64) -> TsFileError {
        TsFileError::LimitExceeded {
            what: "bytes decoded by one read or query (option max_decoded_bytes)".into(),
            value,
            limit: self.limit,
        }
    }

    /// Fail if `bytes` more would exceed the limit (nothing is charged): called before a
    /// page's buffers are allocated.
    pub fn check(&self, bytes: u64) -> Result<()> {
        let total = self.used().saturating_add(bytes);
        if total > self.limit {
            return Err(self.exceeded(total));
        }
        Ok(())
    }

    /// Charge `bytes` that were decoded; fails once the total exceeds the limit.
    pub fn charge(&self, bytes: u64) -> Result<()> {
        let before =
            self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| Some(u.saturating_add(bytes))).unwrap_or_else(|u| u);
        let total = before.saturating_add(bytes);
        if total > self.limit {
            return Err(self.exceeded(total));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_decode_budget_charge_and_check() {
        let b = DecodeBudget::new(100);
        b.charge(60).unwrap();
        b.check(40).unwrap();
        let e = b.check(41).unwrap_err();
        assert!(matches!(e, TsFileError::LimitExceeded { value: 101, limit: 100, .. }), "{e}");
        assert!(e.to_string().contains("max_decoded_bytes"), "{e}");
        b.charge(40).unwrap();
        assert!(matches!(b.charge(1), Err(TsFileError::LimitExceeded { value: 101, .. })));
        assert_eq!(b.used(), 101);
        let shared = std::sync::Arc::new(DecodeBudget::new(u64::MAX - 1));
        shared.charge(u64::MAX - 1).unwrap();
        assert!(shared.charge(1).is_err());
    }
}
