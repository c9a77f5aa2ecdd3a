//! `datafusion_tsfile.sql`: a query on this package's own engine — the one the `tsfile` CLI
//! runs, with every TsFile rule registered. It is where the aggregates answered from
//! statistics (counts, extremes, latest values, window and bucket aggregates) run from
//! Python: a datafusion-python session plans aggregates itself, above a foreign scan that
//! cannot rewrite them.
//!
//! Tables are the ones given (opened `TsFileTable`s or paths) plus any `.tsfile` location
//! quoted in the query (`FROM 'data/*.tsfile'`).

use std::sync::Arc;

use arrow::array::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use datafusion_tsfile::datafusion::enable_tsfile_url_tables;
use pyo3::prelude::*;

use crate::arrow_export::{BatchStream, OrderedBatches};
use crate::errors;
use crate::provider::{open_table, PyTsFileTable};
use crate::read::physical_plan;
use crate::runtime;
use crate::session::own_session;
use datafusion_tsfile::stores::StorageOptions;

/// A table to register under a name: one already opened, or paths to open with the
/// default options.
#[derive(FromPyObject)]
pub enum TableArg {
    /// A `TsFileTable` (its options included).
    Opened(Py<PyTsFileTable>),
    /// Files, directories or globs.
    Paths(Vec<String>),
    /// Arrow data (anything with `__arrow_c_stream__`), registered as an in-memory table:
    /// the source of a `COPY … TO 'x.tsfile' STORED AS TSFILE`.
    Data(Py<PyAny>),
}

/// Run `query` (one statement) with `tables` registered; the whole result, in the order
/// the query gives.
/// Remote locations (given or quoted in the query) are read with `storage`; an opened
/// `TsFileTable`'s own options are the ones it was opened with.
pub fn sql(py: Python<'_>, query: &str, tables: Vec<(String, TableArg)>, storage: &StorageOptions) -> PyResult<BatchStream> {
    let ctx = enable_tsfile_url_tables(own_session(storage)?);
    for (name, table) in tables {
        let table: Arc<dyn TableProvider> = match table {
            TableArg::Opened(opened) => {
                let opened = opened.get();
                if opened.storage() != storage && opened.table().paths().iter().any(|p| p.contains("://")) {
                    // Its stores are not this session's: read it through a session of its own options.
                    let own = own_session(opened.storage())?;
                    for path in opened.table().paths() {
                        let (url, store) =
                            datafusion_tsfile::datafusion::ensure_store(&own.runtime_env(), path, opened.storage())
                                .map_err(errors::from_datafusion)?;
                        ctx.runtime_env().register_object_store(url.object_store().as_ref(), store);
                    }
                }
                opened.table()
            }
            TableArg::Paths(paths) => Arc::new(open_table(py, &ctx, &paths, Default::default())?),
            TableArg::Data(data) => {
                let reader = crate::write::import_stream(data.bind(py))?;
                let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
                let batches =
                    reader.collect::<Result<Vec<_>, _>>().map_err(|e| errors::invalid(format!("reading table '{name}': {e}")))?;
                Arc::new(MemTable::try_new(schema, vec![batches]).map_err(errors::from_datafusion)?)
            }
        };
        ctx.register_table(name.as_str(), table).map_err(errors::from_datafusion)?;
    }
    let query = query.to_string();
    let batches = runtime::block_on(py, run(ctx, query))?.map_err(errors::from_datafusion)?;
    Ok(BatchStream::new(batches))
}

async fn run(ctx: SessionContext, query: String) -> Result<OrderedBatches, DataFusionError> {
    let (plan, task) = physical_plan(ctx.sql(&query).await?).await?;
    let schema = plan.schema();
    let batches: Vec<RecordBatch> = collect(plan, task).await?;
    Ok(OrderedBatches::ready(schema, batches))
}
