//! IoTDB's files beside its TsFiles, parsed: the names of data files in a data directory
//! (`names`), the `.resource` time index of a sealed file (`resource`), and deletions from
//! `.mods` (IoTDB 1.x, text) and `.mods2` (IoTDB 2.x, binary) files with the path patterns
//! and TAG predicates that say what they delete (`mods`).
//!
//! These are the building blocks of reading an IoTDB data directory as IoTDB answers it
//! (overlapping files, deletions); `docs/iotdb-layout.md` describes the layouts and the
//! IoTDB sources they come from. Synchronous, no Arrow, no I/O: bytes in, structs out;
//! every length is checked against the input.

pub mod mods;
pub mod names;
pub mod resource;

pub use mods::{parse_mods_v1, parse_mods_v2, Deletion, DeletionTarget, PathPattern, TagPredicate};
pub use names::{DataFileName, Space};
pub use resource::{parse_resource, DeviceTimes};
