//! [`TsFile`]: the library entry point that needs no DataFusion.
//!
//! Open a file from a path, from bytes or from an `object_store` location, list its tables
//! and devices, and read a table as an iterator of Arrow `RecordBatch`es with an optional
//! column projection, time range and device filter. Chunks and pages whose statistics lie
//! outside the time range are skipped without being decompressed.
//!
//! ```
//! use datafusion_tsfile::{TableRead, TsFile};
//!
//! let file = TsFile::open("tests/data/corpus/files/table_multi_tables.tsfile")?;
//! for table in file.table_names() {
//!     println!("{table}: {} devices", file.devices(&table)?.len());
//! }
//! let read = TableRead::default().with_time_range(0, i64::MAX);
//! let mut rows = 0;
//! for batch in file.read_table("sensors", read)? {
//!     rows += batch?.num_rows();
//! }
//! assert!(rows > 0);
//! # Ok::<(), datafusion_tsfile::TsFileError>(())
//! ```

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Schema, SchemaRef};
use bytes::Bytes;

use crate::arrow::array::{build_array, time_array};
use crate::arrow::device_batches::DeviceBatcher;
use crate::arrow::schema::{measurement_field, table_arrow_schema, time_field, TimeUnit};
use crate::crypto::EncryptionKeys;
use crate::error::{Result, ResultExt, TsFileError};
use crate::format::open::RangeSource;
use crate::format::reader::StructureOptions;
use crate::format::{ByteSource, ColumnCategory, DeviceId, FileReader, LocalFile, TableSchema};
use crate::plan::{AccessRequest, DeviceFields, DevicePlan, FileView, NoCounts, TableAccess, TagFilter, FETCH_RUN_BYTES};
use crate::read::aligned::{plan_chunk_groups, read_chunk_group_in, GroupRead};
use crate::read::tree::read_device_rows;
use crate::read::{DecodeBudget, ReadOptions};
use crate::summary::{AggState, BucketSummary, Summary, SummaryQuery, UnitCounts};

impl ByteSource for Box<dyn ByteSource> {
    fn len(&self) -> u64 {
        (**self).len()
    }
    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        (**self).read(range)
    }
    fn read_up_to(&self, range: Range<u64>) -> Result<Bytes> {
        (**self).read_up_to(range)
    }
}

/// Options of an open [`TsFile`].
///
/// Encrypted files need their keys here; see [`crate::crypto`]:
///
/// ```
/// use datafusion_tsfile::crypto::{EncryptionKeys, MasterKey};
/// use datafusion_tsfile::{TableRead, TsFile, TsFileOptions};
///
/// let keys = EncryptionKeys::default().with_master_key(MasterKey::parse("tsfile-rs-master")?);
/// let file = TsFile::open_with("tests/data/encrypted/aes128_level2.tsfile", TsFileOptions::default().with_keys(keys))?;
/// let rows: usize = file.read_table("t1", TableRead::default())?.map(|b| b.map(|b| b.num_rows())).sum::<Result<_, _>>()?;
/// assert_eq!(rows, 5);
/// # Ok::<(), datafusion_tsfile::TsFileError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TsFileOptions {
    /// How pages are decoded (time encoding of non-aligned pages, SPRINTZ semantics, limits).
    pub read: ReadOptions,
    /// Arrow representation of the time column and TIMESTAMP fields.
    pub time_unit: TimeUnit,
    /// Keys for encrypted files (none by default: reading values of an encrypted file is
    /// then an [`TsFileError::Encrypted`] error; metadata needs no key).
    pub keys: EncryptionKeys,
}

impl TsFileOptions {
    /// Use `keys` for encrypted files.
    pub fn with_keys(mut self, keys: EncryptionKeys) -> Self {
        self.keys = keys;
        self
    }
}

/// What to read from a table.
#[derive(Debug, Clone, Default)]
pub struct TableRead {
    /// Columns to return, by name, in this order (`None` = all columns).
    pub projection: Option<Vec<String>>,
    /// Inclusive time range.
    pub time_range: Option<(i64, i64)>,
    /// Only these devices (`None` = all).
    pub devices: Option<Vec<DeviceId>>,
    /// Maximum rows per batch (0 = 8192).
    pub batch_size: usize,
}

