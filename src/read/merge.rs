//! Streaming k-way merge of a tree-model device's non-aligned series on time.
//!
//! A tree device's rows are the union of its series' timestamps, with a null where a series
//! has no point at that time ("align by device"). [`SeriesMerger`] builds those rows a batch
//! at a time: each series is a cursor over its chunks and pages, decoded one page at a time,
//! so memory holds one decoded page per series plus the output batch, never a whole series.
//!
//! * A series may be merged for its timestamps only (`values: false`): rows exist wherever
//!   any series of the device has a point, whether or not its values are wanted.
//! * Chunks are read in time order; a series whose timestamps do not ascend across its pages
//!   and chunks (chunks overlapping in time) is an error, never silently mis-merged.
//! * Pages are skipped without decompression when a page filter rejects their statistics
//!   (or the chunk's, for a single-page chunk) or they miss `ReadOptions::time_range`.
//! * Runs of identical timestamps across every series (series sampled together, the common
//!   case) are copied in bulk; elsewhere the merge goes row by row.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::error::{Result, ResultExt, TsFileError};
use crate::format::chunk::{PageHeader, PageIter, RawPage};
use crate::format::{
    ByteSource, ChunkHeader, ChunkMetadata, Encoding, FileReader, Statistics, TimeseriesMetadata, TsDataType, WriterEvidence,
};
use crate::read::aligned::DecodedGroup;
use crate::read::check::{PageCheck, ValueCheck};
use crate::read::column::{ColumnBuilder, ColumnValues};
use crate::read::page::{decode_time_window, payload, split_nonaligned, PageBuffers, PageCodec};
use crate::read::{DecodeBudget, ReadOptions};

/// One series to merge.
#[derive(Debug, Clone)]
pub struct MergeInput {
    /// The series (name, type and statistics).
    pub series: TimeseriesMetadata,
    /// The chunks to read: all of `series.chunks` or the ones kept by pruning.
    pub chunks: Vec<ChunkMetadata>,
    /// Decode the values (`false`: only the timestamps, which still define rows).
    pub values: bool,
}

/// Decides which pages of one chunk may hold wanted rows, from each page's statistics
/// (`true` = read the page). Called once per chunk, before any of its pages is decoded.
pub type PageStatsFilter<'f> = &'f dyn Fn(&[&Statistics]) -> Vec<bool>;

/// The chunk a cursor is reading: its bytes and the pages still to visit.
#[derive(Debug)]
struct OpenChunk {
    header: ChunkHeader,
    data: Bytes,
    encoding: Encoding,
    /// The file's page decryptor (none for plaintext files).
    decryptor: Option<std::sync::Arc<dyn crate::format::reader::PageDecryptor>>,
    /// Pages to decode (already filtered), with their statistics' value count and the
    /// checks those statistics make on the values and the timestamps.
    pages: VecDeque<(usize, PageHeader, u64, PageChecks)>,
    /// The file's writer evidence (`FileReader::writer_evidence`).
    writer: std::sync::Arc<WriterEvidence>,
}

/// What a page's statistics check: its values and its timestamps ([`ValueCheck`]).
#[derive(Debug, Clone, Copy)]
struct PageChecks {
    values: Option<ValueCheck>,
    time: Option<ValueCheck>,
}

/// One series being merged.
#[derive(Debug)]
struct SeriesCursor {
    name: String,
    data_type: TsDataType,
    chunks: VecDeque<ChunkMetadata>,
    chunk: Option<OpenChunk>,
    /// Decodes page values (`None` when only timestamps are wanted).
    decoder: Option<ColumnBuilder>,
    /// Timestamps of the current page (within the time range).
    times: Vec<i64>,
    /// Values of the current page, parallel to `times`.
    values: Option<ColumnValues>,
    pos: usize,
    /// Last timestamp of the previous page, for the ascending check.
    last: Option<i64>,
    raw_times: Vec<i64>,
    bufs: PageBuffers,
}

/// Pages counted by a merge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageCounts {
    /// Pages of the chunks opened.
    pub total: usize,
    /// Pages skipped by the time range or the page filter (never decompressed).
    pub pruned: usize,
}

