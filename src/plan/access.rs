//! The access plan of a table-model read of one file: devices → chunk groups → pages.
//!
//! [`TableAccess`] is the per-file set-up, done once per file and query: the table's view
//! (whole, or of the few devices a TAG filter names), where each column of the query's
//! schema comes from ([`ColumnRole`]), the FIELD columns stored with a lossy float encoding,
//! the projected fields and the series each device must read ([`Layout`]). [`TableAccess`]
//! then plans the read:
//!
//! 1. [`TableAccess::prune_devices`]: the devices a byte range owns, minus those the TAG
//!    filter rejects, minus those whose series statistics the [`Pruner`] rejects;
//! 2. [`TableAccess::plan_device`]: a device's chunk groups minus those whose chunk
//!    statistics the pruner rejects, with the byte ranges of the chunks to read;
//! 3. [`Runs`]: planned devices cut into runs of about [`FETCH_RUN_BYTES`] of chunks, each
//!    fetched with one request;
//! 4. [`TableAccess::decode_device`]: the kept chunk groups decoded, pages filtered by their
//!    statistics ([`TableAccess::page_filter`]), rows gathered into record batches.
//!
//! The predicate itself is not known here: a [`Pruner`] (the DataFusion layer's pruning
//! predicate, or none for the library) is told what each unit's statistics say, per column
//! ([`UnitColumn`]), and answers which units may hold matching rows. What was read and pruned
//! is reported to an [`AccessCounter`].

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};

use crate::arrow::batch::ColumnSource;
use crate::arrow::device_batches::DeviceBatcher;
use crate::arrow::schema::{TimeUnit, CATEGORY_KEY};
use crate::error::Result;
use crate::format::{ByteSource, FileReader, Statistics, TimeseriesMetadata, TsDataType};
use crate::plan::file::FileView;
use crate::plan::tags::TagFilter;
use crate::plan::view::{DeviceFields, DeviceView, TableView};
use crate::read::aligned::{
    plan_chunk_groups, read_chunk_group_into, AlignedChunkGroup, GroupPageStats, GroupRead, PageFilter, ValuePageStats,
};
use crate::read::{DecodeBudget, ReadOptions};

/// Bytes of chunks fetched by one request: a run of whole devices (a larger device alone).
pub const FETCH_RUN_BYTES: u64 = 4 << 20;

/// Where a column of the query's schema comes from in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRole {
    /// The time column.
    Time,
    /// TAG column: DeviceID segment index.
    Tag(usize),
    /// ATTRIBUTE column (always null).
    Attribute,
    /// FIELD column (measurement name).
    Field(String),
    /// A column this file does not have (all null).
    Missing,
}

/// Roles of the columns of `schema` (a table's merged file schema, categories in the fields'
/// metadata) in a file whose table has TAG columns `tag_order` and FIELD columns
/// `fields_in_file`.
pub fn column_roles(schema: &Schema, tag_order: &[String], fields_in_file: &HashSet<String>) -> Vec<ColumnRole> {
    schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let cat = f.metadata().get(CATEGORY_KEY).map(String::as_str);
            match cat {
                _ if i == 0 => ColumnRole::Time,
                Some("TAG") => match tag_order.iter().position(|t| t == f.name()) {
                    Some(p) => ColumnRole::Tag(p + 1),
                    None => ColumnRole::Missing,
                },
                Some("ATTRIBUTE") => ColumnRole::Attribute,
                _ if fields_in_file.contains(f.name()) => ColumnRole::Field(f.name().clone()),
                _ => ColumnRole::Missing,
            }
        })
        .collect()
}

/// What a [`Pruner`] is told of one column in one unit (a device, a chunk group, a page).
#[derive(Debug, Clone, Copy)]
pub enum UnitColumn<'a> {
    /// The predicate does not name the column: nothing is said.
    Unused,
    /// The time column: the unit's time statistics.
    Time(&'a Statistics),
    /// A TAG column: the device's value (`None`: null).
    Tag(Option<&'a str>),
    /// Every row is null (an ATTRIBUTE, a column the file lacks, a field the unit lacks).
    Null,
    /// A FIELD column's statistics in the unit; `lossy` when its values were stored with a
    /// lossy float encoding (then only its count describes what is read).
    Field {
        /// The statistics.
        stats: &'a Statistics,
        /// Stored with a lossy float encoding.
        lossy: bool,
    },
}

/// One unit as a pruner sees it: its rows and, per column of the query's schema, what its
/// statistics say.
#[derive(Debug, Clone)]
pub struct Unit<'a> {
    /// Rows of the unit.
    pub rows: u64,
    /// Per column of the query's schema.
    pub columns: Vec<UnitColumn<'a>>,
}

