//! IoTDB's files beside its TsFiles, parsed: the names of data files in a data directory
//! (`names`), the `.resource` time index of a sealed file (`resource`), and deletions from
//! `.mods` (IoTDB 1.x, text) and `.mods2` (IoTDB 2.x, binary) files with the path patterns
//! and TAG predicates that say what they delete (`mods`).
//!
//! These are the building blocks of reading an IoTDB data directory as IoTDB answers it
//! (overlapping files, deletions); `docs/iotdb-layout.md` describes the layouts and the
//! IoTDB sources they come from. Synchronous, no Arrow, no I/O: bytes in, structs out;
//! every length is checked against the input.

#[cfg(any(test, feature = "test-util"))]
pub mod companions;
pub mod mods;
pub mod names;
pub mod resource;

pub use mods::{
    parse_mods_file, parse_mods_v1, parse_mods_v2, Deletion, DeletionTarget, PathPattern, TagPredicate, MODS_SUFFIXES,
};
pub use names::{DataFileName, Placement, Space};
pub use resource::{parse_resource, DeviceTimes};

/// Byte writers for the tests: IoTDB's zig-zag varints and `VarString`s.
#[cfg(test)]
pub(crate) mod test_bytes {
    /// A zig-zag `VarInt`.
    pub fn varint(out: &mut Vec<u8>, v: i32) {
        let mut z = ((v << 1) ^ (v >> 31)) as u32;
        loop {
            let b = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    /// A `VarString` (`None`: null, length -1).
    pub fn var_string(out: &mut Vec<u8>, s: Option<&str>) {
        varint(out, s.map_or(-1, |s| s.len() as i32));
        out.extend_from_slice(s.unwrap_or_default().as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::DeviceId;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn hostile_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300), kind in 0u8..4) {
            // Steer the type bytes so that the structured paths run, not only the refusals.
            let mut data = data;
            if let Some(first) = data.first_mut() {
                *first = kind % 2;
            }
            let _ = parse_resource(&[&[1u8, if kind < 2 { 3 } else { 1 }][..], &data].concat());
            let text = String::from_utf8_lossy(&data);
            let mut all = parse_mods_v1(&format!("DELETION,{text}"));
            if let Ok(more) = parse_mods_v2(&data) {
                all.extend(more);
            }
            let d = DeviceId::new(vec![Some("t".into()), None, Some("x".into())]);
            for del in &all {
                let _ = del.deletes(&d, "s", 0, 0);
                let _ = del.deletes(&DeviceId::from_tree_path("root.sg.d1"), "s", 0, 0);
            }
        }
    }
}
