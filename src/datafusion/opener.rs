//! `TsFileOpener`: scans one file (or one byte range of it) for `DataSourceExec`.
//!
//! 1. Load the footer and index (cached) and the table's devices (a tree-model path prefix
//!    is scanned by `tree_scan` instead).
//! 2. Keep the devices whose first chunk starts in this partition's byte range, so a device
//!    is read whole by exactly one partition.
//! 3. Prune devices with the predicate against tag values and series statistics.
//! 4. Per remaining device, lazily: prune chunk groups by chunk statistics, fetch the time
//!    chunk and the projected value chunks of the rest (coalesced range reads), prune pages
//!    by page statistics, decode the kept pages, and emit batches of the projected columns.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileOpenFuture, FileOpener};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_optimizer::pruning::PruningPredicateBuilder;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::PhysicalExpr;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;

use crate::arrow::batch::ColumnSource;
use crate::arrow::device_batches::DeviceBatcher;
use crate::datafusion::errors::{df_err, url_file_name};
use crate::datafusion::file_scan::FileScan;
use crate::datafusion::metadata::{DeviceFields, DeviceMeta, MetadataCache, TableMeta};
use crate::datafusion::metrics::TsFileScanMetrics;
use crate::datafusion::options::TsFileReadOptions;
use crate::datafusion::pruning::{
    column_roles, prune_or_keep, tag_column_stat, time_column_stat, unit_of, value_column_stat, ColumnRole, ColumnStat,
    ContainerStats,
};
use crate::datafusion::tag_filter::TagFilter;
use crate::datafusion::time_bounds::time_bounds;
use crate::datafusion::tree_scan::TreeScan;
use crate::format::{FileReader, TsDataType};
use crate::io::RangeSource;
use crate::read::aligned::{plan_chunk_groups, read_chunk_group_into, AlignedChunkGroup, GroupPageStats, ValuePageStats};
use crate::read::DecodeBudget;
use crate::stats::trust::without_lossy_values;

/// Opens TsFiles for one partition of a scan.
#[derive(Debug, Clone)]
pub struct TsFileOpener {
    pub(crate) store: Arc<dyn ObjectStore>,
    /// The store's URL, for naming files in errors as the user wrote them.
    pub(crate) store_url: ObjectStoreUrl,
    pub(crate) file_schema: SchemaRef,
    pub(crate) file_indices: Vec<usize>,
    pub(crate) predicate: Option<Arc<dyn PhysicalExpr>>,
    pub(crate) options: TsFileReadOptions,
    pub(crate) cache: Arc<MetadataCache>,
    pub(crate) batch_size: usize,
    pub(crate) limit: Option<usize>,
    pub(crate) metrics: ExecutionPlanMetricsSet,
    pub(crate) partition: usize,
    /// Decoded bytes of the whole scan, shared by its partitions (option `max_decoded_bytes`).
    pub(crate) budget: Arc<DecodeBudget>,
}

