//! Reading non-aligned series (tree model): every page carries its own time stream.
//!
//! The time encoding of non-aligned pages is not recorded in the file; it comes from
//! [`ReadOptions::nonaligned_time_encoding`] (TS_2DIFF by default). A stream that does not
//! decode cleanly under it — wrong count, timestamps not ascending — is an error, never
//! garbage.

use crate::error::{Result, ResultExt, TsFileError};
use crate::format::chunk::PageIter;
use crate::format::{ByteSource, FileReader, TimeseriesMetadata};
use crate::read::column::ColumnBuilder;
use crate::read::page::{decode_times, payload, split_nonaligned, time_window};
use crate::read::ReadOptions;

/// Decode a whole non-aligned series (all its chunks, in file order) within the time range.
pub fn read_series<S: ByteSource>(
    file: &FileReader<S>,
    series: &TimeseriesMetadata,
    opts: &ReadOptions,
) -> Result<(Vec<i64>, ColumnBuilder)> {
    let mut times = Vec::new();
    let mut values = ColumnBuilder::new(series.data_type)?;
    let mut page_times = Vec::new();
    let mut buf = Vec::new();
    for meta in &series.chunks {
        if let Some((lo, hi)) = opts.time_range {
            if !meta.statistics.overlaps_time(lo, hi) {
                continue;
            }
        }
        let chunk = file.read_chunk(meta.offset)?;
        let h = &chunk.header;
        let ctx = || format!("series '{}', chunk at offset {}", series.measurement, h.offset);
        let chunk_type = h.data_type().with_context(ctx)?;
        if chunk_type != series.data_type {
            return Err(TsFileError::corrupt(
                "chunk",
                Some(h.offset),
                format!("type {chunk_type} differs from the series type {}", series.data_type),
            ));
        }
        let encoding = h.encoding().with_context(ctx)?;
        let compression = h.compression().with_context(ctx)?;
        for (i, page) in PageIter::new(h, &chunk.data)?.enumerate() {
            let page = page.with_context(ctx)?;
            let stats = page.header.statistics.as_ref().unwrap_or(&meta.statistics);
            if let Some((lo, hi)) = opts.time_range {
                if !stats.overlaps_time(lo, hi) {
                    continue;
                }
            }
            let r = (|| {
                let data = payload(compression, &page, &mut buf)?;
                let (time_stream, value_stream) = split_nonaligned(data)?;
                decode_times(opts.nonaligned_time_encoding, time_stream, Some(stats.count), &opts.decode, &mut page_times)?;
                let keep = time_window(&page_times, opts.time_range);
                values.append_range(encoding, value_stream, page_times.len(), keep.clone(), &opts.decode)?;
                times.extend_from_slice(page_times.get(keep).unwrap_or(&[]));
                Ok(())
            })();
            r.with_context(|| format!("series '{}', page {i} at offset {}", series.measurement, page.header.offset))?;
        }
    }
    Ok((times, values))
}
