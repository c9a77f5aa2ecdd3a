//! Finding the data files of an IoTDB data directory and what lies beside them.
//!
//! A data file is a file named `{time}-{version}-{inner}-{cross}.tsfile` below a `sequence/`
//! or `unsequence/` directory: `{space}/{database}/{region}/{partition}/{name}` (the root
//! given may be the data directory, a space, a database, a region or one partition; the
//! space and the rest are read from the file's full path). Beside it: `{name}.resource`
//! (per-device time ranges, used to skip the file unopened), `{name}.mods` (IoTDB 1.x
//! deletions) and `{name}.mods2` (IoTDB 2.x deletions). Everything else is not data:
//! `.inner`, `.cross`, `.settle`, `.temp`, `.broken`, `*.compaction.mods*`, logs.
//!
//! Files a read leaves out, each with the reason ([`Skipped`]): a `.tsfile` whose name is not
//! a data-file name, and a data file without `.resource` whose footer is not complete (IoTDB
//! writes `.resource` when it seals a file, so such a file is still being written). A data
//! file without `.resource` but with a complete footer (a copy that lost its companions) is
//! read, its time ranges taken from its own index. A data file outside any `sequence/` or
//! `unsequence/` directory cannot be ranked against the others and is an error.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::error::{Result, TsFileError};
use crate::format::open::tail_metadata_len;
use crate::format::{HEAD_LEN, TAIL_LEN};
use crate::iotdb::names::file_priority;
use crate::iotdb::{parse_mods_file, parse_resource, DataFileName, Deletion, DeviceTimes, Placement, Space, MODS_SUFFIXES};

/// One data file of a data directory with its companions, parsed.
#[derive(Debug, Clone)]
pub struct DataFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its name's numbers (time, version, compaction counts).
    pub name: DataFileName,
    /// Its space.
    pub space: Space,
    /// Database directory name.
    pub database: String,
    /// Region directory name.
    pub region: String,
    /// Time-partition directory name.
    pub partition: String,
    /// Per-device time ranges from `.resource`; `None` when the file has none.
    pub resource: Option<Vec<DeviceTimes>>,
    /// Deletions from `.mods` and `.mods2`.
    pub deletions: Vec<Deletion>,
    /// The file's size in bytes.
    pub len: u64,
}

/// A file found under the root and left out, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it is not read.
    pub reason: String,
}

/// The data files under a root, grouped by (database, time partition): points of one device
/// in one time partition live in that partition's files only, so overlapping writes are
/// resolved within a group.
#[derive(Debug, Clone, Default)]
pub struct DataDir {
    /// The root as given.
    pub root: PathBuf,
    /// Every data file, grouped (groups in path order), each group in ascending priority.
    pub files: Vec<DataFile>,
    /// Ranges of `files`, one per (database, partition).
    pub groups: Vec<std::ops::Range<usize>>,
    /// Files left out, with the reason.
    pub skipped: Vec<Skipped>,
}

impl DataDir {
    /// Find the data files under `root` (a directory, or one data file) and parse their
    /// `.resource`, `.mods` and `.mods2` companions.
    pub fn open(root: impl AsRef<Path>) -> Result<DataDir> {
        let root = root.as_ref().to_path_buf();
        let full = fs::canonicalize(&root).map_err(|e| io(e, "opening data directory", &root))?;
        let mut found = Vec::new();
        walk(&full, &mut found)?;
        found.sort();
        let mut skipped = Vec::new();
        let mut groups: BTreeMap<(String, String), Vec<DataFile>> = BTreeMap::new();
        for path in found {
            let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            let Some(name) = DataFileName::parse(&file_name) else {
                skipped.push(Skipped { path, reason: "not a data-file name ({time}-{version}-{inner}-{cross}.tsfile)".into() });
                continue;
            };
            let names = path.components().filter_map(|c| match c {
                Component::Normal(s) => s.to_str(),
                _ => None,
            });
            let Some(Placement { space, database, region, partition }) = Placement::of(names) else {
                return Err(TsFileError::unsupported(format!(
                    "{} is not inside a sequence/ or unsequence/ directory ({{space}}/{{database}}/{{region}}/{{partition}}/{file_name}), so its priority against other files is unknown; read it with layout 'plain'",
                    path.display()
                )));
            };
            let len = fs::metadata(&path).map_err(|e| io(e, "reading", &path))?.len();
            let resource = match read_companion(&path, "resource")? {
                Some(bytes) => Some(parse_resource(&bytes).map_err(|e| e.in_file(companion(&path, "resource").display()))?),
                None => {
                    if !footer_complete(&path, len)? {
                        skipped.push(Skipped {
                            path,
                            reason: "no .resource and no complete footer: the file is still being written".into(),
                        });
                        continue;
                    }
                    None
                }
            };
            let mut deletions = Vec::new();
            for suffix in MODS_SUFFIXES {
                if let Some(bytes) = read_companion(&path, suffix)? {
                    deletions.extend(parse_mods_file(suffix, &bytes).map_err(|e| e.in_file(companion(&path, suffix).display()))?);
                }
            }
            groups.entry((database.clone(), partition.clone())).or_default().push(DataFile {
                path,
                name,
                space,
                database,
                region,
                partition,
                resource,
                deletions,
                len,
            });
        }
        let mut files = Vec::new();
        let mut ranges = Vec::new();
        for (_, mut group) in groups {
            group.sort_by(|a, b| file_priority((a.space, &a.name), (b.space, &b.name)).then_with(|| a.path.cmp(&b.path)));
            let start = files.len();
            files.extend(group);
            ranges.push(start..files.len());
        }
        Ok(DataDir { root, files, groups: ranges, skipped })
    }
}

