//! `layout = iotdb`: a table over an IoTDB data directory, read with IoTDB's semantics by
//! [`crate::datadir`] (overlapping writes resolved, deletions applied, files skipped by
//! `.resource`).
//!
//! The glue only translates: the filters become a time range and a TAG filter (both
//! `Inexact`: DataFusion applies the filters again to the rows), the projection a column
//! list, and the directory's time partitions are spread over the scan's partitions, each
//! read on a blocking thread by [`DataDirReader::read_group`].

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchema, DataFusionError, Result};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PhysicalExpr, PlanProperties};

use crate::arrow::schema::TimeUnit;
use crate::datadir::{looks_like_data_dir, DataDirReader};
use crate::datafusion::errors::df_err;
use crate::datafusion::options::{DirectoryLayout, TsFileReadOptions};
use crate::datafusion::tag_filter::tag_filter_of;
use crate::datafusion::time_bounds::time_bounds;
use crate::file::{TableRead, TsFileOptions};
use crate::format::ColumnCategory;
use crate::plan::TagFilter;

/// An error when `options` ask for `layout = iotdb` at an entry point that reads plain files
/// (a listing table, [`TsFileTable`](crate::datafusion::TsFileTable)), or leave the layout
/// to `auto` and one of `paths` has the shape of an IoTDB data directory: refusing beats
/// returning every write and every deleted point of a data directory.
pub(crate) fn plain_only(options: &TsFileReadOptions, paths: &[&str]) -> Result<()> {
    let how = "CREATE EXTERNAL TABLE … STORED AS TSFILE LOCATION 'dir' OPTIONS ('tsfile.layout' 'iotdb') or IotdbTable::try_new";
    match options.layout {
        DirectoryLayout::Iotdb => {
            Err(DataFusionError::Plan(format!("layout 'iotdb' is read by {how}; this entry point reads plain files")))
        }
        DirectoryLayout::Auto => match paths.iter().find(|p| looks_iotdb(p)) {
            Some(p) => Err(DataFusionError::Plan(format!(
                "{p} is an IoTDB data directory: read it as IoTDB answers it with {how}, or set layout 'plain' to read every file as it is (writes twice, deleted points included)"
            ))),
            None => Ok(()),
        },
        DirectoryLayout::Plain => Ok(()),
    }
}

/// Whether `location` is a local path with the shape of an IoTDB data directory.
pub(crate) fn looks_iotdb(location: &str) -> bool {
    let path = location.strip_prefix("file://").unwrap_or(location);
    !path.contains("://") && !path.contains(['*', '?', '[']) && looks_like_data_dir(path)
}

/// A table of an IoTDB data directory (option `layout = iotdb`).
#[derive(Debug)]
pub struct IotdbTable {
    reader: Arc<DataDirReader>,
    table: String,
    schema: SchemaRef,
    /// TAG column names in DeviceID segment order (segment 1 first).
    tags: Vec<String>,
    time: String,
    options: TsFileReadOptions,
}

impl IotdbTable {
    /// Open the data directory (or database, region, partition) at local path `root` and
    /// expose table `options.table` (or its only table).
    pub fn try_new(root: &str, options: TsFileReadOptions) -> Result<IotdbTable> {
        let path = root.strip_prefix("file://").unwrap_or(root);
        if path.contains("://") {
            return Err(DataFusionError::NotImplemented(format!("layout 'iotdb' reads local directories; {root} is a URL")));
        }
        let file_options = TsFileOptions { read: options.read, time_unit: options.time_unit, keys: options.keys.clone() };
        let reader = Arc::new(DataDirReader::open(path, file_options).map_err(df_err)?);
        let table = match &options.table {
            Some(t) => t.clone(),
            None => {
                let names = reader.table_names().map_err(df_err)?;
                match names.as_slice() {
                    [one] => one.clone(),
                    [] => {
                        return Err(DataFusionError::Plan(format!(
                            "no table-model data file under {root} ({} files skipped)",
                            reader.dir().skipped.len()
                        )))
                    }
                    many => {
                        return Err(DataFusionError::Plan(format!(
                            "{root} holds tables {}: choose one with OPTIONS ('tsfile.table' '…')",
                            many.join(", ")
                        )))
                    }
                }
            }
        };
        let table_schema = reader.table_schema(&table).map_err(df_err)?;
        let schema = reader.arrow_schema(&table).map_err(df_err)?;
        let tags = table_schema.columns.iter().filter(|c| c.category == ColumnCategory::Tag).map(|c| c.name.clone()).collect();
        let time = crate::arrow::schema::time_column_name(&table_schema).to_string();
        Ok(IotdbTable { reader, table, schema, tags, time, options })
    }

    /// The directory reader (files found, skipped, deletions).
    pub fn reader(&self) -> &Arc<DataDirReader> {
        &self.reader
    }

