//! `TsFileFormat`: DataFusion's `FileFormat` for `.tsfile` files, and its factory for
//! `CREATE EXTERNAL TABLE ... STORED AS TSFILE`.
//!
//! * `infer_schema` reads each file's footer (cached), picks the table (option `table`, or
//!   the only table of the files) and merges the files' schemas by column name; the same
//!   column with different types in two files is an error naming both. A tree-model path
//!   prefix is a table too (see [`crate::datafusion::tree`]).
//! * `infer_stats` gives exact row counts, time bounds and per-column min/max/null counts
//!   from the series statistics, so `count(*)`, `min(time)` and `max(int_col)` need no page.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, DataFusionError, GetExt, Result, ScalarValue, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig, FileSource};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectMeta, ObjectStore};

use crate::arrow::schema::table_arrow_schema;
use crate::datafusion::errors::df_err;
use crate::datafusion::in_order::InOrderExec;
use crate::datafusion::metadata::{FileMeta, MetadataCache, StatisticsScope};
use crate::datafusion::options::TsFileReadOptions;
use crate::datafusion::pruning::{
    column_roles, merge_bound, tag_column_stat, time_column_stat, value_facts, ColumnRole, ColumnStat, ExactMinMax,
};
use crate::datafusion::sink::{is_write_option, TsFileSink};
use crate::datafusion::source::TsFileSource;
use crate::datafusion::tree::{tree_file_statistics, tree_schema};
use crate::stats::trust::without_lossy_values;

/// Footers read at once when a table's schema is inferred (as Parquet's default
/// `meta_fetch_concurrency`).
const FOOTER_CONCURRENCY: usize = 32;

/// The file extension (without the dot).
pub const TSFILE_EXTENSION: &str = "tsfile";

/// Factory registered for `STORED AS TSFILE`.
#[derive(Debug, Default, Clone)]
pub struct TsFileFormatFactory {
    options: TsFileReadOptions,
    cache: Arc<MetadataCache>,
}

impl TsFileFormatFactory {
    /// A factory with default options and its own metadata cache.
    pub fn new() -> Self {
        <Self as Default>::default()
    }

    /// A factory whose formats start from `options`.
    pub fn with_options(options: TsFileReadOptions) -> Self {
        TsFileFormatFactory { options, cache: Arc::new(MetadataCache::new()) }
    }
}

impl FileFormatFactory for TsFileFormatFactory {
    /// Options are, in increasing precedence: the factory's, the session's `tsfile.*` table
    /// options (`SET`-style defaults such as the CLI's `--master-key`), the statement's.
    fn create(&self, state: &dyn Session, format_options: &HashMap<String, String>) -> Result<Arc<dyn FileFormat>> {
        let mut options = self.options.clone();
        if let Some(session) =
            state.default_table_options().extensions.get::<crate::datafusion::table_options::TsFileTableOptions>()
        {
            let defaults: HashMap<String, String> = session.values().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            options = options.apply(&defaults).map_err(df_err)?;
        }
        let (read, write) = split_write_options(own_options(state, format_options)?);
        let options = options.apply(&read).map_err(df_err)?;
        let mut write_options = session_write_options(state);
        write_options.extend(write);
        Ok(Arc::new(TsFileFormat {
            options,
            cache: self.cache.clone(),
            scope: StatisticsScope::All,
            write_options: Arc::new(write_options),
        }))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(TsFileFormat {
            options: self.options.clone(),
            cache: self.cache.clone(),
            scope: StatisticsScope::All,
            write_options: Arc::default(),
        })
    }
}

/// Split off the write options (see [`TsFileSink`](crate::datafusion::TsFileSink)) from the read options.
fn split_write_options(options: HashMap<String, String>) -> (HashMap<String, String>, Vec<(String, String)>) {
    let mut read = HashMap::new();
    let mut write = Vec::new();
    for (k, v) in options {
        let key = k.to_ascii_lowercase();
        let bare = key.strip_prefix("format.").or_else(|| key.strip_prefix("tsfile.")).unwrap_or(&key);
        if is_write_option(bare) {
            write.push((bare.to_string(), v));
        } else {
            read.insert(k, v);
        }
    }
    write.sort();
    (read, write)
}

