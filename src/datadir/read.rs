//! Reading one table of a data directory as IoTDB answers it.
//!
//! Per time partition (a group of [`DataDir`]), per device the query can match (TAG filter,
//! devices, time range, judged from `.resource` before a file is opened):
//! * a device held by one file, or by files whose time ranges for it do not overlap, with
//!   no deletion naming it and no repeated time inside a file (chunk time ranges that do not
//!   overlap), is read straight from its files, with the other such devices of each file in
//!   one read;
//! * any other device is read file by file, each file's deletions applied to its own rows,
//!   and the rows merged by priority, per column ([`merge_rows`]).
//!
//! Files no candidate device is in are not opened. Table-model tables only: a tree-model
//! read of a data directory is refused (not yet built), as is an IoTDB 1.x deletion with a
//! file offset inside a table file (IoTDB 1.x wrote no table model).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};

use arrow_array::{new_null_array, ArrayRef, RecordBatch};
use arrow_schema::{Schema, SchemaRef};

use crate::arrow::schema::{table_arrow_schema, time_column_name};
use crate::datadir::discover::DataDir;
use crate::datadir::merge::{apply_deletions, merge_rows, strictly_increasing, time_values};
use crate::error::{Result, TsFileError};
use crate::file::{TableBatches, TableRead, TsFile, TsFileOptions};
use crate::format::{ColumnCategory, DeviceId, TableSchema};
use crate::iotdb::{Deletion, DeletionTarget};
use crate::plan::TagFilter;

/// A data directory opened for reading: its files found, their companions parsed; data
/// files are opened when a read first needs them and kept open.
pub struct DataDirReader {
    dir: DataDir,
    options: TsFileOptions,
    opened: Vec<Mutex<Option<Arc<TsFile>>>>,
}

impl std::fmt::Debug for DataDirReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataDirReader").field("root", &self.dir.root).field("files", &self.dir.files.len()).finish()
    }
}

/// One device's time range in one file.
#[derive(Debug, Clone)]
struct Span {
    file: usize,
    start: i64,
    end: i64,
}

/// What a group read does next.
#[derive(Debug)]
enum Work {
    /// Read these devices of a file as they are.
    Straight { file: usize, devices: Vec<DeviceId> },
    /// Read these devices from each of their files (ascending priority; one read per file
    /// for all of them), delete, merge device by device.
    Merge { devices: Vec<(DeviceId, Vec<usize>)> },
}

impl DataDirReader {
    /// Find the data files under `root` (see [`DataDir::open`]).
    pub fn open(root: impl AsRef<Path>, options: TsFileOptions) -> Result<DataDirReader> {
        Ok(Self::from_dir(DataDir::open(root)?, options))
    }

    /// A reader of an already discovered directory.
    pub fn from_dir(dir: DataDir, options: TsFileOptions) -> DataDirReader {
        let opened = dir.files.iter().map(|_| Mutex::new(None)).collect();
        DataDirReader { dir, options, opened }
    }

    /// The files and what was left out.
    pub fn dir(&self) -> &DataDir {
        &self.dir
    }

    /// Data file `i`, opened on first use.
    pub fn file(&self, i: usize) -> Result<Arc<TsFile>> {
        let slot = self.opened.get(i).ok_or_else(|| TsFileError::NotFound { what: format!("data file #{i}") })?;
        let mut slot = slot.lock().map_err(|_| TsFileError::unsupported("a reader thread panicked"))?;
        if let Some(f) = slot.as_ref() {
            return Ok(Arc::clone(f));
        }
        let path = &self.dir.files.get(i).ok_or_else(|| TsFileError::NotFound { what: format!("data file #{i}") })?.path;
        let f = Arc::new(TsFile::open_with(path, self.options.clone())?);
        *slot = Some(Arc::clone(&f));
        Ok(f)
    }

