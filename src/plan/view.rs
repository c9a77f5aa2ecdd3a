//! The per-table view of a file's devices that planning works from: per device only what
//! every query needs (its identifier, its time series, where its chunks start and where its
//! field series are in the index); field series are read from the index on demand into one
//! reused buffer ([`DeviceFields`]), so a table of a million devices costs a few hundred
//! bytes per device, not a copy of its whole index.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::error::{Result, TsFileError};
use crate::format::reader::DeviceEntry;
use crate::format::{ByteSource, DeviceId, FileReader, TableSchema, TimeseriesMetadata};

/// The first of the sorted `starts` after `offset`.
pub(crate) fn next_start(starts: &[u64], offset: u64) -> Option<u64> {
    starts.get(starts.partition_point(|&s| s <= offset)).copied()
}

/// One device of a table: what planning keeps of it. Its field series are read from the
/// index on demand ([`crate::plan::FileView::read_fields`]) and not kept, so a table of a million
/// devices costs a few hundred bytes per device, not a copy of its whole index.
#[derive(Debug, Clone)]
pub struct DeviceView {
    /// The device.
    pub device: DeviceId,
    /// The aligned time column's metadata.
    pub time: TimeseriesMetadata,
    /// Offset of the device's first chunk: a byte-range split owns the device when this
    /// offset falls inside the range.
    pub first_offset: u64,
    /// Byte range starting at the device's measurement index root (where its series are).
    pub series_index: Range<u64>,
}

impl DeviceView {
    /// Number of rows (timestamps) of the device.
    pub fn rows(&self) -> u64 {
        self.time.statistics.count
    }
}

/// Field series of one device as read by [`crate::plan::FileView::read_fields`]: all of them or those a
/// reader asked for, in index order. Reused from device to device, so reading a table's
/// devices one after another does not grow memory.
#[derive(Debug, Default)]
pub struct DeviceFields {
    pub(crate) series: Vec<TimeseriesMetadata>,
    /// Offsets of every chunk of the device (time and all fields, read or not), sorted.
    pub(crate) chunk_offsets: Vec<u64>,
    /// Whether `series` is sorted by measurement name (as writers store it), so a lookup is
    /// a binary search.
    pub(crate) sorted: bool,
}

impl DeviceFields {
    /// The series read, in index order.
    pub fn series(&self) -> &[TimeseriesMetadata] {
        &self.series
    }

    /// The field series named `name`, looked for first at position `hint` (devices of a
    /// table usually list the same series, so the position in one device is a good guess
    /// for the next).
    pub fn field_at(&self, name: &str, hint: usize) -> Option<&TimeseriesMetadata> {
        match self.series.get(hint) {
            Some(s) if s.measurement == name => Some(s),
            _ => self.field(name),
        }
    }

    /// Position of the field series named `name` in [`DeviceFields::series`].
    pub fn field_position(&self, name: &str) -> Option<usize> {
        if self.sorted {
            self.series.binary_search_by(|s| s.measurement.as_str().cmp(name)).ok()
        } else {
            self.series.iter().position(|s| s.measurement == name)
        }
    }

    /// The field series named `name`.
    pub fn field(&self, name: &str) -> Option<&TimeseriesMetadata> {
        self.field_position(name).and_then(|i| self.series.get(i))
    }
}

/// A table of one file: schema and devices in index order.
#[derive(Debug)]
pub struct TableView {
    /// The table's schema as stored in the file.
    pub schema: TableSchema,
    /// Devices in index order.
    pub devices: Vec<DeviceView>,
    /// Measurement names of the first device's field series, in index order (where
    /// [`DeviceFields::field_at`] looks first, see [`TableView::field_hints`]).
    first_fields: Vec<String>,
    /// For a view of some devices only: the exact end of each of their chunks, read from
    /// the chunk headers (the other devices' chunk offsets that bound them are not known).
    pub(crate) chunk_ends: HashMap<u64, u64>,
    /// Device → its index in `devices`, built on first use ([`TableView::position`]).
    positions: std::sync::OnceLock<HashMap<DeviceId, usize>>,
}

impl TableView {
    /// The index in `devices` of `device` (compared without trailing null segments), found
    /// through a map built once per view (a read naming devices one at a time costs O(1)
    /// each, not a walk of the device list).
    pub fn position(&self, device: &DeviceId) -> Option<usize> {
        self.positions
            .get_or_init(|| self.devices.iter().enumerate().map(|(i, d)| (d.device.trimmed(), i)).collect())
            .get(&device.trimmed())
            .copied()
    }

