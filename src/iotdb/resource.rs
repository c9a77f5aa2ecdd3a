//! The `.resource` file of a sealed IoTDB data file: per device, the first and last time
//! the file holds for it (both inclusive), so a query can skip the file without opening it.
//!
//! ```text
//! u8 version (1) · u8 time-index type · i32 n · n × (i64 start, i64 end)
//!   · n × (device, i32 slot) · i64 max plan index · i64 min plan index · …
//! ```
//!
//! Type 3 (IoTDB 2.x) stores each device as a serialized DeviceID, type 1 (IoTDB 1.x) as a
//! tree path string (`i32` length + UTF-8), split as version-4 files split tree paths. Types
//! 0 (v0.12) and 2 (a file-level index IoTDB never writes) are refused. What follows the
//! device list is not needed here and not read.

use crate::error::{Result, TsFileError};
use crate::format::{Cursor, DeviceId};

/// One device's time range in a data file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceTimes {
    /// The device.
    pub device: DeviceId,
    /// Its first time in the file (inclusive).
    pub start: i64,
    /// Its last time in the file (inclusive).
    pub end: i64,
}

/// The devices and time ranges of a `.resource` file's bytes, in the index's slot order.
pub fn parse_resource(bytes: &[u8]) -> Result<Vec<DeviceTimes>> {
    let mut c = Cursor::new(bytes, 0);
    let _version = c.u8("resource version")?;
    let kind = c.u8("resource time index type")?;
    if kind != 1 && kind != 3 {
        return Err(TsFileError::unsupported(format!(
            "resource time index type {kind} (only 1, device paths, and 3, device ids, are written by IoTDB 1.x and 2.x)"
        )));
    }
    let at = c.offset();
    let n = c.i32("resource device count")?;
    let n = usize::try_from(n).map_err(|_| TsFileError::corrupt("resource", Some(at), format!("device count {n}")))?;
    // Each device takes 16 bytes of times and at least 5 of id and slot.
    if n > c.remaining() / 21 {
        return Err(TsFileError::corrupt("resource", Some(at), format!("{n} devices cannot fit in {} bytes", c.remaining())));
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        times.push((c.i64("resource start time")?, c.i64("resource end time")?));
    }
    let mut devices: Vec<Option<DeviceId>> = vec![None; n];
    for _ in 0..n {
        let device = if kind == 3 {
            DeviceId::parse(&mut c)?
        } else {
            let at = c.offset();
            let path = c
                .string32("resource device path")?
                .ok_or_else(|| TsFileError::corrupt("resource", Some(at), "null device path"))?;
            DeviceId::from_tree_path(&path)
        };
        let at = c.offset();
        let slot = c.i32("resource device slot")?;
        let cell = usize::try_from(slot).ok().and_then(|s| devices.get_mut(s));
        match cell {
            Some(cell @ None) => *cell = Some(device),
            Some(Some(_)) => return Err(TsFileError::corrupt("resource", Some(at), format!("slot {slot} given twice"))),
            None => return Err(TsFileError::corrupt("resource", Some(at), format!("slot {slot} outside 0..{n}"))),
        }
    }
    // n ids for n distinct slots in 0..n: every slot is filled.
    Ok(devices
        .into_iter()
        .zip(times)
        .filter_map(|(device, (start, end))| device.map(|device| DeviceTimes { device, start, end }))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iotdb::test_bytes::var_string;

    /// A resource as IoTDB 2.x writes it: version, type 3, times, then ids in another order.
    fn v2(devices: &[(&[Option<&str>], i64, i64)], order: &[usize]) -> Vec<u8> {
        let mut out = vec![1u8, 3];
        out.extend_from_slice(&(devices.len() as i32).to_be_bytes());
        for (_, s, e) in devices {
            out.extend_from_slice(&s.to_be_bytes());
            out.extend_from_slice(&e.to_be_bytes());
        }
        for &k in order {
            let segs = devices[k].0;
            out.push(segs.len() as u8);
            for s in segs {
                var_string(&mut out, *s);
            }
            out.extend_from_slice(&(k as i32).to_be_bytes());
        }
        out.extend_from_slice(&7i64.to_be_bytes());
        out.extend_from_slice(&3i64.to_be_bytes());
        out
    }

    #[test]
    fn type_3_device_ids_land_in_their_slots() {
        let bytes = v2(&[(&[Some("t"), Some("a")], 10, 20), (&[Some("t"), None], i64::MIN, i64::MAX)], &[1, 0]);
        let got = parse_resource(&bytes).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], DeviceTimes { device: DeviceId::from_strs(&["t", "a"]), start: 10, end: 20 });
        assert_eq!(got[1].device, DeviceId::new(vec![Some("t".into()), None]));
        assert_eq!((got[1].start, got[1].end), (i64::MIN, i64::MAX));
    }

    #[test]
    fn type_1_paths_split_as_tree_devices() {
        let mut out = vec![1u8, 1];
        out.extend_from_slice(&1i32.to_be_bytes());
        out.extend_from_slice(&5i64.to_be_bytes());
        out.extend_from_slice(&6i64.to_be_bytes());
        let path = "root.sg.d1.x";
        out.extend_from_slice(&(path.len() as i32).to_be_bytes());
        out.extend_from_slice(path.as_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
        let got = parse_resource(&out).unwrap();
        assert_eq!(got, vec![DeviceTimes { device: DeviceId::from_tree_path(path), start: 5, end: 6 }]);
        assert_eq!(got[0].device.segments().len(), 2);
    }

    #[test]
    fn empty_index_and_bad_input_are_errors_not_panics() {
        let empty = v2(&[], &[]);
        assert!(parse_resource(&empty).unwrap().is_empty());
        let good = v2(&[(&[Some("t"), Some("a")], 1, 2), (&[Some("t"), Some("b")], 3, 4)], &[0, 1]);
        for cut in 0..good.len() - 16 {
            assert!(parse_resource(&good[..cut]).is_err(), "cut at {cut}");
        }
        let twice = v2(&[(&[Some("t"), Some("a")], 1, 2), (&[Some("t"), Some("b")], 3, 4)], &[0, 0]);
        assert!(parse_resource(&twice).unwrap_err().to_string().contains("twice"));
        let mut huge = vec![1u8, 3];
        huge.extend_from_slice(&i32::MAX.to_be_bytes());
        assert!(parse_resource(&huge).unwrap_err().to_string().contains("cannot fit"));
        let mut negative = vec![1u8, 3];
        negative.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(parse_resource(&negative).is_err());
        for kind in [0u8, 2, 4] {
            assert!(parse_resource(&[1, kind, 0, 0, 0, 0]).is_err(), "type {kind}");
        }
        let mut bad_slot = v2(&[(&[Some("t"), Some("a")], 1, 2)], &[0]);
        let at = bad_slot.len() - 20;
        bad_slot[at..at + 4].copy_from_slice(&5i32.to_be_bytes());
        assert!(parse_resource(&bad_slot).unwrap_err().to_string().contains("outside"));
    }
}
