//! Object stores of a session built on first use from [`StorageOptions`]:
//! [`TsFileStoreRegistry`] is an `ObjectStoreRegistry` that, asked for a store it does not
//! hold (`s3://bucket`, `gs://bucket`, `http://host:port`), builds it with
//! [`crate::stores::store_for_url`] and keeps it. Every path of a session — URL tables,
//! `CREATE EXTERNAL TABLE`, `tsfile_metadata('s3://…')`, listing — then reads remote files
//! without registering stores first. [`ensure_store`] does the same for one location in a
//! session whose registry is someone else's.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::execution::runtime_env::RuntimeEnv;
use object_store::ObjectStore;
use url::Url;

use crate::datafusion::location::parse_location;
use crate::stores::{store_for_url, StorageOptions};

/// An object-store registry that builds missing stores from its options (module doc).
/// `Debug` shows the registered URLs (scheme and authority) and the option keys, no value.
#[derive(Debug)]
pub struct TsFileStoreRegistry {
    inner: DefaultObjectStoreRegistry,
    options: StorageOptions,
}

impl TsFileStoreRegistry {
    /// A registry with the local file system, building other stores from `options`.
    pub fn new(options: StorageOptions) -> Self {
        TsFileStoreRegistry { inner: DefaultObjectStoreRegistry::new(), options }
    }
}

fn external(e: crate::TsFileError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

impl ObjectStoreRegistry for TsFileStoreRegistry {
    fn register_store(&self, url: &Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        self.inner.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.inner.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.inner.get_store(url) {
            return Ok(store);
        }
        let store = store_for_url(url, &self.options).map_err(external)?;
        self.inner.register_store(url, Arc::clone(&store));
        Ok(store)
    }
}

/// The store of `location` (a path, directory, glob or URL) in `runtime`: the one it has,
/// else one built from `options` (and the environment) and registered. A URL scheme
/// without a store is [`crate::TsFileError::Unsupported`], naming it.
pub fn ensure_store(
    runtime: &RuntimeEnv,
    location: &str,
    options: &StorageOptions,
) -> Result<(ListingTableUrl, Arc<dyn ObjectStore>)> {
    let url = parse_location(location)?;
    if let Ok(store) = runtime.object_store(&url) {
        return Ok((url, store));
    }
    let base = url.object_store();
    let base: &Url = base.as_ref();
    let store = store_for_url(base, options).map_err(external)?;
    runtime.register_object_store(base, Arc::clone(&store));
    Ok((url, store))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_missing_stores_are_built_once_and_unknown_schemes_named() {
        let opts = StorageOptions::from_pairs([
            ("aws_region", "us-east-1"),
            ("aws_access_key_id", "AKID"),
            ("aws_secret_access_key", "HIDDEN-1"),
        ]);
        let registry = TsFileStoreRegistry::new(opts.clone());
        let url = Url::parse("s3://bucket").unwrap();
        let a = registry.get_store(&url).unwrap();
        let b = registry.get_store(&url).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(registry.get_store(&Url::parse("file:///").unwrap()).is_ok());
        assert!(!format!("{registry:?}").contains("HIDDEN"));
        let e = registry.get_store(&Url::parse("az://container").unwrap()).unwrap_err().to_string();
        assert!(e.contains("'az://'") && !e.contains("No suitable object store"), "{e}");

        let runtime = RuntimeEnv::default();
        let (url, _) = ensure_store(&runtime, "s3://bucket/dir/*.tsfile", &opts).unwrap();
        assert_eq!(url.prefix().as_ref(), "dir");
        assert!(runtime.object_store(&url).is_ok());
        assert!(ensure_store(&runtime, "data/sample.tsfile", &opts).is_ok());
        let e = ensure_store(&runtime, "ftp://host/a.tsfile", &opts).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("'ftp://'"), "{e}");
    }
}
