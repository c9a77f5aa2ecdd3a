//! [`FileWriter`]: chunk groups in, a complete table-model TsFile out.
//!
//! ```text
//! "TsFile" 0x04
//! per flushed device: 0x00 DeviceID
//!                     time chunk   (marker 0x81/0x85, "", VECTOR, TS_2DIFF) + pages
//!                     value chunks (marker 0x41/0x45, by column name; a column without a
//!                                   value in the chunk group has no chunk) + pages
//! 0x02                                      <- meta_offset
//! per device (DeviceID order): TimeseriesMetadata of "" then of each column by name,
//!                              measurement index nodes (a leaf entry every 256 series,
//!                              256 entries a node, internal nodes above as needed)
//! device index: the measurement roots, a LEAF_DEVICE entry each, 256 entries a node,
//!               INTERNAL_DEVICE nodes above them when there are more than 256 devices
//! TsFileMetadata: the table's device index root, its schema, meta_offset, the bloom filter
//!                 and the properties encryptLevel "0", encryptKey "", encryptType "UNENCRYPTED"
//! int32 length, "TsFile"
//! ```
//!
//! This is the layout of the Java writer (`TsFileIOWriter`, `MetadataIndexConstructor`), so
//! `tsfile inspect` shows the same structure. Deliberate differences: a column with no value
//! in a chunk group gets no value chunk there (Java writes an empty one), and a column with
//! no value in the whole file gets no TimeseriesMetadata (it stays in the table schema and
//! reads as nulls). Every page is compressed alone; a chunk with several pages stores page
//! statistics, a page with no value of its column is the empty page `UVarInt(0)`.
//!
//! Rows of a device must arrive in time order across chunk groups: a chunk group whose first
//! time is not after the device's last written time is an error (within one chunk group the
//! rows are sorted here). After an error the output holds a partial file: the caller discards
//! it (the Arrow writer writes to a temporary name or an unfinished multipart upload).

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::ops::Range;

use crate::error::{Result, TsFileError};
use crate::format::index::NodeType;
use crate::format::serialize::{
    put_chunk_header, put_device_id, put_index_node, put_page_header, put_properties, put_table_schema, put_timeseries_metadata,
    put_var_str, BloomFilterBuilder, ChunkHeaderFields, EntryKey,
};
use crate::format::statistics::Statistics;
use crate::format::{ColumnCategory, ColumnSchema, DeviceId, TableSchema, TsDataType, MAGIC, VERSION_V4};
use crate::write::buffer::{DeviceBuffer, ValueSlice};
use crate::write::options::{ColumnOptions, WriteOptions};
use crate::write::page::{plain_width, PageScratch};
use crate::write::stats::{merge, time_statistics, value_statistics};

/// Entries of one index node, as the Java writer (`max_degree_of_index_node`).
pub const MAX_DEGREE: usize = 256;

/// A FIELD column: name, type, encoding and compression.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSpec {
    /// Column name.
    pub name: String,
    /// TsFile value type.
    pub data_type: TsDataType,
    /// Encoding and compression.
    pub options: ColumnOptions,
}

/// A column of the table, in schema order.
#[derive(Debug, Clone, PartialEq)]
pub enum TableColumn {
    /// A TAG column (STRING): one DeviceID segment, in schema order.
    Tag(String),
    /// A FIELD column.
    Field(FieldSpec),
    /// An ATTRIBUTE column (STRING): in the schema only, TsFiles store no attribute values.
    Attribute(String),
}

/// Chunks and statistics of one written series.
#[derive(Debug, Default)]
struct Series {
    chunks: Vec<(u64, Statistics)>,
    stats: Option<Statistics>,
}

#[derive(Debug)]
struct DeviceSeries {
    time: Series,
    /// By field index.
    fields: Vec<Series>,
    last_time: i64,
}

/// A measurement or device index node not yet written.
#[derive(Debug)]
struct Node {
    entries: Vec<(Key, u64)>,
    end: u64,
    node_type: NodeType,
}

#[derive(Debug, Clone)]
enum Key {
    Device(DeviceId),
    Measurement(String),
}

impl Node {
    fn new(node_type: NodeType) -> Node {
        Node { entries: Vec::new(), end: 0, node_type }
    }

    fn first_key(&self) -> Option<Key> {
        self.entries.first().map(|(k, _)| k.clone())
    }

