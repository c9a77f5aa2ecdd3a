//! `tsfile_metadata('path')`: the series index of TsFiles as a SQL table.
//!
//! One row per series (per device and measurement; an aligned device's time column is a
//! row with `category = 'TIME'`): the table or tree path prefix it belongs to, its type,
//! the encoding and compression of its chunks, the chunk count and the series statistics
//! (count, time range, min/max/first/last rendered as text, sum), the file's format version
//! (4, or 3 for IoTDB 1.x files) and the writer its footer names (`writer`: `java`, `cpp` or
//! null, with `writer_evidence` in words; [`crate::format::provenance`]) and, for a data file of
//! an IoTDB data directory, its space, `database/partition`, file version and the number of
//! its `.mods`/`.mods2` deletion entries naming the series (`iotdb_*`; null for other files:
//! `tsfile inspect DIR` shows the overlaps). Only the footer and the
//! chunk headers are read; no page is decompressed, so it also works on encrypted files.
//!
//! The argument is a file, a directory or a glob, local or in any registered object store.
//!
//! ```no_run
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use datafusion_tsfile::datafusion::TsFileMetadataFunc;
//!
//! # async fn demo() -> datafusion::common::Result<()> {
//! let ctx = SessionContext::new();
//! ctx.register_udtf("tsfile_metadata", Arc::new(TsFileMetadataFunc));
//! ctx.sql("SELECT device, measurement, point_count FROM tsfile_metadata('data/sample.tsfile')
//!          WHERE category = 'FIELD' LIMIT 5").await?.show().await?;
//! # Ok(()) }
//! ```

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::{Arc, LazyLock};

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, DataFusionError, Result, ScalarValue};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectMeta, ObjectStore};

use crate::datafusion::errors::{df_err, url_file_name};
use crate::datafusion::format::TSFILE_EXTENSION;
use crate::datafusion::location::parse_location;
use crate::format::{ChunkHeader, Compression, Encoding, Statistics, TimeseriesMetadata, TsDataType, ValueStatistics};
use crate::io::{fetch_ranges, open_object, RangeSource};
use crate::iotdb::{parse_mods_file, DataFileName, Deletion, Placement, Space, MODS_SUFFIXES};
use crate::TsFileError;

/// The `tsfile_metadata(path)` table function; register it with
/// `ctx.register_udtf("tsfile_metadata", Arc::new(TsFileMetadataFunc))`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TsFileMetadataFunc;

impl TableFunctionImpl for TsFileMetadataFunc {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let path = match args.exprs() {
            [Expr::Literal(ScalarValue::Utf8(Some(p)) | ScalarValue::LargeUtf8(Some(p)) | ScalarValue::Utf8View(Some(p)), _)] => p.clone(),
            _ => return plan_err!("tsfile_metadata takes one string argument: a file, directory or glob, e.g. tsfile_metadata('data/sample.tsfile')"),
        };
        Ok(Arc::new(TsFileMetadataTable { path }))
    }
}

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let utf8 = |n: &str, nullable: bool| Field::new(n, DataType::Utf8, nullable);
    Arc::new(Schema::new(vec![
        utf8("file", false),
        utf8("table", false),
        utf8("device", false),
        utf8("measurement", false),
        utf8("category", false),
        utf8("data_type", false),
        Field::new("aligned", DataType::Boolean, false),
        utf8("encoding", true),
        utf8("compression", true),
        Field::new("chunk_count", DataType::Int64, false),
        Field::new("point_count", DataType::Int64, false),
        Field::new("start_time", DataType::Int64, false),
        Field::new("end_time", DataType::Int64, false),
        utf8("min_value", true),
        utf8("max_value", true),
        utf8("first_value", true),
        utf8("last_value", true),
        Field::new("sum", DataType::Float64, true),
        Field::new("version", DataType::Int32, false),
        utf8("writer", true),
        utf8("writer_evidence", false),
        utf8("iotdb_space", true),
        utf8("iotdb_partition", true),
        Field::new("iotdb_file_version", DataType::Int64, true),
        Field::new("iotdb_deletions", DataType::Int64, true),
    ]))
});