/// Decides which units may hold rows matching a query's predicate.
pub trait Pruner: Send + Sync {
    /// Whether the predicate names column `i` of the query's schema (only those are
    /// described in the units).
    fn names(&self, i: usize) -> bool;
    /// An empty set of units to judge together.
    fn judge(&self) -> Box<dyn Judgement + '_>;
}

/// Units judged together by a [`Pruner`] (one call evaluates the predicate over all).
pub trait Judgement {
    /// Add one unit.
    fn push(&mut self, unit: Unit<'_>);
    /// Per unit pushed: `true` when it may hold a matching row (never dropped on doubt).
    fn keep(self: Box<Self>) -> Vec<bool>;
}

/// Where a plan reports what it read and pruned.
pub trait AccessCounter: Send + Sync {
    /// Devices owned by the read (`total`) and pruned before any data I/O.
    fn devices(&self, total: usize, pruned: usize);
    /// Chunk groups of the kept devices, and those pruned by chunk statistics.
    fn chunk_groups(&self, total: usize, pruned: usize);
    /// Pages of the chunk groups read, those pruned by page statistics, and rows decoded.
    fn pages(&self, total: usize, pruned: usize, rows: usize);
}

/// An [`AccessCounter`] that keeps nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCounts;

impl AccessCounter for NoCounts {
    fn devices(&self, _: usize, _: usize) {}
    fn chunk_groups(&self, _: usize, _: usize) {}
    fn pages(&self, _: usize, _: usize, _: usize) {}
}

/// The chunks of one device a read fetches and decodes.
#[derive(Debug, Clone)]
pub struct DevicePlan {
    /// Index into the table view's devices.
    pub index: usize,
    /// Chunk groups that survived pruning, with the projected fields' chunks in projection
    /// order.
    pub groups: Vec<AlignedChunkGroup>,
    /// Byte ranges of the chunks to fetch.
    pub ranges: Vec<Range<u64>>,
}

impl DevicePlan {
    /// Bytes of the chunks to fetch.
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum()
    }
}

/// What every device of one read shares: the FIELD columns of the query's schema, the
/// projected ones and where each output column comes from.
#[derive(Debug, Clone)]
pub struct Layout {
    /// FIELD columns of the query's schema, in schema order (chunk-group pruning sees all).
    field_names: Vec<String>,
    /// Projected fields: position in `field_names`, type.
    projected_fields: Vec<(usize, TsDataType)>,
    /// Types of the projected fields, in decoding order.
    types: Vec<TsDataType>,
    /// Output columns' sources, in projection order.
    sources: Vec<ColumnSource>,
    /// FIELD columns read from each device's index: the projected ones and those the pruner
    /// names (the others' series are stepped over).
    read: HashSet<String>,
    /// Per entry of `field_names`: where [`DeviceFields::field_at`] looks first for it.
    hints: Vec<usize>,
}