impl TableRead {
    /// Only the named columns, in this order.
    pub fn with_projection<S: Into<String>>(mut self, cols: impl IntoIterator<Item = S>) -> Self {
        self.projection = Some(cols.into_iter().map(Into::into).collect());
        self
    }

    /// Only rows with `lo <= time <= hi`.
    pub fn with_time_range(mut self, lo: i64, hi: i64) -> Self {
        self.time_range = Some((lo, hi));
        self
    }

    /// Only these devices.
    pub fn with_devices(mut self, devices: Vec<DeviceId>) -> Self {
        self.devices = Some(devices);
        self
    }

    /// At most `n` rows per batch.
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n;
        self
    }
}

/// An open TsFile.
pub struct TsFile {
    /// The reader and the planning views built from it (once, on first use).
    view: FileView<Box<dyn ByteSource>>,
    name: String,
    options: TsFileOptions,
}

impl std::fmt::Debug for TsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TsFile").field("name", &self.name).field("len", &self.view.reader().len()).finish()
    }
}

impl TsFile {
    /// Open a local file.
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<TsFile> {
        Self::open_with(path, TsFileOptions::default())
    }

    /// Open a local file with options.
    pub fn open_with(path: impl AsRef<std::path::Path>, options: TsFileOptions) -> Result<TsFile> {
        let name = path.as_ref().display().to_string();
        let src = LocalFile::open(path.as_ref()).map_err(|e| e.in_file(&name))?;
        Self::from_source(Box::new(src), name, options)
    }

    /// Open a file held in memory.
    pub fn from_bytes(bytes: Bytes) -> Result<TsFile> {
        Self::from_source(Box::new(bytes), "<memory>".into(), TsFileOptions::default())
    }

    /// Open any byte source; `name` is used in error messages.
    pub fn from_source(source: Box<dyn ByteSource>, name: String, options: TsFileOptions) -> Result<TsFile> {
        let structure = StructureOptions { max_metadata_size: options.read.max_metadata_bytes, ..Default::default() };
        let mut reader = FileReader::open_with(source, structure).map_err(|e| e.in_file(&name))?;
        match crate::crypto::unlock(&mut reader, &options.keys) {
            Ok(()) => {}
            // A key problem leaves metadata readable; reading values reports it.
            Err(TsFileError::Encrypted { detail }) => reader.set_decryptor(Arc::new(crate::crypto::PageCipher::Locked(detail))),
            Err(e) => return Err(e.in_file(&name)),
        }
        Ok(TsFile { view: FileView::new(reader), name, options })
    }

    /// Open an object from an `object_store` (the object is fetched once, whole).
    #[cfg(feature = "object_store")]
    pub async fn from_object_store(
        store: Arc<dyn object_store::ObjectStore>,
        location: &object_store::path::Path,
        options: TsFileOptions,
    ) -> Result<TsFile> {
        use object_store::ObjectStoreExt;
        let name = location.to_string();
        let bytes = store
            .get(location)
            .await
            .map_err(|e| TsFileError::Io { what: format!("fetching {name}"), source: std::io::Error::other(e) })?
            .bytes()
            .await
            .map_err(|e| TsFileError::Io { what: format!("fetching {name}"), source: std::io::Error::other(e) })?;
        Self::from_source(Box::new(bytes), name, options)
    }

    /// The name (path) used in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The structure-level reader (metadata, index, chunks).
    pub fn structure(&self) -> &FileReader<Box<dyn ByteSource>> {
        self.view.reader()
    }

    /// Names of the tables with a schema (table model), in file order.
    pub fn table_names(&self) -> Vec<String> {
        self.view.reader().metadata().table_schemas.iter().map(|t| t.name.clone()).collect()
    }

    /// Keys of the device index that have no table schema (tree-model path prefixes).
    pub fn tree_prefixes(&self) -> Vec<String> {
        let md = self.view.reader().metadata();
        md.table_index.iter().filter(|t| md.table_schema(&t.name).is_none()).map(|t| t.name.clone()).collect()
    }

    /// The schema of table `table`.
    pub fn table_schema(&self, table: &str) -> Result<&TableSchema> {
        self.view.reader().metadata().table_schema(table).ok_or_else(|| {
            TsFileError::NotFound { what: format!("table '{table}' (tables: {})", self.table_names().join(", ")) }
                .in_file(&self.name)
        })
    }

