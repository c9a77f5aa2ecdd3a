//! [`LocalTsFileWriter`]: a TsFile at a local path that is complete or absent.
//!
//! Bytes go to a hidden temporary file in the destination's directory
//! (`.<name>.<pid>-<nanos>.tmp`); [`LocalTsFileWriter::finish`] writes the footer, syncs it
//! and renames it to the destination (atomic on POSIX file systems). An error, or dropping
//! the writer unfinished, removes the temporary file.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::{Result, TsFileError};
use crate::writer::{TsFileWriter, TsFileWriterOptions};

/// Writes a TsFile to a local path (see the module doc).
#[derive(Debug)]
pub struct LocalTsFileWriter {
    writer: Option<TsFileWriter<BufWriter<File>>>,
    tmp: PathBuf,
    dest: PathBuf,
    /// The temporary file was renamed to `dest`.
    done: bool,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> TsFileError {
    move |source| TsFileError::Io { what, source }
}

/// The default table name for a destination: its file stem (`x.tsfile` → `x`), or the
/// directory's name for a path ending in `/`.
pub fn default_table_name(path: &str) -> Option<String> {
    let trimmed = path.trim_end_matches('/');
    let last = trimmed.rsplit(['/', '\\']).next().unwrap_or(trimmed);
    let stem = if path.ends_with('/') { last } else { last.split('.').next().unwrap_or(last) };
    Some(stem.to_string()).filter(|s| !s.is_empty())
}

impl LocalTsFileWriter {
    /// Start writing `path` (created when finished) for batches of `schema`. Without a table
    /// name in `options`, the file stem names the table.
    pub fn create(path: impl AsRef<Path>, schema: SchemaRef, options: &TsFileWriterOptions) -> Result<Self> {
        let dest = path.as_ref().to_path_buf();
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.is_empty() {
            return Err(TsFileError::InvalidArgument(format!("{} is not a file path", dest.display())));
        }
        let mut options = options.clone();
        if options.table.is_none() {
            options.table = default_table_name(&name);
        }
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let tmp = dest.with_file_name(format!(".{name}.{}-{nanos}.tmp", std::process::id()));
        let file = File::create(&tmp).map_err(io(format!("creating {}", tmp.display())))?;
        let mut this = LocalTsFileWriter { writer: None, tmp, dest, done: false };
        this.writer = Some(TsFileWriter::try_new(BufWriter::with_capacity(1 << 20, file), schema, &options)?);
        Ok(this)
    }

    /// The underlying writer (rows, bytes written, plan).
    pub fn writer(&self) -> Option<&TsFileWriter<BufWriter<File>>> {
        self.writer.as_ref()
    }

    /// Write a batch; after an error the writer is unusable and the file will not appear.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let w = self.writer.as_mut().ok_or_else(|| TsFileError::InvalidArgument("the writer failed or finished".into()))?;
        let r = w.write(batch);
        if r.is_err() {
            self.writer = None;
        }
        r
    }

    /// Finish the file and move it to its destination; returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        let w = self.writer.take().ok_or_else(|| TsFileError::InvalidArgument("the writer failed or finished".into()))?;
        let rows = w.rows();
        let result = (|| {
            let out = w.finish()?;
            let file =
                out.into_inner().map_err(|e| TsFileError::Io { what: "flushing the file".into(), source: e.into_error() })?;
            file.sync_all().map_err(io("syncing the file".into()))?;
            drop(file);
            std::fs::rename(&self.tmp, &self.dest).map_err(io(format!("renaming the file to {}", self.dest.display())))
        })();
        self.done = result.is_ok();
        result.map(|()| rows)
    }
}

impl Drop for LocalTsFileWriter {
    fn drop(&mut self) {
        if !self.done {
            self.writer = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
