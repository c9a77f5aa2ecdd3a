//! The crate's one error type.
//!
//! Every error raised while reading file data says *what* was being read and, where it is
//! known, the absolute byte offset in the file. Higher layers wrap errors with more context
//! (the series and page being decoded, the file path) through [`TsFileError::context`] and
//! [`TsFileError::in_file`], so a user sees, for example:
//!
//! ```text
//! file data/sample.tsfile: series root.sg.d1.s1, page 3 at offset 4711: corrupt GORILLA stream: ...
//! ```
//!
//! Truncated or malformed input is always an `Err`, never a panic.

use std::num::TryFromIntError;

/// Result alias used throughout the crate.
pub type Result<T, E = TsFileError> = std::result::Result<T, E>;

/// Everything that can go wrong while reading a TsFile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TsFileError {
    /// An I/O error from the operating system.
    #[error("I/O error while {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A structure needs more bytes than its enclosing region holds.
    #[error("truncated {what} at offset {offset}: needs {needed} bytes, {available} available")]
    Truncated {
        /// The structure being read.
        what: String,
        /// Absolute file offset where the structure starts.
        offset: u64,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The bytes are present but violate the format.
    #[error("corrupt {what}{}: {detail}", fmt_offset(*.offset))]
    Corrupt {
        /// The structure being read.
        what: String,
        /// Absolute file offset, when known.
        offset: Option<u64>,
        /// What is wrong.
        detail: String,
    },
    /// A valid construct this reader does not implement (or that has no codec anywhere).
    #[error("unsupported {what}")]
    Unsupported {
        /// What is unsupported, e.g. "encoding DIFF for INT32".
        what: String,
    },
    /// A sparse byte source (one holding only fetched ranges of a file) was asked for bytes
    /// it does not hold. Not a defect of the file: the caller fetches `range` and retries
    /// (see `crate::format::open` and `crate::io`). Inside the file by construction: reads
    /// past the file's end are [`TsFileError::Truncated`].
    #[error("bytes {}..{} at offset {} are not loaded (fetch them and retry)", .range.start, .range.end, .range.start)]
    NeedBytes {
        /// The missing file range.
        range: std::ops::Range<u64>,
    },
    /// A configured resource limit was exceeded.
    #[error("limit exceeded: {what} is {value}, limit is {limit}")]
    LimitExceeded {
        /// The limited quantity.
        what: String,
        /// The value that was requested.
        value: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A page failed to decompress, or decompressed to the wrong size.
    #[error("{codec} decompression failed: {detail}")]
    Decompress {
        /// The codec name.
        codec: &'static str,
        /// What went wrong.
        detail: String,
    },
    /// The file is encrypted and no usable key was supplied.
    #[error("encrypted file: {detail}")]
    Encrypted {
        /// What is missing or wrong.
        detail: String,
    },
    /// An encrypted page failed authentication or does not decrypt (tag mismatch, a body
    /// too short for its profile, a wrong chunk ordinal or page position).
    #[error("decryption failed: {detail}")]
    DecryptFailed {
        /// What failed.
        detail: String,
    },
    /// A requested item (table, device, column) does not exist.
    #[error("not found: {what}")]
    NotFound {
        /// What was looked for.
        what: String,
    },
    /// An invalid argument from the caller (not from file data).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An error from Arrow while assembling arrays.
    #[error("arrow error: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// An error wrapped with the context in which it happened.
    #[error("{context}: {source}")]
    Context {
        /// Where it happened (series, page, offset, file).
        context: String,
        /// The original error.
        #[source]
        source: Box<TsFileError>,
    },
}

fn fmt_offset(offset: Option<u64>) -> String {
    match offset {
        Some(o) => format!(" at offset {o}"),
        None => String::new(),
    }
}

impl TsFileError {
    /// A [`TsFileError::Corrupt`] at a known offset.
    pub fn corrupt(what: impl Into<String>, offset: Option<u64>, detail: impl Into<String>) -> Self {
        TsFileError::Corrupt { what: what.into(), offset, detail: detail.into() }
    }

    /// A [`TsFileError::Unsupported`].
    pub fn unsupported(what: impl Into<String>) -> Self {
        TsFileError::Unsupported { what: what.into() }
    }

    /// Wrap this error with a context line (e.g. `"series s1, page 2 at offset 100"`).
    pub fn context(self, context: impl Into<String>) -> Self {
        TsFileError::Context { context: context.into(), source: Box::new(self) }
    }

    /// Wrap this error with the path of the file it came from.
    pub fn in_file(self, path: impl std::fmt::Display) -> Self {
        self.context(format!("file {path}"))
    }

    /// The file range to fetch when this error (under any context) is a
    /// [`TsFileError::NeedBytes`]; `None` for every other error.
    pub fn needed_range(&self) -> Option<std::ops::Range<u64>> {
        match self.root() {
            TsFileError::NeedBytes { range } => Some(range.clone()),
            _ => None,
        }
    }

    /// The innermost error, with all [`TsFileError::Context`] layers removed.
    pub fn root(&self) -> &TsFileError {
        let mut e = self;
        while let TsFileError::Context { source, .. } = e {
            e = source;
        }
        e
    }
}

impl From<TryFromIntError> for TsFileError {
    fn from(e: TryFromIntError) -> Self {
        TsFileError::corrupt("integer conversion", None, e.to_string())
    }
}

/// Extension to add context to any `Result<T, TsFileError>`.
pub trait ResultExt<T> {
    /// Add a context line, computed only on error.
    fn with_context<F: FnOnce() -> String>(self, f: F) -> Result<T>;
}

impl<T> ResultExt<T> for Result<T> {
    fn with_context<F: FnOnce() -> String>(self, f: F) -> Result<T> {
        self.map_err(|e| e.context(f()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_display_corrupt_with_offset() {
        let e = TsFileError::corrupt("chunk header", Some(42), "bad marker 0x09");
        assert_eq!(e.to_string(), "corrupt chunk header at offset 42: bad marker 0x09");
    }

    #[test]
    fn test_context_chain_and_root() {
        let e = TsFileError::unsupported("encoding DIFF").context("series s1").in_file("a.tsfile");
        assert_eq!(e.to_string(), "file a.tsfile: series s1: unsupported encoding DIFF");
        assert!(matches!(e.root(), TsFileError::Unsupported { .. }));
    }
}
