//! Data-file names of an IoTDB data directory: `{time}-{version}-{inner}-{cross}.tsfile`
//! under `{sequence|unsequence}/{database}/{region}/{partition}/`, and the priority of a file
//! when the same (device, time) appears in several.

use std::cmp::Ordering;

/// The fields of a data file's name `{time}-{version}-{inner}-{cross}.tsfile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataFileName {
    /// Creation time in the name (epoch milliseconds as IoTDB writes it).
    pub time: i64,
    /// The file version: the first key of the merge priority within one space.
    pub version: i64,
    /// Inner-space compaction count.
    pub inner: i64,
    /// Cross-space compaction count.
    pub cross: i64,
}

impl DataFileName {
    /// The fields of `name` (a file name, not a path), or `None` when it is not exactly four
    /// non-negative decimal numbers joined by `-` and ending in `.tsfile` — compaction targets
    /// (`.inner`, `.cross`, `.settle`), `.resource`, `.mods`, logs and other files are not data.
    pub fn parse(name: &str) -> Option<DataFileName> {
        let stem = name.strip_suffix(".tsfile")?;
        let mut parts = stem.split('-');
        let mut next = || -> Option<i64> {
            let p = parts.next()?;
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            p.parse().ok()
        };
        let (time, version, inner, cross) = (next()?, next()?, next()?, next()?);
        if parts.next().is_some() {
            return None;
        }
        Some(DataFileName { time, version, inner, cross })
    }
}

/// Which space of a data directory a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// `sequence/`: in-order writes; files of one device do not overlap in time.
    Sequence,
    /// `unsequence/`: out-of-order writes; they win over sequence data at the same time.
    Unsequence,
}

impl Space {
    /// The space a directory name names (`sequence` or `unsequence`).
    pub fn from_dir_name(name: &str) -> Option<Space> {
        match name {
            "sequence" => Some(Space::Sequence),
            "unsequence" => Some(Space::Unsequence),
            _ => None,
        }
    }
}

/// Where a data file sits: `…/{space}/{database}/{region}/{partition}/{name}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// `sequence` or `unsequence`.
    pub space: Space,
    /// Database directory name.
    pub database: String,
    /// Region directory name.
    pub region: String,
    /// Time-partition directory name.
    pub partition: String,
}

impl Placement {
    /// The placement of a file from the names along its path, root first, the file last
    /// (`/`-separated paths and object-store keys alike); `None` when the fifth name from
    /// the end is not a space.
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Placement> {
        let names: Vec<&str> = names.into_iter().filter(|n| !n.is_empty()).collect();
        let n = names.len();
        let space = Space::from_dir_name(names.get(n.checked_sub(5)?)?)?;
        let at = |k: usize| names.get(n - k).map(|s| s.to_string());
        Some(Placement { space, database: at(4)?, region: at(3)?, partition: at(2)? })
    }
}

/// The order in which IoTDB lets a file's value win when the same (device, time) is written
/// in several files: unsequence over sequence, then the higher version, then the later time
/// in the name (the chunk's offset in the file decides last, within one file).
pub fn file_priority(a: (Space, &DataFileName), b: (Space, &DataFileName)) -> Ordering {
    a.0.cmp(&b.0).then(a.1.version.cmp(&b.1.version)).then(a.1.time.cmp(&b.1.time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_file_names_and_the_rest() {
        let n = DataFileName::parse("1700000000000-12-3-1.tsfile").unwrap();
        assert_eq!((n.time, n.version, n.inner, n.cross), (1_700_000_000_000, 12, 3, 1));
        for not_data in [
            "1-2-0-0.tsfile.resource",
            "1-2-0-0.tsfile.mods",
            "1-2-0-0.tsfile.mods2",
            "1-2-0-0.inner",
            "1-2-0-0.cross",
            "1-2-0-0.settle",
            "1-2-0-0.tsfile.temp",
            "1-2-0-0.tsfile.broken",
            "1-2-0.tsfile",
            "1-2-0-0-5.tsfile",
            "1--0-0.tsfile",
            "-1-2-0-0.tsfile",
            "1-2-0-x.tsfile",
            "1-2-0-+1.tsfile",
            "99999999999999999999-1-0-0.tsfile",
            "sample.tsfile",
            "",
        ] {
            assert_eq!(DataFileName::parse(not_data), None, "{not_data}");
        }
    }

    #[test]
    fn placement_from_the_path() {
        let p = Placement::of("/data/datanode/data/unsequence/root.db/3/2840/1-2-0-0.tsfile".split('/')).unwrap();
        assert_eq!(
            (p.space, p.database.as_str(), p.region.as_str(), p.partition.as_str()),
            (Space::Unsequence, "root.db", "3", "2840")
        );
        assert_eq!(Placement::of("x/root.db/3/2840/1-2-0-0.tsfile".split('/')), None);
        assert_eq!(Placement::of("sequence/a/b/1-2-0-0.tsfile".split('/')), None, "too shallow");
    }

    #[test]
    fn priority_is_space_then_version_then_time() {
        let f = |time, version| DataFileName { time, version, inner: 0, cross: 0 };
        use Space::*;
        assert_eq!(file_priority((Unsequence, &f(1, 1)), (Sequence, &f(9, 9))), Ordering::Greater);
        assert_eq!(file_priority((Sequence, &f(1, 2)), (Sequence, &f(9, 1))), Ordering::Greater);
        assert_eq!(file_priority((Sequence, &f(2, 1)), (Sequence, &f(1, 1))), Ordering::Greater);
        assert_eq!(file_priority((Sequence, &f(1, 1)), (Sequence, &f(1, 1))), Ordering::Equal);
        assert_eq!(Space::from_dir_name("unsequence"), Some(Unsequence));
        assert_eq!(Space::from_dir_name("seq"), None);
    }
}