impl SeriesCursor {
    fn new(input: MergeInput) -> Result<Self> {
        let MergeInput { series, mut chunks, values } = input;
        chunks.sort_by_key(|c| (c.statistics.start_time, c.offset));
        let decoder = if values { Some(ColumnBuilder::new(series.data_type)?) } else { None };
        Ok(SeriesCursor {
            name: series.measurement,
            data_type: series.data_type,
            chunks: chunks.into(),
            chunk: None,
            decoder,
            times: Vec::new(),
            values: None,
            pos: 0,
            last: None,
            raw_times: Vec::new(),
            bufs: PageBuffers::default(),
        })
    }

    fn remaining(&self) -> &[i64] {
        self.times.get(self.pos..).unwrap_or(&[])
    }

    /// The next timestamp of the series, decoding pages (and reading chunks) as needed;
    /// `None` once the series is exhausted.
    fn head<S: ByteSource>(
        &mut self,
        file: &FileReader<S>,
        opts: &ReadOptions,
        filter: Option<PageStatsFilter<'_>>,
        budget: &DecodeBudget,
        counts: &mut PageCounts,
    ) -> Result<Option<i64>> {
        loop {
            if let Some(t) = self.times.get(self.pos) {
                return Ok(Some(*t));
            }
            let next_page = self.chunk.as_mut().and_then(|c| c.pages.pop_front());
            if let Some((index, page, count, checks)) = next_page {
                self.decode_page(index, &page, count, checks, opts, budget)?;
                continue;
            }
            self.chunk = None;
            let Some(meta) = self.chunks.pop_front() else { return Ok(None) };
            if let Some((lo, hi)) = opts.time_range {
                if !meta.statistics.overlaps_time(lo, hi) {
                    continue;
                }
            }
            self.chunk = Some(self.open_chunk(file, &meta, opts, filter, counts)?);
        }
    }

    /// Read a chunk, parse its page headers and keep the pages the filter may need.
    fn open_chunk<S: ByteSource>(
        &self,
        file: &FileReader<S>,
        meta: &ChunkMetadata,
        opts: &ReadOptions,
        filter: Option<PageStatsFilter<'_>>,
        counts: &mut PageCounts,
    ) -> Result<OpenChunk> {
        let chunk = file.read_chunk(meta.offset)?;
        let h = &chunk.header;
        let ctx = || format!("series '{}', chunk at offset {}", self.name, h.offset);
        let chunk_type = h.data_type().with_context(ctx)?;
        if chunk_type != self.data_type {
            return Err(TsFileError::corrupt(
                "chunk",
                Some(h.offset),
                format!("type {chunk_type} of '{}' differs from the series type {}", self.name, self.data_type),
            ));
        }
        let encoding = h.encoding().with_context(ctx)?;
        h.compression().with_context(ctx)?;
        let decryptor = crate::crypto::decryptor_of(file).with_context(ctx)?;
        let headers: Vec<PageHeader> =
            PageIter::new(h, &chunk.data)?.map(|p| p.map(|p| p.header)).collect::<Result<_>>().with_context(ctx)?;
        let stats: Vec<&Statistics> = headers.iter().map(|p| p.statistics.as_ref().unwrap_or(&meta.statistics)).collect();
        let mut keep: Vec<bool> = match opts.time_range {
            Some((lo, hi)) => stats.iter().map(|s| s.overlaps_time(lo, hi)).collect(),
            None => vec![true; stats.len()],
        };
        if let Some(f) = filter {
            for (k, v) in keep.iter_mut().zip(f(&stats)) {
                *k &= v;
            }
        }
        counts.total += headers.len();
        counts.pruned += keep.iter().filter(|k| !**k).count();
        let counts_of: Vec<(u64, PageChecks)> = stats
            .iter()
            .map(|s| (s.count, PageChecks { values: ValueCheck::from_statistics(s), time: PageCheck::time(s, None).values }))
            .collect();
        let pages = headers
            .into_iter()
            .zip(counts_of)
            .zip(keep)
            .enumerate()
            .filter(|(_, (_, k))| *k)
            .map(|(i, ((p, (n, c)), _))| (i, p, n, c))
            .collect();
        let writer = file.writer_evidence().clone();
        Ok(OpenChunk { header: chunk.header.clone(), data: chunk.data, encoding, decryptor, pages, writer })
    }