/// The schema of `tsfile_metadata(...)`.
pub fn metadata_schema() -> SchemaRef {
    SCHEMA.clone()
}

/// The table behind one `tsfile_metadata(path)` call; the files are read when it is scanned.
#[derive(Debug)]
pub struct TsFileMetadataTable {
    path: String,
}

#[async_trait]
impl TableProvider for TsFileMetadataTable {
    fn schema(&self) -> SchemaRef {
        metadata_schema()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let url = parse_location(&self.path)?;
        let store = state.runtime_env().object_store(&url)?;
        let mut files: Vec<ObjectMeta> = url.list_all_files(state, store.as_ref(), TSFILE_EXTENSION).await?.try_collect().await?;
        if files.is_empty() {
            return plan_err!("tsfile_metadata: no .{TSFILE_EXTENSION} file at '{}'", self.path);
        }
        files.sort_by(|a, b| a.location.cmp(&b.location));
        // Encoding and compression are the only columns that need the chunk headers: a query
        // that leaves both out reads the footer and index alone.
        let header_columns = ["encoding", "compression"].map(|n| metadata_schema().index_of(n).ok());
        let headers = projection.is_none_or(|p| p.iter().any(|&i| header_columns.contains(&Some(i))));
        // Files are read FILE_CONCURRENCY at a time (their requests overlap: on an object
        // store a directory costs a few round trips, not one per file), rows in file order.
        let base = url.object_store();
        let loads: Vec<_> = files
            .into_iter()
            .map(|f| {
                let (store, name) = (Arc::clone(&store), url_file_name(&base, &f.location));
                async move {
                    let mut rows = MetadataRows::default();
                    append_file(&store, &f, headers, &mut rows).await.map_err(|e| df_err(e.in_file(&name)))?;
                    rows.finish()
                }
            })
            .collect();
        let batches: Vec<RecordBatch> = futures::stream::iter(loads).buffered(FILE_CONCURRENCY).try_collect().await?;
        let exec = MemorySourceConfig::try_new_exec(&[batches], metadata_schema(), projection.cloned())?;
        Ok(exec)
    }
}

/// Files whose footers and indexes are read at once.
const FILE_CONCURRENCY: usize = 16;

