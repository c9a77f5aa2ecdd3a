//! Reading non-aligned series (tree model): every page carries its own time stream.
//!
//! The time encoding of non-aligned pages is not recorded in the file; it comes from
//! [`ReadOptions::nonaligned_time_encoding`] (TS_2DIFF by default). A stream that does not
//! decode cleanly under it — wrong count, timestamps not ascending — is an error, never
//! garbage.

use crate::error::{Result, ResultExt, TsFileError};
use crate::format::chunk::PageIter;
use crate::format::{ByteSource, FileReader, TimeseriesMetadata};
use crate::read::check::PageCheck;
use crate::read::column::ColumnBuilder;
use crate::read::page::{decode_time_window, payload, split_nonaligned, PageBuffers, PageCodec};
use crate::read::{DecodeBudget, ReadOptions};

/// Decode a whole non-aligned series (all its chunks, in file order) within the time range,
/// with a budget of `opts.max_decoded_bytes` for this call alone.
pub fn read_series<S: ByteSource>(
    file: &FileReader<S>,
    series: &TimeseriesMetadata,
    opts: &ReadOptions,
) -> Result<(Vec<i64>, ColumnBuilder)> {
    read_series_in(file, series, opts, &DecodeBudget::for_options(opts))
}

/// [`read_series`], charging the decoded bytes to `budget` (one read or query).
pub fn read_series_in<S: ByteSource>(
    file: &FileReader<S>,
    series: &TimeseriesMetadata,
    opts: &ReadOptions,
    budget: &DecodeBudget,
) -> Result<(Vec<i64>, ColumnBuilder)> {
    let mut times = Vec::new();
    let mut values = ColumnBuilder::new(series.data_type)?;
    let mut page_times = Vec::new();
    let mut bufs = PageBuffers::default();
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
        let codec = PageCodec::new(file, h).with_context(ctx)?;
        for (i, page) in PageIter::new(h, &chunk.data)?.enumerate() {
            let page = page.with_context(ctx)?;
            let stats = page.header.statistics.as_ref().unwrap_or(&meta.statistics);
            if let Some((lo, hi)) = opts.time_range {
                if !stats.overlaps_time(lo, hi) {
                    continue;
                }
            }
            let r = (|| {
                let rows = usize::try_from(stats.count)?;
                crate::encoding::check_count(rows, 64, &opts.decode, "time")?;
                budget.check(stats.count.saturating_mul(8).saturating_add(values.min_bytes_for(rows) as u64))?;
                let data = payload(&codec, i, &page, &mut bufs, &opts.decode)?;
                let (time_stream, value_stream) = split_nonaligned(data)?;
                let keep = decode_time_window(
                    opts.nonaligned_time_encoding,
                    time_stream,
                    stats.count,
                    opts.time_range,
                    &opts.decode,
                    PageCheck::time(stats, Some(file.writer_evidence())),
                    &mut page_times,
                )?;
                let before = values.byte_size();
                values.set_page_statistics(Some(stats));
                values.set_writer_evidence(file.writer_evidence());
                values.append_range(encoding, value_stream, rows, keep, &opts.decode)?;
                times.extend_from_slice(&page_times);
                budget.charge((page_times.len() * 8 + values.byte_size().saturating_sub(before)) as u64)
            })();
            r.with_context(|| format!("series '{}', page {i} at offset {}", series.measurement, page.header.offset))?;
        }
    }
    Ok((times, values))
}