    /// Decode one page into `times` (and `values`), within the time range.
    fn decode_page(
        &mut self,
        index: usize,
        page: &PageHeader,
        count: u64,
        checks: PageChecks,
        opts: &ReadOptions,
        budget: &DecodeBudget,
    ) -> Result<()> {
        let Some(chunk) = &self.chunk else { return Ok(()) };
        let start = page
            .data_offset
            .checked_sub(chunk.header.data_offset())
            .and_then(|s| usize::try_from(s).ok())
            .ok_or_else(|| TsFileError::corrupt("page header", Some(page.offset), "page data before its chunk"))?;
        let data = start
            .checked_add(page.compressed_size as usize)
            .and_then(|end| chunk.data.get(start..end))
            .ok_or_else(|| TsFileError::corrupt("page header", Some(page.offset), "page runs past its chunk"))?;
        let raw = RawPage { header: page.clone(), data };
        let encoding = chunk.encoding;
        let codec = PageCodec::with_decryptor(&chunk.header, chunk.decryptor.clone())?;
        let r = (|| {
            let rows = usize::try_from(count).unwrap_or(usize::MAX);
            let value_bytes = self.decoder.as_ref().map_or(0, |d| d.min_bytes_for(rows)) as u64;
            budget.check(count.saturating_mul(8).saturating_add(value_bytes))?;
            let bytes = payload(&codec, index, &raw, &mut self.bufs, &opts.decode)?;
            let (time_stream, value_stream) = split_nonaligned(bytes)?;
            let keep = decode_time_window(
                opts.nonaligned_time_encoding,
                time_stream,
                count,
                opts.time_range,
                &opts.decode,
                PageCheck { values: checks.time, writer: Some(&chunk.writer) },
                &mut self.raw_times,
            )?;
            let mut charged = self.raw_times.len() * 8;
            self.values = match &mut self.decoder {
                Some(d) => {
                    d.set_page_check(checks.values);
                    d.set_writer_evidence(&chunk.writer);
                    d.append_range(encoding, value_stream, rows, keep, &opts.decode)?;
                    charged += d.byte_size();
                    Some(d.take().0)
                }
                None => None,
            };
            self.times.clear();
            self.times.extend_from_slice(&self.raw_times);
            self.pos = 0;
            budget.charge(charged as u64)
        })();
        r.with_context(|| format!("series '{}', page {index} at offset {}", self.name, page.offset))?;
        if let (Some(last), Some(first)) = (self.last, self.times.first()) {
            if *first <= last {
                return Err(TsFileError::corrupt(
                    "series",
                    Some(page.offset),
                    format!("timestamps of '{}' do not ascend across its pages or chunks ({first} after {last})", self.name),
                ));
            }
        }
        if let Some(t) = self.times.last() {
            self.last = Some(*t);
        }
        Ok(())
    }
}

/// Merges a device's non-aligned series into rows on the union of their timestamps, one
/// batch of rows per call to [`SeriesMerger::next_rows`].
#[derive(Debug)]
pub struct SeriesMerger {
    cursors: Vec<SeriesCursor>,
    heads: Vec<Option<i64>>,
    counts: PageCounts,
}

impl SeriesMerger {
    /// A merger over `inputs`; the output columns are the inputs with `values: true`, in
    /// order.
    pub fn new(inputs: Vec<MergeInput>) -> Result<Self> {
        let cursors = inputs.into_iter().map(SeriesCursor::new).collect::<Result<Vec<_>>>()?;
        let heads = vec![None; cursors.len()];
        Ok(SeriesMerger { cursors, heads, counts: PageCounts::default() })
    }

    /// Pages opened and pruned since the last call (the counters restart at zero).
    #[cfg_attr(not(feature = "datafusion"), allow(dead_code))]
    pub fn take_page_counts(&mut self) -> PageCounts {
        std::mem::take(&mut self.counts)
    }

