//! Registering TsFiles with a `SessionContext`.
//!
//! * [`register_tsfile_format`]: `CREATE EXTERNAL TABLE ... STORED AS TSFILE` and (with
//!   `enable_url_table`) `SELECT * FROM 'dir/*.tsfile'`;
//! * [`TsFileTable`]: a `TableProvider` over files, a directory or a glob, for
//!   `ctx.register_table`; [`register_tsfile`] does both steps in one call;
//! * [`register_tsfile_schema`]: every table of a file set as `schema.table`, table-model
//!   tables and tree-model path prefixes alike (`tsf."root.plant1"`).

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_schema::{DataType, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::view::ViewTable;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider, Session, TableProvider, TableProviderFactory};
use datafusion::common::{DataFusionError, Result, Statistics, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::datasource::provider::DefaultTableFactory;
use datafusion::datasource::provider_as_source;
use datafusion::execution::cache::cache_manager::FileStatisticsCache;
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{cast, CreateExternalTable, LogicalPlanBuilder};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

use crate::datafusion::aggregate::TsFileStatisticsAggregate;
use crate::datafusion::errors::df_err;
use crate::datafusion::format::{TsFileFormat, TsFileFormatFactory, TSFILE_EXTENSION};
use crate::datafusion::iotdb_table::IotdbTable;
use crate::datafusion::location::parse_location;
use crate::datafusion::metadata::{MetadataCache, StatisticsScope};
use crate::datafusion::options::{DirectoryLayout, TsFileReadOptions};
use crate::datafusion::session_options::TsFileSessionOptions;
use crate::datafusion::table_options::TsFileTableOptions;

/// Register the TsFile format: `STORED AS TSFILE` DDL, `.tsfile` URL tables, the
/// `tsfile.` table-option namespace, the `tsfile.` session options
/// ([`TsFileSessionOptions`]: `SET tsfile.statistics_aggregates = false`), the rule answering aggregations from statistics
/// ([`TsFileStatisticsAggregate`]), the `tsfile_metadata('path')` table function, and
/// integers compared with a time column read as epoch values in its unit
/// ([`EpochLiterals`](crate::datafusion::EpochLiterals): `WHERE time > 1704067200000`).
pub fn register_tsfile_format(ctx: &SessionContext) -> Result<()> {
    let state = ctx.state_ref();
    let mut state = state.write();
    state.register_file_format(Arc::new(TsFileFormatFactory::new()), true)?;
    state.table_factories_mut().insert("TSFILE".to_string(), Arc::new(TsFileTableFactory::default()));
    let extensions = &mut state.config_mut().options_mut().extensions;
    if extensions.get::<TsFileSessionOptions>().is_none() {
        extensions.insert(TsFileSessionOptions::default());
    }
    crate::datafusion::time_literals::register(&mut state)?;
    if !state.physical_optimizers().iter().any(|r| r.name() == TsFileStatisticsAggregate::NAME) {
        // A live session's rules cannot be appended to: rebuild its state with the rule.
        let rebuilt = SessionStateBuilder::new_from_existing(state.clone())
            .with_physical_optimizer_rule(Arc::new(TsFileStatisticsAggregate))
            .build();
        *state = rebuilt;
    }
    drop(state);
    ctx.register_table_options_extension(TsFileTableOptions::default());
    ctx.register_udtf("tsfile_metadata", Arc::new(crate::datafusion::TsFileMetadataFunc));
    Ok(())
}

/// A TsFile table over one or more paths (files, directories or globs).
#[derive(Debug)]
pub struct TsFileTable {
    inner: ListingTable,
    /// The files' schema (the table's without its partition columns).
    file_schema: SchemaRef,
    options: TsFileReadOptions,
    paths: Vec<String>,
    partition_cols: Vec<(String, DataType)>,
    /// Write options of `INSERT INTO` (see [`TsFileSink`](crate::datafusion::TsFileSink)).
    write_options: Arc<Vec<(String, String)>>,
}

impl TsFileTable {
    /// Build the table, reading the files' footers to infer the schema.
    pub async fn try_new(state: &dyn Session, paths: &[&str], options: TsFileReadOptions) -> Result<TsFileTable> {
        Self::try_new_partitioned(state, paths, options, Vec::new()).await
    }

    /// Build the table with Hive-style partition columns taken from the directory names
    /// (`dir/region=north/a.tsfile` gives column `region` = `'north'`), appended after the
    /// file columns. Filters on them skip whole directories.
    pub async fn try_new_partitioned(
        state: &dyn Session,
        paths: &[&str],
        options: TsFileReadOptions,
        partition_cols: Vec<(String, DataType)>,
    ) -> Result<TsFileTable> {
        crate::datafusion::iotdb_table::plain_only(&options, paths)?;
        let urls = Self::urls(paths, &options)?;
        let format = Arc::new(TsFileFormat::new(options.clone()));
        let listing = Self::listing(format, &partition_cols);
        let config = ListingTableConfig::new_with_multi_paths(urls).with_listing_options(listing).infer_schema(state).await?;
        let file_schema =
            config.file_schema.clone().ok_or_else(|| DataFusionError::Internal("TsFile table without schema".into()))?;
        let paths = paths.iter().map(|p| p.to_string()).collect();
        // The session's file statistics cache: planning does not rebuild a file's statistics
        // (over all its devices) for every query.
        let inner = ListingTable::try_new(config)?.with_cache(state.runtime_env().cache_manager.get_file_statistic_cache());
        Ok(TsFileTable { inner, file_schema, options, paths, partition_cols, write_options: Arc::default() })
    }

    /// Rebuild a table whose schema is already known, reading no file: `schema` is the
    /// table's schema (file columns, then the partition columns). Formats built this way
    /// share `cache`, so the tables of one process read each footer once. Used when a
    /// serialized plan is decoded.
    pub fn with_schema(
        paths: &[String],
        schema: SchemaRef,
        options: TsFileReadOptions,
        partition_cols: Vec<(String, DataType)>,
        cache: Arc<MetadataCache>,
    ) -> Result<TsFileTable> {
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let urls = Self::urls(&refs, &options)?;
        let file_fields: Vec<_> =
            schema.fields().iter().filter(|f| !partition_cols.iter().any(|(n, _)| n == f.name())).cloned().collect();
        let file_schema = Arc::new(arrow_schema::Schema::new(file_fields).with_metadata(schema.metadata().clone()));
        let format = Arc::new(TsFileFormat::with_cache(options.clone(), cache));
        let config = ListingTableConfig::new_with_multi_paths(urls)
            .with_listing_options(Self::listing(format, &partition_cols))
            .with_schema(file_schema.clone());
        Ok(TsFileTable {
            inner: ListingTable::try_new(config)?,
            file_schema,
            options,
            paths: paths.to_vec(),
            partition_cols,
            write_options: Arc::default(),
        })
    }

    /// The listing URLs, scoped by the TsFile table they read: the session's statistics
    /// cache is keyed by (scope, path), and two TsFile tables of one file with the same
    /// columns must not share statistics.
    fn urls(paths: &[&str], options: &TsFileReadOptions) -> Result<Vec<ListingTableUrl>> {
        if paths.is_empty() {
            return Err(DataFusionError::Plan("a TsFile table needs at least one path".into()));
        }
        let scope = TableReference::bare(format!("tsfile table {}", options.table.as_deref().unwrap_or("(the only one)")));
        paths.iter().map(|p| Ok(parse_location(p)?.with_table_ref(scope.clone()))).collect()
    }

    fn listing(format: Arc<TsFileFormat>, partition_cols: &[(String, DataType)]) -> ListingOptions {
        ListingOptions::new(format)
            .with_file_extension(format!(".{TSFILE_EXTENSION}"))
            .with_table_partition_cols(partition_cols.to_vec())
    }

    /// Keep the statistics of each file in `cache` (a session's file statistics cache, from
    /// `RuntimeEnv::cache_manager`), so planning does not rebuild them for every query.
    /// [`try_new`](Self::try_new) uses the session's; tables made by
    /// [`with_schema`](Self::with_schema) have none until this is called.
    pub fn with_statistics_cache(mut self, cache: Option<Arc<FileStatisticsCache>>) -> Self {
        self.inner = self.inner.with_cache(cache);
        self
    }

    /// The statement that created the table, as `SHOW CREATE TABLE` prints it (DataFusion
    /// keeps it without its `OPTIONS`, so no credential or key is in it).
    pub fn with_definition(mut self, definition: Option<String>) -> Self {
        self.inner = self.inner.with_definition(definition);
        self
    }

    /// The planning statistics a scan of `projection` under `filters` asks its files for:
    /// none when a filter names devices by TAG (`tag = 'x'`, `tag IN (...)`: the scan looks
    /// them up along their index path, while statistics would walk every device of every
    /// file), else the FIELD columns the query uses.
    fn statistics_scope(&self, projection: Option<&Vec<usize>>, filters: &[Expr]) -> StatisticsScope {
        let schema = self.inner.schema();
        if filters.iter().any(|f| names_devices(f, &schema)) {
            return StatisticsScope::None;
        }
        let mut used: BTreeSet<String> = match projection {
            Some(p) => p.iter().filter_map(|&i| schema.fields().get(i)).map(|f| f.name().clone()).collect(),
            None => schema.fields().iter().map(|f| f.name().clone()).collect(),
        };
        for f in filters {
            used.extend(f.column_refs().into_iter().map(|c| c.name.clone()));
        }
        StatisticsScope::Columns(Arc::new(used))
    }

    /// The options.
    pub fn options(&self) -> &TsFileReadOptions {
        &self.options
    }

    /// Write `INSERT INTO` files with these options (`key`, `value`; see
    /// [`TsFileSink`](crate::datafusion::TsFileSink)).
    pub fn with_write_options(mut self, write_options: Arc<Vec<(String, String)>>) -> Self {
        self.write_options = write_options;
        self
    }

    /// The paths (files, directories or globs) the table was built from.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// The Hive-style partition columns (name, type).
    pub fn partition_cols(&self) -> &[(String, DataType)] {
        &self.partition_cols
    }
}

#[async_trait]
impl TableProvider for TsFileTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let scope = self.statistics_scope(projection, filters);
        let Some(format) = self.inner.options().format.downcast_ref::<TsFileFormat>() else {
            return self.inner.scan(state, projection, filters, limit).await;
        };
        // The same listing with a format that computes planning statistics for `scope` only
        // (kept with each file's footer, per scope; not in the session's cache, which is
        // keyed by file alone).
        let mut options = self.inner.options().clone();
        options.format = Arc::new(format.with_statistics_scope(scope));
        let config = ListingTableConfig::new_with_multi_paths(self.inner.table_paths().clone())
            .with_listing_options(options)
            .with_schema(self.file_schema.clone());
        ListingTable::try_new(config)?.scan(state, projection, filters, limit).await
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }

    fn get_table_definition(&self) -> Option<&str> {
        self.inner.get_table_definition()
    }

    /// `INSERT INTO`: new files in the table's directory (see [`TsFileSink`](crate::datafusion::TsFileSink)),
    /// through a listing table whose format carries the table's write options.
    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Without a table option the files are named after the table's directory, as by
        // `COPY … TO 'dir/'`.
        let mut options = self.options.clone();
        if options.table.is_none() {
            options.table = self
                .paths
                .first()
                .and_then(|p| crate::writer::local::default_table_name(&format!("{}/", p.trim_end_matches('/'))));
        }
        let format = TsFileFormat::new(options).with_write_options(self.write_options.clone());
        let schema = self.inner.schema();
        let file_fields: Vec<_> =
            schema.fields().iter().filter(|f| !self.partition_cols.iter().any(|(n, _)| n == f.name())).cloned().collect();
        let file_schema = Arc::new(arrow_schema::Schema::new(file_fields).with_metadata(schema.metadata().clone()));
        let config = ListingTableConfig::new_with_multi_paths(self.inner.table_paths().clone())
            .with_listing_options(Self::listing(Arc::new(format), &self.partition_cols))
            .with_schema(file_schema);
        ListingTable::try_new(config)?.insert_into(state, input, insert_op).await
    }
}