impl FileOpener for TsFileOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let this = self.clone();
        Ok(Box::pin(async move {
            let location = file.object_meta.location.clone();
            let name = url_file_name(&this.store_url, &location);
            let metrics = TsFileScanMetrics::new(&this.metrics, this.partition, location.as_ref());
            let (meta, cost) = this.cache.get_with(&this.store, &file.object_meta, &this.options.read).await.map_err(df_err)?;
            metrics.metadata_load_time.add_duration(Duration::from_nanos(cost.nanos));
            metrics.metadata_requests.add(usize::try_from(cost.requests).unwrap_or(usize::MAX));
            metrics.metadata_bytes.add(usize::try_from(cost.bytes).unwrap_or(usize::MAX));
            let projected = Arc::new(this.file_schema.project(&this.file_indices)?);
            let table = meta.table_to_scan(this.options.table.as_deref())?;
            let is_table = meta.reader.metadata().table_schema(&table).is_some();
            if !is_table && meta.reader.metadata().table_root(&table).is_none() {
                // The file lacks the table: no rows.
                return Ok(futures::stream::empty().boxed());
            }
            // Pages are decrypted with the user's keys; an encrypted file without a usable
            // key fails here, before any data is fetched (never read as plaintext).
            let decryptor =
                crate::crypto::decryptor_for(&meta.reader, &this.options.keys).map_err(|e| df_err(e.in_file(&name)))?;
            let range =
                file.range.as_ref().map(|r| (u64::try_from(r.start).unwrap_or(0), u64::try_from(r.end).unwrap_or(u64::MAX)));
            let pruning = this
                .predicate
                .clone()
                .and_then(|p| PruningPredicateBuilder::new().with_file_schema(this.file_schema.clone()).build(p));
            // Rows outside the predicate's time range are not emitted (DataFusion still
            // filters what is); off with pruning, for comparisons.
            let mut options = this.options.clone();
            if !options.disable_pruning {
                if let Some(p) = &this.predicate {
                    let time = this.file_schema.field(0);
                    options.read.time_range = time_bounds(p, time.name(), time.data_type());
                }
            }
            let file_scan = FileScan {
                store: this.store.clone(),
                location: location.clone(),
                name: name.clone(),
                meta: meta.clone(),
                schema: this.file_schema.clone(),
                projected,
                indices: this.file_indices.clone(),
                pruning,
                options,
                batch_size: this.batch_size.max(1),
                metrics: metrics.clone(),
                unit: unit_of(&this.file_schema),
                budget: this.budget.clone(),
                decryptor,
            };
            if !is_table {
                // A tree-model path prefix.
                let scan = TreeScan::new(file_scan, &table)?;
                return Ok(with_limit(scan.stream(range)?, this.limit));
            }
            let Some(schema) = meta.reader.metadata().table_schema(&table) else {
                return Ok(futures::stream::empty().boxed());
            };
            let tag_order: Vec<String> = schema.tag_columns().map(|c| c.name.clone()).collect();
            let fields_in_file: HashSet<String> = schema.field_columns().map(|c| c.name.clone()).collect();
            let roles = column_roles(&this.file_schema, &tag_order, &fields_in_file);
            let lossy = schema
                .field_columns()
                .filter(|c| crate::stats::trust::lossy_float_encoding(c.data_type, c.encoding))
                .map(|c| c.name.clone())
                .collect();
            let tags = match &this.predicate {
                Some(p) => TagFilter::new(p, &|name| tag_segment(&this.file_schema, &roles, name)),
                None => TagFilter::default(),
            };
            // A few devices named by TAG equalities: only they are read from the index.
            let partial = meta
                .table_for_tags(&this.store, &location, &table, &tags, tag_order.len())
                .await
                .map_err(|e| df_err(e.in_file(&name)))?;
            let tmeta = match partial {
                Some(t) => Arc::new(t),
                None => meta.table(&table).map_err(|e| df_err(e.in_file(&name)))?,
            };
            let owned = file_scan.owned_devices(tmeta.devices.iter().map(|d| d.first_offset), range);
            let named: HashSet<String> = file_scan
                .pruning
                .as_ref()
                .map(|pp| collect_columns(pp.orig_expr()).into_iter().map(|c| c.name().to_string()).collect())
                .unwrap_or_default();
            let layout = ScanLayout::new(&file_scan, &tmeta, &roles, &named);
            let stat_columns = this.file_schema.fields().iter().map(|f| named.contains(f.name())).collect();
            let ctx = Arc::new(ScanContext { file: file_scan, table: tmeta.clone(), roles, lossy, layout, tags, stat_columns });
            let devices = ctx.prune_devices(owned)?;
            // Runs of devices fetched with one coalesced request, planned as the scan goes
            // (memory follows the run, not the file's device count); the next run is fetched
            // (on the object store's I/O threads) while this one is decoded.
            let runs = FetchRuns {
                ctx: ctx.clone(),
                devices: devices.into_iter(),
                next: None,
                max_bytes: FETCH_RUN_BYTES,
                fields: DeviceFields::default(),
            };
            let fetch_ctx = ctx.clone();
            let stream = futures::stream::iter(runs)
                .map(move |run| {
                    let ctx = fetch_ctx.clone();
                    async move { ctx.fetch_run(run?).await }
                })
                .buffered(PREFETCH_RUNS)
                .map(move |fetched| {
                    let batches: Box<dyn Iterator<Item = Result<RecordBatch>> + Send> = match fetched {
                        Ok((view, run)) => match RunBatches::new(ctx.clone(), view, run) {
                            Ok(run) => Box::new(run),
                            Err(e) => Box::new(std::iter::once(Err(e))),
                        },
                        Err(e) => Box::new(std::iter::once(Err(e))),
                    };
                    futures::stream::iter(batches)
                })
                .flatten();
            Ok(with_limit(stream.boxed(), this.limit))
        }))
    }
}