    /// The next rows, at most `max_rows` of them; `None` once every series is exhausted.
    /// Pages are decoded from `file` (which must hold the inputs' chunks), filtered by
    /// `opts.time_range` and `filter`, and charged to `budget`.
    pub fn next_rows<S: ByteSource>(
        &mut self,
        file: &FileReader<S>,
        max_rows: usize,
        opts: &ReadOptions,
        filter: Option<PageStatsFilter<'_>>,
        budget: &DecodeBudget,
    ) -> Result<Option<DecodedGroup>> {
        let max_rows = max_rows.max(1);
        let mut columns = Vec::new();
        for c in &self.cursors {
            if c.decoder.is_some() {
                columns.push(ColumnBuilder::new(c.data_type)?);
            }
        }
        let mut times: Vec<i64> = Vec::new();
        while times.len() < max_rows {
            for (c, h) in self.cursors.iter_mut().zip(self.heads.iter_mut()) {
                *h = c.head(file, opts, filter, budget, &mut self.counts)?;
            }
            let Some(t) = self.heads.iter().flatten().min().copied() else { break };
            let room = max_rows - times.len();
            // Rows `run` long in which every live series has the same timestamps.
            let run = if self.heads.iter().flatten().all(|h| *h == t) { self.common_run(room) } else { 0 };
            if run > 0 {
                if let Some(first) = self.heads.iter().position(Option::is_some).and_then(|i| self.cursors.get(i)) {
                    times.extend_from_slice(first.remaining().get(..run).unwrap_or(&[]));
                }
            } else {
                times.push(t);
            }
            let mut col = columns.iter_mut();
            for (c, h) in self.cursors.iter_mut().zip(&self.heads) {
                let out = if c.decoder.is_some() { col.next() } else { None };
                let (present, n) = if run > 0 { (h.is_some(), run) } else { (*h == Some(t), 1) };
                if present {
                    if let (Some(out), Some(values)) = (out, &c.values) {
                        out.push_values_from(values, c.pos..c.pos + n)?;
                    }
                    c.pos += n;
                } else if let Some(out) = out {
                    out.append_nulls(n)?;
                }
            }
        }
        if times.is_empty() {
            return Ok(None);
        }
        Ok(Some(DecodedGroup { times, columns, pages_total: 0, pages_pruned: 0 }))
    }