    /// Names of the tables the directory holds (from `.resource` device ids where present;
    /// files without one are opened). Tree-model devices are not tables and not listed.
    pub fn table_names(&self) -> Result<Vec<String>> {
        let mut names = std::collections::BTreeSet::new();
        for (i, f) in self.dir.files.iter().enumerate() {
            match &f.resource {
                Some(r) => {
                    names.extend(r.iter().filter_map(|d| d.device.table_name()).filter(|t| !is_tree_path(t)).map(str::to_string))
                }
                None => names.extend(self.file(i)?.table_names()),
            }
        }
        Ok(names.into_iter().collect())
    }

    /// The schema of `table`: that of the highest-priority file of the latest partition
    /// holding it (IoTDB adds columns, never drops them; a column only older files hold is
    /// not read, one a file lacks reads as null).
    pub fn table_schema(&self, table: &str) -> Result<TableSchema> {
        for group in self.dir.groups.iter().rev() {
            for i in group.clone().rev() {
                let holds = match self.dir.files.get(i).and_then(|f| f.resource.as_ref()) {
                    Some(r) => r.iter().any(|d| d.device.table_name() == Some(table)),
                    None => true,
                };
                if holds {
                    let file = self.file(i)?;
                    if file.table_names().iter().any(|t| t == table) {
                        return Ok(file.table_schema(table)?.clone());
                    }
                }
            }
        }
        Err(TsFileError::NotFound { what: format!("table '{table}' in data directory {}", self.dir.root.display()) })
    }

    /// The Arrow schema of `table` ([`DataDirReader::table_schema`]).
    pub fn arrow_schema(&self, table: &str) -> Result<SchemaRef> {
        table_arrow_schema(&self.table_schema(table)?, self.options.time_unit)
    }

    /// Number of (database, time partition) groups; [`DataDirReader::read_group`] reads one.
    pub fn group_count(&self) -> usize {
        self.dir.groups.len()
    }

    /// Rows of `table` in every group, one group after another.
    pub fn read_table(self: &Arc<Self>, table: &str, read: &TableRead, tags: &TagFilter) -> Result<DirBatches> {
        let schema = self.table_schema(table)?;
        let plan = ReadPlan::new(&schema, read, self.options.time_unit)?;
        Ok(DirBatches::new(
            Arc::clone(self),
            table.to_string(),
            plan,
            read.clone(),
            tags.clone(),
            (0..self.group_count()).collect(),
        ))
    }

    /// Rows of `table` in group `group`.
    pub fn read_group(self: &Arc<Self>, group: usize, table: &str, read: &TableRead, tags: &TagFilter) -> Result<DirBatches> {
        let schema = self.table_schema(table)?;
        let plan = ReadPlan::new(&schema, read, self.options.time_unit)?;
        Ok(DirBatches::new(Arc::clone(self), table.to_string(), plan, read.clone(), tags.clone(), vec![group]))
    }

    /// The candidate devices of `table` in file `i` with their time ranges, judged from
    /// `.resource` when the file has one.
    fn spans(
        &self,
        i: usize,
        table: &str,
        read: &TableRead,
        tags: &TagFilter,
        keep: &Option<HashSet<&DeviceId>>,
    ) -> Result<Vec<(DeviceId, i64, i64)>> {
        let allowed = |d: &DeviceId, start: i64, end: i64| {
            d.table_name() == Some(table)
                && tags.allows(d)
                && keep.as_ref().is_none_or(|k| k.contains(d))
                && read.time_range.is_none_or(|(lo, hi)| start <= hi && lo <= end)
        };
        if let Some(r) = self.dir.files.get(i).and_then(|f| f.resource.as_ref()) {
            return Ok(r
                .iter()
                .filter(|d| allowed(&d.device, d.start, d.end))
                .map(|d| (d.device.clone(), d.start, d.end))
                .collect());
        }
        let file = self.file(i)?;
        if !file.table_names().iter().any(|t| t == table) {
            return Ok(Vec::new());
        }
        let views = file.device_views(table)?;
        Ok(views
            .devices
            .iter()
            .map(|d| (d.device.clone(), d.time.statistics.start_time, d.time.statistics.end_time))
            .filter(|(d, s, e)| allowed(d, *s, *e))
            .collect())
    }