impl Layout {
    /// The layout of a read of columns `projection` of `schema` (the query's schema) from
    /// `table`, whose columns have `roles`; `named` are the FIELD names the pruner needs.
    fn new(schema: &Schema, projection: &[usize], table: &TableView, roles: &[ColumnRole], named: &HashSet<String>) -> Self {
        let field_names: Vec<String> =
            roles.iter().filter_map(|r| if let ColumnRole::Field(n) = r { Some(n.clone()) } else { None }).collect();
        let mut projected_fields: Vec<(usize, TsDataType)> = Vec::new();
        let mut sources = Vec::with_capacity(projection.len());
        let null =
            |i: usize| ColumnSource::Null(schema.fields().get(i).map_or(arrow_schema::DataType::Null, |f| f.data_type().clone()));
        for &i in projection {
            sources.push(match roles.get(i) {
                Some(ColumnRole::Time) => ColumnSource::Time,
                Some(ColumnRole::Tag(seg)) => ColumnSource::Tag(*seg),
                Some(ColumnRole::Field(n)) => match field_names.iter().position(|f| f == n) {
                    Some(pos) => {
                        let ty = table.schema.columns.iter().find(|c| c.name == *n).map_or(TsDataType::Unknown, |c| c.data_type);
                        projected_fields.push((pos, ty));
                        ColumnSource::Field(projected_fields.len() - 1)
                    }
                    None => null(i),
                },
                _ => null(i),
            });
        }
        let types = projected_fields.iter().map(|(_, t)| *t).collect();
        let read: HashSet<String> = field_names
            .iter()
            .enumerate()
            .filter(|(pos, n)| named.contains(*n) || projected_fields.iter().any(|(p, _)| p == pos))
            .map(|(_, n)| n.clone())
            .collect();
        let read_names: Vec<&str> = field_names.iter().map(String::as_str).filter(|n| read.contains(*n)).collect();
        let read_hints = table.field_hints(&read_names);
        let hints = field_names
            .iter()
            .map(|n| read_names.iter().position(|r| r == n).and_then(|i| read_hints.get(i)).copied().unwrap_or(usize::MAX))
            .collect();
        Layout { field_names, projected_fields, types, sources, read, hints }
    }

    /// Series of `field_names[pos]` among a device's read series.
    fn field<'a>(&self, fields: &'a DeviceFields, pos: usize) -> Option<&'a TimeseriesMetadata> {
        let name = self.field_names.get(pos)?;
        fields.field_at(name, self.hints.get(pos).copied().unwrap_or(usize::MAX))
    }

    /// TsFile type and name of each projected field, in decoding order.
    fn decoded_fields(&self) -> Vec<(TsDataType, String)> {
        self.projected_fields.iter().map(|(pos, ty)| (*ty, self.field_names.get(*pos).cloned().unwrap_or_default())).collect()
    }
}

/// The per-file set-up and plan of one table-model read (module doc).
pub struct TableAccess {
    /// The table's view (whole, or of the devices a TAG filter names).
    pub table: Arc<TableView>,
    /// The query's schema (the table's merged file schema).
    schema: SchemaRef,
    roles: Vec<ColumnRole>,
    /// FIELD columns stored with a lossy float encoding: their value statistics describe
    /// the values before encoding, so only their counts prune.
    lossy: HashSet<String>,
    layout: Layout,
    tags: TagFilter,
    pruner: Option<Box<dyn Pruner>>,
    counter: Arc<dyn AccessCounter>,
    /// Rows outside it are not read (nor emitted).
    read: ReadOptions,
}

impl std::fmt::Debug for TableAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableAccess").field("devices", &self.table.devices.len()).field("layout", &self.layout).finish()
    }
}

/// What a [`TableAccess`] is asked to read.
pub struct AccessRequest {
    /// The query's schema: the table's merged file schema (categories in field metadata).
    pub schema: SchemaRef,
    /// Columns of `schema` to output, in this order.
    pub projection: Vec<usize>,
    /// The TAG values allowed (every device when empty).
    pub tags: TagFilter,
    /// What may prune devices, chunk groups and pages (none: read everything).
    pub pruner: Option<Box<dyn Pruner>>,
    /// Decoding options and the time range.
    pub read: ReadOptions,
    /// Where counts go.
    pub counter: Arc<dyn AccessCounter>,
}

impl TableAccess {
    /// Set up `request` over `table`, a view of a table of the file.
    pub fn new(table: Arc<TableView>, request: AccessRequest) -> Self {
        let AccessRequest { schema, projection, tags, pruner, read, counter } = request;
        let fields_in_file: HashSet<String> = table.schema.field_columns().map(|c| c.name.clone()).collect();
        let roles = column_roles(&schema, &table.tag_order(), &fields_in_file);
        let lossy = table.schema.field_columns().filter(|c| table.lossy(&c.name)).map(|c| c.name.clone()).collect();
        let named: HashSet<String> = match &pruner {
            Some(p) => schema.fields().iter().enumerate().filter(|(i, _)| p.names(*i)).map(|(_, f)| f.name().clone()).collect(),
            None => HashSet::new(),
        };
        let layout = Layout::new(&schema, &projection, &table, &roles, &named);
        TableAccess { table, schema, roles, lossy, layout, tags, pruner, counter, read }
    }

    /// The roles of the query's columns in this file.
    pub fn roles(&self) -> &[ColumnRole] {
        &self.roles
    }