    /// The Arrow schema of table `table`.
    pub fn arrow_schema(&self, table: &str) -> Result<SchemaRef> {
        table_arrow_schema(self.table_schema(table)?, self.options.time_unit)
    }

    /// Devices of a table (or tree path prefix), in index order. A table that has a schema
    /// but was never written has no devices.
    pub fn devices(&self, table: &str) -> Result<Vec<DeviceId>> {
        if self.view.reader().metadata().table_root(table).is_none() {
            return if self.view.reader().metadata().table_schema(table).is_some() {
                Ok(Vec::new())
            } else {
                Err(TsFileError::NotFound { what: format!("table '{table}'") }.in_file(&self.name))
            };
        }
        Ok(self.view.reader().devices(table).map_err(|e| e.in_file(&self.name))?.into_iter().map(|d| d.device).collect())
    }

    /// `Err(Encrypted)` before any work when the file's pages need a key it was not given.
    fn check_readable(&self) -> Result<()> {
        crate::crypto::decryptor_of(self.view.reader()).map(|_| ()).map_err(|e| e.in_file(&self.name))
    }

    /// Read table `table` as record batches: rows device by device, small devices gathered
    /// into batches of up to the batch size. Planned by the access plan the SQL scan uses
    /// ([`crate::plan::TableAccess`]): only the projected fields' series are read from the
    /// index, chunk groups and pages outside the time range are skipped.
    pub fn read_table(&self, table: &str, read: TableRead) -> Result<TableBatches<'_>> {
        self.check_readable()?;
        let schema = self.table_schema(table)?.clone();
        let full = table_arrow_schema(&schema, self.options.time_unit)?;
        let projection: Vec<usize> = match &read.projection {
            Some(p) => p
                .iter()
                .map(|n| {
                    full.index_of(n).map_err(|_| {
                        TsFileError::NotFound { what: format!("column '{n}' in table '{table}'") }.in_file(&self.name)
                    })
                })
                .collect::<Result<_>>()?,
            None => (0..full.fields().len()).collect(),
        };
        let projected = Arc::new(full.project(&projection)?);
        let view = self.device_views(table)?;
        let devices: Vec<usize> = match &read.devices {
            Some(keep) => {
                let mut at: Vec<usize> = keep.iter().filter_map(|d| view.position(d)).collect();
                at.sort_unstable();
                at.dedup();
                at
            }
            None => (0..view.devices.len()).collect(),
        };
        let mut opts = self.options.read;
        opts.time_range = read.time_range;
        let request = AccessRequest {
            schema: full,
            projection,
            tags: TagFilter::default(),
            pruner: None,
            read: opts,
            counter: Arc::new(NoCounts),
        };
        let access = TableAccess::new(view, request);
        let batch_size = if read.batch_size == 0 { 8192 } else { read.batch_size };
        let batcher = access.batcher(projected.clone(), self.options.time_unit, batch_size)?;
        Ok(TableBatches {
            file: FileRef::Borrowed(self),
            schema: projected,
            access,
            devices: devices.into_iter(),
            fields: DeviceFields::default(),
            batcher,
            pending: Vec::new().into_iter(),
            run: Default::default(),
            run_reader: None,
            budget: DecodeBudget::for_options(&opts),
            done: false,
        })
    }

    /// [`TsFile::read_table`] on a shared file: the batches hold the file, so they can
    /// outlive the caller's borrow (a reader of many files streams from each in turn).
    pub fn read_table_shared(self: &Arc<Self>, table: &str, read: TableRead) -> Result<TableBatches<'static>> {
        let b = self.read_table(table, read)?;
        Ok(TableBatches {
            file: FileRef::Shared(Arc::clone(self)),
            schema: b.schema,
            access: b.access,
            devices: b.devices,
            fields: b.fields,
            batcher: b.batcher,
            pending: b.pending,
            run: b.run,
            run_reader: b.run_reader,
            budget: b.budget,
            done: b.done,
        })
    }

    /// The devices of table `table` with their time columns' statistics (chunk by chunk
    /// in `time.chunks`), as the access plan sees them.
    pub fn device_views(&self, table: &str) -> Result<Arc<crate::plan::TableView>> {
        if self.view.reader().metadata().table_root(table).is_none() {
            let schema = self.table_schema(table)?.clone();
            return Ok(Arc::new(crate::plan::TableView::build(self.view.reader(), schema, Vec::new(), None)?));
        }
        self.view.table(table).map_err(|e| e.in_file(&self.name))
    }

    /// Aggregates of every device of table `table` over `query.range`, per `date_bin`
    /// bucket when `query.buckets` is set, for value columns `columns` (the aggregates'
    /// column indices refer to it; `query.types` and `query.lossy` are filled in from the
    /// schema): answered
    /// from series, chunk and page statistics wherever they are exact, from decoded pages
    /// elsewhere — the library form of the SQL statistics answers.
    ///
    /// ```
    /// use datafusion_tsfile::stats::{TimeBuckets, TimeRange};
    /// use datafusion_tsfile::summary::{AggFunc, Answer, Cell, SummaryQuery};
    /// use datafusion_tsfile::TsFile;
    ///
    /// let file = TsFile::open("data/sample.tsfile")?;
    /// let hour = TimeBuckets::new(3_600_000, 0)?; // file units: milliseconds
    /// let query = SummaryQuery {
    ///     range: TimeRange::all(),
    ///     buckets: Some(hour),
    ///     types: Vec::new(),
    ///     aggs: vec![AggFunc::Rows, AggFunc::Max(0)],
    ///     lossy: Vec::new(),
    /// };
    /// let devices = file.summarize("weather", &["temperature"], &query)?;
    /// assert_eq!(devices.len(), 300);
    /// let rows: u64 = devices.iter().flat_map(|(_, b)| b).map(|b| b.rows).sum();
    /// assert_eq!(rows, 1_006_239);
    /// # Ok::<(), datafusion_tsfile::TsFileError>(())
    /// ```
    pub fn summarize(&self, table: &str, columns: &[&str], query: &SummaryQuery) -> Result<Vec<(DeviceId, Vec<BucketSummary>)>> {
        self.check_readable()?;
        let schema = self.table_schema(table)?;
        let mut query = query.clone();
        query.types = columns
            .iter()
            .map(|c| {
                schema
                    .columns
                    .iter()
                    .find(|s| s.name == *c && s.category == ColumnCategory::Field)
                    .map(|s| s.data_type)
                    .ok_or_else(|| {
                        TsFileError::NotFound { what: format!("FIELD column '{c}' in table '{table}'") }.in_file(&self.name)
                    })
            })
            .collect::<Result<_>>()?;
        query.lossy = columns
            .iter()
            .map(|c| {
                schema.columns.iter().any(|s| s.name == *c && crate::stats::trust::lossy_float_encoding(s.data_type, s.encoding))
            })
            .collect();
        if self.view.reader().metadata().table_root(table).is_none() {
            return Ok(Vec::new());
        }
        let view = self.view.table(table).map_err(|e| e.in_file(&self.name))?;
        let budget = DecodeBudget::for_options(&self.options.read);
        let mut fields = DeviceFields::default();
        let mut out = Vec::with_capacity(view.devices.len());
        for d in &view.devices {
            let r = (|| {
                self.view.read_fields(d, &|name| columns.contains(&name), &mut fields)?;
                let values: Vec<_> = columns.iter().map(|c| fields.field(c)).collect();
                let mut summary = Summary::new();
                let mut counts = UnitCounts::default();
                let groups = query.plan_device(&d.time, &values, &mut summary, &mut counts)?;
                query.read_groups(self.view.reader(), &groups, &mut summary, &self.options.read, &budget, &mut counts)?;
                Ok(summary
                    .into_iter()
                    .filter(|(_, g)| g.rows > 0)
                    .map(|(bucket, g)| BucketSummary {
                        bucket,
                        rows: g.rows,
                        answers: g.aggs.into_iter().map(AggState::finish).collect(),
                    })
                    .collect())
            })();
            let buckets = r.with_context(|| format!("device {}", d.device)).map_err(|e| e.in_file(&self.name))?;
            out.push((d.device.clone(), buckets));
        }
        Ok(out)
    }

    /// Read a tree-model device as rows: `time`, then one column per measurement (all of
    /// the device's measurements sorted by name, or the given ones in that order), merged
    /// on the union of the series' timestamps (an aligned device: the rows of its time
    /// column).
    pub fn read_tree_device(
        &self,
        device: &DeviceId,
        measurements: Option<&[&str]>,
        time_range: Option<(i64, i64)>,
    ) -> Result<RecordBatch> {
        self.check_readable()?;
        let ctx = |e: TsFileError| e.context(format!("device {device}")).in_file(&self.name);
        let entry = self
            .view
            .reader()
            .find_device(device)
            .map_err(ctx)?
            .ok_or_else(|| TsFileError::NotFound { what: format!("device {device}") }.in_file(&self.name))?;
        let mut all = self.view.reader().series(&entry).map_err(ctx)?;
        let time = all.iter().position(|s| s.is_aligned_time()).map(|i| all.remove(i));
        let series = match measurements {
            None => {
                all.sort_by(|a, b| a.measurement.as_bytes().cmp(b.measurement.as_bytes()));
                all
            }
            Some(ms) => {
                let mut v = Vec::with_capacity(ms.len());
                for m in ms {
                    let s = all.iter().find(|s| s.measurement == *m).ok_or_else(|| {
                        TsFileError::NotFound { what: format!("measurement '{m}' of device {device}") }.in_file(&self.name)
                    })?;
                    v.push(s.clone());
                }
                v
            }
        };
        let mut opts = self.options.read;
        opts.time_range = time_range;
        let rows = match &time {
            None => read_device_rows(self.view.reader(), &series, &opts).map_err(ctx)?,
            Some(time) => self.read_aligned_rows(time, &series, &opts).map_err(ctx)?,
        };
        let unit = self.options.time_unit;
        let mut fields = vec![time_field("time", unit)];
        let mut arrays: Vec<ArrayRef> = vec![time_array(rows.times, unit)];
        for (s, mut col) in series.iter().zip(rows.columns) {
            fields.push(measurement_field(&s.measurement, s.data_type, unit)?);
            let (values, nulls) = col.take();
            arrays.push(build_array(values, nulls, s.data_type, unit, &s.measurement).map_err(ctx)?);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(|e| ctx(e.into()))
    }
}

