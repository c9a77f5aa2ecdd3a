//! What a data directory holds, for `tsfile inspect DIR`: per time partition the files of
//! each space, the devices written in more than one file at overlapping times (the rows a
//! read merges), the deletions, and the files left out with the reason.

use std::collections::BTreeMap;

use crate::datadir::read::DataDirReader;
use crate::error::Result;
use crate::format::DeviceId;
use crate::iotdb::Space;

/// One (database, time partition) of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSummary {
    /// Database directory name.
    pub database: String,
    /// Time-partition directory name.
    pub partition: String,
    /// Region directory names holding it.
    pub regions: Vec<String>,
    /// Data files in `sequence/`.
    pub sequence_files: usize,
    /// Data files in `unsequence/`.
    pub unsequence_files: usize,
    /// Data files without `.resource` (their time ranges come from their own index).
    pub files_without_resource: usize,
    /// Bytes of its data files.
    pub bytes: u64,
    /// Distinct devices.
    pub devices: usize,
    /// Devices whose time ranges in two or more files overlap (a read merges their rows).
    pub overlapping_devices: usize,
    /// Data files holding at least one such device.
    pub overlapping_files: usize,
    /// Deletion entries of `.mods` (IoTDB 1.x) files.
    pub deletions_v1: usize,
    /// Deletion entries of `.mods2` (IoTDB 2.x) files.
    pub deletions_v2: usize,
}

/// Summarize every partition of `reader`'s directory (opens files without `.resource`).
pub fn summarize(reader: &DataDirReader) -> Result<Vec<PartitionSummary>> {
    let dir = reader.dir();
    let mut out = Vec::with_capacity(dir.groups.len());
    for range in &dir.groups {
        let Some(first) = dir.files.get(range.start) else { continue };
        let mut s = PartitionSummary {
            database: first.database.clone(),
            partition: first.partition.clone(),
            regions: Vec::new(),
            sequence_files: 0,
            unsequence_files: 0,
            files_without_resource: 0,
            bytes: 0,
            devices: 0,
            overlapping_devices: 0,
            overlapping_files: 0,
            deletions_v1: 0,
            deletions_v2: 0,
        };
        let mut spans: BTreeMap<DeviceId, Vec<(i64, i64, usize)>> = BTreeMap::new();
        for i in range.clone() {
            let Some(f) = dir.files.get(i) else { continue };
            if !s.regions.contains(&f.region) {
                s.regions.push(f.region.clone());
            }
            match f.space {
                Space::Sequence => s.sequence_files += 1,
                Space::Unsequence => s.unsequence_files += 1,
            }
            s.bytes += f.len;
            s.deletions_v1 += f.deletions.iter().filter(|d| d.file_offset.is_some()).count();
            s.deletions_v2 += f.deletions.iter().filter(|d| d.file_offset.is_none()).count();
            let devices = match &f.resource {
                Some(r) => r.iter().map(|d| (d.device.clone(), d.start, d.end)).collect(),
                None => {
                    s.files_without_resource += 1;
                    reader.device_ranges(i)?
                }
            };
            for (device, start, end) in devices {
                spans.entry(device).or_default().push((start, end, i));
            }
        }
        s.devices = spans.len();
        let mut files = std::collections::BTreeSet::new();
        for list in spans.values_mut() {
            list.sort_unstable();
            let mut max_end: Option<(i64, usize)> = None;
            let mut hit = false;
            for &(start, end, file) in list.iter() {
                if let Some((m, f)) = max_end {
                    if start <= m {
                        hit = true;
                        files.insert(f);
                        files.insert(file);
                    }
                }
                if max_end.is_none_or(|(m, _)| end > m) {
                    max_end = Some((end, file));
                }
            }
            s.overlapping_devices += usize::from(hit);
        }
        s.overlapping_files = files.len();
        out.push(s);
    }
    Ok(out)
}
