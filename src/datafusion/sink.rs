//! `COPY … STORED AS TSFILE` and `INSERT INTO` a TsFile table: [`TsFileSink`].
//!
//! DataFusion's demuxer decides the files (`COPY … TO 'x.tsfile'`: that one file;
//! `COPY … TO 'dir/'` and `INSERT INTO` a table over a directory: new files named
//! `<write id>_<n>.tsfile`, at least `datafusion.execution.minimum_parallel_output_files` of
//! them when the input has that many batches, a new one after
//! `datafusion.execution.soft_max_rows_per_output_file` rows, or one per `PARTITIONED BY`
//! value). Each file is written by a [`TsFileWriter`] into memory, drained to an
//! `object_store` [`BufWriter`] (a multipart upload once it passes its buffer, a single put
//! otherwise) whenever 8 MiB are pending, and completed only when the footer is written: the
//! object appears at its path complete, or not at all (an error aborts the upload). Files
//! are never rewritten: `INSERT OVERWRITE` is not supported.
//!
//! Order: a multi-partition input is read partition after partition (`InOrderExec`), so a
//! file scan's rows come in file order. A device whose rows arrive out of time order across
//! more than `memory_limit` of buffered rows is an error; option `sort` makes DataFusion
//! sort the input by TAG columns and time first (spilling as needed).
//!
//! Write options (`tags`, `time_column`, `memory_limit`, `compression`,
//! `compression.<column>`, `encoding.<column>`, `page_max_points`, `page_max_bytes`, `sort`, see
//! [`crate::writer::options`]) come with the statement's or the table's `OPTIONS` (with or
//! without the `tsfile.` prefix); `table` is shared with reading. Without `table`, the target
//! names the table: `x.tsfile` → `x`, `dir/` → `dir`.

use std::fmt;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use bytes::Bytes;
use datafusion::arrow::compute::SortOptions;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::DataSink;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{LexRequirement, PhysicalExpr, PhysicalSortRequirement};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::datafusion::errors::df_err;
use crate::writer::local::default_table_name;
use crate::writer::{TsFileWriter, TsFileWriterOptions};

/// Bytes of encoded output held before they are handed to the object store.
const DRAIN_BYTES: usize = 8 << 20;

/// The keys of write options (the `tsfile.`/`format.` prefix removed, lower case).
pub fn is_write_option(key: &str) -> bool {
    matches!(key, "tags" | "time_column" | "memory_limit" | "compression" | "page_max_points" | "page_max_bytes" | "sort")
        || key.starts_with("compression.")
        || key.starts_with("encoding.")
}

/// Writes the files of a `COPY` or `INSERT INTO` as TsFiles.
pub struct TsFileSink {
    config: FileSinkConfig,
    options: TsFileWriterOptions,
}

impl fmt::Debug for TsFileSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TsFileSink").field("url", &self.config.original_url).finish()
    }
}

impl DisplayAs for TsFileSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TsFileSink(url={}, table={})", self.config.original_url, self.options.table.as_deref().unwrap_or("?"))
    }
}

impl TsFileSink {
    /// A sink for `config` with write options `pairs` (`table` defaults to the target's name).
    pub fn try_new(config: FileSinkConfig, table: Option<String>, pairs: &[(String, String)]) -> Result<Self> {
        let mut options = TsFileWriterOptions::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(df_err)?;
        options.table = table.or_else(|| default_table_name(&config.original_url)).or_else(|| {
            config.table_paths.first().and_then(|p| default_table_name(&format!("{}/", p.as_str().trim_end_matches('/'))))
        });
        // Fail at planning on a bad schema or option, before any file is started.
        crate::writer::schema::plan(config.output_schema(), &options).map_err(df_err)?;
        Ok(TsFileSink { config, options })
    }

    /// The writer options (table resolved).
    pub fn options(&self) -> &TsFileWriterOptions {
        &self.options
    }