/// The session's `tsfile.` write options (`SET tsfile.tags = ...`).
fn session_write_options(state: &dyn Session) -> Vec<(String, String)> {
    let table_options = state.default_table_options();
    let Some(session) = table_options.extensions.get::<crate::datafusion::table_options::TsFileTableOptions>() else {
        return Vec::new();
    };
    session.write_values().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The statement's options that are TsFile's: those in another namespace the session knows
/// (object-store settings such as `aws.*` or `gcp.*`, which datafusion-cli registers for the
/// location's scheme and uses to build the store) are checked by that namespace, as
/// DataFusion's own formats do, and left to it. Everything else is TsFile's (bare,
/// `format.` or `tsfile.`), so an unknown key is still an error.
fn own_options(state: &dyn Session, format_options: &HashMap<String, String>) -> Result<HashMap<String, String>> {
    let mut others = state.default_table_options();
    let mut own = HashMap::new();
    for (key, value) in format_options {
        let namespace = key.split_once('.').map(|(prefix, _)| prefix.to_ascii_lowercase());
        let foreign = namespace
            .as_deref()
            .is_some_and(|ns| ns != "format" && ns != "tsfile" && others.extensions.iter().any(|(prefix, _)| prefix == ns));
        if foreign {
            others.set(key, value)?;
        } else {
            own.insert(key.clone(), value.clone());
        }
    }
    Ok(own)
}

impl GetExt for TsFileFormatFactory {
    fn get_ext(&self) -> String {
        TSFILE_EXTENSION.to_string()
    }
}

/// The TsFile `FileFormat`.
#[derive(Debug, Clone, Default)]
pub struct TsFileFormat {
    options: TsFileReadOptions,
    cache: Arc<MetadataCache>,
    /// Which columns get planning statistics ([`StatisticsScope`]).
    scope: StatisticsScope,
    /// Write options of `COPY`/`INSERT INTO` (see [`TsFileSink`](crate::datafusion::TsFileSink)).
    write_options: Arc<Vec<(String, String)>>,
}

impl TsFileFormat {
    /// A format with these options and a new metadata cache.
    pub fn new(options: TsFileReadOptions) -> Self {
        TsFileFormat {
            options,
            cache: Arc::new(MetadataCache::new()),
            scope: StatisticsScope::All,
            write_options: Arc::default(),
        }
    }

    /// A format with these options sharing an existing metadata cache.
    pub fn with_cache(options: TsFileReadOptions, cache: Arc<MetadataCache>) -> Self {
        TsFileFormat { options, cache, scope: StatisticsScope::All, write_options: Arc::default() }
    }

    /// The same format computing planning statistics for `scope` only.
    pub fn with_statistics_scope(&self, scope: StatisticsScope) -> Self {
        TsFileFormat { scope, ..self.clone() }
    }

    /// The same format writing with `write_options` (`key`, `value` pairs, see
    /// [`TsFileSink`](crate::datafusion::TsFileSink)).
    pub fn with_write_options(mut self, write_options: Arc<Vec<(String, String)>>) -> Self {
        self.write_options = write_options;
        self
    }

    /// The write options `COPY` and `INSERT INTO` use (`key`, `value`, prefixes removed).
    pub fn write_options(&self) -> &[(String, String)] {
        &self.write_options
    }

    /// The options.
    pub fn options(&self) -> &TsFileReadOptions {
        &self.options
    }

    /// The metadata cache shared by schema inference, statistics and scans.
    pub fn cache(&self) -> &Arc<MetadataCache> {
        &self.cache
    }

    /// Choose the table: the option, or the only table (table-model table or tree-model
    /// path prefix) of all files.
    fn pick_table(&self, metas: &[(Arc<FileMeta>, &ObjectMeta)]) -> Result<String> {
        if let Some(t) = &self.options.table {
            return Ok(t.clone());
        }
        let mut names: Vec<String> = Vec::new();
        for (m, _) in metas {
            for n in m.plan.sql_table_names() {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        let tree_only = metas.iter().all(|(m, _)| m.plan.table_names().is_empty());
        if let Some(table) = crate::plan::default_table(&names, tree_only) {
            return Ok(table);
        }
        match names.len() {
            0 => {
                let loc = metas.first().map(|(m, _)| m.location.clone()).unwrap_or_default();
                Err(DataFusionError::Plan(format!("{loc}: no table in the file(s) (an empty TsFile?)")))
            }
            _ => Err(DataFusionError::Plan(format!(
                "the TsFile(s) hold several tables ({}); choose one with OPTIONS ('table' '<name>') \
                 ('*' reads every tree-model device)",
                names.join(", ")
            ))),
        }
    }
}

/// Merge table schemas by column name, keeping first-seen order; the time column first.
fn merge_schemas(schemas: &[(SchemaRef, String)]) -> Result<SchemaRef> {
    let mut fields: Vec<Field> = Vec::new();
    let mut origin: Vec<String> = Vec::new();
    for (schema, loc) in schemas {
        for (i, f) in schema.fields().iter().enumerate() {
            if i == 0 {
                if fields.is_empty() {
                    fields.push(f.as_ref().clone());
                    origin.push(loc.clone());
                } else if fields[0].name() != f.name() || fields[0].data_type() != f.data_type() {
                    return Err(DataFusionError::Plan(format!(
                        "time column '{}' in {} differs from '{}' in {}",
                        f.name(),
                        loc,
                        fields[0].name(),
                        origin[0]
                    )));
                }
                continue;
            }
            match fields.iter().position(|g| g.name() == f.name()) {
                Some(j) => {
                    if fields[j].data_type() != f.data_type() || fields[j].metadata() != f.metadata() {
                        return Err(DataFusionError::Plan(format!(
                            "column '{}' is {} ({}) in {} but {} ({}) in {}",
                            f.name(),
                            fields[j].data_type(),
                            fields[j].metadata().get(crate::arrow::schema::CATEGORY_KEY).cloned().unwrap_or_default(),
                            origin[j],
                            f.data_type(),
                            f.metadata().get(crate::arrow::schema::CATEGORY_KEY).cloned().unwrap_or_default(),
                            loc
                        )));
                    }
                }
                None => {
                    fields.push(f.as_ref().clone());
                    origin.push(loc.clone());
                }
            }
        }
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// One column's file-level min/max while the devices are merged: the running bounds, whether
/// each is the exact answer, and whether every device with values gave bounds.
///
/// The merged lower bound is the exact minimum when some device attains it exactly: every
/// other device's values lie at or above its own bound, hence at or above this one (under
/// the total order `ScalarValue` compares floats by). Likewise for the maximum.
#[derive(Debug, Clone)]
struct ColumnAcc {
    /// Smallest lower bound so far (total order for floats, as `ScalarValue` compares).
    lo: Option<ScalarValue>,
    /// Largest upper bound so far.
    hi: Option<ScalarValue>,
    /// `lo` is the exact minimum (a device whose lower bound is `lo` attains it).
    lo_exact: bool,
    /// `hi` is the exact maximum.
    hi_exact: bool,
    /// Every device holding values of the column gave bounds.
    known: bool,
    /// Null count.
    nulls: u64,
    /// Every device's null count was known (its value count fits its rows).
    nulls_known: bool,
}

impl Default for ColumnAcc {
    fn default() -> Self {
        ColumnAcc { lo: None, hi: None, lo_exact: true, hi_exact: true, known: true, nulls: 0, nulls_known: true }
    }
}

impl ColumnAcc {
    /// Merge one device of `n` rows: its bounds `st` and its exact min/max `exact` (equal to
    /// the bounds except where the bounds are not attained, e.g. a float zero or NaN; `None`
    /// when they are the bounds).
    fn add(&mut self, st: ColumnStat, exact: Option<ExactMinMax>, n: u64) {
        match st.nulls {
            Some(k) => self.nulls += k,
            // A count that contradicts the rows: neither the null count nor the bounds.
            None => {
                self.nulls_known = false;
                self.known = false;
                return;
            }
        }
        if st.nulls == Some(n) {
            return;
        }
        let (Some(lo), Some(hi)) = (st.min, st.max) else {
            self.known = false;
            return;
        };
        // `ScalarValue` equality compares floats by bits, so -0.0 is not +0.0 here.
        let (lo_exact, hi_exact) = match &exact {
            None => (true, true),
            Some((l, h)) => (l.as_ref() == Some(&lo), h.as_ref() == Some(&hi)),
        };
        if !merge_bound(&mut self.lo, &mut self.lo_exact, lo, lo_exact, Ordering::Less)
            || !merge_bound(&mut self.hi, &mut self.hi_exact, hi, hi_exact, Ordering::Greater)
        {
            self.known = false;
        }
    }

    /// The merged min and max in type `ty`: `Exact` only when they are the exact answers
    /// (DataFusion answers `min(x)`/`max(x)` from exact statistics), `Inexact` bounds
    /// otherwise, `Absent` when a device with values had no bounds.
    fn precision(&self, ty: &DataType) -> (Precision<ScalarValue>, Precision<ScalarValue>) {
        let cast = |v: &Option<ScalarValue>, exact: bool| -> Precision<ScalarValue> {
            match v.as_ref().map(|s| s.cast_to(ty)) {
                Some(Ok(s)) if self.known && exact => Precision::Exact(s),
                Some(Ok(s)) if self.known => Precision::Inexact(s),
                _ => Precision::Absent,
            }
        };
        (cast(&self.lo, self.lo_exact), cast(&self.hi, self.hi_exact))
    }
}

/// Files whose index area (the bytes from the index to the end of the file) is larger report unknown
/// statistics at planning: about 40,000 devices of
/// a few series each (IoTDB and the C++ writer store 300–500 bytes of index per device of
/// five fields).
pub const STATISTICS_MAX_INDEX_BYTES: u64 = 16 << 20;

/// Table-level statistics of one file for `schema` (the merged table schema).
pub fn file_statistics(meta: &FileMeta, table: &str, schema: &Schema, scope: &StatisticsScope) -> crate::Result<Statistics> {
    let t = meta.plan.table(table)?;
    let tag_order: Vec<String> = t.schema.tag_columns().map(|c| c.name.clone()).collect();
    let fields_in_file: HashSet<String> = t.schema.field_columns().map(|c| c.name.clone()).collect();
    let roles = column_roles(schema, &tag_order, &fields_in_file);
    let lossy: HashSet<&str> = t
        .schema
        .field_columns()
        .filter(|c| crate::stats::trust::lossy_float_encoding(c.data_type, c.encoding))
        .map(|c| c.name.as_str())
        .collect();
    let mut rows: u64 = 0;
    let mut acc: Vec<ColumnAcc> = vec![ColumnAcc::default(); roles.len()];
    // TAG columns are merged as strings and turned into scalars once (per column: smallest
    // and largest value, null rows).
    let mut tags: Vec<(Option<&str>, Option<&str>, u64)> = vec![(None, None, 0); roles.len()];
    // The FIELD columns' series statistics are visited device by device (nothing is kept).
    let field_column: HashMap<&str, usize> = roles
        .iter()
        .enumerate()
        .filter_map(|(i, r)| if let ColumnRole::Field(n) = r { Some((n.as_str(), i)) } else { None })
        .filter(|(n, _)| scope.field(n))
        .collect();
    let mut seen = vec![false; roles.len()];
    for d in &t.devices {
        let n = d.rows();
        rows += n;
        seen.fill(false);
        if !field_column.is_empty() {
            meta.plan.visit_fields(d, &mut |name, stats| {
                let Some(&i) = field_column.get(name) else { return };
                let (Some(a), Some(field)) = (acc.get_mut(i), schema.fields().get(i)) else { return };
                if std::mem::replace(&mut seen[i], true) {
                    return; // the first series of a name counts (as a lookup finds it)
                }
                let ty = field.data_type();
                let s = without_lossy_values(stats, lossy.contains(name));
                let (st, exact) = value_facts(&s, Some(n), ty);
                a.add(st, Some(exact), n);
            })?;
        }
        for (((role, field), (a, tag)), seen) in
            roles.iter().zip(schema.fields()).zip(acc.iter_mut().zip(tags.iter_mut())).zip(&seen)
        {
            let ty = field.data_type();
            let (st, exact): (ColumnStat, Option<ExactMinMax>) = match role {
                // Time and tag bounds are attained: exact.
                ColumnRole::Time => (time_column_stat(&d.time.statistics, ty), None),
                ColumnRole::Tag(i) => {
                    match d.device.segment(*i) {
                        // A device without rows adds no bounds (as `ColumnAcc::add`).
                        Some(_) if n == 0 => {}
                        Some(v) => {
                            tag.0 = Some(tag.0.map_or(v, |lo| lo.min(v)));
                            tag.1 = Some(tag.1.map_or(v, |hi| hi.max(v)));
                        }
                        None => tag.2 += n,
                    }
                    continue;
                }
                // A FIELD the device has was merged while its series were visited.
                ColumnRole::Field(_) if *seen => continue,
                // A FIELD the query does not use: not read, so nothing is known of it.
                ColumnRole::Field(name) if !scope.field(name) => {
                    a.nulls_known = false;
                    a.known = false;
                    continue;
                }
                ColumnRole::Attribute | ColumnRole::Missing | ColumnRole::Field(_) => {
                    (ColumnStat { min: None, max: None, nulls: Some(n) }, Some((None, None)))
                }
            };
            a.add(st, exact, n);
        }
    }
    for ((role, a), (lo, hi, nulls)) in roles.iter().zip(acc.iter_mut()).zip(tags) {
        if let ColumnRole::Tag(_) = role {
            let (min, max) = match (lo, hi) {
                (Some(lo), Some(hi)) => (tag_column_stat(Some(lo), 0).min, tag_column_stat(Some(hi), 0).max),
                _ => (None, None),
            };
            // Without bounds every row is null (`nulls == rows`, so none are merged); with
            // bounds some device of at least one row has a value (`nulls < rows`).
            a.add(ColumnStat { min, max, nulls: Some(nulls) }, None, rows);
        }
    }
    let column_statistics = acc
        .into_iter()
        .zip(schema.fields())
        .map(|(a, field)| {
            let nulls = usize::try_from(a.nulls).unwrap_or(usize::MAX);
            let (min_value, max_value) = a.precision(field.data_type());
            ColumnStatistics {
                null_count: if a.nulls_known { Precision::Exact(nulls) } else { Precision::Absent },
                max_value,
                min_value,
                sum_value: Precision::Absent,
                distinct_count: Precision::Absent,
                byte_size: Precision::Absent,
            }
        })
        .collect();
    Ok(Statistics {
        num_rows: Precision::Exact(usize::try_from(rows).unwrap_or(usize::MAX)),
        total_byte_size: Precision::Absent,
        column_statistics,
    })
}

#[async_trait]
impl FileFormat for TsFileFormat {
    fn get_ext(&self) -> String {
        TSFILE_EXTENSION.to_string()
    }

    fn get_ext_with_compression(&self, c: &FileCompressionType) -> Result<String> {
        if c.is_compressed() {
            return Err(DataFusionError::NotImplemented(
                "TsFiles compress their pages themselves; file-level compression is not supported".into(),
            ));
        }
        Ok(self.get_ext())
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    async fn infer_schema(
        &self,
        _state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        if self.options.layout == crate::datafusion::DirectoryLayout::Iotdb {
            crate::datafusion::iotdb_table::plain_only(&self.options, &[])?;
        }
        // Every file's footer is read, FOOTER_CONCURRENCY at a time, in listing order: a
        // column that only later files hold must not be dropped, and the scan's file
        // statistics need each footer anyway (they stay in the metadata cache).
        let loads: Vec<_> = objects.iter().map(|o| self.cache.get_with(store, o, &self.options.read)).collect();
        let loaded: Vec<_> = futures::stream::iter(loads).buffered(FOOTER_CONCURRENCY).try_collect().await.map_err(df_err)?;
        let metas: Vec<(Arc<FileMeta>, &ObjectMeta)> = loaded.into_iter().map(|(m, _)| m).zip(objects).collect();
        let table = self.pick_table(&metas)?;
        let mut schemas = Vec::with_capacity(metas.len());
        let mut trees = Vec::new();
        for (m, _) in &metas {
            match m.reader().metadata().table_schema(&table) {
                Some(ts) => schemas.push((table_arrow_schema(ts, self.options.time_unit).map_err(df_err)?, m.location.clone())),
                None if m.plan.holds_tree(&table) => {
                    let tree = m.plan.tree(&table).map_err(|e| df_err(e.in_file(&m.location)))?;
                    trees.push((tree, m.location.clone()));
                }
                None => {}
            }
        }
        match (schemas.first(), trees.first()) {
            (None, None) => Err(DataFusionError::Plan(format!("no file holds table '{table}'"))),
            (Some(_), None) => merge_schemas(&schemas),
            (None, Some(_)) => tree_schema(&trees, &self.options),
            (Some((_, table_file)), Some((_, tree_file))) => Err(DataFusionError::Plan(format!(
                "'{table}' is a table-model table in {table_file} but a tree-model path prefix in {tree_file}"
            ))),
        }
    }

    async fn infer_stats(
        &self,
        _state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        if self.scope == StatisticsScope::None {
            return Ok(Statistics::new_unknown(&table_schema));
        }
        let (m, _) = self.cache.get_with(store, object, &self.options.read).await.map_err(df_err)?;
        let table = self.pick_table(&[(m.clone(), object)])?;
        if m.reader().metadata().table_schema(&table).is_none() && m.plan.holds_tree(&table) {
            let tree = m.plan.tree(&table).map_err(|e| df_err(e.in_file(&m.location)))?;
            return Ok(tree_file_statistics(&tree, &table_schema, &|name| self.scope.field(name)));
        }
        if m.reader().metadata().table_schema(&table).is_none() {
            // This file lacks the table: it contributes no rows.
            let mut s = Statistics::new_unknown(&table_schema);
            s.num_rows = Precision::Exact(0);
            return Ok(s);
        }
        if m.plan.index_bytes() > self.options.statistics_max_index_bytes {
            // Walking every device of a large index at planning would cost more than most
            // queries of it (a device lookup reads one index path): its rows are unknown
            // here and its devices are pruned as it is scanned.
            return Ok(Statistics::new_unknown(&table_schema));
        }
        m.statistics_with(&table, &table_schema, &self.scope, || file_statistics(&m, &table, &table_schema, &self.scope))
            .map_err(|e| df_err(e.in_file(&m.location)))
    }

    async fn create_physical_plan(&self, _state: &dyn Session, conf: FileScanConfig) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(DataSourceExec::from_data_source(conf))
    }

    /// `COPY … STORED AS TSFILE` and `INSERT INTO`: a [`TsFileSink`] writing new files.
    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        _state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if conf.insert_op != InsertOp::Append {
            return Err(DataFusionError::NotImplemented(
                "TsFile tables only take new files (INSERT INTO appends); overwriting is not supported".into(),
            ));
        }
        let sink = TsFileSink::try_new(conf, self.options.table.clone(), &self.write_options)?;
        if let Some(order) = sink.required_order()? {
            // DataFusion sorts (and merges the partitions) to satisfy it.
            return Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), Some(order))));
        }
        // Partitions one after the other, so that each device's rows stay in time order; also
        // over one partition, since the optimizer would otherwise split a file scan into byte
        // ranges later and merge them in arrival order.
        let input: Arc<dyn ExecutionPlan> = Arc::new(InOrderExec::new(input));
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), order_requirements)))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(TsFileSource::new(table_schema, self.options.clone(), self.cache.clone()))
    }
}

