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
use datafusion::physical_optimizer::pruning::PruningPredicateBuilder;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::PhysicalExpr;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;

use crate::arrow::batch::{assemble_batches, ColumnSource};
use crate::datafusion::errors::{df_err, url_file_name};
use crate::datafusion::file_scan::FileScan;
use crate::datafusion::metadata::{DeviceMeta, MetadataCache, TableMeta};
use crate::datafusion::metrics::TsFileScanMetrics;
use crate::datafusion::options::TsFileReadOptions;
use crate::datafusion::pruning::{
    column_roles, prune_or_keep, tag_column_stat, time_column_stat, unit_of, value_column_stat, ColumnRole, ColumnStat,
    ContainerStats,
};
use crate::datafusion::time_bounds::time_bounds;
use crate::datafusion::tree_scan::TreeScan;
use crate::format::{FileReader, TsDataType};
use crate::io::RangeSource;
use crate::read::aligned::{plan_chunk_groups, read_chunk_group_in, AlignedChunkGroup, GroupPageStats, ValuePageStats};
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
            let tmeta = meta.table(&table).map_err(|e| df_err(e.in_file(&name)))?;
            let owned = file_scan.owned_devices(tmeta.devices.iter().map(|d| d.first_offset), range);
            let tag_order: Vec<String> = tmeta.schema.tag_columns().map(|c| c.name.clone()).collect();
            let fields_in_file: HashSet<String> = tmeta.schema.field_columns().map(|c| c.name.clone()).collect();
            let roles = column_roles(&this.file_schema, &tag_order, &fields_in_file);
            let lossy = tmeta
                .schema
                .field_columns()
                .filter(|c| crate::stats::trust::lossy_float_encoding(c.data_type, c.encoding))
                .map(|c| c.name.clone())
                .collect();
            let ctx = Arc::new(ScanContext { file: file_scan, table: tmeta.clone(), roles, lossy });
            let devices = ctx.prune_devices(owned);
            let plans = devices.into_iter().map(|i| ctx.plan_device(i)).collect::<Result<Vec<_>>>()?;
            // Runs of devices fetched with one coalesced request; the next run is fetched
            // (on the object store's I/O threads) while this one is decoded.
            let runs = fetch_runs(plans.into_iter().flatten().collect(), FETCH_RUN_BYTES);
            let fetch_ctx = ctx.clone();
            let stream = futures::stream::iter(runs)
                .map(move |run| {
                    let ctx = fetch_ctx.clone();
                    async move { ctx.fetch_run(run).await }
                })
                .buffered(PREFETCH_RUNS)
                .map_ok(move |(view, run)| {
                    let ctx = ctx.clone();
                    futures::stream::iter(run)
                        .map(move |plan| ctx.decode_device(&view, plan))
                        .map_ok(|b| futures::stream::iter(b.into_iter().map(Ok)))
                        .try_flatten()
                })
                .try_flatten();
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
    /// Projected fields: position among the schema's fields, type.
    projected_fields: Vec<(usize, TsDataType)>,
    /// Byte ranges of the chunks to fetch.
    ranges: Vec<Range<u64>>,
}