    /// Every device of data file `i` (table and tree model) with its time range, from the
    /// file's own index.
    pub fn device_ranges(&self, i: usize) -> Result<Vec<(DeviceId, i64, i64)>> {
        let file = self.file(i)?;
        let mut out = Vec::new();
        for table in file.table_names() {
            for d in &file.device_views(&table)?.devices {
                out.push((d.device.clone(), d.time.statistics.start_time, d.time.statistics.end_time));
            }
        }
        Ok(out)
    }

    /// What reading `table` in group `g` takes: straight reads and merges.
    fn plan_group(&self, g: usize, table: &str, plan: &ReadPlan, read: &TableRead, tags: &TagFilter) -> Result<Vec<Work>> {
        let Some(range) = self.dir.groups.get(g).cloned() else { return Ok(Vec::new()) };
        let keep: Option<HashSet<&DeviceId>> = read.devices.as_ref().map(|d| d.iter().collect());
        let mut devices: BTreeMap<DeviceId, Vec<Span>> = BTreeMap::new();
        for i in range {
            for (device, start, end) in self.spans(i, table, read, tags, &keep)? {
                let device = device.trimmed();
                // Rows a whole-row deletion of this file covers from first to last are not
                // read at all (its statistics say so; nothing is decoded).
                if self.rows_deleted(i, &device, start, end, plan) {
                    continue;
                }
                devices.entry(device).or_default().push(Span { file: i, start, end });
            }
        }
        // Devices with a repeated time inside one file, per file opened.
        let mut repeats: HashMap<usize, HashSet<DeviceId>> = HashMap::new();
        let files: std::collections::BTreeSet<usize> = devices.values().flatten().map(|s| s.file).collect();
        for &i in &files {
            let file = self.file(i)?;
            let mut set = HashSet::new();
            if file.table_names().iter().any(|t| t == table) {
                for d in &file.device_views(table)?.devices {
                    if chunks_overlap(d.time.chunks.iter().map(|c| (c.statistics.start_time, c.statistics.end_time))) {
                        set.insert(d.device.trimmed());
                    }
                }
            }
            repeats.insert(i, set);
        }
        let mut straight: BTreeMap<usize, Vec<DeviceId>> = BTreeMap::new();
        let mut work = Vec::new();
        for (device, spans) in devices {
            let touched = spans.iter().any(|s| {
                repeats.get(&s.file).is_some_and(|r| r.contains(&device))
                    || self.deletions_of(s.file, &device, plan).next().is_some()
            });
            if touched || spans_overlap(&spans) {
                work.push((device, spans.iter().map(|s| s.file).collect()));
            } else {
                for s in spans {
                    straight.entry(s.file).or_default().push(device.clone());
                }
            }
        }
        let mut out: Vec<Work> = straight.into_iter().map(|(file, devices)| Work::Straight { file, devices }).collect();
        // Merged devices in chunks: their rows are held until merged.
        let mut work = work.into_iter().peekable();
        while work.peek().is_some() {
            out.push(Work::Merge { devices: work.by_ref().take(MERGE_CHUNK_DEVICES).collect() });
        }
        Ok(out)
    }

