//! The scan of a tree-model table (see [`crate::datafusion::tree`]) for one file or byte
//! range of it.
//!
//! 1. Keep the key's devices whose first chunk starts in the partition's byte range.
//! 2. Prune devices by the predicate against their path, levels, time range and series
//!    statistics (a measurement the device lacks is all null).
//! 3. Per remaining device, lazily, one batch at a time:
//!    * non-aligned series: prune chunks and pages by time, fetch the kept chunks of *every*
//!      series (rows are the union of all their timestamps, whatever the projection), and
//!      stream them through the k-way merge of [`crate::read::merge`], decoding values only
//!      of the projected measurements;
//!    * aligned tree devices: as table devices — chunk groups and pages pruned by time and
//!      value statistics, the projected value chunks decoded.
//! 4. Assemble batches: time, `device`, levels, measurements (null where the device has no
//!    such series; cast to the column's type where `tree_mixed_types = coerce` asks).

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use arrow_schema::{DataType, Field, Schema};
use datafusion::arrow::compute::cast;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{DataFusionError, Result};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};

use crate::arrow::batch::{assemble_batches, ColumnSource};
use crate::datafusion::file_scan::FileScan;
use crate::datafusion::pruning::{prune_or_keep, time_column_stat, value_column_stat, ColumnStat, ContainerStats};
use crate::datafusion::tree::{container, device_container, source_field, time_stat, tree_roles, TreeRole};
use crate::format::{FileReader, Statistics, TsDataType};
use crate::io::RangeSource;
use crate::plan::{TreeDevice, TreeView};
use crate::read::aligned::{
    plan_chunk_groups, read_chunk_group_in, AlignedChunkGroup, DecodedGroup, GroupPageStats, GroupRead, ValuePageStats,
};
use crate::read::merge::{MergeInput, SeriesMerger};
use crate::stats::trust::without_lossy_values;

/// Everything a partition needs to scan the devices of one tree key in one file.
pub(crate) struct TreeScan {
    /// What any scan of this file shares.
    file: FileScan,
    tree: Arc<TreeView>,
    roles: Vec<TreeRole>,
}

/// A projected measurement a device has: its name and series type.
type Present = Vec<(String, TsDataType)>;

impl TreeScan {
    fn err(&self, e: crate::TsFileError) -> DataFusionError {
        self.file.err(e)
    }

    /// The scan of tree key `key` of the file of `file`.
    pub(crate) fn new(file: FileScan, key: &str) -> Result<TreeScan> {
        let tree = file.meta.plan.tree(key).map_err(|e| file.err(e))?;
        let roles = tree_roles(&file.schema);
        Ok(TreeScan { file, tree, roles })
    }

