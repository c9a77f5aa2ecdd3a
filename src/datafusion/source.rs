//! `TsFileSource`: the `FileSource` that `DataSourceExec` runs for TsFile scans.
//!
//! It carries the projection (only projected chunks are read), the pushed-down predicate
//! (used for statistics pruning only: every filter is reported as *not* pushed, so
//! DataFusion still filters rows), the options, the metadata cache and the metrics.

use std::fmt;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::Result;
use datafusion::datasource::physical_plan::{FileOpener, FileScanConfig, FileSource};
use datafusion::datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::physical_expr::conjunction;
use datafusion::physical_plan::filter_pushdown::{FilterPushdownPropagation, PushedDown};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::{DisplayFormatType, PhysicalExpr};
use object_store::ObjectStore;

use crate::datafusion::metadata::MetadataCache;
use crate::datafusion::opener::TsFileOpener;
use crate::datafusion::options::TsFileReadOptions;
use crate::read::DecodeBudget;

/// The TsFile `FileSource`.
#[derive(Debug, Clone)]
pub struct TsFileSource {
    table_schema: TableSchema,
    options: TsFileReadOptions,
    cache: Arc<MetadataCache>,
    projection: SplitProjection,
    predicate: Option<Arc<dyn PhysicalExpr>>,
    batch_size: Option<usize>,
    metrics: ExecutionPlanMetricsSet,
    /// Decoded bytes of this scan over all partitions (option `max_decoded_bytes`).
    budget: Arc<DecodeBudget>,
}

impl TsFileSource {
    /// A source for `table_schema` (the merged file schema plus partition columns).
    pub fn new(table_schema: TableSchema, options: TsFileReadOptions, cache: Arc<MetadataCache>) -> Self {
        TsFileSource {
            projection: SplitProjection::unprojected(&table_schema),
            table_schema,
            cache,
            predicate: None,
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
            budget: Arc::new(DecodeBudget::for_options(&options.read)),
            options,
        }
    }

    /// The predicate used for pruning, if any.
    pub fn predicate(&self) -> Option<&Arc<dyn PhysicalExpr>> {
        self.predicate.as_ref()
    }

    /// The same source pruning with `predicate` (over the table schema) instead.
    pub fn with_predicate(mut self, predicate: Option<Arc<dyn PhysicalExpr>>) -> Self {
        self.predicate = predicate;
        self
    }

    /// The options.
    pub fn options(&self) -> &TsFileReadOptions {
        &self.options
    }

    /// The metadata cache the scan reads footers through.
    pub fn cache(&self) -> &Arc<MetadataCache> {
        &self.cache
    }
}

impl FileSource for TsFileSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let file_schema = self.table_schema.file_schema().clone();
        let opener = Arc::new(TsFileOpener {
            store: object_store,
            store_url: base_config.object_store_url.clone(),
            file_schema: file_schema.clone(),
            file_indices: self.projection.file_indices.clone(),
            predicate: if self.options.disable_pruning { None } else { self.predicate.clone() },
            options: self.options.clone(),
            cache: self.cache.clone(),
            batch_size: self.batch_size.unwrap_or(8192),
            limit: base_config.limit,
            metrics: self.metrics.clone(),
            partition,
            budget: self.budget.clone(),
        }) as Arc<dyn FileOpener>;
        ProjectionOpener::try_new(self.projection.clone(), opener, &file_schema)
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut s = self.clone();
        s.batch_size = Some(batch_size);
        Arc::new(s)
    }

    fn filter(&self) -> Option<Arc<dyn PhysicalExpr>> {
        self.predicate.clone()
    }

    fn try_pushdown_projection(&self, projection: &ProjectionExprs) -> Result<Option<Arc<dyn FileSource>>> {
        let mut s = self.clone();
        let merged = self.projection.source.try_merge(projection)?;
        s.projection = SplitProjection::new(self.table_schema.file_schema(), &merged);
        Ok(Some(Arc::new(s)))
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "tsfile"
    }

    fn fmt_extra(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                if let Some(p) = &self.predicate {
                    write!(f, ", pruning_predicate={p}")?;
                }
                if let Some(t) = &self.options.table {
                    write!(f, ", table={t}")?;
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => Ok(()),
        }
    }

    fn try_pushdown_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn FileSource>>> {
        let n = filters.len();
        if filters.is_empty() || self.options.disable_pruning {
            return Ok(FilterPushdownPropagation::with_parent_pushdown_result(vec![PushedDown::No; n]));
        }
        let mut s = self.clone();
        let all = match s.predicate.take() {
            Some(p) => conjunction(std::iter::once(p).chain(filters)),
            None => conjunction(filters),
        };
        s.predicate = Some(all);
        // Filters only prune by statistics: DataFusion must still apply them to rows.
        Ok(FilterPushdownPropagation::with_parent_pushdown_result(vec![PushedDown::No; n]).with_updated_node(Arc::new(s)))
    }

    #[cfg(feature = "proto")]
    fn try_to_proto(
        &self,
        base: &FileScanConfig,
        ctx: &datafusion::physical_plan::proto::ExecutionPlanEncodeCtx<'_>,
    ) -> Result<Option<datafusion_proto::protobuf::PhysicalPlanNode>> {
        crate::datafusion::proto::wire::encode_scan(self.predicate(), self.options(), base, ctx).map(Some)
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        let r = datafusion::physical_plan::apply_expression_roots(self.projection.source.iter(), f)?;
        if r == TreeNodeRecursion::Stop {
            return Ok(r);
        }
        match &self.predicate {
            Some(p) => f(p),
            None => Ok(TreeNodeRecursion::Continue),
        }
    }
}
