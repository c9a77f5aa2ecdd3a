//! `StatisticsAggregateExec`: the first aggregation step over a TsFile scan, computed from
//! the files' statistics and, where they cannot answer, from the few pages they point at.
//!
//! Each output partition covers the same files and byte ranges as the scan's partition it
//! replaces, and the same devices (those whose first chunk lies in the range). The first
//! partition to run computes every partition's answer (partitions in parallel): per file it
//! reads the footer (through the scan's metadata cache), keeps the devices the TAG filter
//! accepts, groups them by their TAG values and hands each device to the summary layer
//! ([`crate::summary`]), which folds in series, chunk and page statistics inside the time
//! range and bucket, and returns the chunk groups whose pages must be read; those are fetched
//! (coalesced) and their straddling pages decoded. When the statistics cannot decide (a
//! tree-model table, `first_value`/`last_value` rows tying on time with different values, a
//! grouped float `min`/`max` that DataFusion's order-dependent groups accumulator may answer
//! differently: a NaN, a zero or an infinity no value passes),
//! every partition runs the original `AggregateExec` instead — all or none, because
//! DataFusion's scan partitions steal files from each other — so no answer depends on the
//! rule.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::LexOrdering;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::sorts::sort::sort_batch;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PhysicalExpr, PlanProperties};
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use tokio::sync::OnceCell;

use super::output::{column, nothing_counted, values};
use super::{AggSpec, Arg, Func, GroupCol};
use crate::datafusion::errors::{df_err, url_file_name};
use crate::datafusion::metadata::{FileMeta, MetadataCache};
use crate::datafusion::options::TsFileReadOptions;
use crate::datafusion::tag_filter::{tag_filter_of, TagFilter};
use crate::format::{FileReader, TsDataType};
use crate::io::{fetch_ranges, RangeSource};
use crate::plan::{devices_in_range, DeviceFields, TableView, FETCH_RUN_BYTES};
use crate::read::aligned::AlignedChunkGroup;
use crate::read::DecodeBudget;
use crate::stats::{Merge, NullTreatment, TimeRange};
use crate::summary::{AggFunc, Summary, SummaryQuery, UnitCounts};

/// What a [`StatisticsAggregateExec`] computes, fixed when the rule builds it.
#[derive(Debug, Clone)]
pub(crate) struct StatisticsQuery {
    /// Columns grouped by (TAG columns, a `date_bin` bucket), in output order.
    pub groups: Vec<GroupCol>,
    /// The aggregates, in output order.
    pub aggregates: Vec<AggSpec>,
    /// Output partial states (`Partial`) rather than final values (`Single`).
    pub partial: bool,
    /// Rows outside this range are filtered out.
    pub range: TimeRange,
    /// A predicate over TAG columns only (over `table_schema`): devices it rejects are
    /// filtered out.
    pub tag_filter: Option<Arc<dyn PhysicalExpr>>,
    /// The table's file schema (the columns `tag_filter` reads).
    pub table_schema: SchemaRef,
    /// The files of each partition (as the scan split them).
    pub file_groups: Vec<Vec<PartitionedFile>>,
    /// Where the files are.
    pub store_url: datafusion::execution::object_store::ObjectStoreUrl,
    /// The table's options (table name, metadata limit).
    pub options: TsFileReadOptions,
    /// The scan's metadata cache.
    pub cache: Arc<MetadataCache>,
}

/// An aggregation answered from TsFile statistics (put in place by
/// [`crate::datafusion::TsFileStatisticsAggregate`]); holds the `AggregateExec` it replaces as
/// fallback.
#[derive(Debug)]
pub struct StatisticsAggregateExec {
    query: Arc<StatisticsQuery>,
    fallback: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
    /// This execution's answer: one batch per partition, or `None` to run the fallback.
    answers: Arc<OnceCell<Option<Vec<RecordBatch>>>>,
}

impl StatisticsAggregateExec {
    pub(crate) fn new(query: StatisticsQuery, fallback: Arc<dyn ExecutionPlan>) -> Self {
        let properties = fallback.properties().clone();
        StatisticsAggregateExec {
            query: Arc::new(query),
            fallback,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
            answers: Arc::new(OnceCell::new()),
        }
    }

    /// The aggregation this node replaces, run for partitions statistics cannot answer.
    pub fn fallback(&self) -> &Arc<dyn ExecutionPlan> {
        &self.fallback
    }
}