/// Whether `filter`'s conjunction holds an equality or a (non-negated) `IN` list of literals
/// on a TAG column of `schema`: the rows it allows come from the devices those values name.
fn names_devices(filter: &Expr, schema: &arrow_schema::Schema) -> bool {
    let literal = |e: &Expr| matches!(e, Expr::Literal(..));
    match filter {
        Expr::BinaryExpr(b) if b.op == datafusion::logical_expr::Operator::And => {
            names_devices(&b.left, schema) || names_devices(&b.right, schema)
        }
        Expr::BinaryExpr(b) if b.op == datafusion::logical_expr::Operator::Eq => {
            (tag_column(&b.left, schema) && literal(&b.right)) || (tag_column(&b.right, schema) && literal(&b.left))
        }
        Expr::InList(l) => !l.negated && tag_column(&l.expr, schema) && l.list.iter().all(literal),
        _ => false,
    }
}

/// Whether `e` is a TAG column of `schema` (possibly cast).
fn tag_column(e: &Expr, schema: &arrow_schema::Schema) -> bool {
    match e {
        Expr::Column(c) => schema
            .field_with_name(&c.name)
            .is_ok_and(|f| f.metadata().get(crate::arrow::schema::CATEGORY_KEY).map(String::as_str) == Some("TAG")),
        Expr::Cast(c) => tag_column(&c.expr, schema),
        _ => false,
    }
}