/// Read one file's index (and, with `headers`, its chunk headers) and append its series.
async fn append_file(
    store: &Arc<dyn ObjectStore>,
    object: &ObjectMeta,
    headers: bool,
    rows: &mut MetadataRows,
) -> crate::Result<()> {
    let reader = open_object(store, &object.location, object.size).await?;
    let mut series = Vec::new();
    for root in &reader.metadata().table_index {
        for device in reader.devices(&root.name)? {
            let device_series = reader.series(&device)?;
            // A device with a time column is aligned: so are its value series.
            let aligned = device_series.iter().any(|s| s.is_aligned_time());
            for s in device_series {
                series.push((root.name.clone(), device.device.clone(), aligned, s));
            }
        }
    }
    let file = object.location.to_string();
    let version = i32::from(reader.metadata().version);
    let writer = reader.writer_evidence().signature();
    let reader = if headers {
        // Chunk headers: marker, name, data size, three id bytes and the optional AEAD suffix.
        let wanted: Vec<Range<u64>> = series
            .iter()
            .flat_map(|(_, _, _, s)| {
                s.chunks.iter().map(move |c| c.offset..(c.offset + s.measurement.len() as u64 + 256).min(object.size))
            })
            .collect();
        let fetched = fetch_ranges(store, &object.location, wanted).await?;
        let source: RangeSource = reader.source().with_parts(fetched);
        reader.with_source(source)
    } else {
        reader
    };
    let iotdb = iotdb_facts(store, &object.location).await?;
    for (table, device_id, aligned, s) in series {
        let device = device_id.path();
        let chunk_headers = if headers {
            s.chunks.iter().map(|c| reader.read_chunk_header(c.offset)).collect::<crate::Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        rows.push(&file, &table, &device, aligned, &s, &chunk_headers);
        rows.version.append_value(version);
        rows.writer.append_option(writer.writer.map(|w| w.name()));
        rows.writer_evidence.append_value(writer.evidence);
        match &iotdb {
            Some((place, name, deletions)) => {
                rows.iotdb_space.append_value(match place.space {
                    Space::Sequence => "sequence",
                    Space::Unsequence => "unsequence",
                });
                rows.iotdb_partition.append_value(format!("{}/{}", place.database, place.partition));
                rows.iotdb_file_version.append_value(name.version);
                let n = deletions.iter().filter(|d| d.matches(&device_id, &s.measurement)).count();
                rows.iotdb_deletions.append_value(i64::try_from(n).unwrap_or(i64::MAX));
            }
            None => {
                rows.iotdb_space.append_null();
                rows.iotdb_partition.append_null();
                rows.iotdb_file_version.append_null();
                rows.iotdb_deletions.append_null();
            }
        }
    }
    Ok(())
}

/// For a data file of an IoTDB data directory (its name and the four directories above it
/// say so): where it sits, its name's numbers and the deletions of its `.mods`/`.mods2`.
async fn iotdb_facts(
    store: &Arc<dyn ObjectStore>,
    location: &object_store::path::Path,
) -> crate::Result<Option<(Placement, DataFileName, Vec<Deletion>)>> {
    let parts: Vec<String> = location.parts().map(|p| p.as_ref().to_string()).collect();
    let Some(name) = parts.last().and_then(|n| DataFileName::parse(n)) else { return Ok(None) };
    let Some(place) = Placement::of(parts.iter().map(String::as_str)) else { return Ok(None) };
    let mut deletions = Vec::new();
    for suffix in MODS_SUFFIXES {
        let path = object_store::path::Path::from(format!("{location}.{suffix}"));
        let got = match store.get_opts(&path, object_store::GetOptions::default()).await {
            Ok(got) => got.bytes().await,
            Err(object_store::Error::NotFound { .. }) => continue,
            Err(e) => Err(e),
        };
        let bytes: bytes::Bytes =
            got.map_err(|e| TsFileError::Io { what: format!("reading {path}"), source: std::io::Error::other(e) })?;
        deletions.extend(parse_mods_file(suffix, &bytes).map_err(|e| e.in_file(&path))?);
    }
    Ok(Some((place, name, deletions)))
}

#[derive(Default)]
struct MetadataRows {
    file: StringBuilder,
    table: StringBuilder,
    device: StringBuilder,
    measurement: StringBuilder,
    category: StringBuilder,
    data_type: StringBuilder,
    aligned: BooleanBuilder,
    encoding: StringBuilder,
    compression: StringBuilder,
    chunk_count: Int64Builder,
    point_count: Int64Builder,
    start_time: Int64Builder,
    end_time: Int64Builder,
    min: StringBuilder,
    max: StringBuilder,
    first: StringBuilder,
    last: StringBuilder,
    sum: Float64Builder,
    version: Int32Builder,
    writer: StringBuilder,
    writer_evidence: StringBuilder,
    iotdb_space: StringBuilder,
    iotdb_partition: StringBuilder,
    iotdb_file_version: Int64Builder,
    iotdb_deletions: Int64Builder,
}

impl MetadataRows {
    /// One series; `aligned` says its device has a time column, `headers` are its chunks'
    /// headers (empty when encoding and compression are not asked for).
    fn push(&mut self, file: &str, table: &str, device: &str, aligned: bool, s: &TimeseriesMetadata, headers: &[ChunkHeader]) {
        let is_time = s.is_aligned_time();
        self.file.append_value(file);
        self.table.append_value(table);
        self.device.append_value(device);
        self.measurement.append_value(if is_time { "time" } else { &s.measurement });
        self.category.append_value(if is_time { "TIME" } else { "FIELD" });
        self.data_type.append_value(if is_time { "TIMESTAMP" } else { s.data_type.name() });
        // Writers need not flag aligned series in the timeseries type; the device's time
        // column and the chunk markers (0x80 = time chunk, 0x40 = value chunk of an aligned
        // device) always say it.
        self.aligned
            .append_value(is_time || aligned || s.timeseries_type & 0xC0 != 0 || headers.iter().any(|h| h.marker & 0xC0 != 0));
        self.encoding.append_option(distinct_names(headers, |h| {
            Encoding::try_from(h.encoding).map(|e| e.name().to_string()).unwrap_or_else(|_| format!("unknown({})", h.encoding))
        }));
        self.compression.append_option(distinct_names(headers, |h| {
            Compression::try_from(h.compression)
                .map(|c| c.name().to_string())
                .unwrap_or_else(|_| format!("unknown({})", h.compression))
        }));
        self.chunk_count.append_value(i64::try_from(s.chunks.len()).unwrap_or(i64::MAX));
        let st: &Statistics = &s.statistics;
        self.point_count.append_value(i64::try_from(st.count).unwrap_or(i64::MAX));
        self.start_time.append_value(st.start_time);
        self.end_time.append_value(st.end_time);
        let v = StatText::of(&st.values, s.data_type);
        self.min.append_option(v.min);
        self.max.append_option(v.max);
        self.first.append_option(v.first);
        self.last.append_option(v.last);
        self.sum.append_option(v.sum);
    }

    fn finish(mut self) -> Result<RecordBatch> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.file.finish()),
            Arc::new(self.table.finish()),
            Arc::new(self.device.finish()),
            Arc::new(self.measurement.finish()),
            Arc::new(self.category.finish()),
            Arc::new(self.data_type.finish()),
            Arc::new(self.aligned.finish()),
            Arc::new(self.encoding.finish()),
            Arc::new(self.compression.finish()),
            Arc::new(self.chunk_count.finish()),
            Arc::new(self.point_count.finish()),
            Arc::new(self.start_time.finish()),
            Arc::new(self.end_time.finish()),
            Arc::new(self.min.finish()),
            Arc::new(self.max.finish()),
            Arc::new(self.first.finish()),
            Arc::new(self.last.finish()),
            Arc::new(self.sum.finish()),
            Arc::new(self.version.finish()),
            Arc::new(self.writer.finish()),
            Arc::new(self.writer_evidence.finish()),
            Arc::new(self.iotdb_space.finish()),
            Arc::new(self.iotdb_partition.finish()),
            Arc::new(self.iotdb_file_version.finish()),
            Arc::new(self.iotdb_deletions.finish()),
        ];
        RecordBatch::try_new(metadata_schema(), columns).map_err(|e| DataFusionError::ArrowError(Box::new(e), None))
    }
}

