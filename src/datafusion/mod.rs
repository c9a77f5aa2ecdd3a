//! SQL over TsFiles with Apache DataFusion.
//!
//! ```no_run
//! use datafusion::prelude::SessionContext;
//! use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
//!
//! # async fn demo() -> datafusion::common::Result<()> {
//! let ctx = SessionContext::new();
//! register_tsfile(&ctx, "weather", &["data/sample.tsfile"], TsFileReadOptions::default()).await?;
//! ctx.sql("SELECT device, avg(temperature) FROM weather GROUP BY device").await?.show().await?;
//! # Ok(()) }
//! ```
//!
//! * [`TsFileFormat`] / [`TsFileFormatFactory`] (`STORED AS TSFILE`): schema inference and
//!   merging, exact statistics; [`TsFileSource`]: the scan (projection, pruning of devices,
//!   chunk groups and pages by tags, time and value statistics, byte-range splits);
//! * [`TsFileTable`], [`TsFileTableFactory`] and the `register_*` helpers; [`TsFileReadOptions`]
//!   and the `tsfile.` option namespace [`TsFileTableOptions`] (`OPTIONS ('tsfile.table' 't')`);
//!   tree-model files are tables too (one per path prefix, "align by device");
//! * [`TsFileStatisticsAggregate`]: a physical optimizer rule answering aggregations from
//!   statistics ([`StatisticsAggregateExec`]);
//! * [`TsFileSink`]: `COPY … STORED AS TSFILE` and `INSERT INTO` a TsFile table (new files,
//!   complete or absent; write options `tags`, `time_column`, …);
//! * [`write_tsfile`]: a DataFrame's rows into one local TsFile with progress (`tsfile convert`);
//! * `write_parquet` (feature `parquet`): a query's rows into one Parquet file with progress;
//! * [`push_scan_filters`]: the pruning predicate for a scan handed to a host that runs no
//!   physical optimizer over it (datafusion-ffi);
//! * [`TsFileStoreRegistry`] / [`ensure_store`]: object stores for `s3://`, `gs://` and
//!   `http(s)://` locations built on first use from [`StorageOptions`](crate::stores::StorageOptions);
//! * [`MetadataCache`]: the footer cache; [`TsFileScanMetrics`]: `EXPLAIN ANALYZE` counters;
//! * [`TsFileMetadataFunc`]: the `tsfile_metadata('path')` table function;
//! * [`EpochLiterals`]: `WHERE time > 1704067200000` (integers compared with the time column
//!   are epoch values in its unit, as in IoTDB);
//! * `TsFileLogicalCodec` / `TsFilePhysicalCodec` (feature `proto`): codecs that carry TsFile
//!   tables and scans in serialized plans (Ballista, datafusion-distributed).

mod aggregate;
mod errors;
#[cfg(feature = "parquet")]
mod export;
mod file_scan;
mod format;
mod import;
mod in_order;
mod iotdb_table;
mod location;
mod metadata;
mod metadata_fn;
mod metrics;
mod opener;
mod options;
mod ordered;
#[cfg(feature = "proto")]
mod proto;
mod pruning;
mod pushdown;
mod session_options;
mod sink;
mod source;
mod store_registry;
mod table;
mod table_options;
mod tag_filter;
mod time_bounds;
mod time_literals;
mod tree;
mod tree_scan;
mod url_table;

pub use aggregate::{StatisticsAggregateExec, TsFileStatisticsAggregate};
#[cfg(feature = "parquet")]
pub use export::{count_rows, partial_path, write_parquet, ExportProgress};
pub use format::{TsFileFormat, TsFileFormatFactory, STATISTICS_MAX_INDEX_BYTES, TSFILE_EXTENSION};
pub use import::{write_tsfile, WriteProgress};
pub use iotdb_table::{IotdbScanExec, IotdbTable};
pub use location::parse_location;
pub use metadata::{LoadCost, MetadataCache, DEFAULT_METADATA_CACHE_BYTES};
pub use metadata_fn::{metadata_schema, TsFileMetadataFunc, TsFileMetadataTable};
pub use metrics::TsFileScanMetrics;
pub use options::{options_markdown, DirectoryLayout, OptionDef, TreeMixedTypes, TsFileReadOptions, OPTIONS};
pub use ordered::execute_in_order;
#[cfg(feature = "proto")]
pub use proto::{TsFileLogicalCodec, TsFilePhysicalCodec};
pub use pushdown::push_scan_filters;
pub use session_options::TsFileSessionOptions;
pub use sink::TsFileSink;
pub use source::TsFileSource;
pub use store_registry::{ensure_store, TsFileStoreRegistry};
pub use table::{register_tsfile, register_tsfile_format, register_tsfile_schema, TsFileTable, TsFileTableFactory};
pub use table_options::TsFileTableOptions;
pub use time_literals::EpochLiterals;
pub use url_table::{enable_tsfile_url_tables, TsFileUrlTableFactory};