impl DisplayAs for StatisticsAggregateExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let q = &self.query;
        let aggr: Vec<String> = q.aggregates.iter().map(AggSpec::display).collect();
        let groups: Vec<String> = q
            .groups
            .iter()
            .map(|g| match g {
                GroupCol::Tag(t) => t.clone(),
                GroupCol::Bucket(b, _) => format!("date_bin({}, time)", b.describe()),
            })
            .collect();
        let mut parts = vec![
            ("mode", if q.partial { "Partial" } else { "Single" }.to_string()),
            ("gby", format!("[{}]", groups.join(", "))),
            ("aggr", format!("[{}]", aggr.join(", "))),
        ];
        if q.range.is_empty() {
            parts.push(("time", "[]".to_string()));
        } else if let Some((lo, hi)) = q.range.inclusive().filter(|_| q.range != TimeRange::all()) {
            parts.push(("time", format!("[{lo}, {hi}]")));
        }
        if let Some(t) = &q.tag_filter {
            parts.push(("tags", t.to_string()));
        }
        parts.push(("files", q.file_groups.iter().map(Vec::len).sum::<usize>().to_string()));
        match t {
            DisplayFormatType::TreeRender => {
                for (k, v) in parts {
                    writeln!(f, "{k}={v}")?;
                }
                Ok(())
            }
            _ => {
                let body: Vec<String> = parts.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
                write!(f, "StatisticsAggregateExec: {}", body.join(", "))
            }
        }
    }
}

