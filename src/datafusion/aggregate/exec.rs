//! `StatisticsAggregateExec`: the first aggregation step over a TsFile scan, computed from
//! the files' series statistics.
//!
//! Each output partition covers the same files and byte ranges as the scan's partition it
//! replaces, and the same devices (those whose first chunk lies in the range). The first
//! partition to run reads the footers of all partitions (through the scan's metadata
//! cache), groups each partition's devices by their TAG values and adds up each device's
//! statistics. When any file cannot be answered from statistics, every partition runs the
//! original `AggregateExec` instead — all or none, because DataFusion's scan partitions
//! steal files from each other, so one partition's scan may read another's files — and
//! no answer depends on the rule.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PhysicalExpr, PlanProperties};
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use tokio::sync::OnceCell;

use super::accumulate::{column, Acc};
use super::parts::device_part;
use super::AggSpec;
use crate::datafusion::errors::{df_err, url_file_name};
use crate::datafusion::file_scan::devices_in_range;
use crate::datafusion::metadata::MetadataCache;
use crate::datafusion::options::TsFileReadOptions;

/// What a [`StatisticsAggregateExec`] computes, fixed when the rule builds it.
#[derive(Debug, Clone)]
pub(crate) struct StatisticsQuery {
    /// TAG columns grouped by, in output order.
    pub groups: Vec<String>,
    /// The aggregates, in output order.
    pub aggregates: Vec<AggSpec>,
    /// Output partial states (`Partial`) rather than final values (`Single`).
    pub partial: bool,
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
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let q = &self.query;
        let aggr: Vec<String> = q.aggregates.iter().map(AggSpec::display).collect();
        write!(
            f,
            "StatisticsAggregateExec: mode={}, gby=[{}], aggr=[{}], files={}",
            if q.partial { "Partial" } else { "Single" },
            q.groups.join(", "),
            aggr.join(", "),
            q.file_groups.iter().map(Vec::len).sum::<usize>()
        )
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
        let devices = MetricBuilder::new(&self.metrics).counter("devices_from_statistics", partition);
        let fallbacks = MetricBuilder::new(&self.metrics).counter("fallback_partitions", partition);
        let out_schema = schema.clone();
        let stream = futures::stream::once(async move {
            let answer = answers.get_or_try_init(|| answer_all(&query, &store, &out_schema, &devices)).await?;
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

/// The output of every partition from statistics, or `None` when a file cannot be answered.
async fn answer_all(
    q: &StatisticsQuery,
    store: &Arc<dyn ObjectStore>,
    schema: &SchemaRef,
    devices_metric: &Count,
) -> Result<Option<Vec<RecordBatch>>> {
    let mut out = Vec::with_capacity(q.file_groups.len());
    for files in &q.file_groups {
        match answer(q, store, files, schema, devices_metric).await? {
            Some(b) => out.push(b),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// The output of one partition from statistics, or `None` when a file cannot be answered.
async fn answer(
    q: &StatisticsQuery,
    store: &Arc<dyn ObjectStore>,
    files: &[PartitionedFile],
    schema: &SchemaRef,
    devices_metric: &Count,
) -> Result<Option<RecordBatch>> {
    let mut groups: BTreeMap<Key, Vec<Acc>> = BTreeMap::new();
    if q.groups.is_empty() {
        // Without GROUP BY there is always one row, even over no rows.
        groups.insert(Vec::new(), vec![Acc::default(); q.aggregates.len()]);
    }
    for file in files {
        let (meta, _) = q.cache.get_with(store, &file.object_meta, q.options.read.max_metadata_bytes).await.map_err(df_err)?;
        let table = meta.table_to_scan(q.options.table.as_deref())?;
        if meta.reader.metadata().table_schema(&table).is_none() {
            if meta.reader.metadata().table_root(&table).is_some() {
                // A tree-model path prefix: its rows are a merge of series, not answered here.
                return Ok(None);
            }
            // The file lacks the table: no rows.
            continue;
        }
        let tmeta = meta.table(&table).map_err(|e| df_err(e.in_file(url_file_name(&q.store_url, &file.object_meta.location))))?;
        let tag_order: Vec<&str> = tmeta.schema.tag_columns().map(|c| c.name.as_str()).collect();
        // DeviceID segment of each grouped TAG column (None: not a TAG of this file).
        let segments: Vec<Option<usize>> =
            q.groups.iter().map(|g| tag_order.iter().position(|t| t == g).map(|p| p + 1)).collect();
        let range = file.range.as_ref().map(|r| (u64::try_from(r.start).unwrap_or(0), u64::try_from(r.end).unwrap_or(u64::MAX)));
        let owned = devices_in_range(tmeta.devices.iter().map(|d| d.first_offset), range);
        for i in owned {
            let Some(d) = tmeta.devices.get(i) else { continue };
            if d.rows() == 0 {
                // No rows, so no group (a scan would not produce one either).
                continue;
            }
            let key: Key = segments.iter().map(|s| s.and_then(|s| d.device.segment(s)).map(str::to_string)).collect();
            let accs = groups.entry(key).or_insert_with(|| vec![Acc::default(); q.aggregates.len()]);
            for (spec, acc) in q.aggregates.iter().zip(accs.iter_mut()) {
                // (A field this file lacks has no series in any device: no values.)
                let Some(part) = device_part(spec.func, &spec.arg, d) else { return Ok(None) };
                if !acc.add(spec.func, part) {
                    return Ok(None);
                }
            }
            devices_metric.add(1);
        }
    }
    if !groups.values().flatten().all(Acc::is_exact) {
        return Ok(None);
    }
    Ok(Some(to_batch(q, groups, schema)?))
}

/// The output batch: group columns, then each aggregate's value or state columns.
fn to_batch(q: &StatisticsQuery, groups: BTreeMap<Key, Vec<Acc>>, schema: &SchemaRef) -> Result<RecordBatch> {
    let n_groups = q.groups.len();
    let mut columns: Vec<Vec<ScalarValue>> = vec![Vec::with_capacity(groups.len()); schema.fields().len()];
    for (key, accs) in &groups {
        for (c, v) in key.iter().enumerate() {
            if let Some(col) = columns.get_mut(c) {
                col.push(ScalarValue::Utf8(v.clone()));
            }
        }
        let mut c = n_groups;
        for (spec, acc) in q.aggregates.iter().zip(accs) {
            let values =
                if q.partial { acc.state(spec.func, &spec.types)? } else { vec![acc.value(spec.func, single(&spec.types)?)?] };
            for v in values {
                let col = columns
                    .get_mut(c)
                    .ok_or_else(|| DataFusionError::Internal("statistics aggregate: more values than columns".into()))?;
                col.push(v);
                c += 1;
            }
        }
    }
    let arrays =
        columns.into_iter().zip(schema.fields()).map(|(values, f)| column(values, f.data_type())).collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(schema.clone(), arrays)?)
}

fn single(types: &[DataType]) -> Result<&DataType> {
    match types {
        [t] => Ok(t),
        _ => Err(DataFusionError::Internal("statistics aggregate: a final value has one type".into())),
    }
}
