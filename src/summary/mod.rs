//! Aggregates of a device's rows over a time range, optionally per time bucket, answered from
//! statistics wherever they are exact and from decoded rows elsewhere.
//!
//! A [`SummaryQuery`] names the value columns, the aggregates ([`AggFunc`]: `count`, `sum`,
//! `avg`, `min`, `max`, `min(time)`, `max(time)`, `first_value`/`last_value` by time), a
//! [`TimeRange`] and optional [`TimeBuckets`] (`date_bin`). For each aligned device it walks
//! the units from the largest down:
//!
//! 1. the device's series statistics, then each chunk group's chunk statistics
//!    (`SummaryQuery::plan_device`, no I/O): a unit outside the range is skipped; a unit
//!    inside the range (and inside one bucket) whose statistics every aggregate accepts is
//!    folded in; any other unit is handed down;
//! 2. the pages of the chunk groups handed down (`SummaryQuery::read_groups`, which reads
//!    them): the same test on each page's statistics, and only the pages that fail it are
//!    decoded (rows outside the range dropped) and folded in row by row.
//!
//! A unit is taken from statistics only when *every* aggregate accepts it (the rule of
//! [`crate::stats`]: each row is counted once, from statistics or decoded, never both).
//! Results are exactly what a row-by-row computation gives, with float sums within the bound
//! of [`crate::stats::sum`] and `first_value`/`last_value` ties reported as
//! [`Merge::NeedDecode`](crate::stats::Merge).

mod state;

use std::cell::RefCell;
use std::collections::BTreeMap;

pub(crate) use state::Rows;
pub use state::{AggFunc, AggState, Answer, Cell};

use crate::error::Result;
use crate::format::{ByteSource, FileReader, Statistics, TimeseriesMetadata, TsDataType};
use crate::read::aligned::{
    plan_chunk_groups, read_chunk_group_in, AlignedChunkGroup, GroupPageStats, GroupRead, ValuePageStats,
};
use crate::read::{DecodeBudget, ReadOptions};
use crate::stats::{Merge, Offer, Placement, TimeBuckets, TimeRange, TimeSpan};

/// What to compute over each device.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryQuery {
    /// Rows outside this range are not counted.
    pub range: TimeRange,
    /// Fixed-stride buckets (`date_bin`), or one group per device (`None`).
    pub buckets: Option<TimeBuckets>,
    /// Types of the value columns the aggregates read.
    pub types: Vec<TsDataType>,
    /// The aggregates.
    pub aggs: Vec<AggFunc>,
    /// Per value column: its values are stored with a lossy encoding (FLOAT/DOUBLE under
    /// TS_2DIFF or RLE round to a number of decimals), so its statistics, computed by the
    /// writer before encoding, do not describe the values read back: only `count` is taken
    /// from them, every other aggregate of the column decodes. Missing entries: exact.
    pub lossy: Vec<bool>,
}

/// The states of one group (a bucket of a group of devices).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupState {
    /// Rows counted (a group without rows is not part of the answer).
    pub rows: u64,
    /// One state per aggregate of the query.
    pub aggs: Vec<AggState>,
}

/// The states of one group of devices: per bucket start (`None`: no buckets, or the bucket
/// `date_bin` cannot represent).
pub type Summary = BTreeMap<Option<i64>, GroupState>;

/// How the units of a query were answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnitCounts {
    /// Devices answered by their series statistics.
    pub series_from_statistics: u64,
    /// Chunk groups answered by their chunk statistics.
    pub chunks_from_statistics: u64,
    /// Pages answered by their page statistics.
    pub pages_from_statistics: u64,
    /// Pages decoded.
    pub pages_decoded: u64,
    /// Rows decoded and folded in.
    pub rows_decoded: u64,
}

/// One bucket of one device in [`TsFile::summarize`](crate::TsFile::summarize)'s answer.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketSummary {
    /// Bucket start in file units (`None`: no buckets, or the bucket `date_bin` cannot
    /// represent).
    pub bucket: Option<i64>,
    /// Rows of the device in the bucket and the time range.
    pub rows: u64,
    /// One answer per aggregate, in query order (`NeedDecode`: `first_value`/`last_value`
    /// rows tie on time with different values, so the answer depends on row order).
    pub answers: Vec<Merge<Answer>>,
}

/// What a unit's statistics did.
enum Unit {
    /// Outside the range, or empty.
    Skip,
    /// Folded in.
    Used,
    /// Decode it (or its parts).
    Descend,
}

impl SummaryQuery {
    /// An empty group state of this query.
    pub fn empty_state(&self) -> Result<GroupState> {
        let aggs = self.aggs.iter().map(|a| AggState::new(*a, &self.types)).collect::<Result<Vec<_>>>()?;
        Ok(GroupState { rows: 0, aggs })
    }

    /// Offer a unit (time statistics `rows`, value statistics per column) to `into`.
    fn offer(&self, into: &mut Summary, empty: &GroupState, rows: &Statistics, values: &[Option<&Statistics>]) -> Unit {
        let Some(span) = TimeSpan::of(rows) else {
            // An empty unit holds nothing; one whose time statistics contradict themselves
            // is not trusted to lie outside the range: decode it.
            return if rows.count == 0 { Unit::Skip } else { Unit::Descend };
        };
        match self.range.place(span) {
            Placement::Outside => return Unit::Skip,
            Placement::Straddles => return Unit::Descend,
            Placement::Inside => {}
        }
        let key = match self.buckets {
            None => None,
            Some(b) => match b.single_bucket(span) {
                Some(start) => Some(start),
                None => return Unit::Descend,
            },
        };
        let lossy = |a: &AggFunc| a.column().is_some_and(|c| self.lossy.get(c).copied().unwrap_or(false));
        if self.aggs.iter().any(|a| !matches!(a, AggFunc::Count(_)) && lossy(a)) {
            return Unit::Descend;
        }
        let mut trial = into.get(&key).unwrap_or(empty).clone();
        for a in &mut trial.aggs {
            if a.offer_unit(rows, values) == Offer::Decode {
                return Unit::Descend;
            }
        }
        trial.rows = trial.rows.saturating_add(rows.count);
        into.insert(key, trial);
        Unit::Used
    }