/// Bytes of chunks fetched by one request (a run of whole devices; a larger device alone).
const FETCH_RUN_BYTES: u64 = 4 << 20;
/// Runs fetched ahead of the one being decoded, per partition.
const PREFETCH_RUNS: usize = 2;

/// The chunks of one device a scan reads.
struct DevicePlan {
    /// Index into the table's devices.
    index: usize,
    /// Chunk groups that survived pruning.
    groups: Vec<AlignedChunkGroup>,
    /// Byte ranges of the chunks to fetch.
    ranges: Vec<Range<u64>>,
}

/// What every device of one scan shares: the file schema's FIELD columns, the projected
/// ones and where each output column comes from (computed once per file and partition, not
/// per device).
struct ScanLayout {
    /// FIELD columns of the file schema, in schema order (chunk-group pruning sees them all).
    field_names: Vec<String>,
    /// Projected fields: position in `field_names`, type.
    projected_fields: Vec<(usize, TsDataType)>,
    /// Types of the projected fields, in decoding order.
    types: Vec<TsDataType>,
    /// Output columns' sources, in projection order.
    sources: Vec<ColumnSource>,
    /// FIELD columns read from each device's index: the projected ones and those the
    /// pruning predicate names (the others' series are stepped over).
    read: HashSet<String>,
    /// Per entry of `field_names`: where [`DeviceFields::field_at`] looks first for it
    /// among a device's read series.
    hints: Vec<usize>,
}

impl ScanLayout {
    fn new(file: &FileScan, table: &TableMeta, roles: &[ColumnRole], named: &HashSet<String>) -> Self {
        let field_names: Vec<String> =
            roles.iter().filter_map(|r| if let ColumnRole::Field(n) = r { Some(n.clone()) } else { None }).collect();
        let mut projected_fields: Vec<(usize, TsDataType)> = Vec::new();
        let mut sources = Vec::with_capacity(file.indices.len());
        for &i in &file.indices {
            sources.push(match roles.get(i) {
                Some(ColumnRole::Time) => ColumnSource::Time,
                Some(ColumnRole::Tag(seg)) => ColumnSource::Tag(*seg),
                Some(ColumnRole::Field(n)) => match field_names.iter().position(|f| f == n) {
                    Some(pos) => {
                        let ty = table.schema.columns.iter().find(|c| c.name == *n).map_or(TsDataType::Unknown, |c| c.data_type);
                        projected_fields.push((pos, ty));
                        ColumnSource::Field(projected_fields.len() - 1)
                    }
                    None => ColumnSource::Null(file.schema.field(i).data_type().clone()),
                },
                _ => ColumnSource::Null(file.schema.field(i).data_type().clone()),
            });
        }
        let types = projected_fields.iter().map(|(_, t)| *t).collect();
        let read: HashSet<String> = field_names
            .iter()
            .enumerate()
            .filter(|(pos, n)| named.contains(*n) || projected_fields.iter().any(|(p, _)| p == pos))
            .map(|(_, n)| n.clone())
            .collect();
        let read_names: Vec<&str> = field_names.iter().map(String::as_str).filter(|n| read.contains(*n)).collect();
        let read_hints = table.field_hints(&read_names);
        let hints = field_names
            .iter()
            .map(|n| read_names.iter().position(|r| r == n).and_then(|i| read_hints.get(i)).copied().unwrap_or(usize::MAX))
            .collect();
        ScanLayout { field_names, projected_fields, types, sources, read, hints }
    }

