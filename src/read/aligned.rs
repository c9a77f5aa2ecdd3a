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
use crate::format::{ByteSource, Chunk, ChunkHeader, ChunkMetadata, FileReader, Statistics, TimeseriesMetadata, TsDataType};
use crate::read::check::PageCheck;
use crate::read::column::ColumnBuilder;
use crate::read::page::{decode_time_window, move_times, payload, split_value_page, PageBuffers, PageCodec};
use crate::read::{DecodeBudget, ReadOptions};

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
    let mut groups: Vec<AlignedChunkGroup> =
        time_chunks.into_iter().map(|t| AlignedChunkGroup { time: t, values: vec![None; values.len()] }).collect();
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
            let slot = group
                .values
                .get_mut(col)
                .ok_or_else(|| TsFileError::corrupt("aligned value chunk", Some(chunk.offset), "column index"))?;
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
    /// Outside the time range or pruned: skip in every column.
    Skip,
    /// Keep rows `keep` of `rows`.
    Keep { rows: usize, keep: std::ops::Range<usize> },
}

/// What is known about one value column on one page, for page-level pruning.
#[derive(Debug, Clone, Copy)]
// Read by the DataFusion layer's page filters.
#[cfg_attr(not(feature = "datafusion"), allow(dead_code))]
pub enum ValuePageStats<'a> {
    /// The page's own statistics (or the chunk's, for a single-page chunk).
    Stats(&'a Statistics),
    /// Every row of the page is null (empty page, or the column has no chunk).
    AllNull,
}

/// Statistics of every page of a chunk group, handed to a page filter.
#[derive(Debug)]
#[cfg_attr(not(feature = "datafusion"), allow(dead_code))]
pub struct GroupPageStats<'a> {
    /// Time statistics per page (row count = `count`).
    pub time: Vec<&'a Statistics>,
    /// Per value column, per page.
    pub values: Vec<Vec<ValuePageStats<'a>>>,
}

/// Decides which pages of a chunk group may hold matching rows (`true` = keep).
pub type PageFilter<'f> = &'f dyn Fn(&GroupPageStats<'_>) -> Vec<bool>;

/// Decoded rows of one chunk group: timestamps and one builder per value column.
#[derive(Debug)]
pub struct DecodedGroup {
    /// Timestamps of the kept rows.
    pub times: Vec<i64>,
    /// One column per requested value column, each `times.len()` rows long.
    pub columns: Vec<ColumnBuilder>,
    /// Pages of the time chunk.
    pub pages_total: usize,
    /// Pages skipped by the time range or the page filter.
    pub pages_pruned: usize,
}

impl DecodedGroup {
    /// No rows, one empty column per type of `types`.
    pub fn new(types: &[TsDataType]) -> Result<Self> {
        let columns = types.iter().map(|t| ColumnBuilder::new(*t)).collect::<Result<Vec<_>>>()?;
        Ok(DecodedGroup { times: Vec::new(), columns, pages_total: 0, pages_pruned: 0 })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.times.len()
    }
}

/// What every chunk group of one read shares: the value columns' types, the read options
/// (time range, decoding), a page filter and the decode budget (one read or query: each page
/// is checked against what is left before its buffers are allocated).
#[derive(Clone, Copy)]
pub struct GroupRead<'a> {
    /// The value columns' types, in the order of each group's `values`.
    pub types: &'a [TsDataType],
    /// Pages outside `opts.time_range` are skipped, rows outside it dropped.
    pub opts: &'a ReadOptions,
    /// Decides which pages may hold wanted rows (`None`: all).
    pub page_filter: Option<PageFilter<'a>>,
    /// Where the decoded bytes are charged.
    pub budget: &'a DecodeBudget,
}

impl std::fmt::Debug for GroupRead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupRead").field("types", &self.types).field("filter", &self.page_filter.is_some()).finish()
    }
}

/// Decode one chunk group of an aligned device; `types` are the value columns' types.
/// Pages are skipped when their time statistics miss `opts.time_range` or `page_filter`
/// rejects them. The decoded bytes count against a budget of `opts.max_decoded_bytes` for
/// this call alone; see [`read_chunk_group_in`] to share one budget across calls.
#[cfg(any(test, feature = "experimental"))]
pub fn read_chunk_group<S: ByteSource>(
    file: &FileReader<S>,
    group: &AlignedChunkGroup,
    types: &[TsDataType],
    opts: &ReadOptions,
    page_filter: Option<PageFilter<'_>>,
) -> Result<DecodedGroup> {
    let budget = DecodeBudget::for_options(opts);
    read_chunk_group_in(file, group, &GroupRead { types, opts, page_filter, budget: &budget })
}

