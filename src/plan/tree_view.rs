//! The per-file view of a tree-model key's devices (DeviceID segment 0: `root.plant1` for
//! `root.plant1.line3`): each device's path and path levels, its time column (aligned
//! devices), its value series sorted by measurement, and the types of the key's
//! measurements. Tree-model tables are planned and scanned from it.

use std::collections::BTreeMap;

use crate::error::{Result, TsFileError};
use crate::format::{ByteSource, DeviceId, FileReader, TimeseriesMetadata, TsDataType};

/// One device of a tree-model key.
#[derive(Debug, Clone)]
pub struct TreeDevice {
    /// The stored DeviceID.
    pub device: DeviceId,
    /// The path: segments joined with `.`.
    pub path: String,
    /// The path's nodes (segment 0 split on `.` outside backticks, then one node per
    /// further segment).
    pub levels: Vec<String>,
    /// The time column of an aligned tree device (`None`: non-aligned series).
    pub time: Option<TimeseriesMetadata>,
    /// The value series, sorted by measurement name (bytes).
    pub series: Vec<TimeseriesMetadata>,
    /// Offset of the device's first chunk: a byte-range split owns the device when this
    /// offset falls inside the range.
    pub first_offset: u64,
}

impl TreeDevice {
    /// The series of measurement `name`.
    pub fn series(&self, name: &str) -> Option<&TimeseriesMetadata> {
        self.series.binary_search_by(|s| s.measurement.as_bytes().cmp(name.as_bytes())).ok().and_then(|i| self.series.get(i))
    }

    /// Exact row count when the metadata tells it: an aligned device's time column, or a
    /// device with at most one series. `None` when several non-aligned series overlap in
    /// unknown ways (the rows are the union of their timestamps).
    pub fn rows_exact(&self) -> Option<u64> {
        match (&self.time, self.series.as_slice()) {
            (Some(t), _) => Some(t.statistics.count),
            (None, []) => Some(0),
            (None, [one]) => Some(one.statistics.count),
            _ => None,
        }
    }

    /// An upper bound of the row count (exact when [`Self::rows_exact`] is `Some`), zero
    /// only when the device has no point at all.
    pub fn rows_bound(&self) -> u64 {
        self.rows_exact().unwrap_or_else(|| self.series.iter().fold(0u64, |a, s| a.saturating_add(s.statistics.count)))
    }

    /// First and last timestamp of the device, if it has any point and every unit's time
    /// statistics hold together.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        let stats: Vec<_> = match &self.time {
            Some(t) => vec![&t.statistics],
            None => self.series.iter().map(|s| &s.statistics).collect(),
        };
        // A unit whose time statistics contradict themselves leaves the range unknown.
        let mut range: Option<(i64, i64)> = None;
        for s in stats.iter().filter(|s| s.count > 0) {
            let (lo, hi) = crate::stats::facts::time_bounds(s)?;
            range = Some(range.map_or((lo, hi), |(a, z)| (a.min(lo), z.max(hi))));
        }
        range
    }
}

/// The table name of every tree-model device of a file (all path prefixes together), as
/// IoTDB shows a tree aligned by device: what a scan reads when a file's tables are all
/// tree-model path prefixes and none is chosen, or when the `table` option is `*`.
pub const ALL_TREE_DEVICES: &str = "*";

/// The devices of one tree-model key in one file, with the types of its measurements.
#[derive(Debug, Clone)]
pub struct TreeView {
    /// The table-index key (DeviceID segment 0).
    pub key: String,
    /// Devices in index order.
    pub devices: Vec<TreeDevice>,
    /// Per measurement: each distinct type, with the path of the first device holding it.
    pub measurements: BTreeMap<String, Vec<(TsDataType, String)>>,
    /// Number of nodes of the deepest path.
    pub depth: usize,
}