impl TsFile {
    /// Rows of an aligned tree device: its chunk groups decoded one after the other.
    fn read_aligned_rows(
        &self,
        time: &crate::format::TimeseriesMetadata,
        series: &[crate::format::TimeseriesMetadata],
        opts: &ReadOptions,
    ) -> Result<crate::read::tree::DeviceRows> {
        let values: Vec<Option<&crate::format::TimeseriesMetadata>> = series.iter().map(Some).collect();
        let types: Vec<crate::format::TsDataType> = series.iter().map(|s| s.data_type).collect();
        let budget = DecodeBudget::for_options(opts);
        let mut rows = crate::read::tree::DeviceRows {
            times: Vec::new(),
            columns: types.iter().map(|t| crate::read::column::ColumnBuilder::new(*t)).collect::<Result<_>>()?,
        };
        for group in plan_chunk_groups(time, &values)? {
            let read = GroupRead { types: &types, opts, page_filter: None, budget: &budget };
            let decoded = read_chunk_group_in(self.view.reader(), &group, &read)?;
            rows.times.extend(decoded.times);
            for (column, mut part) in rows.columns.iter_mut().zip(decoded.columns) {
                column.append_builder(&mut part)?;
            }
        }
        Ok(rows)
    }
}

/// Iterator over the record batches of a table read; see [`TsFile::read_table`].
pub struct TableBatches<'a> {
    file: FileRef<'a>,
    schema: SchemaRef,
    access: TableAccess,
    devices: std::vec::IntoIter<usize>,
    /// The series of the device being read (one buffer for all).
    fields: DeviceFields,
    batcher: DeviceBatcher,
    pending: std::vec::IntoIter<RecordBatch>,
    /// Planned devices of the current run and a reader holding their chunks' bytes.
    run: std::collections::VecDeque<DevicePlan>,
    run_reader: Option<FileReader<RangeSource>>,
    /// Decoded bytes of this read, against `max_decoded_bytes`.
    budget: DecodeBudget,
    done: bool,
}

