//! URL tables (`SELECT … FROM 'dir/*.tsfile'`) that are [`TsFileTable`]s.
//!
//! DataFusion's URL tables are generic listing tables, which serialized plans (Ballista,
//! the `proto` feature) cannot carry for a format DataFusion does not know. With
//! [`enable_tsfile_url_tables`] a URL that DataFusion would read as TsFiles becomes a
//! `TsFileTable` over the same location instead; every other URL stays DataFusion's.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{DynamicFileCatalog, TableProvider, UrlTableFactory};
use datafusion::common::{plan_datafusion_err, DataFusionError, Result};
use datafusion::datasource::dynamic_file::DynamicListTableFactory;
use datafusion::datasource::listing::ListingTable;
use datafusion::execution::SessionState;
use datafusion::prelude::SessionContext;
use datafusion_session::SessionStore;

use crate::datafusion::format::TsFileFormat;
use crate::datafusion::table::TsFileTable;

/// Makes URL tables: DataFusion's, except that TsFile locations give a [`TsFileTable`].
#[derive(Debug)]
pub struct TsFileUrlTableFactory {
    inner: DynamicListTableFactory,
}

impl TsFileUrlTableFactory {
    /// A factory reading the session in `store` (set once the session exists).
    pub fn new(store: SessionStore) -> Self {
        TsFileUrlTableFactory { inner: DynamicListTableFactory::new(store) }
    }

    /// The session the factory plans with.
    pub fn session_store(&self) -> &SessionStore {
        self.inner.session_store()
    }
}

#[async_trait]
impl UrlTableFactory for TsFileUrlTableFactory {
    async fn try_new(&self, url: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let Some(table) = self.inner.try_new(url).await? else {
            // DataFusion's factory passes over a URL whose store it cannot get, and the query
            // would fail with "table not found": a TsFile URL of a scheme without a store says so.
            return match unsupported_tsfile_url(url) {
                Some(e) => Err(DataFusionError::External(Box::new(e))),
                None => Ok(None),
            };
        };
        let Some(listing) = table.downcast_ref::<ListingTable>() else { return Ok(Some(table)) };
        let Some(format) = listing.options().format.downcast_ref::<TsFileFormat>() else { return Ok(Some(table)) };
        let state = self
            .session_store()
            .get_session()
            .upgrade()
            .and_then(|s| s.read().as_any().downcast_ref::<SessionState>().cloned())
            .ok_or_else(|| plan_datafusion_err!("URL table '{url}': the session is gone"))?;
        let partitions = listing.options().table_partition_cols.clone();
        let tsfile = TsFileTable::try_new_partitioned(&state, &[url], format.options().clone(), partitions).await?;
        Ok(Some(Arc::new(tsfile)))
    }
}

/// The error for `url` when it names TsFiles (`.tsfile`) under a URL scheme no object store
/// is built for (`az://`, `ftp://`).
fn unsupported_tsfile_url(url: &str) -> Option<crate::TsFileError> {
    let parsed = url::Url::parse(url).ok()?;
    let scheme = parsed.scheme();
    let known = scheme == "file" || crate::stores::SUPPORTED_SCHEMES.contains(&scheme);
    // A one-letter scheme is a Windows drive (`C:\data\x.tsfile`), not a URL.
    let tsfile = parsed.path().to_ascii_lowercase().ends_with(".tsfile");
    (!known && scheme.len() > 1 && tsfile).then(|| crate::stores::unsupported_scheme(scheme))
}

/// `ctx` with URL tables enabled (as `SessionContext::enable_url_table`), TsFile locations
/// read as [`TsFileTable`]s. Register the TsFile format first
/// ([`register_tsfile_format`](crate::datafusion::register_tsfile_format)).
pub fn enable_tsfile_url_tables(ctx: SessionContext) -> SessionContext {
    let catalogs = Arc::clone(ctx.state_ref().read().catalog_list());
    let factory = Arc::new(TsFileUrlTableFactory::new(SessionStore::new()));
    let catalog_list = Arc::new(DynamicFileCatalog::new(catalogs, Arc::clone(&factory) as Arc<dyn UrlTableFactory>));
    let session_id = ctx.session_id();
    let ctx: SessionContext = ctx.into_state_builder().with_session_id(session_id).with_catalog_list(catalog_list).build().into();
    factory.session_store().with_state(ctx.state_weak_ref());
    ctx
}