    /// Length of the longest prefix (at most `room`) on which every live series' remaining
    /// timestamps are identical.
    fn common_run(&self, room: usize) -> usize {
        let mut live = self.cursors.iter().zip(&self.heads).filter(|(_, h)| h.is_some()).map(|(c, _)| c.remaining());
        let Some(first) = live.next() else { return 0 };
        let mut run = first.len().min(room);
        for other in live {
            run = first.iter().zip(other).take(run).take_while(|(a, b)| a == b).count();
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::LocalFile;
    use crate::read::nonaligned::read_series;

    /// The rows of a device computed the obvious way: each series read whole, the union of
    /// the timestamps, a value or null per series and timestamp.
    fn reference_merge(
        file: &FileReader<LocalFile>,
        series: &[TimeseriesMetadata],
        opts: &ReadOptions,
    ) -> (Vec<i64>, Vec<Vec<Option<String>>>) {
        let mut per_series = Vec::new();
        let mut all = std::collections::BTreeSet::new();
        for s in series {
            let (times, mut values) = read_series(file, s, opts).unwrap();
            all.extend(times.iter().copied());
            let rendered = render(&mut values);
            per_series.push(times.into_iter().zip(rendered).collect::<std::collections::HashMap<_, _>>());
        }
        let times: Vec<i64> = all.into_iter().collect();
        let cols = per_series.iter().map(|m| times.iter().map(|t| m.get(t).cloned().flatten()).collect()).collect();
        (times, cols)
    }

    fn corpus(name: &str) -> FileReader<LocalFile> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/files").join(name);
        FileReader::open(LocalFile::open(&p).unwrap()).unwrap()
    }

    /// Merge every device of `file` with `batch` rows per call; compare with
    /// [`reference_merge`] (rows, nulls and values).
    fn check_file(name: &str, batch: usize, values_of: impl Fn(usize) -> bool) -> usize {
        let file = corpus(name);
        let opts = ReadOptions::default();
        let budget = DecodeBudget::for_options(&opts);
        let mut rows = 0;
        for d in file.all_devices().unwrap() {
            let series: Vec<TimeseriesMetadata> = file.series(&d).unwrap();
            let (want_times, want_cols) = reference_merge(&file, &series, &opts);
            let inputs: Vec<MergeInput> = series
                .iter()
                .enumerate()
                .map(|(i, s)| MergeInput { series: s.clone(), chunks: s.chunks.clone(), values: values_of(i) })
                .collect();
            let mut merger = SeriesMerger::new(inputs).unwrap();
            let mut times = Vec::new();
            let mut cols: Vec<Vec<Option<String>>> = Vec::new();
            while let Some(mut g) = merger.next_rows(&file, batch, &opts, None, &budget).unwrap() {
                assert!(g.times.len() <= batch.max(1));
                times.extend_from_slice(&g.times);
                cols.resize(g.columns.len(), Vec::new());
                for (c, out) in g.columns.iter_mut().zip(cols.iter_mut()) {
                    assert_eq!(c.len(), g.times.len());
                    out.extend(render(c));
                }
            }
            assert_eq!(times, want_times, "{name} {}", d.device);
            let wanted: Vec<Vec<Option<String>>> =
                want_cols.into_iter().enumerate().filter(|(i, _)| values_of(*i)).map(|(_, c)| c).collect();
            assert_eq!(cols.len(), wanted.len());
            for (g, w) in cols.iter().zip(&wanted) {
                assert_eq!(g, w, "{name} {}", d.device);
            }
            let pages = merger.take_page_counts();
            assert_eq!(pages.pruned, 0);
            rows += times.len();
        }
        rows
    }

    fn render(c: &mut ColumnBuilder) -> Vec<Option<String>> {
        let (values, nulls) = c.take();
        (0..values.len())
            .map(|i| {
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                    return None;
                }
                Some(match &values {
                    ColumnValues::Boolean(b) => b.get_bit(i).to_string(),
                    ColumnValues::Int32(v) => v[i].to_string(),
                    ColumnValues::Int64(v) => v[i].to_string(),
                    ColumnValues::Float(v) => v[i].to_bits().to_string(),
                    ColumnValues::Double(v) => v[i].to_bits().to_string(),
                    ColumnValues::Binary(v) => format!("{:?}", v.get(i)),
                })
            })
            .collect()
    }

    #[test]
    fn test_next_rows_matches_reference_merge() {
        for name in ["tree_chunk_groups.tsfile", "tree_deep_index.tsfile", "tree_utf8.tsfile", "tree_extremes.tsfile"] {
            let all = check_file(name, 8192, |_| true);
            assert!(all > 0);
            assert_eq!(check_file(name, 1, |_| true), all);
            assert_eq!(check_file(name, 7, |i| i % 2 == 0), all);
        }
        // Multi-page chunks, several devices.
        assert!(check_file("tree_enc_int64.tsfile", 100, |_| true) > 1000);
    }

    #[test]
    fn test_next_rows_time_range_and_page_filter() {
        let file = corpus("tree_enc_int32.tsfile");
        let d = file.all_devices().unwrap().remove(0);
        let series = file.series(&d).unwrap();
        let all = reference_merge(&file, &series, &ReadOptions::default()).0;
        let (lo, hi) = (all[all.len() / 3], all[all.len() / 2]);
        let opts = ReadOptions { time_range: Some((lo, hi)), ..ReadOptions::default() };
        let budget = DecodeBudget::for_options(&opts);
        let inputs = series.iter().map(|s| MergeInput { series: s.clone(), chunks: s.chunks.clone(), values: true }).collect();
        let mut m = SeriesMerger::new(inputs).unwrap();
        // The filter rejects pages that end before `lo` (a second, redundant time test).
        let filter = |stats: &[&Statistics]| stats.iter().map(|s| s.end_time >= lo).collect::<Vec<_>>();
        let mut got = Vec::new();
        while let Some(g) = m.next_rows(&file, 50, &opts, Some(&filter), &budget).unwrap() {
            got.extend(g.times);
        }
        let want: Vec<i64> = all.iter().copied().filter(|t| (lo..=hi).contains(t)).collect();
        assert_eq!(got, want);
        let c = m.take_page_counts();
        assert!(c.total > c.pruned && c.pruned > 0, "{c:?}");
    }
}
