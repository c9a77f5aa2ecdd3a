//! Object stores for locations the session has none for yet, built as datafusion-cli builds
//! them for URL tables (`SELECT … FROM 's3://…'`): S3 (and OSS/COS) and GCS from the
//! session's `aws.*` / `gcp.*` table options and the environment (`AWS_*`, `GOOGLE_*`),
//! HTTP(S) from the URL's origin. Used by `tsfile_metadata('s3://…')`, `tsfile inspect` and
//! `tsfile export`, so every location a table reads from works there too.

/// The largest remote file `tsfile inspect` reads (whole, into memory).
pub const MAX_INSPECT_BYTES: u64 = 2 << 30;

use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use datafusion_cli::object_storage::{
    get_cos_object_store_builder, get_gcs_object_store_builder, get_oss_object_store_builder, get_s3_object_store_builder,
    AwsOptions, GcpOptions,
};
use datafusion_tsfile::datafusion::{parse_location, TsFileMetadataFunc};
use datafusion_tsfile::format::ByteSource;
use object_store::http::HttpBuilder;
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt};

/// The store of `location` (a path, directory, glob or URL): the session's if it has one,
/// else one built for the URL's scheme and registered in the session's runtime.
pub async fn ensure_store(state: &dyn Session, location: &str) -> Result<(ListingTableUrl, Arc<dyn ObjectStore>)> {
    let url = parse_location(location)?;
    let runtime = state.runtime_env();
    if let Ok(store) = runtime.object_store(&url) {
        return Ok((url, store));
    }
    let table_options = state.default_table_options();
    let aws = table_options.extensions.get::<AwsOptions>().map_or_else(|| Cow::Owned(AwsOptions::default()), Cow::Borrowed);
    let gcp = table_options.extensions.get::<GcpOptions>().map_or_else(|| Cow::Owned(GcpOptions::default()), Cow::Borrowed);
    let base = url.as_ref();
    let store: Arc<dyn ObjectStore> = match url.scheme() {
        "s3" => Arc::new(get_s3_object_store_builder(base, &aws, false).await?.build()?),
        "oss" => Arc::new(get_oss_object_store_builder(base, &aws)?.build()?),
        "cos" => Arc::new(get_cos_object_store_builder(base, &aws)?.build()?),
        "gs" | "gcs" => Arc::new(get_gcs_object_store_builder(base, &gcp)?.build()?),
        "http" | "https" => Arc::new(
            HttpBuilder::new()
                .with_client_options(ClientOptions::new().with_allow_http(true))
                .with_url(base.origin().ascii_serialization())
                .build()?,
        ),
        other => return plan_err!("no object store for '{location}' (scheme '{other}')"),
    };
    runtime.register_object_store(base, store.clone());
    Ok((url, store))
}

/// `tsfile_metadata(location)` that also reads from object stores the session has not
/// registered yet (see [`ensure_store`]).
#[derive(Debug, Default)]
pub struct StoreAwareMetadataFunc;

impl TableFunctionImpl for StoreAwareMetadataFunc {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let inner = TsFileMetadataFunc.call_with_args(TableFunctionArgs::new(args.exprs(), args.session()))?;
        let location = match args.exprs() {
            [Expr::Literal(ScalarValue::Utf8(Some(p)) | ScalarValue::LargeUtf8(Some(p)) | ScalarValue::Utf8View(Some(p)), _)] => {
                p.clone()
            }
            _ => return plan_err!("tsfile_metadata takes one string argument"),
        };
        Ok(Arc::new(StoreAwareTable { inner, location }))
    }
}

/// A table that makes sure its location's store exists before the inner table scans.
#[derive(Debug)]
struct StoreAwareTable {
    inner: Arc<dyn TableProvider>,
    location: String,
}

#[async_trait]
impl TableProvider for StoreAwareTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        ensure_store(state, &self.location).await?;
        self.inner.scan(state, projection, filters, limit).await
    }
}

/// Whether `location` is a URL of an object store (not a local path or `file://` URL).
pub fn is_url(location: &str) -> bool {
    location.split_once("://").is_some_and(|(scheme, _)| scheme != "file" && !scheme.contains('/'))
}

/// The whole object at URL `location` (at most `limit` bytes), with a session's default
/// store settings (the environment's credentials).
pub async fn fetch_whole(location: &str, limit: u64) -> std::result::Result<impl ByteSource + 'static, String> {
    let fail = |e: &dyn std::fmt::Display| format!("{location}: {e}");
    let ctx = SessionContext::new();
    let (url, store) = ensure_store(&ctx.state(), location).await.map_err(|e| fail(&e))?;
    let path = url.prefix();
    let meta = store.head(path).await.map_err(|e| fail(&e))?;
    if meta.size > limit {
        return Err(fail(&format!("{} bytes: a remote file is read whole, up to {limit} bytes; copy it locally", meta.size)));
    }
    let bytes = store.get(path).await.map_err(|e| fail(&e))?.bytes().await.map_err(|e| fail(&e))?;
    if bytes.len() as u64 != meta.size {
        return Err(fail(&format!("read {} bytes of {} (the object changed while it was read)", bytes.len(), meta.size)));
    }
    Ok(bytes)
}