/// [`read_chunk_group`] as part of `read` (one read or query sharing a budget).
pub fn read_chunk_group_in<S: ByteSource>(file: &FileReader<S>, group: &AlignedChunkGroup, read: &GroupRead<'_>) -> Result<DecodedGroup> {
    let mut out = DecodedGroup::new(read.types)?;
    read_chunk_group_into(file, group, read, &mut out)?;
    Ok(out)
}

/// [`read_chunk_group_in`], appending the rows to `out` (whose columns must be of
/// `read.types` and as long as its times) and adding to its page counts: rows of several
/// chunk groups, or of several devices, gathered in one set of buffers. After an error `out`
/// may hold part of the group and must be discarded.
pub fn read_chunk_group_into<S: ByteSource>(
    file: &FileReader<S>,
    group: &AlignedChunkGroup,
    read: &GroupRead<'_>,
    out: &mut DecodedGroup,
) -> Result<()> {
    let rows = out.times.len();
    let matches = out.columns.len() == read.types.len()
        && out.columns.iter().zip(read.types).all(|(c, t)| c.data_type() == *t && c.len() == rows);
    if !matches {
        return Err(TsFileError::corrupt("aligned chunk group", None, "internal: output columns differ from the requested types"));
    }
    PageBuffers::with_reused(|bufs| read_chunk_group_with(file, group, read, bufs, out))
}

fn read_chunk_group_with<S: ByteSource>(
    file: &FileReader<S>,
    group: &AlignedChunkGroup,
    read: &GroupRead<'_>,
    bufs: &mut PageBuffers,
    out: &mut DecodedGroup,
) -> Result<()> {
    let GroupRead { types, opts, page_filter, .. } = *read;
    if let Some((lo, hi)) = opts.time_range {
        if !group.time.statistics.overlaps_time(lo, hi) {
            return Ok(());
        }
    }
    // Read the chunks and parse every page header first.
    let time_chunk = file.read_chunk(group.time.offset).with_context(|| format!("time chunk at offset {}", group.time.offset))?;
    let value_chunks = read_value_chunks(file, group, types)?;
    let time_pages: Vec<RawPage<'_>> = PageIter::new(&time_chunk.header, &time_chunk.data)?
        .collect::<Result<_>>()
        .with_context(|| format!("time chunk at offset {}", group.time.offset))?;
    let value_pages = parse_value_pages(&value_chunks, time_pages.len())?;
    out.pages_total += time_pages.len();
    let time_stats: Vec<&Statistics> =
        time_pages.iter().map(|p| p.header.statistics.as_ref().unwrap_or(&group.time.statistics)).collect();
    let keep = keep_pages(&time_stats, &value_pages, &value_chunks, opts, page_filter);
    out.pages_pruned += keep.iter().filter(|k| !**k).count();
    let time = TimePages { file, header: &time_chunk.header, pages: &time_pages, stats: &time_stats };
    let base = out.times.len();
    let plans = decode_time_pages(&time, &keep, read, bufs, &mut out.times)?;
    let values = ValueChunks { file, group, pages: &value_pages, chunks: &value_chunks, plans: &plans };
    decode_value_columns(&values, read, out, base, bufs)?;
    Ok(())
}

/// A value column's chunk in one chunk group (read, its type checked) and its metadata.
type ValueChunk<'g> = Option<(Chunk, &'g ChunkMetadata)>;

/// Read the value chunks of `group`, checking each against its series' type.
fn read_value_chunks<'g, S: ByteSource>(
    file: &FileReader<S>,
    group: &'g AlignedChunkGroup,
    types: &[TsDataType],
) -> Result<Vec<ValueChunk<'g>>> {
    let mut value_chunks = Vec::with_capacity(types.len());
    for (c, ty) in group.values.iter().zip(types) {
        value_chunks.push(match c {
            None => None,
            Some(c) => {
                let chunk = file.read_chunk(c.offset).with_context(|| format!("value chunk at offset {}", c.offset))?;
                let chunk_type = chunk.header.data_type()?;
                if chunk_type != *ty {
                    return Err(TsFileError::corrupt(
                        "value chunk",
                        Some(c.offset),
                        format!("chunk '{}' has type {chunk_type}, the series {ty}", chunk.header.measurement),
                    ));
                }
                Some((chunk, c))
            }
        });
    }
    Ok(value_chunks)
}

