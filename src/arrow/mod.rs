//! TsFile schemas and decoded columns → Arrow.
//!
//! * [`schema`]: the type mapping and table schemas;
//! * [`array`](mod@array): building arrays from decoded buffers (zero-copy for primitives);
//! * [`batch`]: assembling record batches of a decoded chunk group.

pub mod array;
pub mod batch;
pub mod schema;
