//! Crate errors as DataFusion errors, and files named in errors as the user wrote them.

use datafusion::common::DataFusionError;
use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::error::TsFileError;

/// Convert a crate error into a DataFusion error (keeping the message and the source).
pub(crate) fn df_err(e: TsFileError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A file as the user names it, from the URL of its object store (a scan's
/// `FileScanConfig::object_store_url`, a `ListingTableUrl`'s store): `/` + path on the local
/// file system (`/tmp/a.tsfile`, not the store path `tmp/a.tsfile`), otherwise the store URL
/// + path (`s3://bucket/key.tsfile`).
pub(crate) fn url_file_name(url: &ObjectStoreUrl, location: &Path) -> String {
    let base = url.as_str();
    if base.starts_with("file://") {
        format!("/{location}")
    } else {
        format!("{}/{location}", base.trim_end_matches('/'))
    }
}

/// A file as the user names it, when only its object store is known (schema inference,
/// statistics): the local file system and S3/GCS stores tell their root or bucket (`/` +
/// path, `s3://bucket/key`, `gs://bucket/key`); any other store gives the path alone.
pub(crate) fn file_name(store: &dyn ObjectStore, location: &Path) -> String {
    name_from_store_text(&store.to_string(), location)
}

/// [`file_name`] from the store's `Display` text. Wrappers show the store they wrap inside
/// their own text (datafusion-cli's instrumented stores: `Instrumented Object Store: …,
/// inner: AmazonS3(bucket)`), so the innermost known store is looked for anywhere in it.
fn name_from_store_text(shown: &str, location: &Path) -> String {
    let inner = |prefix: &str| {
        let start = shown.rfind(prefix)? + prefix.len();
        let len = shown[start..].find(')')?;
        Some(&shown[start..start + len])
    };
    if let Some(root) = inner("LocalFileSystem(") {
        // The root is a `file://` URL; its path is where store paths start.
        let dir = root.strip_prefix("file://").unwrap_or("/");
        return format!("{}/{location}", dir.trim_end_matches('/'));
    }
    if let Some(bucket) = inner("AmazonS3(") {
        return format!("s3://{bucket}/{location}");
    }
    if let Some(bucket) = inner("GoogleCloudStorage(") {
        return format!("gs://{bucket}/{location}");
    }
    location.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    use object_store::local::LocalFileSystem;
    use object_store::memory::InMemory;

    #[test]
    fn test_file_names_as_the_user_writes_them() {
        let p = Path::from("tmp/dir/cut.tsfile");
        assert_eq!(url_file_name(&ObjectStoreUrl::local_filesystem(), &p), "/tmp/dir/cut.tsfile");
        assert_eq!(url_file_name(&ObjectStoreUrl::parse("s3://bucket").unwrap(), &p), "s3://bucket/tmp/dir/cut.tsfile");
        assert_eq!(file_name(&LocalFileSystem::new(), &p), "/tmp/dir/cut.tsfile");
        let dir = std::env::temp_dir();
        let prefixed = LocalFileSystem::new_with_prefix(&dir).unwrap();
        let want = format!("{}/x.tsfile", dir.canonicalize().unwrap().to_str().unwrap().trim_end_matches('/'));
        assert_eq!(file_name(&prefixed, &Path::from("x.tsfile")), want);
        assert_eq!(file_name(&InMemory::new(), &p), "tmp/dir/cut.tsfile");
        let wrapped = "Instrumented Object Store: instrument_mode: Disabled, inner: AmazonS3(iot)";
        assert_eq!(name_from_store_text("AmazonS3(iot)", &p), "s3://iot/tmp/dir/cut.tsfile");
        assert_eq!(name_from_store_text(wrapped, &p), "s3://iot/tmp/dir/cut.tsfile");
        assert_eq!(name_from_store_text("x, inner: GoogleCloudStorage(b)", &p), "gs://b/tmp/dir/cut.tsfile");
        assert_eq!(name_from_store_text("x, inner: LocalFileSystem(file:///)", &p), "/tmp/dir/cut.tsfile");
        assert_eq!(name_from_store_text("HttpStore", &p), "tmp/dir/cut.tsfile");
    }
}