    fn put(&self, out: &mut Vec<u8>) -> Result<()> {
        let entries: Vec<(EntryKey<'_>, u64)> = self
            .entries
            .iter()
            .map(|(k, o)| {
                let key = match k {
                    Key::Device(d) => EntryKey::Device(d),
                    Key::Measurement(m) => EntryKey::Measurement(m),
                };
                (key, *o)
            })
            .collect();
        put_index_node(out, &entries, self.end, self.node_type)
    }
}

/// Writes one table's chunk groups to `W`, then the footer.
#[derive(Debug)]
pub struct FileWriter<W: Write> {
    out: W,
    pos: u64,
    schema: TableSchema,
    fields: Vec<FieldSpec>,
    /// Field indices in measurement-name order (the order of chunks and metadata).
    by_name: Vec<usize>,
    tag_count: usize,
    options: WriteOptions,
    devices: BTreeMap<DeviceId, DeviceSeries>,
    group: Vec<u8>,
    chunk: Vec<u8>,
    scratch: PageScratch,
    failed: bool,
}

fn invalid(msg: impl Into<String>) -> TsFileError {
    TsFileError::InvalidArgument(msg.into())
}

impl<W: Write> FileWriter<W> {
    /// Start a file of table `table` with `columns` (TAG and FIELD columns in schema order)
    /// and write its head. Names must be non-empty and distinct (ignoring ASCII case); the
    /// table needs at least one FIELD column.
    pub fn try_new(mut out: W, table: &str, columns: &[TableColumn], options: WriteOptions) -> Result<Self> {
        options.check()?;
        if table.is_empty() {
            return Err(invalid("the table name is empty"));
        }
        let mut seen = std::collections::HashSet::new();
        let mut schema_columns = Vec::with_capacity(columns.len());
        let mut fields = Vec::new();
        // TAG and ATTRIBUTE columns are STRING and have no chunks (encoding and compression 0).
        let string_column = |name: &String, category| ColumnSchema {
            name: name.clone(),
            data_type: TsDataType::String,
            encoding: 0,
            compression: 0,
            properties: Vec::new(),
            category,
        };
        for c in columns {
            let (name, col) = match c {
                TableColumn::Tag(name) => (name, string_column(name, ColumnCategory::Tag)),
                TableColumn::Attribute(name) => (name, string_column(name, ColumnCategory::Attribute)),
                TableColumn::Field(f) => {
                    f.options.check(f.data_type).map_err(|e| e.context(format!("column '{}'", f.name)))?;
                    fields.push(f.clone());
                    (
                        &f.name,
                        ColumnSchema {
                            name: f.name.clone(),
                            data_type: f.data_type,
                            encoding: f.options.encoding.id(),
                            compression: f.options.compression.id(),
                            properties: Vec::new(),
                            category: ColumnCategory::Field,
                        },
                    )
                }
            };
            if name.is_empty() {
                return Err(invalid("a column name is empty"));
            }
            if !seen.insert(name.to_ascii_lowercase()) {
                return Err(invalid(format!("column '{name}' appears twice (names are compared ignoring case)")));
            }
            schema_columns.push(col);
        }
        if fields.is_empty() {
            return Err(invalid(format!("table '{table}' has no FIELD column to write")));
        }
        let mut by_name: Vec<usize> = (0..fields.len()).collect();
        by_name.sort_by(|&a, &b| fields.get(a).map(|f| f.name.as_bytes()).cmp(&fields.get(b).map(|f| f.name.as_bytes())));
        let tag_count = columns.iter().filter(|c| matches!(c, TableColumn::Tag(_))).count();
        let mut head = MAGIC.to_vec();
        head.push(VERSION_V4);
        out.write_all(&head).map_err(|e| TsFileError::Io { what: "writing the file head".into(), source: e })?;
        Ok(FileWriter {
            out,
            pos: head.len() as u64,
            schema: TableSchema { name: table.to_string(), columns: schema_columns },
            fields,
            by_name,
            tag_count,
            options,
            devices: BTreeMap::new(),
            group: Vec::new(),
            chunk: Vec::new(),
            scratch: PageScratch::default(),
            failed: false,
        })
    }