    /// Series of `field_names[pos]` among a device's read series.
    fn field<'a>(&self, fields: &'a DeviceFields, pos: usize) -> Option<&'a crate::format::TimeseriesMetadata> {
        // A field not read is not among `fields`.
        let name = self.field_names.get(pos)?;
        fields.field_at(name, self.hints.get(pos).copied().unwrap_or(usize::MAX))
    }

    /// Read the series of device `d` this scan needs into `out`.
    fn read_fields(&self, file: &FileScan, d: &DeviceMeta, out: &mut DeviceFields) -> Result<()> {
        file.meta.read_fields(d, &|name| self.read.contains(name), out).map_err(|e| file.err(e))
    }

    /// TsFile type and name of each projected field, in decoding order.
    fn decoded_fields(&self) -> Vec<(TsDataType, String)> {
        self.projected_fields.iter().map(|(pos, ty)| (*ty, self.field_names.get(*pos).cloned().unwrap_or_default())).collect()
    }
}

/// The record batches of one fetched run of devices, decoded device by device as they are
/// asked for and gathered into batches that span devices ([`DeviceBatcher`]).
struct RunBatches {
    ctx: Arc<ScanContext>,
    view: Arc<FileReader<RangeSource>>,
    plans: std::vec::IntoIter<DevicePlan>,
    batcher: DeviceBatcher,
    ready: std::collections::VecDeque<RecordBatch>,
    done: bool,
}

impl RunBatches {
    fn new(ctx: Arc<ScanContext>, view: Arc<FileReader<RangeSource>>, run: Vec<DevicePlan>) -> Result<Self> {
        let batcher = DeviceBatcher::new(
            ctx.file.projected.clone(),
            ctx.layout.sources.clone(),
            ctx.layout.decoded_fields(),
            ctx.file.unit,
            ctx.file.batch_size,
        )
        .map_err(|e| ctx.err(e))?;
        Ok(RunBatches { ctx, view, plans: run.into_iter(), batcher, ready: Default::default(), done: false })
    }
}

impl Iterator for RunBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(b) = self.ready.pop_front() {
                return Some(Ok(b));
            }
            if self.done {
                return None;
            }
            let step = match self.plans.next() {
                Some(plan) => self.ctx.decode_device(&self.view, plan, &mut self.batcher).map(|b| self.ready.extend(b)),
                None => {
                    self.done = true;
                    self.batcher.finish().map(|b| self.ready.extend(b)).map_err(|e| self.ctx.err(e))
                }
            };
            if let Err(e) = step {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

/// The devices of a scan planned one by one and cut into runs of about `max_bytes` of
/// chunks each (a larger device alone), in scan order.
struct FetchRuns {
    ctx: Arc<ScanContext>,
    devices: std::vec::IntoIter<usize>,
    /// A planned device that did not fit in the previous run.
    next: Option<DevicePlan>,
    max_bytes: u64,
    /// The series of the device being planned (one buffer for all).
    fields: DeviceFields,
}

impl Iterator for FetchRuns {
    type Item = Result<Vec<DevicePlan>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut run: Vec<DevicePlan> = Vec::new();
        let mut bytes = 0u64;
        loop {
            let plan = match self.next.take() {
                Some(p) => p,
                None => match self.devices.next() {
                    None => break,
                    Some(i) => match self.ctx.plan_device(i, &mut self.fields) {
                        Ok(Some(p)) => p,
                        Ok(None) => continue,
                        Err(e) => {
                            // Nothing after an error.
                            self.devices = Vec::new().into_iter();
                            return Some(Err(e));
                        }
                    },
                },
            };
            let size: u64 = plan.ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum();
            if !run.is_empty() && bytes.saturating_add(size) > self.max_bytes {
                self.next = Some(plan);
                break;
            }
            bytes = bytes.saturating_add(size);
            run.push(plan);
        }
        (!run.is_empty()).then_some(Ok(run))
    }
}

