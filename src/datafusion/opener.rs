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

use crate::arrow::device_batches::DeviceBatcher;
use crate::arrow::schema::CATEGORY_KEY;
use crate::datafusion::errors::{df_err, url_file_name};
use crate::datafusion::file_scan::FileScan;
use crate::datafusion::metadata::{FileMeta, MetadataCache};
use crate::datafusion::metrics::TsFileScanMetrics;
use crate::datafusion::options::TsFileReadOptions;
use crate::datafusion::pruning::{unit_of, PredicatePruner};
use crate::datafusion::tag_filter::{tag_filter_of, TagFilter};
use crate::datafusion::time_bounds::time_bounds;
use crate::datafusion::tree_scan::TreeScan;
use crate::format::FileReader;
use crate::io::RangeSource;
use crate::plan::{AccessRequest, DevicePlan, FileView, Pruner, TableAccess};
use crate::read::DecodeBudget;

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
            let is_table = meta.reader().metadata().table_schema(&table).is_some();
            if !is_table && !meta.plan.holds_tree(&table) {
                // The file lacks the table: no rows.
                return Ok(futures::stream::empty().boxed());
            }
            // Pages are decrypted with the user's keys; an encrypted file without a usable
            // key fails here, before any data is fetched (never read as plaintext).
            let decryptor =
                crate::crypto::decryptor_for(meta.reader(), &this.options.keys).map_err(|e| df_err(e.in_file(&name)))?;
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
            let Some(schema) = meta.reader().metadata().table_schema(&table) else {
                return Ok(futures::stream::empty().boxed());
            };
            let tag_order: Vec<String> = schema.tag_columns().map(|c| c.name.clone()).collect();
            let tags = match &this.predicate {
                Some(p) => tag_filter_of(p, &|name| tag_segment(&this.file_schema, &tag_order, name)),
                None => TagFilter::default(),
            };
            // A few devices named by TAG equalities: only they are read from the index.
            let view = meta.view_for(&this.store, &location, &table, &tags).await.map_err(|e| df_err(e.in_file(&name)))?;
            let owned = file_scan.owned_devices(view.devices.iter().map(|d| d.first_offset), range);
            let pruner = file_scan.pruning.clone().map(|pp| {
                let errors = metrics.predicate_evaluation_errors.clone();
                Box::new(PredicatePruner::new(pp, this.file_schema.clone(), errors)) as Box<dyn Pruner>
            });
            let request = AccessRequest {
                schema: this.file_schema.clone(),
                projection: this.file_indices.clone(),
                tags,
                pruner,
                read: file_scan.options.read,
                counter: Arc::new(metrics.clone()),
            };
            let access = Arc::new(TableAccess::new(view, request));
            let devices = access.prune_devices(&meta.plan, owned).map_err(|e| file_scan.err(e))?;
            let ctx = Arc::new(ScanContext { file: file_scan, access });
            // Runs of devices fetched with one coalesced request, planned as the scan goes
            // (memory follows the run, not the file's device count); the next run is fetched
            // (on the object store's I/O threads) while this one is decoded.
            let runs = ctx.access.runs(PlanOf(meta.clone()), devices);
            let fetch_ctx = ctx.clone();
            let stream = futures::stream::iter(runs)
                .map(move |run| {
                    let ctx = fetch_ctx.clone();
                    async move {
                        let run = run.map_err(|e| ctx.file.err(e))?;
                        let ranges: Vec<Range<u64>> = run.iter().flat_map(|p| p.ranges.iter().cloned()).collect();
                        Ok::<_, DataFusionError>((Arc::new(ctx.file.fetch(ranges).await?), run))
                    }
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

/// The planning view of a cached file, as the access plan's runs hold it.
struct PlanOf(Arc<FileMeta>);

impl AsRef<FileView<RangeSource>> for PlanOf {
    fn as_ref(&self) -> &FileView<RangeSource> {
        &self.0.plan
    }
}

/// Runs fetched ahead of the one being decoded, per partition.
const PREFETCH_RUNS: usize = 2;

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
        let batcher =
            ctx.access.batcher(ctx.file.projected.clone(), ctx.file.unit, ctx.file.batch_size).map_err(|e| ctx.file.err(e))?;
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
                Some(plan) => {
                    let _decode = self.ctx.file.metrics.decode_time.timer();
                    let decoded =
                        self.ctx.access.decode_device(self.view.as_ref(), plan, &mut self.batcher, &self.ctx.file.budget);
                    decoded.map(|b| self.ready.extend(b)).map_err(|e| self.ctx.file.err(e))
                }
                None => {
                    self.done = true;
                    self.batcher.finish().map(|b| self.ready.extend(b)).map_err(|e| self.ctx.file.err(e))
                }
            };
            if let Err(e) = step {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

/// The device-identifier segment of TAG column `name` of `schema` in a file whose table's
/// TAG columns are `tag_order`.
fn tag_segment(schema: &arrow_schema::Schema, tag_order: &[String], name: &str) -> Option<usize> {
    let field = schema.field_with_name(name).ok()?;
    if field.metadata().get(CATEGORY_KEY).map(String::as_str) != Some("TAG") {
        return None;
    }
    tag_order.iter().position(|t| t == name).map(|p| p + 1)
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

/// Everything a partition needs to scan the devices of one file: the file's scan state and
/// the access plan.
struct ScanContext {
    /// What any scan of this file shares.
    file: FileScan,
    access: Arc<TableAccess>,
}