    /// The field types, in the order of [`DeviceBuffer::columns`].
    pub fn field_types(&self) -> Vec<TsDataType> {
        self.fields.iter().map(|f| f.data_type).collect()
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The output (to drain bytes written so far from an in-memory one).
    pub fn output_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// The DeviceID of a row with these TAG values (in schema order).
    pub fn device_id(&self, tags: &[Option<&str>]) -> DeviceId {
        let mut segments = Vec::with_capacity(tags.len() + 1);
        segments.push(Some(self.schema.name.clone()));
        segments.extend(tags.iter().map(|t| t.map(str::to_string)));
        DeviceId::new(segments)
    }

    /// Write the rows of `buf` as one chunk group of `device` (rows are sorted by time first;
    /// `buf` is left sorted). Nothing is written for an empty buffer.
    pub fn write_chunk_group(&mut self, device: &DeviceId, buf: &mut DeviceBuffer) -> Result<()> {
        if self.failed {
            return Err(invalid("an earlier write failed: the file is incomplete"));
        }
        if buf.rows() == 0 {
            return Ok(());
        }
        if device.table_name() != Some(self.schema.name.as_str()) || device.segments().len() > self.tag_count + 1 {
            return Err(invalid(format!("device {} does not belong to table '{}'", device.path(), self.schema.name)));
        }
        if buf.columns.len() != self.fields.len() {
            return Err(invalid(format!("{} columns buffered for {} fields", buf.columns.len(), self.fields.len())));
        }
        buf.check()?;
        buf.sort_by_time()?;
        let (Some(&first), Some(&last)) = (buf.times.first(), buf.times.last()) else { return Ok(()) };
        if let Some(d) = self.devices.get(device) {
            if first <= d.last_time {
                return Err(invalid(format!(
                    "rows of device {} are not in time order across flushes: time {first} follows {} (sort the input by \
                     tags and time, or raise the memory limit)",
                    device.path(),
                    d.last_time
                )));
            }
        }
        let result = self.encode_group(device, buf, last);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// Page row ranges: at most `page_max_points` rows, closed early when a PLAIN column
    /// reaches `page_max_bytes`.
    fn page_ranges(&self, buf: &DeviceBuffer) -> Vec<Range<usize>> {
        let rows = buf.rows();
        let max_points = self.options.page_max_points;
        let plain: Vec<usize> = (0..self.fields.len())
            .filter(|&i| self.fields.get(i).is_some_and(|f| f.options.encoding == crate::format::Encoding::Plain))
            .collect();
        if plain.is_empty() {
            return (0..rows).step_by(max_points).map(|s| s..(s + max_points).min(rows)).collect();
        }
        let mut ranges = Vec::new();
        let mut bytes = vec![0usize; plain.len()];
        let mut next_value = vec![0usize; plain.len()];
        let mut start = 0;
        for row in 0..rows {
            let mut full = row + 1 - start >= max_points;
            for (k, &c) in plain.iter().enumerate() {
                let Some(col) = buf.columns.get(c) else { continue };
                if col.present.get(row).copied().unwrap_or(false) {
                    let (Some(b), Some(n)) = (bytes.get_mut(k), next_value.get_mut(k)) else { continue };
                    *b += plain_width(&col.values.slice_all(), *n);
                    *n += 1;
                    full |= *b >= self.options.page_max_bytes;
                }
            }
            if full {
                ranges.push(start..row + 1);
                start = row + 1;
                bytes.iter_mut().for_each(|b| *b = 0);
            }
        }
        if start < rows {
            ranges.push(start..rows);
        }
        ranges
    }

    fn encode_group(&mut self, device: &DeviceId, buf: &DeviceBuffer, last: i64) -> Result<()> {
        let pages = self.page_ranges(buf);
        let multi = pages.len() > 1;
        let base = self.pos;
        self.group.clear();
        self.group.push(0);
        put_device_id(&mut self.group, device)?;

        // The time chunk.
        let mut chunk_stats: Option<Statistics> = None;
        self.chunk.clear();
        for r in &pages {
            let times = buf.times.get(r.clone()).unwrap_or_default();
            self.scratch.time_page(self.options.time, times)?;
            let stats = time_statistics(times);
            put_page_header(&mut self.chunk, self.scratch.raw.len(), self.scratch.stored.len(), multi.then_some(&stats))?;
            self.chunk.extend_from_slice(&self.scratch.stored);
            merge(&mut chunk_stats, &stats);
        }
        let time_offset = base + self.group.len() as u64;
        put_chunk_header(
            &mut self.group,
            &ChunkHeaderFields {
                marker: 0x80 | if multi { 0x01 } else { 0x05 },
                measurement: "",
                data_size: self.chunk.len(),
                data_type: TsDataType::Vector.id(),
                compression: self.options.time.compression.id(),
                encoding: self.options.time.encoding.id(),
            },
        )?;
        self.group.extend_from_slice(&self.chunk);
        let time_chunk = chunk_stats.map(|s| (time_offset, s));

        // The value chunks, by name.
        let mut value_chunks = Vec::new();
        for &fi in &self.by_name {
            let (Some(field), Some(col)) = (self.fields.get(fi), buf.columns.get(fi)) else { continue };
            if col.values.is_empty() {
                continue;
            }
            let mut chunk_stats: Option<Statistics> = None;
            self.chunk.clear();
            let mut next = 0usize;
            for r in &pages {
                let present = col.present.get(r.clone()).unwrap_or_default();
                let k = present.iter().filter(|p| **p).count();
                if k == 0 {
                    // An all-null page of a multi-page chunk.
                    self.chunk.push(0);
                    continue;
                }
                let values: ValueSlice<'_> = col.values.slice(next, next + k);
                next += k;
                let first_row = present.iter().position(|p| *p).unwrap_or(0) + r.start;
                let last_row = present.iter().rposition(|p| *p).unwrap_or(0) + r.start;
                let t = |row: usize| buf.times.get(row).copied().unwrap_or_default();
                let Some(stats) = value_statistics(field.data_type, values, t(first_row), t(last_row)) else { continue };
                self.scratch.value_page(field.options, present, values)?;
                put_page_header(&mut self.chunk, self.scratch.raw.len(), self.scratch.stored.len(), multi.then_some(&stats))?;
                self.chunk.extend_from_slice(&self.scratch.stored);
                merge(&mut chunk_stats, &stats);
            }
            let Some(stats) = chunk_stats else { continue };
            let offset = base + self.group.len() as u64;
            put_chunk_header(
                &mut self.group,
                &ChunkHeaderFields {
                    marker: 0x40 | if multi { 0x01 } else { 0x05 },
                    measurement: &field.name,
                    data_size: self.chunk.len(),
                    data_type: field.data_type.id(),
                    compression: field.options.compression.id(),
                    encoding: field.options.encoding.id(),
                },
            )?;
            self.group.extend_from_slice(&self.chunk);
            value_chunks.push((fi, offset, stats));
        }

        self.out.write_all(&self.group).map_err(|e| TsFileError::Io { what: "writing a chunk group".into(), source: e })?;
        self.pos += self.group.len() as u64;

        let n_fields = self.fields.len();
        let entry = self.devices.entry(device.clone()).or_insert_with(|| DeviceSeries {
            time: Series::default(),
            fields: (0..n_fields).map(|_| Series::default()).collect(),
            last_time: i64::MIN,
        });
        if let Some((offset, stats)) = time_chunk {
            merge(&mut entry.time.stats, &stats);
            entry.time.chunks.push((offset, stats));
        }
        for (fi, offset, stats) in value_chunks {
            if let Some(s) = entry.fields.get_mut(fi) {
                merge(&mut s.stats, &stats);
                s.chunks.push((offset, stats));
            }
        }
        entry.last_time = last;
        Ok(())
    }

    fn write(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        self.out.write_all(bytes).map_err(|e| TsFileError::Io { what: format!("writing {what}"), source: e })?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Close `node` at the current position and queue it.
    fn close_node(&self, mut node: Node, queue: &mut VecDeque<Node>) {
        node.end = self.pos;
        queue.push_back(node);
    }

    /// Build the levels above `queue` (Java's `generateRootNode`), writing every node but the
    /// root, which is returned.
    fn root_of(&mut self, mut queue: VecDeque<Node>, node_type: NodeType) -> Result<Node> {
        let mut buf = Vec::new();
        while queue.len() > 1 {
            let round = queue.len();
            let mut current = Node::new(node_type);
            for _ in 0..round {
                let Some(child) = queue.pop_front() else { break };
                if current.entries.len() >= MAX_DEGREE {
                    let full = std::mem::replace(&mut current, Node::new(node_type));
                    self.close_node(full, &mut queue);
                }
                let Some(key) = child.first_key() else { continue };
                current.entries.push((key, self.pos));
                buf.clear();
                child.put(&mut buf)?;
                self.write(&buf, "an index node")?;
            }
            self.close_node(current, &mut queue);
        }
        queue.pop_front().ok_or_else(|| invalid("empty index"))
    }

    /// Write the index area and the footer; returns the output.
    pub fn finish(mut self) -> Result<W> {
        if self.failed {
            return Err(invalid("an earlier write failed: the file is incomplete"));
        }
        let meta_offset = self.pos;
        self.write(&[0x02], "the separator")?;
        let devices = std::mem::take(&mut self.devices);
        let fields = std::mem::take(&mut self.fields);
        let by_name = std::mem::take(&mut self.by_name);
        let series_count: usize =
            devices.values().map(|d| 1 + d.fields.iter().filter(|s| s.stats.is_some()).count()).sum();
        let mut bloom = BloomFilterBuilder::new(series_count, self.options.bloom_filter_error_rate);
        let mut buf = Vec::new();
        let mut scratch = Vec::new();
        let mut roots: Vec<(DeviceId, Node)> = Vec::with_capacity(devices.len());
        for (device, series) in &devices {
            let path = device.path();
            let mut list: Vec<(&str, u8, TsDataType, &Series)> = vec![("", 0x80, TsDataType::Vector, &series.time)];
            for &fi in &by_name {
                let (Some(f), Some(s)) = (fields.get(fi), series.fields.get(fi)) else { continue };
                if s.stats.is_some() {
                    list.push((f.name.as_str(), 0x40, f.data_type, s));
                }
            }
            let mut queue = VecDeque::new();
            let mut current = Node::new(NodeType::LeafMeasurement);
            for (i, (name, role, ty, s)) in list.iter().enumerate() {
                let Some(stats) = &s.stats else { continue };
                bloom.add(&path, name);
                if i % MAX_DEGREE == 0 {
                    if current.entries.len() >= MAX_DEGREE {
                        let full = std::mem::replace(&mut current, Node::new(NodeType::LeafMeasurement));
                        self.close_node(full, &mut queue);
                    }
                    current.entries.push((Key::Measurement((*name).to_string()), self.pos));
                }
                buf.clear();
                put_timeseries_metadata(&mut buf, *role, name, ty.id(), stats, &s.chunks, &mut scratch)?;
                self.write(&buf, "timeseries metadata")?;
            }
            self.close_node(current, &mut queue);
            let root = self.root_of(queue, NodeType::InternalMeasurement)?;
            roots.push((device.clone(), root));
        }

        // The device level (Java's `checkAndBuildLevelIndex`).
        let device_root = if roots.is_empty() {
            None
        } else if roots.len() <= MAX_DEGREE {
            let mut node = Node::new(NodeType::LeafDevice);
            for (device, root) in roots {
                node.entries.push((Key::Device(device), self.pos));
                buf.clear();
                root.put(&mut buf)?;
                self.write(&buf, "a measurement index node")?;
            }
            node.end = self.pos;
            Some(node)
        } else {
            let mut queue = VecDeque::new();
            let mut current = Node::new(NodeType::LeafDevice);
            for (device, root) in roots {
                if current.entries.len() >= MAX_DEGREE {
                    let full = std::mem::replace(&mut current, Node::new(NodeType::LeafDevice));
                    self.close_node(full, &mut queue);
                }
                current.entries.push((Key::Device(device), self.pos));
                buf.clear();
                root.put(&mut buf)?;
                self.write(&buf, "a measurement index node")?;
            }
            self.close_node(current, &mut queue);
            let mut root = self.root_of(queue, NodeType::InternalDevice)?;
            root.end = self.pos;
            Some(root)
        };

        // TsFileMetadata.
        let mut meta = Vec::new();
        match &device_root {
            Some(root) => {
                crate::format::serialize::put_uvarint(&mut meta, 1);
                put_var_str(&mut meta, &self.schema.name)?;
                root.put(&mut meta)?;
            }
            None => crate::format::serialize::put_uvarint(&mut meta, 0),
        }
        crate::format::serialize::put_uvarint(&mut meta, 1);
        put_var_str(&mut meta, &self.schema.name)?;
        put_table_schema(&mut meta, &self.schema)?;
        let meta_offset = i64::try_from(meta_offset).map_err(|_| invalid("file too large"))?;
        meta.extend_from_slice(&meta_offset.to_be_bytes());
        bloom.put(&mut meta)?;
        put_properties(&mut meta, &[("encryptLevel", Some(b"0")), ("encryptKey", Some(b"")), ("encryptType", Some(b"UNENCRYPTED"))])?;
        let len = i32::try_from(meta.len()).map_err(|_| invalid("file metadata too large"))?;
        meta.extend_from_slice(&len.to_be_bytes());
        meta.extend_from_slice(MAGIC);
        self.write(&meta, "the file metadata")?;
        self.out.flush().map_err(|e| TsFileError::Io { what: "flushing the file".into(), source: e })?;
        Ok(self.out)
    }
}