/// The distinct values of `name` over the chunk headers, in first-seen order, joined by `,`.
fn distinct_names(headers: &[ChunkHeader], name: impl Fn(&ChunkHeader) -> String) -> Option<String> {
    let mut seen = BTreeSet::new();
    let mut out: Vec<String> = Vec::new();
    for h in headers {
        let n = name(h);
        if seen.insert(n.clone()) {
            out.push(n);
        }
    }
    (!out.is_empty()).then(|| out.join(","))
}

/// Series statistics rendered as text (numbers in decimal, DATE as `YYYY-MM-DD`).
#[derive(Default)]
struct StatText {
    min: Option<String>,
    max: Option<String>,
    first: Option<String>,
    last: Option<String>,
    sum: Option<f64>,
}

impl StatText {
    /// Min, max, first and last of a numeric type printed in decimal.
    fn numbers<T: std::fmt::Display>(min: &T, max: &T, first: &T, last: &T, sum: Option<f64>) -> StatText {
        StatText {
            min: Some(min.to_string()),
            max: Some(max.to_string()),
            first: Some(first.to_string()),
            last: Some(last.to_string()),
            sum,
        }
    }

    fn of(v: &ValueStatistics, data_type: TsDataType) -> StatText {
        let text = |b: &Option<Box<[u8]>>| b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
        match v {
            ValueStatistics::None => StatText::default(),
            ValueStatistics::Boolean { first, last, true_count } => StatText {
                first: Some(first.to_string()),
                last: Some(last.to_string()),
                sum: Some(*true_count as f64),
                ..StatText::default()
            },
            ValueStatistics::Int32 { min, max, first, last, sum } => {
                let f = |x: i32| if data_type == TsDataType::Date { date_text(x) } else { x.to_string() };
                StatText {
                    min: Some(f(*min)),
                    max: Some(f(*max)),
                    first: Some(f(*first)),
                    last: Some(f(*last)),
                    sum: (data_type != TsDataType::Date).then_some(*sum as f64),
                }
            }
            ValueStatistics::Int64 { min, max, first, last, sum } => {
                StatText::numbers(min, max, first, last, (data_type != TsDataType::Timestamp).then_some(*sum))
            }
            ValueStatistics::Float { min, max, first, last, sum } => StatText::numbers(min, max, first, last, Some(*sum)),
            ValueStatistics::Double { min, max, first, last, sum } => StatText::numbers(min, max, first, last, Some(*sum)),
            ValueStatistics::Text { first, last } => StatText { first: text(first), last: text(last), ..StatText::default() },
            ValueStatistics::String { first, last, min, max } => {
                StatText { min: text(min), max: text(max), first: text(first), last: text(last), sum: None }
            }
        }
    }
}