/// Whether `root` (a local path) has the shape of an IoTDB data directory, or a space,
/// database, region or partition of one: every `*.tsfile` under it has a data-file name, sits
/// four directories below a `sequence/` or `unsequence/` directory, and at least one has its
/// `.resource` beside it. A path that does not exist or holds no TsFile does not.
pub fn looks_like_data_dir(root: impl AsRef<Path>) -> bool {
    let Ok(full) = fs::canonicalize(root.as_ref()) else { return false };
    let mut found = Vec::new();
    if walk(&full, &mut found).is_err() || found.is_empty() {
        return false;
    }
    let fits = |p: &PathBuf| {
        let named = p.file_name().and_then(|n| n.to_str()).and_then(DataFileName::parse).is_some();
        let names = p.components().filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        });
        named && Placement::of(names).is_some()
    };
    found.iter().all(fits) && found.iter().any(|p| companion(p, "resource").is_file())
}

/// Every `*.tsfile` under `dir` (or `dir` itself when it is a file).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = fs::metadata(dir).map_err(|e| io(e, "reading", dir))?;
    if meta.is_file() {
        if dir.extension().is_some_and(|e| e == "tsfile") {
            out.push(dir.to_path_buf());
        }
        return Ok(());
    }
    let entries = fs::read_dir(dir).map_err(|e| io(e, "reading", dir))?;
    for entry in entries {
        let entry = entry.map_err(|e| io(e, "reading", dir))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| io(e, "reading", &path))?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "tsfile") {
            out.push(path);
        }
    }
    Ok(())
}

/// `{path}.{suffix}`.
fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// The bytes of `{path}.{suffix}` when it exists.
fn read_companion(path: &Path, suffix: &str) -> Result<Option<Vec<u8>>> {
    let p = companion(path, suffix);
    match fs::read(&p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(e, "reading", &p)),
    }
}

/// Whether the file ends with a complete footer (its length and magic): a sealed file.
fn footer_complete(path: &Path, len: u64) -> Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if len < TAIL_LEN + HEAD_LEN {
        return Ok(false);
    }
    let mut f = fs::File::open(path).map_err(|e| io(e, "reading", path))?;
    let mut tail = [0u8; TAIL_LEN as usize];
    f.seek(SeekFrom::End(-(TAIL_LEN as i64))).and_then(|_| f.read_exact(&mut tail)).map_err(|e| io(e, "reading", path))?;
    // The smallest data start (no encryption header): a looser bound is still a footer.
    Ok(tail_metadata_len(&tail, len, HEAD_LEN).is_ok_and(|l| l > 0))
}

/// An I/O error naming what was done to which path.
fn io(source: std::io::Error, what: &str, path: &Path) -> TsFileError {
    TsFileError::Io { what: format!("{what} {}", path.display()), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_directory_shape() {
        let root = std::env::temp_dir().join(format!("tsfile-shape-{}", std::process::id()));
        let part = root.join("sequence/db/1/0");
        fs::create_dir_all(&part).unwrap();
        fs::write(part.join("1-1-0-0.tsfile"), b"x").unwrap();
        assert!(!looks_like_data_dir(&root), "no .resource yet");
        fs::write(part.join("1-1-0-0.tsfile.resource"), b"x").unwrap();
        assert!(looks_like_data_dir(&root));
        assert!(looks_like_data_dir(&part), "a partition of one");
        fs::write(part.join("extra.tsfile"), b"x").unwrap();
        assert!(!looks_like_data_dir(&root), "a file that is not data");
        assert!(!looks_like_data_dir(root.join("missing")));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn companion_names() {
        assert_eq!(companion(Path::new("/a/1-2-0-0.tsfile"), "mods2"), PathBuf::from("/a/1-2-0-0.tsfile.mods2"));
    }
}