    /// The read options (decoding, time range).
    pub fn read_options(&self) -> &ReadOptions {
        &self.read
    }

    /// A device batcher for this read's projection (`projected`: its output schema).
    pub fn batcher(&self, projected: SchemaRef, unit: TimeUnit, batch_size: usize) -> Result<DeviceBatcher> {
        DeviceBatcher::new(projected, self.layout.sources.clone(), self.layout.decoded_fields(), unit, batch_size)
    }

    /// What the pruner is told of one unit of device `d` with `rows` rows and time
    /// statistics `time`; `field` says what a FIELD's statistics in the unit are.
    fn unit<'a>(&self, d: &'a DeviceView, rows: u64, time: &'a Statistics, field: impl Fn(&str) -> UnitColumn<'a>) -> Unit<'a> {
        let Some(p) = &self.pruner else { return Unit { rows, columns: Vec::new() } };
        let columns = self
            .roles
            .iter()
            .enumerate()
            .map(|(i, role)| match role {
                _ if !p.names(i) => UnitColumn::Unused,
                ColumnRole::Time => UnitColumn::Time(time),
                ColumnRole::Tag(seg) => UnitColumn::Tag(d.device.segment(*seg)),
                ColumnRole::Attribute | ColumnRole::Missing => UnitColumn::Null,
                ColumnRole::Field(name) => field(name),
            })
            .collect();
        Unit { rows, columns }
    }

    /// A FIELD's statistics in a unit (`None`: the unit has no value of it).
    fn field_column<'a>(&self, name: &str, stats: Option<&'a Statistics>) -> UnitColumn<'a> {
        match stats {
            Some(stats) => UnitColumn::Field { stats, lossy: self.lossy.contains(name) },
            None => UnitColumn::Null,
        }
    }

    /// The devices of `owned` (indices into the view's devices) that may hold rows: those
    /// the TAG filter allows (a string comparison, no statistics), then those whose series
    /// statistics the pruner keeps (only the series it names are read from the index).
    pub fn prune_devices<S: ByteSource>(&self, file: &FileView<S>, owned: Vec<usize>) -> Result<Vec<usize>> {
        let before = owned.len();
        let owned: Vec<usize> = if self.tags.is_empty() {
            owned
        } else {
            owned.into_iter().filter(|&i| self.table.devices.get(i).is_some_and(|d| self.tags.allows(&d.device))).collect()
        };
        let Some(p) = &self.pruner else {
            self.counter.devices(before, before - owned.len());
            return Ok(owned);
        };
        let named: HashSet<&str> =
            self.schema.fields().iter().enumerate().filter(|(i, _)| p.names(*i)).map(|(_, f)| f.name().as_str()).collect();
        // Only the named series are read, device by device into one buffer.
        let mut judge = p.judge();
        let mut fields = DeviceFields::default();
        for &i in &owned {
            let Some(d) = self.table.devices.get(i) else { continue };
            file.read_fields(d, &|name| named.contains(name), &mut fields)?;
            judge.push(self.unit(d, d.rows(), &d.time.statistics, |name| {
                self.field_column(name, fields.field(name).map(|s| &s.statistics))
            }));
        }
        let keep = judge.keep();
        let kept: Vec<usize> = owned.into_iter().zip(keep).filter(|(_, k)| *k).map(|(i, _)| i).collect();
        self.counter.devices(before, before - kept.len());
        Ok(kept)
    }

    /// What to read of device `index`: its chunk groups that survive pruning, each holding
    /// the chunks of the projected fields in projection order, and the byte ranges of their
    /// time chunks and projected field chunks. `None` when nothing is left. `fields` is a
    /// buffer for the device's series.
    pub fn plan_device<S: ByteSource>(
        &self,
        file: &FileView<S>,
        index: usize,
        fields: &mut DeviceFields,
    ) -> Result<Option<DevicePlan>> {
        let groups = self.device_groups(file, index, fields)?;
        if groups.is_empty() {
            return Ok(None);
        }
        let ranges = file.chunk_ranges(&self.table, &groups, fields)?;
        Ok(Some(DevicePlan { index, groups, ranges }))
    }

    /// The chunk groups of device `index` that survive pruning and the time range, each
    /// holding the chunks of the projected fields in projection order (what
    /// [`TableAccess::plan_device`] plans, without the byte ranges a reader that reads
    /// chunks on demand does not need). `fields` is a buffer for the device's series.
    pub fn device_groups<S: ByteSource>(
        &self,
        file: &FileView<S>,
        index: usize,
        fields: &mut DeviceFields,
    ) -> Result<Vec<AlignedChunkGroup>> {
        let Some(d) = self.table.devices.get(index) else { return Ok(Vec::new()) };
        file.read_fields(d, &|name| self.layout.read.contains(name), fields)?;
        for &(pos, ty) in &self.layout.projected_fields {
            if let Some(s) = self.layout.field(fields, pos) {
                if s.data_type != ty {
                    return Err(crate::error::TsFileError::corrupt(
                        "series",
                        None,
                        format!(
                            "'{}' of device {} has type {}, the table schema says {ty}",
                            s.measurement, d.device, s.data_type
                        ),
                    ));
                }
            }
        }
        let projected = &self.layout.projected_fields;
        // Chunk-group pruning needs every field's chunk statistics; a device of one chunk
        // group has none beyond its series statistics, which device pruning has seen.
        let prune = self.pruner.is_some() && d.time.chunks.len() > 1;
        let groups = if prune {
            let series: Vec<_> = (0..self.layout.field_names.len()).map(|pos| self.layout.field(fields, pos)).collect();
            let groups = plan_chunk_groups(&d.time, &series)?;
            let total = groups.len();
            let kept = self.prune_groups(d, groups);
            self.counter.chunk_groups(total, total - kept.len());
            // Keep the projected fields' chunks, in projection order.
            kept.into_iter()
                .map(|mut g| AlignedChunkGroup {
                    values: projected.iter().map(|(pos, _)| g.values.get_mut(*pos).and_then(Option::take)).collect(),
                    time: g.time,
                })
                .collect()
        } else {
            let series: Vec<_> = projected.iter().map(|(pos, _)| self.layout.field(fields, *pos)).collect();
            let groups = plan_chunk_groups(&d.time, &series)?;
            self.counter.chunk_groups(groups.len(), 0);
            groups
        };
        // Chunk groups outside the time range are never fetched.
        Ok(match self.read.time_range {
            Some((lo, hi)) => groups.into_iter().filter(|g| g.time.statistics.overlaps_time(lo, hi)).collect(),
            None => groups,
        })
    }

    fn prune_groups(&self, d: &DeviceView, groups: Vec<AlignedChunkGroup>) -> Vec<AlignedChunkGroup> {
        let Some(p) = &self.pruner else { return groups };
        let field_names = &self.layout.field_names;
        let mut judge = p.judge();
        for g in &groups {
            judge.push(self.unit(d, g.time.statistics.count, &g.time.statistics, |name| {
                let pos = field_names.iter().position(|f| f == name);
                self.field_column(name, pos.and_then(|p| g.values.get(p)).and_then(Option::as_ref).map(|c| &c.statistics))
            }));
        }
        let keep = judge.keep();
        groups.into_iter().zip(keep).filter(|(_, k)| *k).map(|(g, _)| g).collect()
    }

    /// Which pages of a chunk group of device `d` may hold matching rows.
    pub fn page_filter(&self, d: &DeviceView, stats: &GroupPageStats<'_>) -> Vec<bool> {
        let Some(p) = &self.pruner else { return vec![true; stats.time.len()] };
        // A chunk group of one page: the page's statistics are its chunks' statistics, which
        // chunk-group pruning (or, for a device of one chunk group, device pruning) has
        // already checked against the same predicate.
        if stats.time.len() == 1 {
            return vec![true];
        }
        let (projected, field_names) = (&self.layout.projected_fields, &self.layout.field_names);
        let mut judge = p.judge();
        for (page, ts) in stats.time.iter().enumerate() {
            judge.push(self.unit(d, ts.count, ts, |name| {
                // Only projected fields have page statistics here; another says nothing.
                let col = projected.iter().position(|(pos, _)| field_names.get(*pos).is_some_and(|f| f == name));
                match col.and_then(|c| stats.values.get(c)).and_then(|v| v.get(page)) {
                    Some(ValuePageStats::Stats(s)) => self.field_column(name, Some(s)),
                    Some(ValuePageStats::AllNull) => UnitColumn::Null,
                    None => UnitColumn::Unused,
                }
            }));
        }
        judge.keep()
    }

    /// Decode the planned chunk groups of one device from `view` (a reader holding their
    /// bytes) into `batcher`; returns the batches it completes.
    pub fn decode_device<S: ByteSource>(
        &self,
        view: &FileReader<S>,
        plan: DevicePlan,
        batcher: &mut DeviceBatcher,
        budget: &DecodeBudget,
    ) -> Result<Vec<RecordBatch>> {
        let DevicePlan { index, groups, .. } = plan;
        let Some(d) = self.table.devices.get(index) else { return Ok(Vec::new()) };
        let types = &self.layout.types;
        let page_filter = |stats: &GroupPageStats<'_>| self.page_filter(d, stats);
        let filter: Option<PageFilter<'_>> = if self.pruner.is_some() { Some(&page_filter) } else { None };
        let max_rows = groups.iter().map(|g| g.time.statistics.count).sum::<u64>();
        let max_rows = usize::try_from(max_rows).unwrap_or(usize::MAX);
        let mut counts = (0usize, 0usize, 0usize);
        let read = GroupRead { types, opts: &self.read, page_filter: filter, budget };
        let batches = batcher.push_with(&d.device, max_rows, |out| {
            let (pages, pruned, rows) = (out.pages_total, out.pages_pruned, out.rows());
            for g in &groups {
                read_chunk_group_into(view, g, &read, out)?;
            }
            counts = (out.pages_total - pages, out.pages_pruned - pruned, out.rows() - rows);
            Ok(())
        });
        let batches = batches.map_err(|e| e.context(format!("device {}", d.device)))?;
        self.counter.pages(counts.0, counts.1, counts.2);
        Ok(batches)
    }

    /// The devices of `devices` planned one by one and cut into runs of about
    /// [`FETCH_RUN_BYTES`] of chunks (a larger device alone), in order: memory follows the
    /// run, not the file's device count.
    pub fn runs<S: ByteSource, F: AsRef<FileView<S>>>(self: &Arc<Self>, file: F, devices: Vec<usize>) -> Runs<S, F> {
        Runs {
            access: self.clone(),
            file,
            devices: devices.into_iter(),
            next: None,
            fields: DeviceFields::default(),
            source: std::marker::PhantomData,
        }
    }
}