    /// The deletions of file `i` that can touch `device`: table deletions of its table and
    /// TAGs, tree patterns naming one of the read's FIELD columns of it.
    fn deletions_of<'a>(&'a self, i: usize, device: &'a DeviceId, plan: &'a ReadPlan) -> impl Iterator<Item = &'a Deletion> + 'a {
        self.dir.files.get(i).into_iter().flat_map(|f| f.deletions.iter()).filter(move |d| match &d.target {
            DeletionTarget::Table { table, tags, .. } => device.table_name() == Some(table.as_str()) && tags.matches(device),
            DeletionTarget::Tree(_) => plan.fields.iter().flatten().any(|m| d.matches(device, m)),
        })
    }

    /// Whether a whole-row deletion of file `i` covers all of `device`'s rows there
    /// (`start..=end`).
    fn rows_deleted(&self, i: usize, device: &DeviceId, start: i64, end: i64, plan: &ReadPlan) -> bool {
        self.deletions_of(i, device, plan).any(|d| {
            let whole_rows = matches!(&d.target, DeletionTarget::Table { measurements, .. } if measurements.is_empty());
            whole_rows && d.file_offset.is_none() && d.start <= start && end <= d.end && d.matches(device, "")
        })
    }

    /// The rows of `devices` in file `i` (one read of the file), per device its deletions
    /// applied, conformed to `plan.read_schema`; keyed by [`DeviceId::trimmed`].
    fn devices_rows(
        &self,
        i: usize,
        table: &str,
        devices: Vec<DeviceId>,
        plan: &ReadPlan,
        read: &TableRead,
    ) -> Result<HashMap<DeviceId, RecordBatch>> {
        let file = self.file(i)?;
        let path = || self.dir.files.get(i).map(|f| f.path.display().to_string()).unwrap_or_default();
        let len = self.dir.files.get(i).map_or(0, |f| f.len);
        let read = TableRead { devices: Some(devices), ..plan.file_read(&file, table, read)? };
        let mut rows = file.read_table(table, read)?;
        let mut out = HashMap::new();
        while let Some((device, batches)) = rows.next_device()? {
            let batches: Vec<RecordBatch> = batches.into_iter().map(|b| plan.conform(b)).collect::<Result<_>>()?;
            if batches.is_empty() {
                continue;
            }
            let batch = match <[RecordBatch; 1]>::try_from(batches) {
                Ok([one]) => one,
                Err(many) => arrow_select::concat::concat_batches(&plan.read_schema, &many)?,
            };
            let deletions: Vec<&Deletion> = self.deletions_of(i, &device, plan).collect();
            if deletions.iter().any(|d| d.file_offset.is_some_and(|o| u64::try_from(o).is_ok_and(|o| o < len))) {
                return Err(TsFileError::unsupported(format!(
                    "an IoTDB 1.x deletion (.mods) naming device {device} of a table-model file: its file offset rule needs chunk offsets, not built for table reads"
                ))
                .in_file(path()));
            }
            let batch = apply_deletions(batch, plan.time, &device, &deletions, &plan.measurements())?;
            out.insert(device.trimmed(), batch);
        }
        Ok(out)
    }
}

/// Devices merged together: their rows in every file they are in are held until merged.
const MERGE_CHUNK_DEVICES: usize = 64;

/// Whether a device id's first segment is a tree-model path (IoTDB's start with `root`).
fn is_tree_path(name: &str) -> bool {
    name == "root" || name.starts_with("root.")
}

/// Whether chunk time ranges (in file order) overlap, so a time may repeat inside a file.
fn chunks_overlap(ranges: impl Iterator<Item = (i64, i64)>) -> bool {
    let mut max_end: Option<i64> = None;
    for (start, end) in ranges {
        if max_end.is_some_and(|m| start <= m) {
            return true;
        }
        max_end = Some(max_end.map_or(end, |m| m.max(end)));
    }
    false
}

/// Whether two files' time ranges of one device overlap.
fn spans_overlap(spans: &[Span]) -> bool {
    let mut ranges: Vec<(i64, i64)> = spans.iter().map(|s| (s.start, s.end)).collect();
    ranges.sort_unstable();
    chunks_overlap(ranges.into_iter())
}

/// The columns a read asks for and the columns it reads (with the time column).
#[derive(Debug, Clone)]
struct ReadPlan {
    /// Columns read from each file, in this order: the requested ones, then the time column
    /// when it was not requested.
    read_schema: SchemaRef,
    /// Index in `read_schema` of the time column.
    time: usize,
    /// Indices in `read_schema` of the TAG columns (and ATTRIBUTE columns: neither is a
    /// FIELD), the same on every row of one device.
    tags: Vec<usize>,
    /// FIELD column measurement names per `read_schema` column.
    fields: Vec<Option<String>>,
    /// The requested columns' indices in `read_schema`.
    output: Vec<usize>,
}

