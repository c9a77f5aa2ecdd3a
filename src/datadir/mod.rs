//! IoTDB data directories read as IoTDB answers them (`layout = iotdb`).
//!
//! IoTDB keeps a database's data as TsFiles in
//! `{sequence|unsequence}/{database}/{region}/{partition}/{time}-{version}-{inner}-{cross}.tsfile`,
//! each with a `.resource` time index and, where data was deleted, `.mods`/`.mods2`
//! deletions (`docs/iotdb-layout.md`). Read as plain files, such a directory returns a point
//! written twice twice and deleted points at all. This layer finds the files
//! ([`discover`]), skips files and devices by `.resource` time ranges, applies each file's
//! deletions to its own rows and resolves a (device, time) written in several places by
//! IoTDB's priority, per column ([`merge`], [`read`]).

pub mod discover;
pub mod merge;
pub mod read;
pub mod summary;

pub use discover::{looks_like_data_dir, DataDir, DataFile, Skipped};
pub use read::{DataDirReader, DirBatches};
pub use summary::{summarize, PartitionSummary};
