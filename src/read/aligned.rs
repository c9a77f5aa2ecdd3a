//! Reading aligned devices (all table-model data): one time chunk plus one value chunk per
//! FIELD column in every chunk group, pages paired by ordinal.
//!
//! Value chunks are matched to their chunk group by file position — a value chunk belongs
//! to the last time chunk of the same device before it — never by position across chunk
//! groups, so a column absent from one chunk group reads as nulls for exactly that group.
//! Pages whose time statistics miss the requested time range are skipped in every column
//! without being decompressed.

use crate::error::{Result, ResultExt, TsFileError};
use crate::format::chunk::{PageIter, RawPage};
use crate::format::{ByteSource, ChunkMetadata, FileReader, TimeseriesMetadata, TsDataType};
use crate::read::column::ColumnBuilder;
use crate::read::page::{decode_times, payload, split_value_page, time_window};
use crate::read::ReadOptions;

/// The chunks of one chunk group of an aligned device.
#[derive(Debug, Clone)]
pub struct AlignedChunkGroup {
    /// The time chunk.
    pub time: ChunkMetadata,
    /// One entry per requested value column: its chunk in this group, if any.
    pub values: Vec<Option<ChunkMetadata>>,
}

/// Pair the chunks of the value series with the time series' chunks by file position.
pub fn plan_chunk_groups(time: &TimeseriesMetadata, values: &[Option<&TimeseriesMetadata>]) -> Result<Vec<AlignedChunkGroup>> {
    let mut time_chunks = time.chunks.clone();
    time_chunks.sort_by_key(|c| c.offset);
    let mut groups: Vec<AlignedChunkGroup> = time_chunks
        .into_iter()
        .map(|t| AlignedChunkGroup { time: t, values: vec![None; values.len()] })
        .collect();
    for (col, series) in values.iter().enumerate() {
        let Some(series) = series else { continue };
        for chunk in &series.chunks {
            let g = groups.partition_point(|g| g.time.offset < chunk.offset);
            let Some(group) = g.checked_sub(1).and_then(|g| groups.get_mut(g)) else {
                return Err(TsFileError::corrupt(
                    "aligned value chunk",
                    Some(chunk.offset),
                    format!("value chunk of '{}' precedes every time chunk of its device", series.measurement),
                ));
            };
            let slot = group.values.get_mut(col).ok_or_else(|| TsFileError::corrupt("aligned value chunk", Some(chunk.offset), "column index"))?;
            if slot.is_some() {
                return Err(TsFileError::corrupt(
                    "aligned value chunk",
                    Some(chunk.offset),
                    format!("two chunks of '{}' in one chunk group", series.measurement),
                ));
            }
            *slot = Some(chunk.clone());
        }
    }
    Ok(groups)
}

/// What to do with one time page.
#[derive(Debug, Clone)]
enum PagePlan {
    /// Outside the time range: skip in every column.
    Skip,
    /// Keep rows `keep` of `rows`.
    Keep { rows: usize, keep: std::ops::Range<usize> },
}

/// Decoded rows of one chunk group: timestamps and one builder per value column.
#[derive(Debug)]
pub struct DecodedGroup {
    /// Timestamps of the kept rows.
    pub times: Vec<i64>,
    /// One column per requested value column, each `times.len()` rows long.
    pub columns: Vec<ColumnBuilder>,
}

/// Decode one chunk group of an aligned device; `types` are the value columns' types.
pub fn read_chunk_group<S: ByteSource>(
    file: &FileReader<S>,
    group: &AlignedChunkGroup,
    types: &[TsDataType],
    opts: &ReadOptions,
) -> Result<DecodedGroup> {
    let mut out = DecodedGroup { times: Vec::new(), columns: Vec::with_capacity(types.len()) };
    for t in types {
        out.columns.push(ColumnBuilder::new(*t)?);
    }
    if let Some((lo, hi)) = opts.time_range {
        if !group.time.statistics.overlaps_time(lo, hi) {
            return Ok(out);
        }
    }
    let plans = read_time_chunk(file, &group.time, opts, &mut out.times)
        .with_context(|| format!("time chunk at offset {}", group.time.offset))?;
    let kept: usize = out.times.len();
    for ((chunk, builder), ty) in group.values.iter().zip(out.columns.iter_mut()).zip(types) {
        match chunk {
            None => builder.append_nulls(kept)?,
            Some(c) => read_value_chunk(file, c, *ty, &plans, opts, builder)
                .with_context(|| format!("value chunk at offset {}", c.offset))?,
        }
        if builder.len() != kept {
            return Err(TsFileError::corrupt(
                "aligned chunk group",
                Some(group.time.offset),
                format!("a value column has {} rows, the time column {kept}", builder.len()),
            ));
        }
    }
    Ok(out)
}