impl ReadPlan {
    fn new(schema: &TableSchema, read: &TableRead, unit: crate::arrow::schema::TimeUnit) -> Result<ReadPlan> {
        let full = table_arrow_schema(schema, unit)?;
        let time_name = time_column_name(schema).to_string();
        let mut names: Vec<String> = match &read.projection {
            Some(p) => p.clone(),
            None => full.fields().iter().map(|f| f.name().clone()).collect(),
        };
        let requested = names.len();
        if !names.contains(&time_name) {
            names.push(time_name.clone());
        }
        let mut fields = Vec::with_capacity(names.len());
        let mut keys = Vec::new();
        let mut arrow_fields = Vec::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            let f = full
                .field_with_name(n)
                .map_err(|_| TsFileError::NotFound { what: format!("column '{n}' in table '{}'", schema.name) })?;
            arrow_fields.push(f.clone());
            let category = schema.columns.iter().find(|c| &c.name == n).map(|c| c.category);
            if category == Some(ColumnCategory::Field) {
                fields.push(Some(n.clone()));
            } else {
                fields.push(None);
                keys.push(i);
            }
        }
        let time = names.iter().position(|n| n == &time_name).unwrap_or(0);
        keys.retain(|&k| k != time);
        Ok(ReadPlan {
            read_schema: Arc::new(Schema::new(arrow_fields)),
            time,
            tags: keys,
            fields,
            output: (0..requested).collect(),
        })
    }

    /// The read of one file: the plan's columns that the file's table holds.
    fn file_read(&self, file: &TsFile, table: &str, read: &TableRead) -> Result<TableRead> {
        let have = file.arrow_schema(table)?;
        let cols: Vec<String> = self
            .read_schema
            .fields()
            .iter()
            .filter(|f| have.field_with_name(f.name()).is_ok())
            .map(|f| f.name().clone())
            .collect();
        Ok(TableRead { projection: Some(cols), time_range: read.time_range, devices: None, batch_size: read.batch_size })
    }

    /// `batch` with the plan's read columns: columns the file lacks as nulls; a column of
    /// another type is an error.
    fn conform(&self, batch: RecordBatch) -> Result<RecordBatch> {
        if batch.schema().fields() == self.read_schema.fields() {
            return Ok(batch);
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.read_schema.fields().len());
        for f in self.read_schema.fields() {
            match batch.column_by_name(f.name()) {
                Some(c) if c.data_type() == f.data_type() => columns.push(c.clone()),
                Some(c) => {
                    return Err(TsFileError::unsupported(format!(
                        "column '{}' is {} in one file and {} in another",
                        f.name(),
                        c.data_type(),
                        f.data_type()
                    )))
                }
                None => columns.push(new_null_array(f.data_type(), batch.num_rows())),
            }
        }
        Ok(RecordBatch::try_new(self.read_schema.clone(), columns)?)
    }

    fn measurements(&self) -> Vec<Option<&str>> {
        self.fields.iter().map(Option::as_deref).collect()
    }

    /// The output columns of a read batch.
    fn output(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        Ok(batch.project(&self.output)?)
    }
}

/// The record batches of a read of a data directory; see [`DataDirReader::read_table`].
pub struct DirBatches {
    reader: Arc<DataDirReader>,
    table: String,
    plan: ReadPlan,
    read: TableRead,
    tags: TagFilter,
    groups: std::vec::IntoIter<usize>,
    work: VecDeque<Work>,
    current: Option<TableBatches<'static>>,
    pending: VecDeque<RecordBatch>,
    /// Merged rows waiting to fill a batch, and their count.
    merged: Vec<RecordBatch>,
    merged_rows: usize,
    failed: bool,
}

impl std::fmt::Debug for DirBatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirBatches").field("table", &self.table).finish()
    }
}

impl DirBatches {
    fn new(
        reader: Arc<DataDirReader>,
        table: String,
        plan: ReadPlan,
        read: TableRead,
        tags: TagFilter,
        groups: Vec<usize>,
    ) -> Self {
        DirBatches {
            reader,
            table,
            plan,
            read,
            tags,
            groups: groups.into_iter(),
            work: VecDeque::new(),
            current: None,
            pending: VecDeque::new(),
            merged: Vec::new(),
            merged_rows: 0,
            failed: false,
        }
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        let output: Vec<_> = self.plan.output.iter().filter_map(|&i| self.plan.read_schema.fields().get(i).cloned()).collect();
        Arc::new(Schema::new(output))
    }

