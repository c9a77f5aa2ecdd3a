//! Writers of IoTDB's companion files, the inverse of [`parse_resource`](super::parse_resource)
//! and [`parse_mods_v2`](super::parse_mods_v2)/[`parse_mods_v1`](super::parse_mods_v1): for
//! tests that build data directories (feature `test-util`). Not IoTDB's writer: only the
//! fields this crate reads are written (the plan indexes after the device list are zeros).

use crate::error::Result;
use crate::format::serialize::{put_device_id, put_var_str, put_varint};
use crate::iotdb::{Deletion, DeletionTarget, DeviceTimes, TagPredicate};

/// A `.resource` file (version 1, time-index type 3: device ids) for `devices`.
pub fn resource_bytes(devices: &[DeviceTimes]) -> Result<Vec<u8>> {
    let mut out = vec![1u8, 3];
    out.extend_from_slice(&i32::try_from(devices.len()).unwrap_or(i32::MAX).to_be_bytes());
    for d in devices {
        out.extend_from_slice(&d.start.to_be_bytes());
        out.extend_from_slice(&d.end.to_be_bytes());
    }
    for (slot, d) in devices.iter().enumerate() {
        put_device_id(&mut out, &d.device)?;
        out.extend_from_slice(&i32::try_from(slot).unwrap_or(i32::MAX).to_be_bytes());
    }
    out.extend_from_slice(&[0u8; 16]);
    Ok(out)
}

/// A `.mods2` file of `deletions` (their `file_offset` is not written: 2.x has none).
pub fn mods2_bytes(deletions: &[Deletion]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for d in deletions {
        out.push(match d.target {
            DeletionTarget::Table { .. } => 0,
            DeletionTarget::Tree(_) => 1,
        });
        out.extend_from_slice(&d.start.to_be_bytes());
        out.extend_from_slice(&d.end.to_be_bytes());
        match &d.target {
            DeletionTarget::Tree(p) => put_var_str(&mut out, &p.text())?,
            DeletionTarget::Table { table, tags, measurements } => {
                put_var_str(&mut out, table)?;
                put_tags(&mut out, tags)?;
                put_varint(&mut out, i32::try_from(measurements.len()).unwrap_or(i32::MAX));
                for m in measurements {
                    put_var_str(&mut out, m)?;
                }
            }
        }
    }
    Ok(out)
}

/// A `.mods` (1.x) file of tree deletions: one `DELETION,path,offset,start,end` line each
/// (table deletions have no 1.x form and are left out).
pub fn mods_v1_text(deletions: &[Deletion]) -> String {
    let mut out = String::new();
    for d in deletions {
        if let DeletionTarget::Tree(p) = &d.target {
            let offset = d.file_offset.unwrap_or(i64::MAX);
            out.push_str(&format!("DELETION,{},{offset},{},{}\n", p.text(), d.start, d.end));
        }
    }
    out
}

fn put_tags(out: &mut Vec<u8>, tags: &TagPredicate) -> Result<()> {
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    match tags {
        TagPredicate::All => out.push(0),
        TagPredicate::Device(d) => {
            out.push(1);
            put_device_id(out, d)?;
        }
        TagPredicate::Segment { index, value } => {
            out.push(2);
            match value {
                Some(v) => put_var_str(out, v)?,
                None => put_varint(out, -1),
            }
            put_varint(out, count(*index));
        }
        TagPredicate::And(all) => {
            out.push(3);
            put_varint(out, count(all.len()));
            for p in all {
                put_tags(out, p)?;
            }
        }
        TagPredicate::DeviceIn(set) => {
            out.push(4);
            put_varint(out, count(set.len()));
            for d in set {
                put_device_id(out, d)?;
            }
        }
        TagPredicate::SegmentNotNull(index) => {
            out.push(5);
            put_varint(out, count(*index));
        }
    }
    Ok(())
}