/// The planned devices of a read in runs of about [`FETCH_RUN_BYTES`] ([`TableAccess::runs`]).
pub struct Runs<S, F> {
    access: Arc<TableAccess>,
    file: F,
    devices: std::vec::IntoIter<usize>,
    /// A planned device that did not fit in the previous run.
    next: Option<DevicePlan>,
    /// The series of the device being planned (one buffer for all).
    fields: DeviceFields,
    source: std::marker::PhantomData<fn() -> S>,
}

impl<S: ByteSource, F: AsRef<FileView<S>>> Iterator for Runs<S, F> {
    type Item = Result<Vec<DevicePlan>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut run: Vec<DevicePlan> = Vec::new();
        let mut bytes = 0u64;
        loop {
            let plan = match self.next.take() {
                Some(p) => p,
                None => match self.devices.next() {
                    None => break,
                    Some(i) => match self.access.plan_device(self.file.as_ref(), i, &mut self.fields) {
                        Ok(Some(p)) => p,
                        Ok(None) => continue,
                        Err(e) => {
                            // Nothing after an error.
                            self.devices = Vec::new().into_iter();
                            return Some(Err(e));
                        }
                    },
                },
            };
            let size = plan.bytes();
            if !run.is_empty() && bytes.saturating_add(size) > FETCH_RUN_BYTES {
                self.next = Some(plan);
                break;
            }
            bytes = bytes.saturating_add(size);
            run.push(plan);
        }
        (!run.is_empty()).then_some(Ok(run))
    }
}

/// Indices of the devices a byte range `[start, end)` of a file owns: those whose first
/// chunk starts inside it (every device when there is no range), so each device of a file
/// split into ranges is read by exactly one of them.
pub fn devices_in_range(first_offsets: impl Iterator<Item = u64>, range: Option<(u64, u64)>) -> Vec<usize> {
    first_offsets.enumerate().filter(|(_, o)| range.is_none_or(|(s, e)| *o >= s && *o < e)).map(|(i, _)| i).collect()
}
