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

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider, Session, TableProvider};
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::datasource::provider::DefaultTableFactory;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

use crate::datafusion::format::{df_err, TsFileFormat, TsFileFormatFactory, TSFILE_EXTENSION};
use crate::datafusion::options::TsFileReadOptions;
use crate::datafusion::table_options::TsFileTableOptions;

/// Register the TsFile format: `STORED AS TSFILE` DDL, `.tsfile` URL tables and the
/// `tsfile.` table-option namespace.
pub fn register_tsfile_format(ctx: &SessionContext) -> Result<()> {
    let state = ctx.state_ref();
    let mut state = state.write();
    state.register_file_format(Arc::new(TsFileFormatFactory::new()), true)?;
    state.table_factories_mut().insert("TSFILE".to_string(), Arc::new(DefaultTableFactory::new()));
    drop(state);
    ctx.register_table_options_extension(TsFileTableOptions::default());
    Ok(())
}

/// A TsFile table over one or more paths (files, directories or globs).
#[derive(Debug)]
pub struct TsFileTable {
    inner: ListingTable,
    options: TsFileReadOptions,
}

impl TsFileTable {
    /// Build the table, reading the files' footers to infer the schema.
    pub async fn try_new(state: &dyn Session, paths: &[&str], options: TsFileReadOptions) -> Result<TsFileTable> {
        if paths.is_empty() {
            return Err(DataFusionError::Plan("a TsFile table needs at least one path".into()));
        }
        let urls = paths.iter().map(ListingTableUrl::parse).collect::<Result<Vec<_>>>()?;
        let format = Arc::new(TsFileFormat::new(options.clone()));
        let listing = ListingOptions::new(format).with_file_extension(format!(".{TSFILE_EXTENSION}"));
        let config = ListingTableConfig::new_with_multi_paths(urls).with_listing_options(listing).infer_schema(state).await?;
        Ok(TsFileTable { inner: ListingTable::try_new(config)?, options })
    }

    /// The options.
    pub fn options(&self) -> &TsFileReadOptions {
        &self.options
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

    async fn scan(&self, state: &dyn Session, projection: Option<&Vec<usize>>, filters: &[Expr], limit: Option<usize>) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.scan(state, projection, filters, limit).await
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }
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
pub async fn register_tsfile_schema(ctx: &SessionContext, schema_name: &str, path: &str, options: TsFileReadOptions) -> Result<Vec<String>> {
    register_tsfile_format(ctx)?;
    let state = ctx.state();
    let url = ListingTableUrl::parse(path)?;
    let store = state.runtime_env().object_store(&url)?;
    let format = TsFileFormat::new(options.clone());
    let files: Vec<_> = {
        use futures::TryStreamExt;
        url.list_all_files(&state, store.as_ref(), TSFILE_EXTENSION).await?.try_collect().await?
    };
    let mut names = BTreeSet::new();
    for f in &files {
        let (m, _) = format.cache().get(&store, f).await.map_err(df_err)?;
        names.extend(m.sql_table_names());
    }
    let provider = Arc::new(MemorySchemaProvider::new());
    for n in &names {
        let t = TsFileTable::try_new(&state, &[path], options.clone().with_table(n.clone())).await?;
        provider.register_table(n.clone(), Arc::new(t))?;
    }
    let catalog_name = state.config_options().catalog.default_catalog.clone();
    let catalog = ctx
        .catalog(&catalog_name)
        .ok_or_else(|| DataFusionError::Plan(format!("no catalog '{catalog_name}'")))?;
    catalog.register_schema(schema_name, provider)?;
    Ok(names.into_iter().collect())
}