    /// The time range `ttl` allows, in the file's time unit.
    fn ttl_range(&self) -> Option<(i64, i64)> {
        if self.options.ttl_ms == 0 {
            return None;
        }
        let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let scale: i128 = match self.options.time_unit {
            TimeUnit::Microsecond => 1_000,
            TimeUnit::Nanosecond => 1_000_000,
            TimeUnit::Millisecond | TimeUnit::Raw => 1,
        };
        let lo = (i128::try_from(now_ms).unwrap_or(i128::MAX) - i128::from(self.options.ttl_ms)).saturating_mul(scale);
        Some((i64::try_from(lo).unwrap_or(if lo < 0 { i64::MIN } else { i64::MAX }), i64::MAX))
    }
}

#[async_trait]
impl TableProvider for IotdbTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut range = self.ttl_range();
        let mut tags = TagFilter::default();
        if let Some(predicate) = conjunction(filters.iter().cloned()) {
            let df_schema = DFSchema::try_from(self.schema.as_ref().clone())?;
            let physical = state.create_physical_expr(predicate, &df_schema)?;
            let time_type = self.schema.field_with_name(&self.time)?.data_type().clone();
            if let Some((lo, hi)) = time_bounds(&physical, &self.time, &time_type) {
                range = Some(range.map_or((lo, hi), |(a, b)| (a.max(lo), b.min(hi))));
            }
            let segment_of = |name: &str| self.tags.iter().position(|t| t == name).map(|i| i + 1);
            tags = tag_filter_of(&physical, &segment_of);
        }
        let columns: Vec<usize> = projection.cloned().unwrap_or_else(|| (0..self.schema.fields().len()).collect());
        let names: Vec<String> = columns.iter().filter_map(|&i| self.schema.fields().get(i).map(|f| f.name().clone())).collect();
        let schema = Arc::new(self.schema.project(&columns)?);
        let read =
            TableRead { projection: Some(names), time_range: range, devices: None, batch_size: state.config().batch_size() };
        let partitions = state.config().target_partitions().clamp(1, self.reader.group_count().max(1));
        Ok(Arc::new(IotdbScanExec::new(Arc::clone(&self.reader), self.table.clone(), schema, read, tags, partitions)))
    }
}

/// The scan of an [`IotdbTable`]: time partitions of the directory spread over its
/// partitions (group `g` in partition `g % n`).
#[derive(Debug)]
pub struct IotdbScanExec {
    reader: Arc<DataDirReader>,
    table: String,
    schema: SchemaRef,
    read: TableRead,
    tags: TagFilter,
    partitions: usize,
    properties: Arc<PlanProperties>,
}

impl IotdbScanExec {
    fn new(
        reader: Arc<DataDirReader>,
        table: String,
        schema: SchemaRef,
        read: TableRead,
        tags: TagFilter,
        partitions: usize,
    ) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        IotdbScanExec { reader, table, schema, read, tags, partitions, properties: Arc::new(properties) }
    }
}

impl DisplayAs for IotdbScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = self.reader.dir();
        write!(
            f,
            "IotdbScanExec: table={}, root={}, files={}, partitions={}, skipped_files={}",
            self.table,
            dir.root.display(),
            dir.files.len(),
            dir.groups.len(),
            dir.skipped.len()
        )?;
        if let Some((lo, hi)) = self.read.time_range {
            write!(f, ", time=[{lo}, {hi}]")?;
        }
        if !self.tags.is_empty() {
            write!(f, ", tag_filter")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for IotdbScanExec {
    fn name(&self) -> &str {
        "IotdbScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

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
            Err(DataFusionError::Internal("IotdbScanExec has no children".into()))
        }
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        if partition >= self.partitions {
            return Err(DataFusionError::Internal(format!("IotdbScanExec has {} partitions, not {partition}", self.partitions)));
        }
        let groups: Vec<usize> = (partition..self.reader.group_count()).step_by(self.partitions).collect();
        let mut builder = RecordBatchReceiverStreamBuilder::new(self.schema.clone(), 8);
        let tx = builder.tx();
        let (reader, table, read, tags, schema) =
            (Arc::clone(&self.reader), self.table.clone(), self.read.clone(), self.tags.clone(), self.schema.clone());
        builder.spawn_blocking(move || {
            for g in groups {
                let batches = reader.read_group(g, &table, &read, &tags).map_err(df_err)?;
                for batch in batches {
                    let batch = batch.map_err(df_err)?;
                    // The reader's fields carry the table's names and types; take the scan's.
                    let batch = datafusion::arrow::record_batch::RecordBatch::try_new_with_options(
                        schema.clone(),
                        batch.columns().to_vec(),
                        &datafusion::arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
                    )?;
                    if tx.blocking_send(Ok(batch)).is_err() {
                        return Ok(());
                    }
                }
            }
            Ok(())
        });
        Ok(builder.build())
    }
}
