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
//! * [`format`]: `TsFileFormat` / `TsFileFormatFactory` (`STORED AS TSFILE`), schema
//!   inference and merging, exact statistics;
//! * [`source`] and [`opener`]: the scan (projection, pruning, byte-range splits);
//! * [`aggregate`]: aggregations answered from statistics (a physical optimizer rule);
//! * [`pruning`]: statistics of devices, chunk groups and pages as `PruningStatistics`;
//! * [`metadata`]: the per-file footer cache; [`metrics`]: `EXPLAIN ANALYZE` counters;
//! * [`table`]: `TsFileTable` and registration helpers; [`options`]: table options;
//! * [`tree`]: tree-model TsFiles as tables (one per path prefix, "align by device");
//! * [`metadata_fn`]: the `tsfile_metadata('path')` table function;
//! * [`table_options`]: the `tsfile.` option namespace (`OPTIONS ('tsfile.table' 't')`);
//! * `proto` (feature `proto`): codecs that carry TsFile tables and scans in serialized
//!   plans (Ballista, datafusion-distributed).

pub mod aggregate;
mod errors;
mod file_scan;
pub mod format;
pub mod metadata;
pub mod metadata_fn;
pub mod metrics;
pub mod opener;
pub mod options;
#[cfg(feature = "proto")]
pub mod proto;
pub mod pruning;
pub mod source;
pub mod table;
pub mod table_options;
pub mod time_bounds;
pub mod tree;
mod tree_scan;

pub use aggregate::{StatisticsAggregateExec, TsFileStatisticsAggregate};
pub use format::{TsFileFormat, TsFileFormatFactory};
pub use metadata_fn::TsFileMetadataFunc;
pub use options::{TreeMixedTypes, TsFileReadOptions};
#[cfg(feature = "proto")]
pub use proto::{TsFileLogicalCodec, TsFilePhysicalCodec};
pub use source::TsFileSource;
pub use table::{register_tsfile, register_tsfile_format, register_tsfile_schema, TsFileTable, TsFileTableFactory};
pub use table_options::TsFileTableOptions;