/// Page headers of every value chunk; a non-empty chunk must have as many pages as the time
/// chunk (`time_pages`).
fn parse_value_pages<'c>(value_chunks: &'c [ValueChunk<'_>], time_pages: usize) -> Result<Vec<Option<Vec<RawPage<'c>>>>> {
    let mut value_pages = Vec::with_capacity(value_chunks.len());
    for vc in value_chunks {
        value_pages.push(match vc {
            None => None,
            Some((chunk, meta)) => {
                let pages: Vec<RawPage<'_>> = PageIter::new(&chunk.header, &chunk.data)?
                    .collect::<Result<_>>()
                    .with_context(|| format!("value chunk at offset {}", meta.offset))?;
                if !pages.is_empty() && pages.len() != time_pages {
                    return Err(TsFileError::corrupt(
                        "value chunk",
                        Some(meta.offset),
                        format!("'{}' has {} pages, its time chunk {time_pages}", chunk.header.measurement, pages.len()),
                    ));
                }
                Some(pages)
            }
        });
    }
    Ok(value_pages)
}

/// Which time pages to decode: those overlapping `opts.time_range` that `page_filter` keeps.
fn keep_pages(
    time_stats: &[&Statistics],
    value_pages: &[Option<Vec<RawPage<'_>>>],
    value_chunks: &[ValueChunk<'_>],
    opts: &ReadOptions,
    page_filter: Option<PageFilter<'_>>,
) -> Vec<bool> {
    let mut keep: Vec<bool> = match opts.time_range {
        Some((lo, hi)) => time_stats.iter().map(|s| s.overlaps_time(lo, hi)).collect(),
        None => vec![true; time_stats.len()],
    };
    if let Some(filter) = page_filter {
        let values = value_pages
            .iter()
            .zip(value_chunks)
            .map(|(pages, vc)| match (pages, vc) {
                (Some(pages), Some((_, meta))) if !pages.is_empty() => pages
                    .iter()
                    .map(|p| {
                        if p.header.is_empty_value_page {
                            ValuePageStats::AllNull
                        } else {
                            ValuePageStats::Stats(p.header.statistics.as_ref().unwrap_or(&meta.statistics))
                        }
                    })
                    .collect(),
                _ => vec![ValuePageStats::AllNull; time_stats.len()],
            })
            .collect();
        let verdict = filter(&GroupPageStats { time: time_stats.to_vec(), values });
        for (k, v) in keep.iter_mut().zip(verdict) {
            *k &= v;
        }
    }
    keep
}

/// The time chunk of a chunk group: its pages and their (page or chunk) statistics.
struct TimePages<'a, S: ByteSource> {
    file: &'a FileReader<S>,
    header: &'a ChunkHeader,
    pages: &'a [RawPage<'a>],
    stats: &'a [&'a Statistics],
}

/// Decode the kept time pages into `times` (rows inside `opts.time_range` only); one plan per
/// page tells the value columns which rows to keep.
fn decode_time_pages<S: ByteSource>(
    time: &TimePages<'_, S>,
    keep: &[bool],
    read: &GroupRead<'_>,
    bufs: &mut PageBuffers,
    times: &mut Vec<i64>,
) -> Result<Vec<PagePlan>> {
    let (opts, budget) = (read.opts, read.budget);
    let h = time.header;
    let encoding = h.encoding()?;
    let codec = PageCodec::new(time.file, h).with_context(|| format!("time chunk at offset {}", h.offset))?;
    let mut plans = Vec::with_capacity(time.pages.len());
    let mut page_times = bufs.take_times();
    for (i, ((page, stats), k)) in time.pages.iter().zip(time.stats).zip(keep).enumerate() {
        if !*k {
            plans.push(PagePlan::Skip);
            continue;
        }
        let r = (|| {
            // A count no page may hold is reported as such before the budget is consulted.
            crate::encoding::check_count(usize::try_from(stats.count)?, 64, &opts.decode, "time")?;
            budget.check(stats.count.saturating_mul(8))?;
            let data = payload(&codec, i, page, bufs, &opts.decode)?;
            let check = PageCheck::time(stats, Some(time.file.writer_evidence()));
            let keep = decode_time_window(encoding, data, stats.count, opts.time_range, &opts.decode, check, &mut page_times)?;
            budget.charge(page_times.len() as u64 * 8)?;
            Ok(keep)
        })();
        let keep = r.with_context(|| format!("time chunk at offset {}, page {i} at offset {}", h.offset, page.header.offset))?;
        // The first kept page (often the only one) moves instead of being copied when most of
        // it is kept.
        move_times(&mut page_times, times);
        plans.push(PagePlan::Keep { rows: usize::try_from(stats.count)?, keep });
    }
    bufs.put_times(page_times);
    Ok(plans)
}