    /// The stream of batches of the devices starting in `range` (all devices when `None`).
    pub(crate) fn stream(self, range: Option<(u64, u64)>) -> Result<BoxStream<'static, Result<RecordBatch>>> {
        let owned = self.file.owned_devices(self.tree.devices.iter().map(|d| d.first_offset), range);
        let devices = self.prune_devices(owned);
        let scan = Arc::new(self);
        Ok(futures::stream::iter(devices)
            .then(move |i| {
                let scan = scan.clone();
                async move { DeviceBatches::open(scan, i).await }
            })
            .map_ok(futures::stream::iter)
            .try_flatten()
            .boxed())
    }

    /// Devices that may hold matching rows (devices without any point never do).
    fn prune_devices(&self, owned: Vec<usize>) -> Vec<usize> {
        let before = owned.len();
        let owned: Vec<usize> =
            owned.into_iter().filter(|&i| self.tree.devices.get(i).is_some_and(|d| d.rows_bound() > 0)).collect();
        let kept = match &self.file.pruning {
            None => owned,
            Some(pp) => {
                let mut stats = ContainerStats::new(self.file.schema.clone());
                for &i in &owned {
                    if let Some(d) = self.tree.devices.get(i) {
                        let (rows, cols) = device_container(d, &self.roles, &self.file.schema);
                        stats.push(rows, cols);
                    }
                }
                let keep = prune_or_keep(pp, &stats, &self.file.metrics.predicate_evaluation_errors);
                owned.into_iter().zip(keep).filter(|(_, k)| *k).map(|(i, _)| i).collect()
            }
        };
        self.file.metrics.devices_pruned.add(before - kept.len());
        kept
    }

    /// The projected measurements, in output order.
    fn projected_measurements(&self) -> Vec<&str> {
        self.file
            .indices
            .iter()
            .filter_map(|&i| match self.roles.get(i) {
                Some(TreeRole::Measurement(n)) => Some(n.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Every measurement of the schema (for statistics of aligned chunk groups).
    fn all_measurements(&self) -> Vec<&str> {
        self.roles
            .iter()
            .filter_map(|r| match r {
                TreeRole::Measurement(n) => Some(n.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Fetch `ranges` (coalesced) and return a reader over them.
    async fn fetch(&self, ranges: Vec<Range<u64>>) -> Result<FileReader<RangeSource>> {
        self.file.fetch(ranges).await
    }

    /// Keep flags of containers (`true` when no predicate, or on a pruning error: see
    /// [`prune_or_keep`]).
    fn keep(&self, containers: impl IntoIterator<Item = (u64, Vec<ColumnStat>)>) -> Vec<bool> {
        let mut stats = ContainerStats::new(self.file.schema.clone());
        for (rows, cols) in containers {
            stats.push(rows, cols);
        }
        let n = stats.num_containers();
        match &self.file.pruning {
            None => vec![true; n],
            Some(pp) => prune_or_keep(pp, &stats, &self.file.metrics.predicate_evaluation_errors),
        }
    }

    /// Statistics of a container of a non-aligned device holding `stats`' time range:
    /// only time, path and levels are known (values of other series share those rows).
    fn time_container(&self, d: &TreeDevice, s: &Statistics) -> (u64, Vec<ColumnStat>) {
        let range = crate::stats::facts::time_bounds(s);
        let time = time_stat(range, self.file.schema.field(0).data_type());
        (s.count, container(d, &self.roles, &self.file.schema, s.count, &time, |_, _| ColumnStat::default()))
    }

    /// Batches of one decoded group of device `d`: `present` names the group's columns.
    fn emit(&self, d: &TreeDevice, group: &mut DecodedGroup, present: &[(String, TsDataType)]) -> Result<Vec<RecordBatch>> {
        let rows = group.times.len();
        if rows == 0 {
            return Ok(Vec::new());
        }
        self.file.metrics.rows_decoded.add(rows);
        let mut sources = Vec::with_capacity(self.file.indices.len());
        let mut source_fields: Vec<Field> = Vec::with_capacity(self.file.indices.len());
        let mut casts = false;
        for (&i, target) in self.file.indices.iter().zip(self.file.projected.fields()) {
            let mut field = target.as_ref().clone();
            sources.push(match self.roles.get(i) {
                Some(TreeRole::Time) => ColumnSource::Time,
                Some(TreeRole::Device) => ColumnSource::Const(Some(d.path.clone())),
                Some(TreeRole::Level(l)) => ColumnSource::Const(d.levels.get(*l).cloned()),
                Some(TreeRole::Measurement(name)) => match present.iter().position(|(n, _)| n == name) {
                    Some(pos) => {
                        let ty = present.get(pos).map_or(TsDataType::Unknown, |p| p.1);
                        if let Some(src) = source_field(target, ty, self.file.unit).map_err(|e| self.err(e))? {
                            field = src;
                            casts = true;
                        }
                        ColumnSource::Field(pos)
                    }
                    None => ColumnSource::Null(target.data_type().clone()),
                },
                None => ColumnSource::Null(target.data_type().clone()),
            });
            source_fields.push(field);
        }
        let source_schema = if casts { Arc::new(Schema::new(source_fields)) } else { self.file.projected.clone() };
        let fields: Vec<(TsDataType, &str)> = present.iter().map(|(n, t)| (*t, n.as_str())).collect();
        let batches = assemble_batches(&source_schema, &sources, &d.device, group, &fields, self.file.unit, self.file.batch_size)
            .map_err(|e| self.err(e.context(format!("device {}", d.path))))?;
        if !casts {
            return Ok(batches);
        }
        batches
            .into_iter()
            .map(|b| {
                let columns = b
                    .columns()
                    .iter()
                    .zip(self.file.projected.fields())
                    .map(|(c, f)| coerce(c, f.data_type()))
                    .collect::<Result<Vec<_>>>()?;
                let opts = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
                Ok(RecordBatch::try_new_with_options(self.file.projected.clone(), columns, &opts)?)
            })
            .collect()
    }
}

/// Convert a measurement read with a device's own type to the column's common type
/// (`tree_mixed_types = coerce`): Arrow's cast, except BLOB → STRING as lower-case hex
/// (`0x…`), since blobs need not be UTF-8.
fn coerce(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if array.data_type() == to {
        return Ok(array.clone());
    }
    if let (DataType::Binary, DataType::Utf8) = (array.data_type(), to) {
        if let Some(b) = array.as_any().downcast_ref::<arrow_array::BinaryArray>() {
            let hex: StringArray = b
                .iter()
                .map(|v| {
                    v.map(|bytes| {
                        bytes.iter().fold(String::from("0x"), |mut s, x| {
                            s.push_str(&format!("{x:02x}"));
                            s
                        })
                    })
                })
                .collect();
            return Ok(Arc::new(hex));
        }
    }
    Ok(cast(array, to)?)
}

/// How a device's rows are produced.
enum DeviceReader {
    /// Nothing left to read.
    Done,
    /// Non-aligned series through the k-way merge; `present` names its value columns.
    Merge { merger: SeriesMerger, present: Present },
    /// An aligned tree device: chunk groups still to decode, and per projected measurement
    /// the device has, its position among `TreeScan::all_measurements` and its type.
    Aligned { groups: VecDeque<AlignedChunkGroup>, projected: Vec<(usize, String, TsDataType)> },
}

/// The batches of one device, produced one group of rows at a time.
struct DeviceBatches {
    scan: Arc<TreeScan>,
    device: usize,
    view: FileReader<RangeSource>,
    reader: DeviceReader,
    pending: VecDeque<RecordBatch>,
}

impl DeviceBatches {
    /// Prune the device's chunks, fetch the rest and set up its reader.
    async fn open(scan: Arc<TreeScan>, device: usize) -> Result<DeviceBatches> {
        let (ranges, reader) = match scan.tree.devices.get(device) {
            Some(d) if d.time.is_some() => Self::plan_aligned(&scan, d)?,
            Some(d) => Self::plan_merge(&scan, d)?,
            None => (Vec::new(), DeviceReader::Done),
        };
        let view = scan.fetch(ranges).await?;
        Ok(DeviceBatches { scan, device, view, reader, pending: VecDeque::new() })
    }

    /// Non-aligned device: every series' chunks kept by time statistics; values decoded only
    /// for the projected measurements.
    fn plan_merge(scan: &TreeScan, d: &TreeDevice) -> Result<(Vec<Range<u64>>, DeviceReader)> {
        let projected = scan.projected_measurements();
        let containers: Vec<(u64, Vec<ColumnStat>)> =
            d.series.iter().flat_map(|s| s.chunks.iter().map(|c| scan.time_container(d, &c.statistics))).collect();
        scan.file.metrics.chunks_total.add(containers.len());
        let keep = scan.keep(containers);
        let mut keep = keep.into_iter();
        let mut inputs = Vec::new();
        let mut ranges = Vec::new();
        let mut present = Vec::new();
        let mut pruned = 0;
        for s in &d.series {
            let chunks: Vec<_> = s.chunks.iter().filter(|_| keep.next().unwrap_or(true)).cloned().collect();
            pruned += s.chunks.len() - chunks.len();
            if chunks.is_empty() {
                continue;
            }
            for c in &chunks {
                ranges.push(scan.file.chunk_range(c.offset)?);
            }
            let values = projected.contains(&s.measurement.as_str());
            if values {
                present.push((s.measurement.clone(), s.data_type));
            }
            inputs.push(MergeInput { series: s.clone(), chunks, values });
        }
        scan.file.metrics.chunks_pruned.add(pruned);
        if inputs.is_empty() {
            return Ok((ranges, DeviceReader::Done));
        }
        let merger = SeriesMerger::new(inputs).map_err(|e| scan.err(e.context(format!("device {}", d.path))))?;
        Ok((ranges, DeviceReader::Merge { merger, present }))
    }

    /// Aligned tree device: chunk groups pruned by chunk statistics, the time chunk and the
    /// projected value chunks of the rest fetched.
    fn plan_aligned(scan: &TreeScan, d: &TreeDevice) -> Result<(Vec<Range<u64>>, DeviceReader)> {
        let Some(time) = &d.time else { return Ok((Vec::new(), DeviceReader::Done)) };
        let names = scan.all_measurements();
        let series: Vec<_> = names.iter().map(|n| d.series(n)).collect();
        let groups = plan_chunk_groups(time, &series).map_err(|e| scan.err(e.context(format!("device {}", d.path))))?;
        scan.file.metrics.chunk_groups_total.add(groups.len());
        let time_ty = scan.file.schema.field(0).data_type().clone();
        let keep = scan.keep(groups.iter().map(|g| {
            let rows = g.time.statistics.count;
            let t = time_column_stat(&g.time.statistics, &time_ty);
            let cols = container(d, &scan.roles, &scan.file.schema, rows, &t, |name, ty| {
                let chunk = names.iter().position(|n| *n == name).and_then(|p| g.values.get(p)).and_then(Option::as_ref);
                value_column_stat(chunk.map(|c| without_lossy_values(&c.statistics, true)).as_deref(), rows, ty)
            });
            (rows, cols)
        }));
        let before = groups.len();
        let groups: VecDeque<AlignedChunkGroup> = groups.into_iter().zip(keep).filter(|(_, k)| *k).map(|(g, _)| g).collect();
        scan.file.metrics.chunk_groups_pruned.add(before - groups.len());
        let projected: Vec<(usize, String, TsDataType)> = scan
            .projected_measurements()
            .into_iter()
            .filter_map(|n| {
                let pos = names.iter().position(|m| *m == n)?;
                d.series(n).map(|s| (pos, n.to_string(), s.data_type))
            })
            .collect();
        let mut ranges = Vec::new();
        for g in &groups {
            ranges.push(scan.file.chunk_range(g.time.offset)?);
            for (pos, _, _) in &projected {
                if let Some(Some(c)) = g.values.get(*pos) {
                    ranges.push(scan.file.chunk_range(c.offset)?);
                }
            }
        }
        Ok((ranges, DeviceReader::Aligned { groups, projected }))
    }

    /// Decode the next group of rows into `pending`; `false` once the device is done.
    fn step(&mut self) -> Result<bool> {
        let scan = self.scan.clone();
        let Some(d) = scan.tree.devices.get(self.device) else { return Ok(false) };
        let _decode = scan.file.metrics.decode_time.timer();
        let ctx = |e: crate::TsFileError| scan.err(e.context(format!("device {}", d.path)));
        match &mut self.reader {
            DeviceReader::Done => Ok(false),
            DeviceReader::Merge { merger, present } => {
                let filter = |stats: &[&Statistics]| scan.keep(stats.iter().map(|s| scan.time_container(d, s)));
                let filter: Option<crate::read::merge::PageStatsFilter<'_>> =
                    if scan.file.pruning.is_some() { Some(&filter) } else { None };
                let next = merger
                    .next_rows(&self.view, scan.file.batch_size, &scan.file.options.read, filter, &scan.file.budget)
                    .map_err(ctx)?;
                let pages = merger.take_page_counts();
                scan.file.metrics.pages_total.add(pages.total);
                scan.file.metrics.pages_pruned.add(pages.pruned);
                match next {
                    None => Ok(false),
                    Some(mut g) => {
                        self.pending.extend(scan.emit(d, &mut g, present)?);
                        Ok(true)
                    }
                }
            }
            DeviceReader::Aligned { groups, projected } => {
                let Some(g) = groups.pop_front() else { return Ok(false) };
                let sub = AlignedChunkGroup {
                    time: g.time.clone(),
                    values: projected.iter().map(|(pos, _, _)| g.values.get(*pos).cloned().flatten()).collect(),
                };
                let types: Vec<TsDataType> = projected.iter().map(|p| p.2).collect();
                let page_filter = |stats: &GroupPageStats<'_>| aligned_page_filter(&scan, d, projected, stats);
                let filter: Option<crate::read::aligned::PageFilter<'_>> =
                    if scan.file.pruning.is_some() { Some(&page_filter) } else { None };
                let mut decoded = read_chunk_group_in(
                    &self.view,
                    &sub,
                    &GroupRead { types: &types, opts: &scan.file.options.read, page_filter: filter, budget: &scan.file.budget },
                )
                .map_err(ctx)?;
                scan.file.metrics.pages_total.add(decoded.pages_total);
                scan.file.metrics.pages_pruned.add(decoded.pages_pruned);
                let present: Present = projected.iter().map(|(_, n, t)| (n.clone(), *t)).collect();
                self.pending.extend(scan.emit(d, &mut decoded, &present)?);
                Ok(true)
            }
        }
    }
}

/// Page pruning of an aligned tree device: time and the projected value pages' statistics;
/// a measurement the device lacks is all null, other measurements unknown.
fn aligned_page_filter(
    scan: &TreeScan,
    d: &TreeDevice,
    projected: &[(usize, String, TsDataType)],
    stats: &GroupPageStats<'_>,
) -> Vec<bool> {
    let time_ty = scan.file.schema.field(0).data_type().clone();
    scan.keep(stats.time.iter().enumerate().map(|(p, ts)| {
        let rows = ts.count;
        let t = time_column_stat(ts, &time_ty);
        let cols = container(d, &scan.roles, &scan.file.schema, rows, &t, |name, ty| {
            if d.series(name).is_none() {
                return ColumnStat { min: None, max: None, nulls: Some(rows) };
            }
            match projected.iter().position(|(_, n, _)| n == name).and_then(|c| stats.values.get(c)).and_then(|v| v.get(p)) {
                Some(ValuePageStats::Stats(s)) => value_column_stat(Some(&without_lossy_values(s, true)), rows, ty),
                Some(ValuePageStats::AllNull) => ColumnStat { min: None, max: None, nulls: Some(rows) },
                None => ColumnStat::default(),
            }
        });
        (rows, cols)
    }))
}

impl Iterator for DeviceBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                return Some(Ok(b));
            }
            match self.step() {
                Ok(true) => continue,
                Ok(false) => {
                    self.reader = DeviceReader::Done;
                    return None;
                }
                Err(e) => {
                    self.reader = DeviceReader::Done;
                    return Some(Err(e));
                }
            }
        }
    }
}