/// A DATE value (`YYYYMMDD` integer) as `YYYY-MM-DD`; other integers are printed as they are.
fn date_text(v: i32) -> String {
    let (y, m, d) = (v / 10_000, (v / 100) % 100, v % 100);
    if v > 0 && (1..=12).contains(&m) && (1..=31).contains(&d) {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_render_as_iso_and_bad_dates_as_numbers() {
        assert_eq!(date_text(20240102), "2024-01-02");
        assert_eq!(date_text(19991231), "1999-12-31");
        assert_eq!(date_text(20241301), "20241301");
        assert_eq!(date_text(-5), "-5");
    }

    #[test]
    fn statistics_render_by_type() {
        let s = StatText::of(
            &ValueStatistics::Int32 { min: 20240101, max: 20240131, first: 20240105, last: 20240101, sum: 7 },
            TsDataType::Date,
        );
        assert_eq!(s.min.as_deref(), Some("2024-01-01"));
        assert_eq!(s.max.as_deref(), Some("2024-01-31"));
        assert_eq!(s.sum, None);
        let s = StatText::of(&ValueStatistics::Int32 { min: -3, max: 9, first: 1, last: 2, sum: 7 }, TsDataType::Int32);
        assert_eq!((s.min.as_deref(), s.max.as_deref(), s.sum), (Some("-3"), Some("9"), Some(7.0)));
        let s = StatText::of(&ValueStatistics::Boolean { first: true, last: false, true_count: 4 }, TsDataType::Boolean);
        assert_eq!((s.first.as_deref(), s.last.as_deref(), s.min, s.sum), (Some("true"), Some("false"), None, Some(4.0)));
        let s = StatText::of(
            &ValueStatistics::String {
                first: Some(Box::from(&b"b"[..])),
                last: None,
                min: Some(Box::from(&b"a"[..])),
                max: Some(Box::from(&b"z"[..])),
            },
            TsDataType::String,
        );
        assert_eq!((s.min.as_deref(), s.max.as_deref(), s.first.as_deref(), s.last), (Some("a"), Some("z"), Some("b"), None));
        let s = StatText::of(
            &ValueStatistics::Double { min: f64::NAN, max: 1.5, first: 0.0, last: -0.0, sum: 1.5 },
            TsDataType::Double,
        );
        assert_eq!((s.min.as_deref(), s.max.as_deref(), s.last.as_deref()), (Some("NaN"), Some("1.5"), Some("-0")));
    }
}