/// The value chunks of one chunk group, their pages, and the plan of each page (from the
/// time column).
struct ValueChunks<'a, 'c, S: ByteSource> {
    file: &'a FileReader<S>,
    group: &'a AlignedChunkGroup,
    pages: &'a [Option<Vec<RawPage<'c>>>],
    chunks: &'a [ValueChunk<'c>],
    plans: &'a [PagePlan],
}

/// Decode the value columns' pages that the plans keep into `out.columns` (which held
/// `base` rows before this group), each exactly as long as `out.times` afterwards (an
/// absent or empty chunk reads as nulls).
fn decode_value_columns<S: ByteSource>(
    values: &ValueChunks<'_, '_, S>,
    read: &GroupRead<'_>,
    out: &mut DecodedGroup,
    base: usize,
    bufs: &mut PageBuffers,
) -> Result<()> {
    let (file, budget) = (values.file, read.budget);
    let total = out.times.len();
    let kept = total.saturating_sub(base);
    for ((pages, vc), builder) in values.pages.iter().zip(values.chunks).zip(out.columns.iter_mut()) {
        match (pages, vc) {
            (Some(pages), Some((chunk, meta))) if !pages.is_empty() => {
                let codec = PageCodec::new(file, &chunk.header)
                    .with_context(|| format!("value chunk at offset {}", chunk.header.offset))?;
                builder.set_writer_evidence(file.writer_evidence());
                decode_value_pages(&codec, pages, &meta.statistics, values.plans, read, builder, bufs)?;
            }
            // Absent chunk, or data_size = 0: every row of the group is null.
            _ => {
                let bytes = builder.min_bytes_for(kept) as u64;
                budget.check(bytes)?;
                builder.append_nulls(kept)?;
                budget.charge(bytes)?;
            }
        }
        if builder.len() != total {
            return Err(TsFileError::corrupt(
                "aligned chunk group",
                Some(values.group.time.offset),
                format!("a value column has {} rows, the time column {kept}", builder.len().saturating_sub(base)),
            ));
        }
    }
    Ok(())
}

fn decode_value_pages(
    codec: &PageCodec<'_>,
    pages: &[RawPage<'_>],
    chunk_stats: &Statistics,
    plans: &[PagePlan],
    read: &GroupRead<'_>,
    builder: &mut ColumnBuilder,
    bufs: &mut PageBuffers,
) -> Result<()> {
    let (opts, budget) = (read.opts, read.budget);
    let h = codec.chunk();
    let encoding = h.encoding()?;
    for (i, (page, plan)) in pages.iter().zip(plans).enumerate() {
        let PagePlan::Keep { rows, keep } = plan else { continue };
        let before = builder.byte_size();
        if page.header.is_empty_value_page {
            budget.check(builder.min_bytes_for(keep.len()) as u64)?;
            builder.append_nulls(keep.len())?;
            budget.charge(builder.byte_size().saturating_sub(before) as u64)?;
            continue;
        }
        let r = (|| {
            budget.check(builder.min_bytes_for(keep.len()) as u64)?;
            let data = payload(codec, i, page, bufs, &opts.decode)?;
            let vp = split_value_page(data)?;
            if vp.rows != *rows {
                return Err(TsFileError::corrupt("value page", None, format!("{} rows, the time page has {rows}", vp.rows)));
            }
            builder.set_page_statistics(Some(page.header.statistics.as_ref().unwrap_or(chunk_stats)));
            builder.append_with_bitmap(encoding, vp.values, vp.bitmap, vp.rows, keep.clone(), &opts.decode)?;
            budget.charge(builder.byte_size().saturating_sub(before) as u64)
        })();
        r.with_context(|| {
            format!("value chunk at offset {}: series '{}', page {i} at offset {}", h.offset, h.measurement, page.header.offset)
        })?;
    }
    Ok(())
}