/// The file a [`TableBatches`] reads: borrowed, or shared ([`TsFile::read_table_shared`]).
enum FileRef<'a> {
    Borrowed(&'a TsFile),
    Shared(Arc<TsFile>),
}

impl std::ops::Deref for FileRef<'_> {
    type Target = TsFile;

    fn deref(&self) -> &TsFile {
        match self {
            FileRef::Borrowed(f) => f,
            FileRef::Shared(f) => f,
        }
    }
}

impl std::fmt::Debug for TableBatches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBatches").field("schema", &self.schema).finish()
    }
}

impl TableBatches<'_> {
    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The next planned device: from the current run, or from a new run planned up to about
    /// [`FETCH_RUN_BYTES`] of chunks whose bytes are read in a few large reads.
    fn next_plan(&mut self) -> Result<Option<DevicePlan>> {
        if let Some(plan) = self.run.pop_front() {
            return Ok(Some(plan));
        }
        let view = &self.file.view;
        let mut bytes = 0u64;
        while bytes < FETCH_RUN_BYTES {
            let Some(index) = self.devices.next() else { break };
            let plan = self.access.plan_device(view, index, &mut self.fields).with_context(|| {
                let d = self.access.table.devices.get(index).map(|d| d.device.to_string()).unwrap_or_default();
                format!("device {d}")
            })?;
            if let Some(plan) = plan {
                bytes = bytes.saturating_add(plan.bytes());
                self.run.push_back(plan);
            }
        }
        if self.run.is_empty() {
            return Ok(None);
        }
        let mut source = RangeSource::new(view.reader().len());
        for r in merge_ranges(self.run.iter().flat_map(|p| p.ranges.iter().cloned()).collect()) {
            let start = r.start;
            source.insert(start, view.reader().source().read(r)?);
        }
        self.run_reader = Some(view.reader().with_source(source));
        Ok(self.run.pop_front())
    }

    /// Decode `plan` from the current run's bytes into the batcher.
    fn decode(&mut self, plan: DevicePlan) -> Result<Vec<RecordBatch>> {
        let reader = self.run_reader.as_ref().ok_or_else(|| TsFileError::unsupported("a device planned outside a run"))?;
        self.access.decode_device(reader, plan, &mut self.batcher, &self.budget)
    }

    /// The next device's rows alone (not gathered with other devices' into batches), with
    /// its id; `None` after the last. For readers that handle a table device by device; use
    /// either this or the iterator, not both.
    pub fn next_device(&mut self) -> Result<Option<(DeviceId, Vec<RecordBatch>)>> {
        let Some(plan) = self.next_plan().map_err(|e| e.in_file(&self.file.name))? else { return Ok(None) };
        let device = self.access.table.devices.get(plan.index).map(|d| d.device.clone());
        let device = device.ok_or_else(|| TsFileError::NotFound { what: format!("device #{}", plan.index) })?;
        let mut out = self.decode(plan).map_err(|e| e.in_file(&self.file.name))?;
        out.extend(self.batcher.finish()?);
        Ok(Some((device, out)))
    }

    fn advance(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some(b) = self.pending.next() {
                return Ok(Some(b));
            }
            if self.done {
                return Ok(None);
            }
            match self.next_plan()? {
                Some(plan) => self.pending = self.decode(plan)?.into_iter(),
                None => {
                    self.done = true;
                    self.pending = self.batcher.finish()?.into_iter().collect::<Vec<_>>().into_iter();
                }
            }
        }
    }
}

/// Byte ranges sorted and joined where they touch or lie within 64 KiB of each other (the
/// gap read is cheaper than another request), so a run of chunk groups is a few reads.
fn merge_ranges(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    const GAP: u64 = 64 << 10;
    ranges.sort_unstable_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(GAP) => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

impl Iterator for TableBatches<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.advance() {
            Ok(b) => b.map(Ok),
            Err(e) => {
                // Stop after the first error.
                self.devices = Vec::new().into_iter();
                self.done = true;
                self.pending = Vec::new().into_iter();
                Some(Err(e.in_file(&self.file.name)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::merge_ranges;

    #[test]
    fn ranges_join_where_they_touch_or_are_close() {
        assert_eq!(merge_ranges(vec![]), vec![]);
        assert_eq!(merge_ranges(vec![10..20, 0..5, 20..30]), vec![0..30]);
        assert_eq!(merge_ranges(vec![0..10, (10 + (64 << 10) + 1)..(20 + (64 << 10))]).len(), 2);
        assert_eq!(merge_ranges(vec![0..100, 10..20]), vec![0..100], "a range inside another");
    }
}
