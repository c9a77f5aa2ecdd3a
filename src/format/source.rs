//! Synchronous random access to a file's bytes.
//!
//! The format layer reads the tail, the metadata index and chunks on demand through
//! [`ByteSource`]; implementations exist for in-memory [`Bytes`] and local files. (The async
//! `object_store` path in the `io` layer fetches the ranges it needs and hands them over as
//! `Bytes`.)

use std::ops::Range;

use bytes::Bytes;

use crate::error::{Result, TsFileError};

/// Random access to the bytes of one file.
pub trait ByteSource: Send + Sync {
    /// Length of the file in bytes.
    fn len(&self) -> u64;

    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Read exactly `range`, which the caller has checked against [`Self::len`].
    fn read(&self, range: Range<u64>) -> Result<Bytes>;

    /// Read from `range.start` up to `range.end`, or fewer bytes where the source ends
    /// earlier (a sparse source returns what it holds contiguously). Used to read
    /// variable-length headers through a window.
    fn read_up_to(&self, range: Range<u64>) -> Result<Bytes> {
        self.read(range.start..range.end.min(self.len()))
    }
}

fn out_of_range(range: &Range<u64>, len: u64) -> TsFileError {
    TsFileError::Truncated {
        what: "file range".into(),
        offset: range.start,
        needed: range.end.saturating_sub(range.start),
        available: len.saturating_sub(range.start),
    }
}

impl ByteSource for Bytes {
    fn len(&self) -> u64 {
        Bytes::len(self) as u64
    }

    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        match (usize::try_from(range.start), usize::try_from(range.end)) {
            (Ok(start), Ok(end)) if start <= end && end <= Bytes::len(self) => Ok(self.slice(start..end)),
            _ => Err(out_of_range(&range, Bytes::len(self) as u64)),
        }
    }
}

/// A local file read with positioned reads (no shared seek position, so it is `Sync`).
#[derive(Debug)]
pub struct LocalFile {
    file: std::fs::File,
    len: u64,
    path: String,
}

impl LocalFile {
    /// Open `path` for reading.
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<LocalFile> {
        let p = path.as_ref();
        let what = || format!("opening {}", p.display());
        let file = std::fs::File::open(p).map_err(|source| TsFileError::Io { what: what(), source })?;
        let len = file.metadata().map_err(|source| TsFileError::Io { what: what(), source })?.len();
        Ok(LocalFile { file, len, path: p.display().to_string() })
    }

    /// The path this file was opened from.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl ByteSource for LocalFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        if range.start > range.end || range.end > self.len {
            return Err(out_of_range(&range, self.len));
        }
        let n = usize::try_from(range.end - range.start)?;
        let mut buf = vec![0u8; n];
        read_exact_at(&self.file, &mut buf, range.start).map_err(|source| TsFileError::Io {
            what: format!("reading {} bytes at offset {} of {}", n, range.start, self.path),
            source,
        })?;
        Ok(Bytes::from(buf))
    }
}

#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &std::fs::File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_bytes_source_ranges() {
        let b = Bytes::from_static(b"abcdef");
        assert_eq!(ByteSource::read(&b, 1..3).unwrap().as_ref(), b"bc");
        assert!(ByteSource::read(&b, 4..9).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let r = 3..1;
        assert!(ByteSource::read(&b, r).is_err());
    }

    #[test]
    fn test_local_file_read() {
        let dir = std::env::temp_dir().join(format!("tsfile-src-{}", std::process::id()));
        std::fs::write(&dir, b"0123456789").unwrap();
        let f = LocalFile::open(&dir).unwrap();
        assert_eq!(f.len(), 10);
        assert_eq!(f.read(7..10).unwrap().as_ref(), b"789");
        assert!(f.read(8..11).is_err());
        std::fs::remove_file(&dir).unwrap();
        assert!(LocalFile::open("/nonexistent/x.tsfile").is_err());
    }
}