/// `CREATE EXTERNAL TABLE ... STORED AS TSFILE`: a [`TsFileTable`] (which serialized
/// plans can carry, see the `proto` feature). Options are the session's `tsfile.*` defaults
/// overridden by the statement's; `PARTITIONED BY (col, ...)` columns (or, unless
/// `datafusion.execution.listing_table_factory_infer_partitions` is off, the `key=value`
/// directories found) become string partition columns.
///
/// A statement that declares its columns (`CREATE EXTERNAL TABLE t (time TIMESTAMP, device
/// VARCHAR, temperature DOUBLE) …`) gets exactly those, in that order: a view casting the
/// files' columns to the declared types (SQL `CAST` semantics: a value that does not
/// convert is an error), the files' other columns left out; declaring a column no file
/// holds is an error. A statement with an ordering (`WITH ORDER`) or `UNBOUNDED` gets
/// DataFusion's generic listing table instead.
#[derive(Debug, Default)]
pub struct TsFileTableFactory {
    fallback: DefaultTableFactory,
}

#[async_trait]
impl TableProviderFactory for TsFileTableFactory {
    async fn create(&self, state: &dyn Session, cmd: &CreateExternalTable) -> Result<Arc<dyn TableProvider>> {
        if !cmd.order_exprs.is_empty() || cmd.unbounded {
            return self.fallback.create(state, cmd).await;
        }
        let format = TsFileFormatFactory::new().create(state, &cmd.options)?;
        let options = format
            .downcast_ref::<TsFileFormat>()
            .map(|f| f.options().clone())
            .ok_or_else(|| DataFusionError::Internal("TsFile format factory made another format".into()))?;
        let detected = options.layout == DirectoryLayout::Auto
            && matches!(cmd.locations.as_slice(), [one] if crate::datafusion::iotdb_table::looks_iotdb(one));
        if options.layout == DirectoryLayout::Iotdb || detected {
            return iotdb_table(cmd, options);
        }
        if !cmd.schema.fields().is_empty() {
            return declared_table(state, cmd, options).await;
        }
        let write_options: Arc<Vec<(String, String)>> =
            format.downcast_ref::<TsFileFormat>().map(|f| Arc::new(f.write_options().to_vec())).unwrap_or_default();
        let paths: Vec<&str> = cmd.locations.iter().map(String::as_str).collect();
        let mut names = cmd.table_partition_cols.clone();
        if names.is_empty() && state.config_options().execution.listing_table_factory_infer_partitions {
            if let Some(first) = paths.first() {
                let listing = ListingOptions::new(format).with_file_extension(format!(".{TSFILE_EXTENSION}"));
                names = listing.infer_partitions(state, &parse_location(first)?).await?;
            }
        }
        let parts = names.into_iter().map(|n| (n, partition_type())).collect();
        let table = TsFileTable::try_new_partitioned(state, &paths, options, parts).await?;
        Ok(Arc::new(table.with_definition(cmd.definition.clone()).with_write_options(write_options)))
    }
}