impl TreeView {
    /// Walk the device index of `key` and every device's series.
    pub fn load<S: ByteSource>(reader: &FileReader<S>, key: &str) -> Result<TreeView> {
        let mut devices = Vec::new();
        let mut measurements: BTreeMap<String, Vec<(TsDataType, String)>> = BTreeMap::new();
        let mut depth = 0;
        for entry in reader.devices(key)? {
            let mut series = reader.series(&entry)?;
            let path = entry.device.path();
            let time = series.iter().position(TimeseriesMetadata::is_aligned_time).map(|i| series.remove(i));
            if series.iter().any(TimeseriesMetadata::is_aligned_time) {
                return Err(TsFileError::corrupt("device", None, format!("device {path} has two time columns")));
            }
            series.sort_by(|a, b| a.measurement.as_bytes().cmp(b.measurement.as_bytes()));
            if let Some(w) = series.windows(2).find(|w| w.first().map(|s| &s.measurement) == w.get(1).map(|s| &s.measurement)) {
                let name = w.first().map(|s| s.measurement.as_str()).unwrap_or_default();
                return Err(TsFileError::corrupt("device", None, format!("device {path} lists measurement '{name}' twice")));
            }
            for s in &series {
                let types = measurements.entry(s.measurement.clone()).or_default();
                if !types.iter().any(|(t, _)| *t == s.data_type) {
                    types.push((s.data_type, path.clone()));
                }
            }
            let first_offset =
                time.iter().chain(series.iter()).flat_map(|s| s.chunks.iter().map(|c| c.offset)).min().unwrap_or(0);
            let levels = path_levels(&entry.device);
            depth = depth.max(levels.len());
            devices.push(TreeDevice { device: entry.device, path, levels, time, series, first_offset });
        }
        Ok(TreeView { key: key.to_string(), devices, measurements, depth })
    }

    /// The devices of every key of `keys` as one view ([`ALL_TREE_DEVICES`]): devices in
    /// key order, each measurement's types merged (a type seen under several keys is listed
    /// once, with the first device holding it).
    pub fn load_all<S: ByteSource>(reader: &FileReader<S>, keys: &[String]) -> Result<TreeView> {
        let mut all =
            TreeView { key: ALL_TREE_DEVICES.to_string(), devices: Vec::new(), measurements: BTreeMap::new(), depth: 0 };
        for key in keys {
            let one = TreeView::load(reader, key)?;
            all.devices.extend(one.devices);
            all.depth = all.depth.max(one.depth);
            for (name, types) in one.measurements {
                let merged = all.measurements.entry(name).or_default();
                for (t, path) in types {
                    if !merged.iter().any(|(m, _)| *m == t) {
                        merged.push((t, path));
                    }
                }
            }
        }
        Ok(all)
    }
}

/// The nodes of a tree path stored as `device`: segment 0 holds the first nodes joined with
/// `.` (a backtick-quoted node keeps its backticks and may contain dots), every further
/// segment is one node; a null segment reads `null`, as in the path form.
pub fn path_levels(device: &DeviceId) -> Vec<String> {
    let mut out = Vec::new();
    for (i, seg) in device.segments().iter().enumerate() {
        let seg = seg.as_deref().unwrap_or("null");
        if i > 0 {
            out.push(seg.to_string());
            continue;
        }
        let mut node = String::new();
        let mut quoted = false;
        for ch in seg.chars() {
            match ch {
                '`' => {
                    quoted = !quoted;
                    node.push(ch);
                }
                '.' if !quoted => out.push(std::mem::take(&mut node)),
                _ => node.push(ch),
            }
        }
        out.push(node);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_path_levels_split_segment0_only() {
        let d = DeviceId::from_strs(&["root.a.b", "c", "d"]);
        assert_eq!(path_levels(&d), vec!["root", "a", "b", "c", "d"]);
        let d = DeviceId::from_strs(&["root.`x.y`", "d1"]);
        assert_eq!(path_levels(&d), vec!["root", "`x.y`", "d1"]);
        assert_eq!(path_levels(&DeviceId::from_strs(&["solo"])), vec!["solo"]);
        assert_eq!(path_levels(&DeviceId::from_strs(&["root.sg", "d.1"])), vec!["root", "sg", "d.1"]);
    }
}