    fn batch_size(&self) -> usize {
        if self.read.batch_size == 0 {
            8192
        } else {
            self.read.batch_size
        }
    }

    /// The gathered merged rows as batches of at most the batch size, into `pending`.
    fn flush_merged(&mut self) -> Result<()> {
        if self.merged.is_empty() {
            return Ok(());
        }
        let parts = std::mem::take(&mut self.merged);
        self.merged_rows = 0;
        let all = arrow_select::concat::concat_batches(&self.schema(), &parts)?;
        let size = self.batch_size();
        let mut at = 0;
        while at < all.num_rows() {
            let n = size.min(all.num_rows() - at);
            self.pending.push_back(all.slice(at, n));
            at += n;
        }
        Ok(())
    }

    fn advance(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                return Ok(Some(b));
            }
            if let Some(current) = self.current.as_mut() {
                match current.next() {
                    Some(b) => {
                        let b = self.plan.conform(b?)?;
                        return Ok(Some(self.plan.output(&b)?));
                    }
                    None => self.current = None,
                }
            }
            match self.work.pop_front() {
                Some(Work::Straight { file, devices }) => {
                    let f = self.reader.file(file)?;
                    let read = TableRead { devices: Some(devices), ..self.plan.file_read(&f, &self.table, &self.read)? };
                    self.current = Some(f.read_table_shared(&self.table, read)?);
                }
                Some(Work::Merge { devices }) => {
                    let files: std::collections::BTreeSet<usize> = devices.iter().flat_map(|(_, f)| f.iter().copied()).collect();
                    let mut rows: HashMap<(usize, DeviceId), RecordBatch> = HashMap::new();
                    for f in files {
                        let wanted: Vec<DeviceId> =
                            devices.iter().filter(|(_, fs)| fs.contains(&f)).map(|(d, _)| d.clone()).collect();
                        for (device, batch) in self.reader.devices_rows(f, &self.table, wanted, &self.plan, &self.read)? {
                            rows.insert((f, device), batch);
                        }
                    }
                    for (device, fs) in devices {
                        let key = device.trimmed();
                        let mut inputs: Vec<RecordBatch> = fs.iter().filter_map(|&f| rows.remove(&(f, key.clone()))).collect();
                        let single = match inputs.as_slice() {
                            [one] => match one.columns().get(self.plan.time) {
                                Some(t) => strictly_increasing(time_values(t.as_ref())?),
                                None => false,
                            },
                            _ => false,
                        };
                        let merged = if single { inputs.pop() } else { merge_rows(&inputs, self.plan.time, &self.plan.tags)? };
                        if let Some(m) = merged {
                            self.merged_rows += m.num_rows();
                            self.merged.push(self.plan.output(&m)?);
                        }
                    }
                    // Merged devices are gathered into full batches (a device's rows in one
                    // partition are often far fewer than a batch).
                    if self.merged_rows >= self.batch_size() || !matches!(self.work.front(), Some(Work::Merge { .. })) {
                        self.flush_merged()?;
                    }
                }
                None => {
                    let Some(g) = self.groups.next() else { return Ok(None) };
                    self.work = self.reader.plan_group(g, &self.table, &self.plan, &self.read, &self.tags)?.into();
                }
            }
        }
    }
}

impl Iterator for DirBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.advance() {
            Ok(b) => b.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_of_chunks_and_files() {
        assert!(!chunks_overlap([(1, 5), (6, 9)].into_iter()));
        assert!(chunks_overlap([(1, 5), (5, 9)].into_iter()), "a shared time repeats");
        assert!(chunks_overlap([(1, 9), (20, 30), (3, 4)].into_iter()), "against every earlier chunk");
        assert!(!chunks_overlap(std::iter::empty()));
        let span = |file, start, end| Span { file, start, end };
        assert!(!spans_overlap(&[span(0, 10, 20), span(1, 0, 9)]));
        assert!(spans_overlap(&[span(0, 10, 20), span(1, 0, 10)]));
        assert!(is_tree_path("root.sg") && is_tree_path("root") && !is_tree_path("rooted") && !is_tree_path("t"));
    }
}