    /// With option `sort`: the order the input must have (TAG columns, then time).
    pub fn required_order(&self) -> Result<Option<LexRequirement>> {
        if !self.options.sort {
            return Ok(None);
        }
        let schema = self.config.output_schema();
        let plan = crate::writer::schema::plan(schema, &self.options).map_err(df_err)?;
        let by = plan.tags.iter().chain(std::iter::once(&plan.time)).map(|&i| {
            let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(schema.field(i).name(), i));
            PhysicalSortRequirement::new(column, Some(SortOptions { descending: false, nulls_first: true }))
        });
        Ok(LexRequirement::new(by))
    }
}

/// Complete the upload (`poll_shutdown` completes a `BufWriter`).
async fn complete(w: &mut BufWriter) -> std::io::Result<()> {
    std::future::poll_fn(|cx| tokio::io::AsyncWrite::poll_shutdown(std::pin::Pin::new(&mut *w), cx)).await
}

/// `batch_schema` with each field's metadata taken from the field of the same name in `sink`.
fn with_metadata_of(batch_schema: &SchemaRef, sink: &SchemaRef) -> SchemaRef {
    let fields: Vec<arrow_schema::Field> = batch_schema
        .fields()
        .iter()
        .map(|f| match sink.field_with_name(f.name()) {
            Ok(s) if f.metadata().is_empty() => f.as_ref().clone().with_metadata(s.metadata().clone()),
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(arrow_schema::Schema::new_with_metadata(fields, batch_schema.metadata().clone()))
}

/// Write one file from its batches.
async fn write_file(
    store: Arc<dyn ObjectStore>,
    path: Path,
    schema: SchemaRef,
    options: TsFileWriterOptions,
    mut rx: tokio::sync::mpsc::Receiver<arrow_array::RecordBatch>,
) -> Result<u64> {
    let mut upload = BufWriter::with_capacity(store, path.clone(), 16 << 20);
    let result: Result<u64> = async {
        // The first batch's schema (the demuxer drops `PARTITIONED BY` columns), with the
        // sink schema's field metadata (TAG marks), or the sink schema for an empty file.
        let first = rx.recv().await;
        let schema = match &first {
            Some(b) => with_metadata_of(b.schema_ref(), &schema),
            None => schema,
        };
        let mut writer = TsFileWriter::try_new(Vec::with_capacity(DRAIN_BYTES), schema, &options).map_err(df_err)?;
        if let Some(b) = &first {
            writer.write(b).map_err(df_err)?;
        }
        while let Some(batch) = rx.recv().await {
            writer.write(&batch).map_err(df_err)?;
            if writer.output_mut().len() >= DRAIN_BYTES {
                let bytes = std::mem::replace(writer.output_mut(), Vec::with_capacity(DRAIN_BYTES));
                upload.put(Bytes::from(bytes)).await?;
            }
        }
        let rows = writer.rows();
        let rest = writer.finish().map_err(df_err)?;
        upload.put(Bytes::from(rest)).await?;
        complete(&mut upload).await.map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(rows)
    }
    .await;
    if result.is_err() {
        // Nothing becomes visible: the multipart upload (or pending put) is dropped.
        let _ = upload.abort().await;
    }
    result.map_err(|e| e.context(format!("writing {path}")))
}

#[async_trait]
impl FileSink for TsFileSink {
    fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        _context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        mut file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let schema = self.config.output_schema().clone();
        let mut tasks = Vec::new();
        while let Some((path, rx)) = file_stream_rx.recv().await {
            tasks.push(SpawnedTask::spawn(write_file(object_store.clone(), path, schema.clone(), self.options.clone(), rx)));
        }
        let mut rows = 0;
        let mut first_error = None;
        for t in tasks {
            match t.join_unwind().await {
                Ok(Ok(n)) => rows += n,
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(e) => {
                    first_error.get_or_insert(DataFusionError::External(Box::new(e)));
                }
            }
        }
        let demux = demux_task.join_unwind().await.map_err(|e| DataFusionError::External(Box::new(e)))?;
        match first_error {
            Some(e) => Err(e),
            None => demux.map(|()| rows),
        }
    }
}

#[async_trait]
impl DataSink for TsFileSink {
    fn schema(&self) -> &SchemaRef {
        self.config.output_schema()
    }

    async fn write_all(&self, data: SendableRecordBatchStream, context: &Arc<TaskContext>) -> Result<u64> {
        FileSink::write_all(self, data, context).await
    }
}