fn read_time_chunk<S: ByteSource>(file: &FileReader<S>, meta: &ChunkMetadata, opts: &ReadOptions, times: &mut Vec<i64>) -> Result<Vec<PagePlan>> {
    let chunk = file.read_chunk(meta.offset)?;
    let h = &chunk.header;
    let encoding = h.encoding()?;
    let compression = h.compression()?;
    let mut plans = Vec::new();
    let mut buf = Vec::new();
    let mut page_times = Vec::new();
    for (i, page) in PageIter::new(h, &chunk.data)?.enumerate() {
        let page = page?;
        let stats = page.header.statistics.as_ref().unwrap_or(&meta.statistics);
        if let Some((lo, hi)) = opts.time_range {
            if !stats.overlaps_time(lo, hi) {
                plans.push(PagePlan::Skip);
                continue;
            }
        }
        // Page statistics, or the chunk's for a single-page chunk.
        let count = Some(stats.count);
        let r = (|| {
            let data = payload(compression, &page, &mut buf)?;
            decode_times(encoding, data, count, &opts.decode, &mut page_times)
        })();
        r.with_context(|| format!("time page {i} at offset {}", page.header.offset))?;
        let keep = time_window(&page_times, opts.time_range);
        times.extend_from_slice(page_times.get(keep.clone()).unwrap_or(&[]));
        plans.push(PagePlan::Keep { rows: page_times.len(), keep });
    }
    Ok(plans)
}

fn read_value_chunk<S: ByteSource>(
    file: &FileReader<S>,
    meta: &ChunkMetadata,
    data_type: TsDataType,
    plans: &[PagePlan],
    opts: &ReadOptions,
    builder: &mut ColumnBuilder,
) -> Result<()> {
    let chunk = file.read_chunk(meta.offset)?;
    let h = &chunk.header;
    let chunk_type = h.data_type()?;
    if chunk_type != data_type {
        return Err(TsFileError::corrupt(
            "value chunk",
            Some(h.offset),
            format!("chunk '{}' has type {chunk_type}, the series {data_type}", h.measurement),
        ));
    }
    let pages: Vec<RawPage<'_>> = PageIter::new(h, &chunk.data)?.collect::<Result<_>>()?;
    if pages.is_empty() {
        // data_size = 0: no page at all, every row of the group is null.
        let kept: usize = plans.iter().map(|p| match p { PagePlan::Keep { keep, .. } => keep.len(), PagePlan::Skip => 0 }).sum();
        return builder.append_nulls(kept);
    }
    if pages.len() != plans.len() {
        return Err(TsFileError::corrupt(
            "value chunk",
            Some(h.offset),
            format!("'{}' has {} pages, its time chunk {}", h.measurement, pages.len(), plans.len()),
        ));
    }
    let encoding = h.encoding()?;
    let compression = h.compression()?;
    let mut buf = Vec::new();
    for (i, (page, plan)) in pages.iter().zip(plans).enumerate() {
        let PagePlan::Keep { rows, keep } = plan else { continue };
        if page.header.is_empty_value_page {
            builder.append_nulls(keep.len())?;
            continue;
        }
        let r = (|| {
            let data = payload(compression, page, &mut buf)?;
            let vp = split_value_page(data)?;
            if vp.rows != *rows {
                return Err(TsFileError::corrupt(
                    "value page",
                    None,
                    format!("{} rows, the time page has {rows}", vp.rows),
                ));
            }
            builder.append_with_bitmap(encoding, vp.values, vp.bitmap, vp.rows, keep.clone(), &opts.decode)
        })();
        r.with_context(|| format!("series '{}', page {i} at offset {}", h.measurement, page.header.offset))?;
    }
    Ok(())
}