/// The device-identifier segment of TAG column `name` of `schema`.
fn tag_segment(schema: &arrow_schema::Schema, roles: &[ColumnRole], name: &str) -> Option<usize> {
    let i = schema.index_of(name).ok()?;
    match roles.get(i) {
        Some(ColumnRole::Tag(seg)) => Some(*seg),
        _ => None,
    }
}

/// Stop a scan's stream once `limit` rows have been produced.
fn with_limit(stream: BoxStream<'static, Result<RecordBatch>>, limit: Option<usize>) -> BoxStream<'static, Result<RecordBatch>> {
    match limit {
        None => stream,
        Some(n) => {
            let mut seen = 0usize;
            stream
                .try_take_while(move |b| {
                    let go = seen < n;
                    seen += b.num_rows();
                    futures::future::ready(Ok(go))
                })
                .boxed()
        }
    }
}

/// Everything a partition needs to scan the devices of one file.
struct ScanContext {
    /// What any scan of this file shares.
    file: FileScan,
    table: Arc<TableMeta>,
    roles: Vec<ColumnRole>,
    /// FIELD columns stored with a lossy float encoding: their value statistics describe
    /// the values before encoding, so only their counts prune.
    lossy: HashSet<String>,
    layout: ScanLayout,
    /// TAG values the predicate allows (checked before any statistics are built).
    tags: TagFilter,
    /// Per file-schema column: whether the pruning predicate names it (only those get
    /// statistics in a pruning container).
    stat_columns: Vec<bool>,
}

impl ScanContext {
    fn err(&self, e: crate::TsFileError) -> DataFusionError {
        self.file.err(e)
    }

    /// Statistics of one container for every column: time, tags, fields.
    fn container(
        &self,
        d: &DeviceMeta,
        rows: u64,
        time: ColumnStat,
        field: impl Fn(&str, &arrow_schema::DataType) -> ColumnStat,
    ) -> Vec<ColumnStat> {
        self.roles
            .iter()
            .zip(self.file.schema.fields())
            .zip(&self.stat_columns)
            .map(|((role, f), used)| match role {
                // A column the predicate does not name: no statistics needed.
                _ if !used => ColumnStat::default(),
                ColumnRole::Time => time.clone(),
                ColumnRole::Tag(i) => tag_column_stat(d.device.segment(*i), rows),
                ColumnRole::Attribute | ColumnRole::Missing => ColumnStat { min: None, max: None, nulls: Some(rows) },
                ColumnRole::Field(name) => field(name, f.data_type()),
            })
            .collect()
    }

    /// Pruning statistics of FIELD column `name` in a container of `rows` rows.
    fn field_stat(
        &self,
        name: &str,
        s: Option<&crate::format::Statistics>,
        rows: u64,
        ty: &arrow_schema::DataType,
    ) -> ColumnStat {
        let lossy = self.lossy.contains(name);
        value_column_stat(s.map(|s| without_lossy_values(s, lossy)).as_deref(), rows, ty)
    }

    fn prune_devices(&self, owned: Vec<usize>) -> Result<Vec<usize>> {
        let before = owned.len();
        // TAG equalities first: a string comparison per device, no statistics.
        let owned: Vec<usize> = if self.tags.is_empty() {
            owned
        } else {
            owned.into_iter().filter(|&i| self.table.devices.get(i).is_some_and(|d| self.tags.allows(&d.device))).collect()
        };
        let Some(pp) = &self.file.pruning else {
            self.file.metrics.devices_pruned.add(before - owned.len());
            return Ok(owned);
        };
        let mut stats = ContainerStats::new(self.file.schema.clone());
        // Only the series the predicate names are read (one buffer for all devices).
        let named: HashSet<&str> = self
            .file
            .schema
            .fields()
            .iter()
            .zip(&self.stat_columns)
            .filter(|(_, named)| **named)
            .map(|(f, _)| f.name().as_str())
            .collect();
        let mut fields = DeviceFields::default();
        for &i in &owned {
            let Some(d) = self.table.devices.get(i) else { continue };
            if let Err(e) = self.file.meta.read_fields(d, &|name| named.contains(name), &mut fields) {
                return Err(self.err(e));
            }
            let rows = d.rows();
            let time = time_column_stat(&d.time.statistics, self.file.schema.field(0).data_type());
            stats.push(
                rows,
                self.container(d, rows, time, |name, ty| {
                    self.field_stat(name, fields.field(name).map(|s| &s.statistics), rows, ty)
                }),
            );
        }
        let keep = prune_or_keep(pp, &stats, &self.file.metrics.predicate_evaluation_errors);
        let kept: Vec<usize> = owned.into_iter().zip(keep).filter(|(_, k)| *k).map(|(i, _)| i).collect();
        self.file.metrics.devices_pruned.add(before - kept.len());
        Ok(kept)
    }

    /// What to read of device `index`: its chunk groups that survive pruning, each holding
    /// the chunks of the projected fields in projection order, and the byte ranges of their
    /// time chunks and projected field chunks. `None` when nothing is left.
    fn plan_device(&self, index: usize, fields: &mut DeviceFields) -> Result<Option<DevicePlan>> {
        let Some(d) = self.table.devices.get(index) else { return Ok(None) };
        self.layout.read_fields(&self.file, d, fields)?;
        let projected = &self.layout.projected_fields;
        // Chunk-group pruning needs every field's chunk statistics; a device of one chunk
        // group has none beyond its series statistics, which device pruning has seen.
        let prune = self.file.pruning.is_some() && d.time.chunks.len() > 1;
        let groups = if prune {
            let series: Vec<_> = (0..self.layout.field_names.len()).map(|pos| self.layout.field(fields, pos)).collect();
            let groups = plan_chunk_groups(&d.time, &series).map_err(|e| self.err(e))?;
            self.file.metrics.chunk_groups_total.add(groups.len());
            let kept = self.prune_groups(d, groups);
            // Keep the projected fields' chunks, in projection order.
            kept.into_iter()
                .map(|mut g| AlignedChunkGroup {
                    values: projected.iter().map(|(pos, _)| g.values.get_mut(*pos).and_then(Option::take)).collect(),
                    time: g.time,
                })
                .collect()
        } else {
            let series: Vec<_> = projected.iter().map(|(pos, _)| self.layout.field(fields, *pos)).collect();
            let groups = plan_chunk_groups(&d.time, &series).map_err(|e| self.err(e))?;
            self.file.metrics.chunk_groups_total.add(groups.len());
            groups
        };
        if groups.is_empty() {
            return Ok(None);
        }
        let ranges = self.file.meta.chunk_ranges(&self.table, &groups, fields).map_err(|e| self.err(e))?;
        Ok(Some(DevicePlan { index, groups, ranges }))
    }

    /// Fetch the chunks of a run of devices with one coalesced request; returns a reader
    /// over them (with the scan's decryptor) and the run.
    async fn fetch_run(&self, run: Vec<DevicePlan>) -> Result<(Arc<FileReader<RangeSource>>, Vec<DevicePlan>)> {
        let ranges: Vec<Range<u64>> = run.iter().flat_map(|p| p.ranges.iter().cloned()).collect();
        Ok((Arc::new(self.file.fetch(ranges).await?), run))
    }

    /// Decode the planned chunk groups of one device into `batcher`; returns the batches
    /// it completes.
    fn decode_device(
        &self,
        view: &FileReader<RangeSource>,
        plan: DevicePlan,
        batcher: &mut DeviceBatcher,
    ) -> Result<Vec<RecordBatch>> {
        let DevicePlan { index, groups, .. } = plan;
        let Some(d) = self.table.devices.get(index) else { return Ok(Vec::new()) };
        let _decode = self.file.metrics.decode_time.timer();
        let types = &self.layout.types;
        let page_filter = |stats: &GroupPageStats<'_>| self.page_filter(d, stats);
        let filter: Option<crate::read::aligned::PageFilter<'_>> =
            if self.file.pruning.is_some() { Some(&page_filter) } else { None };
        let max_rows = groups.iter().map(|g| g.time.statistics.count).sum::<u64>();
        let max_rows = usize::try_from(max_rows).unwrap_or(usize::MAX);
        let mut counts = (0usize, 0usize, 0usize);
        let batches = batcher.push_with(&d.device, max_rows, |out| {
            let (pages, pruned, rows) = (out.pages_total, out.pages_pruned, out.rows());
            for g in &groups {
                read_chunk_group_into(view, g, types, &self.file.options.read, filter, &self.file.budget, out)?;
            }
            counts = (out.pages_total - pages, out.pages_pruned - pruned, out.rows() - rows);
            Ok(())
        });
        let batches = batches.map_err(|e| self.err(e.context(format!("device {}", d.device))))?;
        self.file.metrics.pages_total.add(counts.0);
        self.file.metrics.pages_pruned.add(counts.1);
        self.file.metrics.rows_decoded.add(counts.2);
        Ok(batches)
    }

    fn prune_groups(&self, d: &DeviceMeta, groups: Vec<AlignedChunkGroup>) -> Vec<AlignedChunkGroup> {
        let Some(pp) = &self.file.pruning else { return groups };
        let field_names = &self.layout.field_names;
        let mut stats = ContainerStats::new(self.file.schema.clone());
        let time_ty = self.file.schema.field(0).data_type().clone();
        for g in &groups {
            let rows = g.time.statistics.count;
            let time = time_column_stat(&g.time.statistics, &time_ty);
            stats.push(
                rows,
                self.container(d, rows, time, |name, ty| {
                    let pos = field_names.iter().position(|f| f == name);
                    let chunk = pos.and_then(|p| g.values.get(p)).and_then(Option::as_ref);
                    self.field_stat(name, chunk.map(|c| &c.statistics), rows, ty)
                }),
            );
        }
        let keep = prune_or_keep(pp, &stats, &self.file.metrics.predicate_evaluation_errors);
        let before = groups.len();
        let kept: Vec<AlignedChunkGroup> = groups.into_iter().zip(keep).filter(|(_, k)| *k).map(|(g, _)| g).collect();
        self.file.metrics.chunk_groups_pruned.add(before - kept.len());
        kept
    }

    fn page_filter(&self, d: &DeviceMeta, stats: &GroupPageStats<'_>) -> Vec<bool> {
        let Some(pp) = &self.file.pruning else { return vec![true; stats.time.len()] };
        // A chunk group of one page: the page's statistics are its chunks' statistics, which
        // chunk-group pruning (or, for a device of one chunk group, device pruning) has
        // already checked against the same predicate.
        if stats.time.len() == 1 {
            return vec![true];
        }
        let (projected, field_names) = (&self.layout.projected_fields, &self.layout.field_names);
        let time_ty = self.file.schema.field(0).data_type().clone();
        let mut cs = ContainerStats::new(self.file.schema.clone());
        for (p, ts) in stats.time.iter().enumerate() {
            let rows = ts.count;
            let time = time_column_stat(ts, &time_ty);
            cs.push(
                rows,
                self.container(d, rows, time, |name, ty| {
                    let col = projected.iter().position(|(pos, _)| field_names.get(*pos).is_some_and(|f| f == name));
                    match col.and_then(|c| stats.values.get(c)).and_then(|v| v.get(p)) {
                        Some(ValuePageStats::Stats(s)) => self.field_stat(name, Some(s), rows, ty),
                        Some(ValuePageStats::AllNull) => ColumnStat { min: None, max: None, nulls: Some(rows) },
                        None => ColumnStat::default(),
                    }
                }),
            );
        }
        // On a pruning error every page is kept (see `prune_or_keep`).
        prune_or_keep(pp, &cs, &self.file.metrics.predicate_evaluation_errors)
    }
}