    /// Fold in what the series and chunk statistics of one aligned device answer; returns
    /// its chunk groups whose pages must be read (with `SummaryQuery::read_groups`).
    /// `values` are the device's series of the query's value columns (`None`: absent).
    pub(crate) fn plan_device(
        &self,
        time: &TimeseriesMetadata,
        values: &[Option<&TimeseriesMetadata>],
        into: &mut Summary,
        counts: &mut UnitCounts,
    ) -> Result<Vec<AlignedChunkGroup>> {
        let empty = self.empty_state()?;
        let series: Vec<Option<&Statistics>> = values.iter().map(|v| v.map(|s| &s.statistics)).collect();
        // Merged statistics of several chunk groups would hide two rows at the same extreme
        // time (overlapping groups) from `first_value`/`last_value`: offer those per group.
        let positioned = self.aggs.iter().any(|a| matches!(a, AggFunc::First(..) | AggFunc::Last(..)));
        let series_unit = if positioned && time.chunks.len() > 1 {
            match TimeSpan::of(&time.statistics).map(|span| self.range.place(span)) {
                Some(Placement::Outside) => Unit::Skip,
                None if time.statistics.count == 0 => Unit::Skip,
                _ => Unit::Descend,
            }
        } else {
            self.offer(into, &empty, &time.statistics, &series)
        };
        match series_unit {
            Unit::Skip => return Ok(Vec::new()),
            Unit::Used => {
                counts.series_from_statistics += 1;
                return Ok(Vec::new());
            }
            Unit::Descend => {}
        }
        let mut to_read = Vec::new();
        for g in plan_chunk_groups(time, values)? {
            let chunk_values: Vec<Option<&Statistics>> = g.values.iter().map(|c| c.as_ref().map(|c| &c.statistics)).collect();
            match self.offer(into, &empty, &g.time.statistics, &chunk_values) {
                Unit::Skip => {}
                Unit::Used => counts.chunks_from_statistics += 1,
                Unit::Descend => to_read.push(g),
            }
        }
        Ok(to_read)
    }

    /// Read the pages of `groups` (from `SummaryQuery::plan_device`) from `file`: pages
    /// the statistics answer are folded in from them, the rest decoded (rows outside the
    /// range dropped) and folded in row by row.
    pub(crate) fn read_groups<S: ByteSource>(
        &self,
        file: &FileReader<S>,
        groups: &[AlignedChunkGroup],
        into: &mut Summary,
        opts: &ReadOptions,
        budget: &DecodeBudget,
        counts: &mut UnitCounts,
    ) -> Result<()> {
        let empty = self.empty_state()?;
        let mut opts = *opts;
        opts.time_range = self.range.inclusive();
        if opts.time_range.is_none() {
            return Ok(());
        }
        for g in groups {
            let shared = RefCell::new((std::mem::take(into), UnitCounts::default()));
            let filter = |stats: &GroupPageStats<'_>| -> Vec<bool> {
                let mut guard = shared.borrow_mut();
                let (summary, c) = &mut *guard;
                stats
                    .time
                    .iter()
                    .enumerate()
                    .map(|(p, rows)| {
                        let values: Vec<Option<&Statistics>> = stats
                            .values
                            .iter()
                            .map(|col| match col.get(p) {
                                Some(ValuePageStats::Stats(s)) => Some(*s),
                                _ => None,
                            })
                            .collect();
                        match self.offer(summary, &empty, rows, &values) {
                            Unit::Skip => false,
                            Unit::Used => {
                                c.pages_from_statistics += 1;
                                false
                            }
                            Unit::Descend => {
                                c.pages_decoded += 1;
                                true
                            }
                        }
                    })
                    .collect()
            };
            let read = GroupRead { types: &self.types, opts: &opts, page_filter: Some(&filter), budget };
            let decoded = read_chunk_group_in(file, g, &read);
            let (summary, c) = shared.into_inner();
            *into = summary;
            counts.pages_from_statistics += c.pages_from_statistics;
            counts.pages_decoded += c.pages_decoded;
            let mut decoded = decoded?;
            let columns: Vec<_> = decoded.columns.iter_mut().map(|b| b.take()).collect();
            let rows = Rows { times: &decoded.times, columns: &columns };
            counts.rows_decoded += decoded.times.len() as u64;
            self.fold_rows(into, &empty, rows)?;
        }
        Ok(())
    }

    /// Fold decoded rows in, run by run of rows in the same bucket.
    fn fold_rows(&self, into: &mut Summary, empty: &GroupState, rows: Rows<'_>) -> Result<()> {
        let key = |t: i64| self.buckets.and_then(|b| b.bucket_start(t));
        let n = rows.times.len();
        let mut start = 0;
        while start < n {
            let k = rows.times.get(start).and_then(|t| key(*t));
            let end = match self.buckets {
                None => n,
                Some(_) => rows.times.get(start..).map_or(n, |rest| start + rest.iter().take_while(|t| key(**t) == k).count()),
            };
            let state = into.entry(k).or_insert_with(|| empty.clone());
            for a in &mut state.aggs {
                a.offer_rows(rows, start..end)?;
            }
            state.rows = state.rows.saturating_add((end - start) as u64);
            start = end;
        }
        Ok(())
    }
}
