//! The TAG values a query allows: per TAG column (by its segment in the device identifier),
//! the set of values a device's TAG must be one of. Devices are checked against it by a
//! string comparison before any statistics are built, and a filter fixing every TAG names its
//! devices outright ([`TagFilter::device_ids`]), so they are looked up along their index path
//! instead of walking the device list. The DataFusion layer derives it from a predicate
//! (`datafusion::tag_filter`); the library from the devices a read names.

use std::collections::HashSet;

use crate::format::DeviceId;

/// Allowed values of TAG columns, each given by its segment in the device identifier.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TagFilter {
    /// (segment, allowed values); a device must match every entry.
    allowed: Vec<(usize, HashSet<String>)>,
}

impl TagFilter {
    /// No constraint found (every device may match).
    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty()
    }

    /// Whether `device` may hold a matching row (a null TAG never equals a value).
    pub fn allows(&self, device: &DeviceId) -> bool {
        self.allowed.iter().all(|(seg, values)| device.segment(*seg).is_some_and(|v| values.contains(v)))
    }

    /// The values allowed for the TAG of segment `seg`, when it is constrained.
    pub fn values(&self, seg: usize) -> Option<&HashSet<String>> {
        self.allowed.iter().find(|(s, _)| *s == seg).map(|(_, v)| v)
    }

    /// The constrained segments with their values.
    pub fn constraints(&self) -> impl Iterator<Item = (usize, &HashSet<String>)> {
        self.allowed.iter().map(|(s, v)| (*s, v))
    }

    /// Allow only `values` in the TAG of segment `seg` (intersected with what was allowed).
    pub fn restrict(&mut self, seg: usize, values: HashSet<String>) {
        match self.allowed.iter_mut().find(|(s, _)| *s == seg) {
            Some((_, have)) => have.retain(|v| values.contains(v)),
            None => self.allowed.push((seg, values)),
        }
    }

    /// The identifiers of every device of table `table` (with `tags` TAG columns) the filter
    /// allows, when it fixes every TAG column and they are at most `max`: each a device
    /// to look up by its index path instead of walking the device list. `None` otherwise.
    pub fn device_ids(&self, table: &str, tags: usize, max: usize) -> Option<Vec<DeviceId>> {
        let mut ids: Vec<Vec<Option<String>>> = vec![vec![Some(table.to_string())]];
        for seg in 1..=tags {
            let values = self.values(seg)?;
            if ids.len().saturating_mul(values.len()) > max {
                return None;
            }
            let mut values: Vec<&String> = values.iter().collect();
            values.sort();
            ids = ids
                .iter()
                .flat_map(|prefix| {
                    values.iter().map(move |v| {
                        let mut id = prefix.clone();
                        id.push(Some((*v).clone()));
                        id
                    })
                })
                .collect();
        }
        Some(ids.into_iter().map(DeviceId::new).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(region: Option<&str>, device: &str) -> DeviceId {
        DeviceId::new(vec![Some("t".to_string()), region.map(str::to_string), Some(device.to_string())])
    }

    #[test]
    fn test_restrict_intersects_and_device_ids_enumerate() {
        let mut f = TagFilter::default();
        assert!(f.is_empty() && f.allows(&dev(None, "x")));
        f.restrict(2, HashSet::from(["d1".to_string(), "d2".to_string()]));
        f.restrict(2, HashSet::from(["d2".to_string(), "d3".to_string()]));
        assert!(f.allows(&dev(None, "d2")) && !f.allows(&dev(None, "d1")) && !f.allows(&dev(None, "d3")));
        assert_eq!(f.device_ids("t", 2, 10), None, "segment 1 open");
        f.restrict(1, HashSet::from(["r1".to_string()]));
        let ids: Vec<String> = f.device_ids("t", 2, 10).unwrap().iter().map(DeviceId::path).collect();
        assert_eq!(ids, ["t.r1.d2"]);
        assert!(!f.allows(&dev(None, "d2")), "a null TAG equals nothing");
        assert_eq!(f.constraints().count(), 2);
    }
}