    /// The view of `entries` (devices of the table `schema` describes): each device's
    /// series are read once into one buffer; its time series and (for the first device) its
    /// field names are kept, and the offsets of all its chunks go to `chunk_offsets` when
    /// given.
    pub(crate) fn build<S: ByteSource>(
        reader: &FileReader<S>,
        schema: TableSchema,
        entries: Vec<DeviceEntry>,
        mut chunk_offsets: Option<&mut Vec<u64>>,
    ) -> Result<TableView> {
        let mut devices = Vec::with_capacity(entries.len());
        let mut first_fields = Vec::new();
        let mut series = Vec::new();
        for d in entries {
            series.clear();
            // The time series (named "") is parsed; the field series are stepped over,
            // except in the first device, whose field names give the lookup hints.
            let keep = |name: &str| devices.is_empty() || name.is_empty();
            reader
                .series_where(d.measurement_root.clone(), &keep, &mut series, chunk_offsets.as_deref_mut())
                .map_err(|e| e.context(format!("series of device {}", d.device)))?;
            let time_at = series
                .iter()
                .position(TimeseriesMetadata::is_aligned_time)
                .ok_or_else(|| TsFileError::corrupt("device", None, format!("table device {} has no time column", d.device)))?;
            if devices.is_empty() {
                first_fields = series.iter().filter(|s| !s.is_aligned_time()).map(|s| s.measurement.clone()).collect();
            }
            let time = series.swap_remove(time_at);
            let first_offset = time.chunks.iter().map(|c| c.offset).min().unwrap_or(0);
            devices.push(DeviceView { device: d.device, time, first_offset, series_index: d.measurement_root });
        }
        Ok(TableView { schema, devices, first_fields, chunk_ends: HashMap::new(), positions: std::sync::OnceLock::new() })
    }

    /// The TAG columns' names in DeviceID segment order (segment `i + 1` is TAG `i`).
    pub fn tag_order(&self) -> Vec<String> {
        self.schema.tag_columns().map(|c| c.name.clone()).collect()
    }

    /// Whether FIELD column `name` is stored with a lossy float encoding
    /// ([`crate::stats::trust::lossy_float_encoding`]): its value statistics describe the
    /// values before encoding, so only its counts may be used.
    pub fn lossy(&self, name: &str) -> bool {
        self.schema.columns.iter().any(|c| c.name == name && crate::stats::trust::lossy_float_encoding(c.data_type, c.encoding))
    }

    /// Record the end of each chunk of a view of some devices (read from their headers;
    /// [`crate::plan::FileView::partial_table`]).
    pub fn set_chunk_ends(&mut self, ends: HashMap<u64, u64>) {
        self.chunk_ends = ends;
    }

    /// The end of the chunk at `offset` as read from its header, for a view of some devices
    /// only ([`crate::plan::FileView::partial_table`]); `None` for a whole table's view.
    pub fn chunk_end(&self, offset: u64) -> Option<u64> {
        self.chunk_ends.get(&offset).copied()
    }

    /// Per name of `names`: where [`DeviceFields::field_at`] looks first for it in a device
    /// read with exactly those names — its position among them in the first device's index
    /// order (`usize::MAX` when the first device lacks it).
    pub fn field_hints(&self, names: &[&str]) -> Vec<usize> {
        let wanted: HashSet<&str> = names.iter().copied().collect();
        let order: Vec<&str> = self.first_fields.iter().map(String::as_str).filter(|f| wanted.contains(f)).collect();
        names.iter().map(|n| order.iter().position(|f| f == n).unwrap_or(usize::MAX)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str) -> TimeseriesMetadata {
        let statistics =
            crate::format::Statistics { count: 1, start_time: 0, end_time: 0, values: crate::format::ValueStatistics::None };
        TimeseriesMetadata {
            timeseries_type: 0,
            measurement: name.to_string(),
            data_type: crate::format::TsDataType::Int64,
            statistics: statistics.clone(),
            chunks: vec![crate::format::ChunkMetadata { offset: 0, statistics }],
        }
    }

    #[test]
    fn test_device_field_lookup_sorted_and_unsorted() {
        for (names, sorted) in [(vec!["a", "b", "c", "d"], true), (vec!["c", "a", "d", "b"], false), (vec!["a", "a"], false)] {
            let d = DeviceFields { series: names.iter().map(|n| series(n)).collect(), chunk_offsets: Vec::new(), sorted };
            for n in &names {
                assert_eq!(d.field(n).map(|s| s.measurement.as_str()), Some(*n));
                let at = d.field_position(n).unwrap();
                assert_eq!(d.series()[at].measurement, *n);
                // Any hint, right, wrong or out of range, finds the same series.
                for hint in [at, 0, 3, usize::MAX] {
                    assert_eq!(d.field_at(n, hint).map(|s| s.measurement.as_str()), Some(*n));
                }
            }
            assert!(d.field_at("e", 0).is_none() && d.field_position("e").is_none());
            assert!(d.field("e").is_none() && d.field("").is_none());
        }
    }
}