/// The table of a statement that declares its columns (see [`TsFileTableFactory`]): a view
/// casting the columns of the TsFile table the files hold (schema inferred from their
/// footers, partition columns included) to the declared types. Filters, pruning and
/// statistics work on the files' own types below the casts, and plans carry the view (its
/// TsFile table travels with it). A declared column no file holds is an error.
async fn declared_table(
    state: &dyn Session,
    cmd: &CreateExternalTable,
    options: TsFileReadOptions,
) -> Result<Arc<dyn TableProvider>> {
    let paths: Vec<&str> = cmd.locations.iter().map(String::as_str).collect();
    let parts = cmd.table_partition_cols.iter().map(|n| (n.clone(), partition_type())).collect();
    let files = Arc::new(TsFileTable::try_new_partitioned(state, &paths, options, parts).await?);
    let native = files.schema();
    let mut columns = Vec::with_capacity(cmd.schema.fields().len());
    for f in cmd.schema.fields() {
        let Ok(found) = native.field_with_name(f.name()) else {
            let have: Vec<&str> = native.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(DataFusionError::Plan(format!(
                "column '{}' is declared but no file of {} holds it (their columns: {})",
                f.name(),
                cmd.locations.join(", "),
                have.join(", ")
            )));
        };
        let column = Expr::Column(datafusion::common::Column::from_name(found.name()));
        let expr = if found.data_type() == f.data_type() { column } else { cast(column, f.data_type().clone()) };
        columns.push(expr.alias(f.name()));
    }
    let plan = LogicalPlanBuilder::scan(cmd.name.clone(), provider_as_source(files), None)?.project(columns)?.build()?;
    Ok(Arc::new(ViewTable::new(plan, cmd.definition.clone())))
}