impl ExecutionPlan for StatisticsAggregateExec {
    fn name(&self) -> &str {
        "StatisticsAggregateExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    /// A leaf: the fallback is run, not planned around.
    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal("StatisticsAggregateExec has no children".into()))
        }
    }

    /// A fresh node for a new execution (the answer is computed once per execution).
    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(StatisticsAggregateExec {
            query: self.query.clone(),
            fallback: self.fallback.clone().reset_state()?,
            properties: self.properties.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
            answers: Arc::new(OnceCell::new()),
        }))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let query = self.query.clone();
        let schema = self.schema();
        let store = context.runtime_env().object_store(&query.store_url)?;
        let fallback = self.fallback.clone();
        let answers = self.answers.clone();
        let fallbacks = MetricBuilder::new(&self.metrics).counter("fallback_partitions", partition);
        let out_schema = schema.clone();
        let metrics = self.metrics.clone();
        let layout = Layout {
            partitions: self.properties.partitioning.partition_count(),
            ordering: self.properties.output_ordering().cloned(),
        };
        let stream = futures::stream::once(async move {
            let answer = answers.get_or_try_init(|| answer_all(query, store, out_schema, metrics, layout)).await?;
            match answer {
                Some(batches) => {
                    let batch = batches
                        .get(partition)
                        .cloned()
                        .ok_or_else(|| DataFusionError::Internal(format!("statistics aggregate: no partition {partition}")))?;
                    Ok::<_, DataFusionError>(futures::stream::once(futures::future::ready(Ok(batch))).boxed())
                }
                None => {
                    fallbacks.add(1);
                    Ok(fallback.execute(partition, context)?.boxed())
                }
            }
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    /// In a serialized plan this node is the aggregation it replaced: the receiving process
    /// decodes and runs that (it has no statistics rule of its own to trust).
    #[cfg(feature = "proto")]
    fn try_to_proto(
        &self,
        ctx: &datafusion::physical_plan::proto::ExecutionPlanEncodeCtx<'_>,
    ) -> Result<Option<datafusion_proto::protobuf::PhysicalPlanNode>> {
        ctx.encode_child(&self.fallback).map(Some)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}

/// Group key: one value per TAG column grouped by.
type Key = Vec<Option<String>>;

/// Metrics of one partition: devices its TAG filter pruned and how its units were answered.
struct UnitMetrics {
    devices_pruned: Count,
    series: Count,
    chunks: Count,
    pages_stats: Count,
    pages_decoded: Count,
    rows_decoded: Count,
}

impl UnitMetrics {
    fn new(metrics: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let c = |name: &'static str| MetricBuilder::new(metrics).counter(name, partition);
        UnitMetrics {
            devices_pruned: c("devices_pruned"),
            series: c("series_from_statistics"),
            chunks: c("chunks_from_statistics"),
            pages_stats: c("pages_from_statistics"),
            pages_decoded: c("pages_decoded"),
            rows_decoded: c("rows_decoded"),
        }
    }

    fn add(&self, u: &UnitCounts) {
        let n = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        self.series.add(n(u.series_from_statistics));
        self.chunks.add(n(u.chunks_from_statistics));
        self.pages_stats.add(n(u.pages_from_statistics));
        self.pages_decoded.add(n(u.pages_decoded));
        self.rows_decoded.add(n(u.rows_decoded));
    }
}

/// The output layout the replaced aggregation promises (and this node with it).
struct Layout {
    /// Output partitions. There may be more than file groups (a round-robin repartition
    /// between the scan and a partial aggregation spreads one scan partition over several):
    /// those hold no files, so their partial states are empty.
    partitions: usize,
    /// The order of each partition's rows: a sorted aggregation (a GROUP BY column that the
    /// filter makes constant, or one the input is ordered by) emits its groups in this order.
    ordering: Option<LexOrdering>,
}

/// The output of every partition of `layout`, or `None` when statistics cannot decide.
/// Partitions are computed concurrently.
async fn answer_all(
    q: Arc<StatisticsQuery>,
    store: Arc<dyn ObjectStore>,
    schema: SchemaRef,
    metrics: ExecutionPlanMetricsSet,
    layout: Layout,
) -> Result<Option<Vec<RecordBatch>>> {
    let partitions = layout.partitions;
    if q.file_groups.len() > partitions {
        return Ok(None);
    }
    let tasks = (0..partitions).map(|p| {
        let (q, store, schema, metrics) = (q.clone(), store.clone(), schema.clone(), metrics.clone());
        tokio::spawn(async move { answer(&q, &store, p, &schema, &UnitMetrics::new(&metrics, p)).await })
    });
    let mut out = Vec::with_capacity(partitions);
    for r in futures::future::join_all(tasks).await {
        match r.map_err(|e| DataFusionError::External(Box::new(e)))?? {
            Some(b) => out.push(match &layout.ordering {
                Some(ordering) => sort_batch(&b, ordering, None)?,
                None => b,
            }),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// The aggregates of the query as summary functions over its value columns, and those
/// columns' names.
fn summary_functions(q: &StatisticsQuery) -> (Vec<AggFunc>, Vec<String>) {
    let mut columns: Vec<String> = Vec::new();
    let mut column = |name: &str| match columns.iter().position(|c| c == name) {
        Some(i) => i,
        None => {
            columns.push(name.to_string());
            columns.len() - 1
        }
    };
    let funcs = q
        .aggregates
        .iter()
        .map(|a| match (&a.arg, a.func) {
            (Arg::Rows | Arg::Nothing, _) | (Arg::Time(..), Func::Count) => AggFunc::Rows,
            (Arg::Time(..), Func::Min) => AggFunc::MinTime,
            (Arg::Time(..), _) => AggFunc::MaxTime,
            (Arg::Field(n, _), f) => {
                let c = column(n);
                let nulls = |ignore: bool| if ignore { NullTreatment::Ignore } else { NullTreatment::Respect };
                match f {
                    Func::Count => AggFunc::Count(c),
                    Func::Sum => AggFunc::Sum(c),
                    Func::Avg => AggFunc::Avg(c),
                    Func::Min => AggFunc::Min(c),
                    Func::Max => AggFunc::Max(c),
                    Func::First { ignore_nulls } => AggFunc::First(c, nulls(ignore_nulls)),
                    Func::Last { ignore_nulls } => AggFunc::Last(c, nulls(ignore_nulls)),
                }
            }
        })
        .collect();
    (funcs, columns)
}

/// The TsFile type of a column a file lacks (never read: only its aggregates' states need
/// a type), from its Arrow type.
fn assumed_type(ty: &DataType) -> TsDataType {
    match ty {
        DataType::Boolean => TsDataType::Boolean,
        DataType::Int32 => TsDataType::Int32,
        DataType::Date32 => TsDataType::Date,
        DataType::Int64 => TsDataType::Int64,
        DataType::Timestamp(..) => TsDataType::Timestamp,
        DataType::Float32 => TsDataType::Float,
        DataType::Float64 => TsDataType::Double,
        _ => TsDataType::String,
    }
}

/// Devices (indices into `tmeta.devices`) among `owned` that the TAG filter accepts.
fn filter_devices(q: &StatisticsQuery, tmeta: &TableView, owned: Vec<usize>) -> Result<Vec<usize>> {
    let Some(pred) = &q.tag_filter else { return Ok(owned) };
    if owned.is_empty() {
        return Ok(owned);
    }
    let tag_order: Vec<&str> = tmeta.schema.tag_columns().map(|c| c.name.as_str()).collect();
    let fields: Vec<Arc<arrow_schema::Field>> =
        q.table_schema.fields().iter().map(|f| Arc::new(f.as_ref().clone().with_nullable(true))).collect();
    let mut arrays = Vec::with_capacity(fields.len());
    for f in &fields {
        let segment = tag_order.iter().position(|t| t == f.name()).map(|p| p + 1);
        let array: arrow_array::ArrayRef = match segment {
            Some(s) => {
                let values: arrow_array::StringArray =
                    owned.iter().map(|&i| tmeta.devices.get(i).and_then(|d| d.device.segment(s))).collect();
                datafusion::arrow::compute::cast(&values, f.data_type())?
            }
            None => arrow_array::new_null_array(f.data_type(), owned.len()),
        };
        arrays.push(array);
    }
    let batch = RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), arrays)?;
    let keep = pred.evaluate(&batch)?.into_array(owned.len())?;
    let keep = keep
        .as_any()
        .downcast_ref::<arrow_array::BooleanArray>()
        .ok_or_else(|| DataFusionError::Internal("TAG filter is not boolean".into()))?;
    Ok(owned
        .into_iter()
        .enumerate()
        .filter(|(i, _)| arrow_array::Array::is_valid(keep, *i) && keep.value(*i))
        .map(|(_, d)| d)
        .collect())
}

/// Chunk groups of one device whose pages must be read.
struct PageWork {
    key: Key,
    groups: Vec<AlignedChunkGroup>,
    /// Byte ranges of the groups' chunks.
    ranges: Vec<std::ops::Range<u64>>,
}

/// The output of one partition, or `None` when statistics cannot decide.
async fn answer(
    q: &StatisticsQuery,
    store: &Arc<dyn ObjectStore>,
    partition: usize,
    schema: &SchemaRef,
    metrics: &UnitMetrics,
) -> Result<Option<RecordBatch>> {
    let files = q.file_groups.get(partition).map(Vec::as_slice).unwrap_or_default();
    let (funcs, columns) = summary_functions(q);
    let buckets = q.groups.iter().find_map(|g| match g {
        GroupCol::Bucket(b, _) => Some(*b),
        GroupCol::Tag(_) => None,
    });
    let tags: Vec<&str> = q
        .groups
        .iter()
        .filter_map(|g| match g {
            GroupCol::Tag(t) => Some(t.as_str()),
            GroupCol::Bucket(..) => None,
        })
        .collect();
    let mut groups: BTreeMap<Key, Summary> = BTreeMap::new();
    let mut counts = UnitCounts::default();
    let budget = DecodeBudget::for_options(&q.options.read);
    for file in files {
        let (meta, _) = q.cache.get_with(store, &file.object_meta, &q.options.read).await.map_err(df_err)?;
        let name = url_file_name(&q.store_url, &file.object_meta.location);
        let table = meta.table_to_scan(q.options.table.as_deref())?;
        if meta.reader().metadata().table_schema(&table).is_none() {
            if meta.plan.holds_tree(&table) {
                // A tree-model path prefix: its rows are a merge of series, not answered here.
                return Ok(None);
            }
            // The file lacks the table: no rows.
            continue;
        }
        // Devices named by TAG equalities: a view of only those when the table's is not loaded.
        let tag_filter = match (&q.tag_filter, meta.reader().metadata().table_schema(&table)) {
            (Some(p), Some(schema)) => {
                let order: Vec<&str> = schema.tag_columns().map(|c| c.name.as_str()).collect();
                tag_filter_of(p, &|n| order.iter().position(|t| *t == n).map(|i| i + 1))
            }
            _ => TagFilter::default(),
        };
        let tmeta =
            meta.view_for(store, &file.object_meta.location, &table, &tag_filter).await.map_err(|e| df_err(e.in_file(&name)))?;
        let types: Vec<TsDataType> = columns
            .iter()
            .map(|c| match tmeta.schema.columns.iter().find(|s| s.name == *c) {
                Some(s) => s.data_type,
                None => q.table_schema.field_with_name(c).map_or(TsDataType::String, |f| assumed_type(f.data_type())),
            })
            .collect();
        let lossy: Vec<bool> = columns.iter().map(|c| tmeta.lossy(c)).collect();
        let sq = SummaryQuery { range: q.range, buckets, types, aggs: funcs.clone(), lossy };
        let tag_order: Vec<&str> = tmeta.schema.tag_columns().map(|c| c.name.as_str()).collect();
        // DeviceID segment of each grouped TAG column (None: not a TAG of this file).
        let segments: Vec<Option<usize>> = tags.iter().map(|g| tag_order.iter().position(|t| t == g).map(|p| p + 1)).collect();
        let range = file.range.as_ref().map(|r| (u64::try_from(r.start).unwrap_or(0), u64::try_from(r.end).unwrap_or(u64::MAX)));
        let owned = devices_in_range(tmeta.devices.iter().map(|d| d.first_offset), range);
        let owned_count = owned.len();
        let devices = filter_devices(q, &tmeta, owned)?;
        metrics.devices_pruned.add(owned_count - devices.len());
        let mut work: Vec<PageWork> = Vec::new();
        // The aggregated columns' series, read device by device into one buffer.
        let wanted: HashSet<&str> = columns.iter().map(String::as_str).collect();
        let mut fields = DeviceFields::default();
        for i in devices {
            let Some(d) = tmeta.devices.get(i) else { continue };
            let key: Key = segments.iter().map(|s| s.and_then(|s| d.device.segment(s)).map(str::to_string)).collect();
            let err = |e: crate::TsFileError| df_err(e.in_file(&name));
            // `count(*)` alone needs no field series (only, for pages to read, chunk offsets).
            let read = !wanted.is_empty();
            if read {
                meta.plan.read_fields(d, &|name| wanted.contains(name), &mut fields).map_err(err)?;
            }
            let series: Vec<_> = columns.iter().map(|c| fields.field(c)).collect();
            let summary = groups.entry(key.clone()).or_default();
            let to_read = sq.plan_device(&d.time, &series, summary, &mut counts).map_err(err)?;
            if !to_read.is_empty() {
                if !read {
                    meta.plan.read_fields(d, &|_| false, &mut fields).map_err(err)?;
                }
                let ranges = meta.plan.chunk_ranges(&tmeta, &to_read, &fields).map_err(err)?;
                work.push(PageWork { key, groups: to_read, ranges });
            }
        }
        let file = FilePages { q, store, meta: &meta, name: &name, sq: &sq, budget: &budget };
        file.read(work, &mut groups, &mut counts).await?;
    }
    metrics.add(&counts);
    let global = tags.is_empty() && buckets.is_none();
    if global {
        // Without GROUP BY there is always one row, even over no rows.
        groups.entry(Vec::new()).or_default();
    }
    to_batch(q, &funcs, groups, global, schema)
}

/// One file's part of a statistics aggregate: what reading its pages needs.
struct FilePages<'a> {
    q: &'a StatisticsQuery,
    store: &'a Arc<dyn ObjectStore>,
    meta: &'a Arc<FileMeta>,
    /// The file as the user names it (in errors).
    name: &'a str,
    sq: &'a SummaryQuery,
    budget: &'a DecodeBudget,
}

impl FilePages<'_> {
    /// Fetch and read the pages of the chunk groups statistics could not answer, in runs of
    /// about [`FETCH_RUN_BYTES`] per request, folding them into `groups`.
    async fn read(&self, work: Vec<PageWork>, groups: &mut BTreeMap<Key, Summary>, counts: &mut UnitCounts) -> Result<()> {
        if work.is_empty() {
            return Ok(());
        }
        let (q, meta) = (self.q, self.meta);
        let err = |e: crate::TsFileError| df_err(e.in_file(self.name));
        let decryptor = crate::crypto::decryptor_for(meta.reader(), &q.options.keys).map_err(err)?;
        let location = meta_location(q, meta, self.name)?;
        let mut run: Vec<PageWork> = Vec::new();
        let mut run_bytes = 0u64;
        let mut pending = work.into_iter().peekable();
        while let Some(w) = pending.next() {
            run_bytes += w.ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum::<u64>();
            run.push(w);
            if run_bytes < FETCH_RUN_BYTES && pending.peek().is_some() {
                continue;
            }
            let all: Vec<std::ops::Range<u64>> = run.iter().flat_map(|w| w.ranges.iter().cloned()).collect();
            let parts = fetch_ranges(self.store, &location, all).await.map_err(err)?;
            let mut view: FileReader<RangeSource> = meta.reader().with_source(meta.reader().source().with_parts(parts));
            view.set_decryptor(decryptor.clone());
            for w in run.drain(..) {
                let summary = groups.entry(w.key).or_default();
                self.sq.read_groups(&view, &w.groups, summary, &q.options.read, self.budget, counts).map_err(err)?;
            }
            run_bytes = 0;
        }
        Ok(())
    }
}

/// The object store path of the file `meta` was read from.
fn meta_location(q: &StatisticsQuery, _meta: &FileMeta, name: &str) -> Result<object_store::path::Path> {
    q.file_groups
        .iter()
        .flatten()
        .map(|f| &f.object_meta.location)
        .find(|l| url_file_name(&q.store_url, l) == name)
        .cloned()
        .ok_or_else(|| DataFusionError::Internal(format!("statistics aggregate: no location for {name}")))
}

/// The output batch: group columns, then each aggregate's value or state columns; `None`
/// when an answer is undecided.
fn to_batch(
    q: &StatisticsQuery,
    funcs: &[AggFunc],
    groups: BTreeMap<Key, Summary>,
    global: bool,
    schema: &SchemaRef,
) -> Result<Option<RecordBatch>> {
    let mut columns: Vec<Vec<ScalarValue>> = vec![Vec::new(); schema.fields().len()];
    for (key, summary) in groups {
        let mut rows: Vec<(Option<i64>, Option<crate::summary::GroupState>)> =
            summary.into_iter().filter(|(_, g)| g.rows > 0).map(|(b, g)| (b, Some(g))).collect();
        if global && rows.is_empty() {
            rows.push((None, None));
        }
        for (bucket, state) in rows {
            let mut c = 0;
            let mut tag_values = key.iter();
            for g in &q.groups {
                let v = match g {
                    GroupCol::Tag(_) => ScalarValue::Utf8(tag_values.next().cloned().flatten()),
                    GroupCol::Bucket(_, ty) => {
                        super::output::cell_scalar(bucket.map_or(crate::summary::Cell::Null, crate::summary::Cell::Int64), ty)?
                    }
                };
                push(&mut columns, c, v)?;
                c += 1;
            }
            let answers: Vec<crate::summary::Answer> = match state {
                Some(s) => {
                    let mut out = Vec::with_capacity(s.aggs.len());
                    for a in s.aggs {
                        // DataFusion's grouped float min/max is not the total order there.
                        if !q.groups.is_empty() && a.float_extreme_order_dependent() {
                            return Ok(None);
                        }
                        match a.finish() {
                            Merge::Exact(answer) => out.push(answer),
                            Merge::NeedDecode => return Ok(None),
                        }
                    }
                    out
                }
                None => empty_answers(funcs),
            };
            for (spec, answer) in q.aggregates.iter().zip(answers) {
                let answer = if spec.arg == Arg::Nothing { nothing_counted(spec) } else { answer };
                for v in values(spec, answer, q.partial)? {
                    push(&mut columns, c, v)?;
                    c += 1;
                }
            }
        }
    }
    let arrays =
        columns.into_iter().zip(schema.fields()).map(|(values, f)| column(values, f.data_type())).collect::<Result<Vec<_>>>()?;
    Ok(Some(RecordBatch::try_new(schema.clone(), arrays)?))
}

/// The answers over no rows.
fn empty_answers(funcs: &[AggFunc]) -> Vec<crate::summary::Answer> {
    use crate::summary::{Answer, Cell};
    funcs
        .iter()
        .map(|f| match f {
            AggFunc::Rows | AggFunc::Count(_) => Answer::Count(0),
            AggFunc::Avg(_) => Answer::Mean { count: 0, sum: 0.0 },
            AggFunc::First(..) | AggFunc::Last(..) => Answer::Positioned(None),
            _ => Answer::Value(Cell::Null),
        })
        .collect()
}

fn push(columns: &mut [Vec<ScalarValue>], c: usize, v: ScalarValue) -> Result<()> {
    columns.get_mut(c).ok_or_else(|| DataFusionError::Internal("statistics aggregate: more values than columns".into()))?.push(v);
    Ok(())
}
