//! TsFile schemas and decoded columns → Arrow.
//!
//! * [`schema`]: the type mapping and table schemas;
//! * [`array`]: building arrays from decoded buffers (zero-copy for primitives).

pub mod array;
pub mod schema;