/// Split device plans (in scan order) into runs of about `max_bytes` of chunks each.
fn fetch_runs(plans: Vec<DevicePlan>, max_bytes: u64) -> Vec<Vec<DevicePlan>> {
    let mut runs: Vec<Vec<DevicePlan>> = Vec::new();
    let mut bytes = 0u64;
    for p in plans {
        let size: u64 = p.ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum();
        match runs.last_mut() {
            Some(run) if bytes.saturating_add(size) <= max_bytes => {
                bytes += size;
                run.push(p);
            }
            _ => {
                bytes = size;
                runs.push(vec![p]);
            }
        }
    }
    runs
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
            .map(|(role, f)| match role {
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

    fn prune_devices(&self, owned: Vec<usize>) -> Vec<usize> {
        let Some(pp) = &self.file.pruning else { return owned };
        let mut stats = ContainerStats::new(self.file.schema.clone());
        for &i in &owned {
            let Some(d) = self.table.devices.get(i) else { continue };
            let rows = d.rows();
            let time = time_column_stat(&d.time.statistics, self.file.schema.field(0).data_type());
            stats.push(
                rows,
                self.container(d, rows, time, |name, ty| {
                    self.field_stat(name, d.fields.get(name).map(|s| &s.statistics), rows, ty)
                }),
            );
        }
        let keep = prune_or_keep(pp, &stats, &self.file.metrics.predicate_evaluation_errors);
        let before = owned.len();
        let kept: Vec<usize> = owned.into_iter().zip(keep).filter(|(_, k)| *k).map(|(i, _)| i).collect();
        self.file.metrics.devices_pruned.add(before - kept.len());
        kept
    }

    /// What to read of device `index`: its chunk groups that survive pruning, the projected
    /// fields and the byte ranges of their chunks. `None` when nothing is left to read.
    fn plan_device(&self, index: usize) -> Result<Option<DevicePlan>> {
        let Some(d) = self.table.devices.get(index) else { return Ok(None) };
        // Every field of the file schema, for chunk-group pruning; the projected ones are read.
        let field_names: Vec<&str> = self.field_names();
        let series: Vec<_> = field_names.iter().map(|n| d.fields.get(*n)).collect();
        let groups = plan_chunk_groups(&d.time, &series).map_err(|e| self.err(e))?;
        self.file.metrics.chunk_groups_total.add(groups.len());
        let groups = self.prune_groups(d, &field_names, groups);
        if groups.is_empty() {
            return Ok(None);
        }
        // Projected fields: (position in field_names, type).
        let mut projected_fields: Vec<(usize, TsDataType)> = Vec::new();
        for &i in &self.file.indices {
            if let Some(ColumnRole::Field(n)) = self.roles.get(i) {
                if let Some(pos) = field_names.iter().position(|f| f == n) {
                    let ty = self.table.schema.columns.iter().find(|c| c.name == *n).map_or(TsDataType::Unknown, |c| c.data_type);
                    projected_fields.push((pos, ty));
                }
            }
        }
        let mut ranges: Vec<Range<u64>> = Vec::new();
        for g in &groups {
            ranges.push(self.file.chunk_range(g.time.offset)?);
            for (pos, _) in &projected_fields {
                if let Some(Some(c)) = g.values.get(*pos) {
                    ranges.push(self.file.chunk_range(c.offset)?);
                }
            }
        }
        Ok(Some(DevicePlan { index, groups, projected_fields, ranges }))
    }

    fn field_names(&self) -> Vec<&str> {
        self.roles.iter().filter_map(|r| if let ColumnRole::Field(n) = r { Some(n.as_str()) } else { None }).collect()
    }

    /// Fetch the chunks of a run of devices with one coalesced request; returns a reader
    /// over them (with the scan's decryptor) and the run.
    async fn fetch_run(&self, run: Vec<DevicePlan>) -> Result<(Arc<FileReader<RangeSource>>, Vec<DevicePlan>)> {
        let ranges: Vec<Range<u64>> = run.iter().flat_map(|p| p.ranges.iter().cloned()).collect();
        Ok((Arc::new(self.file.fetch(ranges).await?), run))
    }

    /// Decode the planned chunk groups of one device into record batches.
    fn decode_device(&self, view: &FileReader<RangeSource>, plan: DevicePlan) -> Result<Vec<RecordBatch>> {
        let DevicePlan { index, groups, projected_fields, .. } = plan;
        let Some(d) = self.table.devices.get(index) else { return Ok(Vec::new()) };
        let field_names = self.field_names();
        let mut out = Vec::new();
        let _decode = self.file.metrics.decode_time.timer();
        let types: Vec<TsDataType> = projected_fields.iter().map(|(_, t)| *t).collect();
        let page_filter = |stats: &GroupPageStats<'_>| self.page_filter(d, &projected_fields, &field_names, stats);
        let mut next_field = 0usize;
        let sources: Vec<ColumnSource> = self
            .file
            .indices
            .iter()
            .map(|&i| match self.roles.get(i) {
                Some(ColumnRole::Time) => ColumnSource::Time,
                Some(ColumnRole::Tag(seg)) => ColumnSource::Tag(*seg),
                Some(ColumnRole::Field(_)) => {
                    next_field += 1;
                    ColumnSource::Field(next_field - 1)
                }
                _ => ColumnSource::Null(self.file.schema.field(i).data_type().clone()),
            })
            .collect();
        for g in groups {
            let sub = AlignedChunkGroup {
                time: g.time.clone(),
                values: projected_fields.iter().map(|(pos, _)| g.values.get(*pos).cloned().flatten()).collect(),
            };
            let filter: Option<crate::read::aligned::PageFilter<'_>> =
                if self.file.pruning.is_some() { Some(&page_filter) } else { None };
            let mut decoded = read_chunk_group_in(view, &sub, &types, &self.file.options.read, filter, &self.file.budget)
                .map_err(|e| self.err(e.context(format!("device {}", d.device))))?;
            self.file.metrics.pages_total.add(decoded.pages_total);
            self.file.metrics.pages_pruned.add(decoded.pages_pruned);
            let rows = decoded.times.len();
            if rows == 0 {
                continue;
            }
            self.file.metrics.rows_decoded.add(rows);
            let fields: Vec<(TsDataType, &str)> =
                projected_fields.iter().map(|(pos, ty)| (*ty, field_names.get(*pos).copied().unwrap_or(""))).collect();
            let batches = assemble_batches(
                &self.file.projected,
                &sources,
                &d.device,
                &mut decoded,
                &fields,
                self.file.unit,
                self.file.batch_size,
            )
            .map_err(|e| self.err(e.context(format!("device {}", d.device))))?;
            out.extend(batches);
        }
        Ok(out)
    }

    fn prune_groups(&self, d: &DeviceMeta, field_names: &[&str], groups: Vec<AlignedChunkGroup>) -> Vec<AlignedChunkGroup> {
        let Some(pp) = &self.file.pruning else { return groups };
        let mut stats = ContainerStats::new(self.file.schema.clone());
        let time_ty = self.file.schema.field(0).data_type().clone();
        for g in &groups {
            let rows = g.time.statistics.count;
            let time = time_column_stat(&g.time.statistics, &time_ty);
            stats.push(
                rows,
                self.container(d, rows, time, |name, ty| {
                    let pos = field_names.iter().position(|f| *f == name);
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

    fn page_filter(
        &self,
        d: &DeviceMeta,
        projected: &[(usize, TsDataType)],
        field_names: &[&str],
        stats: &GroupPageStats<'_>,
    ) -> Vec<bool> {
        let Some(pp) = &self.file.pruning else { return vec![true; stats.time.len()] };
        let time_ty = self.file.schema.field(0).data_type().clone();
        let mut cs = ContainerStats::new(self.file.schema.clone());
        for (p, ts) in stats.time.iter().enumerate() {
            let rows = ts.count;
            let time = time_column_stat(ts, &time_ty);
            cs.push(
                rows,
                self.container(d, rows, time, |name, ty| {
                    let col = projected.iter().position(|(pos, _)| field_names.get(*pos) == Some(&name));
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