/// The table of a statement with `layout = iotdb`: one location, the columns as the
/// directory's newest file declares them (declared columns and partition columns are refused:
/// the directory's own layout says what a file is).
fn iotdb_table(cmd: &CreateExternalTable, options: TsFileReadOptions) -> Result<Arc<dyn TableProvider>> {
    let [root] = cmd.locations.as_slice() else {
        return Err(DataFusionError::Plan(format!(
            "layout 'iotdb' reads one directory; {} locations given",
            cmd.locations.len()
        )));
    };
    if !cmd.schema.fields().is_empty() || !cmd.table_partition_cols.is_empty() {
        return Err(DataFusionError::Plan(
            "layout 'iotdb' takes its columns from the directory's files: declare no columns and no PARTITIONED BY".into(),
        ));
    }
    Ok(Arc::new(IotdbTable::try_new(root, options)?))
}

/// The type DataFusion gives partition columns it infers: dictionary-encoded strings.
fn partition_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::UInt16), Box::new(DataType::Utf8))
}

/// Register `paths` as table `name` (one call: format, listing, schema inference).
pub async fn register_tsfile(ctx: &SessionContext, name: &str, paths: &[&str], options: TsFileReadOptions) -> Result<()> {
    register_tsfile_format(ctx)?;
    let table = TsFileTable::try_new(&ctx.state(), paths, options).await?;
    ctx.register_table(name, Arc::new(table))?;
    Ok(())
}

/// Register every table found in the files under `path` as `schema_name.<table>` in the
/// default catalog; returns the table names. Tree-model path prefixes (e.g. `root.plant1`)
/// are tables too: quote them in SQL, `schema_name."root.plant1"`.
pub async fn register_tsfile_schema(
    ctx: &SessionContext,
    schema_name: &str,
    path: &str,
    options: TsFileReadOptions,
) -> Result<Vec<String>> {
    register_tsfile_format(ctx)?;
    let state = ctx.state();
    let url = parse_location(path)?;
    let store = state.runtime_env().object_store(&url)?;
    let format = TsFileFormat::new(options.clone());
    let files: Vec<_> = {
        use futures::TryStreamExt;
        url.list_all_files(&state, store.as_ref(), TSFILE_EXTENSION).await?.try_collect().await?
    };
    let mut names = BTreeSet::new();
    for f in &files {
        let (m, _) = format.cache().get(&store, f).await.map_err(df_err)?;
        names.extend(m.plan.sql_table_names());
    }
    let provider = Arc::new(MemorySchemaProvider::new());
    for n in &names {
        let t = TsFileTable::try_new(&state, &[path], options.clone().with_table(n.clone())).await?;
        provider.register_table(n.clone(), Arc::new(t))?;
    }
    let catalog_name = state.config_options().catalog.default_catalog.clone();
    let catalog = ctx.catalog(&catalog_name).ok_or_else(|| DataFusionError::Plan(format!("no catalog '{catalog_name}'")))?;
    catalog.register_schema(schema_name, provider)?;
    Ok(names.into_iter().collect())
}
