//! TsFile schemas and decoded columns → Arrow.
//!
//! * [`schema`]: the type mapping and table schemas;
//! * [`array`](mod@array): building arrays from decoded buffers (zero-copy for primitives);
//! * [`batch`]: assembling record batches of a decoded chunk group;
//! * [`device_batches`]: batches that span devices with few rows each.

pub mod array;
pub mod batch;
pub mod device_batches;
pub mod schema;