impl fmt::Display for TsFileFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TsFileFormat")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::DataType;

    fn schema(cols: &[(&str, DataType)]) -> SchemaRef {
        Arc::new(Schema::new(cols.iter().map(|(n, t)| Field::new(*n, t.clone(), true)).collect::<Vec<_>>()))
    }

    #[test]
    fn test_merge_schemas_union_by_name() {
        let a = schema(&[("time", DataType::Int64), ("x", DataType::Int32)]);
        let b = schema(&[("time", DataType::Int64), ("y", DataType::Utf8), ("x", DataType::Int32)]);
        let m = merge_schemas(&[(a, "a.tsfile".into()), (b, "b.tsfile".into())]).unwrap();
        let names: Vec<&str> = m.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, vec!["time", "x", "y"]);
    }

    #[test]
    fn test_merge_schemas_type_conflict_names_both_files() {
        let a = schema(&[("time", DataType::Int64), ("x", DataType::Int32)]);
        let b = schema(&[("time", DataType::Int64), ("x", DataType::Int64)]);
        let e = merge_schemas(&[(a, "a.tsfile".into()), (b, "b.tsfile".into())]).unwrap_err().to_string();
        assert!(e.contains("'x'") && e.contains("a.tsfile") && e.contains("b.tsfile"), "{e}");
    }

    /// Stands for an object store's table options, keyed as datafusion-cli's `aws.*` are:
    /// `set` gets the whole key, prefix included.
    #[derive(Debug, Clone, Default)]
    struct StoreOptions {
        access_key_id: Option<String>,
    }

    impl datafusion::common::config::ConfigExtension for StoreOptions {
        const PREFIX: &'static str = "store";
    }

    impl datafusion::common::config::ExtensionOptions for StoreOptions {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            self
        }
        fn cloned(&self) -> Box<dyn datafusion::common::config::ExtensionOptions> {
            Box::new(self.clone())
        }
        fn set(&mut self, key: &str, value: &str) -> Result<()> {
            match key {
                "store.access_key_id" => self.access_key_id = Some(value.to_string()),
                _ => return Err(DataFusionError::Configuration(format!("no store option {key}"))),
            }
            Ok(())
        }
        fn entries(&self) -> Vec<datafusion::common::config::ConfigEntry> {
            Vec::new()
        }
    }

    fn create(options: &[(&str, &str)]) -> Result<TsFileReadOptions> {
        use datafusion::execution::SessionStateBuilder;
        let mut state = SessionStateBuilder::new().build();
        state.table_options_mut().extensions.insert(StoreOptions::default());
        let options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let format = TsFileFormatFactory::new().create(&state, &options)?;
        let format = (format.as_ref() as &dyn std::any::Any).downcast_ref::<TsFileFormat>().cloned();
        format.map(|f| f.options).ok_or_else(|| DataFusionError::Internal("not a TsFileFormat".into()))
    }

    #[test]
    fn test_options_of_other_namespaces_are_checked_there_and_left_out() {
        let options = create(&[("store.access_key_id", "AKIA"), ("tsfile.table", "weather"), ("time_unit", "us")]).unwrap();
        let pairs = options.to_pairs();
        assert!(pairs.contains(&("table".to_string(), "weather".to_string())), "{pairs:?}");
        assert!(pairs.iter().all(|(k, v)| !k.contains("access") && v != "AKIA"), "{pairs:?}");
        // A misspelt key of the other namespace is that namespace's error.
        let e = create(&[("store.acess_key_id", "AKIA")]).unwrap_err().to_string();
        assert!(e.contains("acess_key_id"), "{e}");
        // A namespace the session does not know is still an unknown TsFile option.
        let e = create(&[("aws.access_key_id", "AKIA")]).unwrap_err().to_string();
        assert!(e.contains("unknown TsFile option 'aws.access_key_id'"), "{e}");
        let e = create(&[("tsfile.colour", "red")]).unwrap_err().to_string();
        assert!(e.contains("unknown TsFile option 'colour'"), "{e}");
    }
}
