//! Object stores for URLs as users write them: `s3://bucket/key`, `gs://bucket/key`,
//! `http(s)://host/path`, configured by [`StorageOptions`] — the `object_store`
//! configuration keys that polars and delta-rs users already write (`aws_access_key_id`,
//! `aws_secret_access_key`, `aws_region`, `aws_endpoint`, `aws_allow_http`,
//! `google_service_account`, `allow_http`, `timeout`, …), with the environment (`AWS_*`,
//! `GOOGLE_*`) as the fallback for what the options leave out.
//!
//! One builder for the whole project: the Python package, the CLI's `tsfile_metadata`,
//! `inspect`, `export` and `convert`, and [`crate::datafusion`] sessions through
//! `ensure_store`. Option values never appear in errors or `Debug` output (they hold
//! credentials); only keys do.

use std::collections::BTreeMap;
use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::{ClientConfigKey, ClientOptions, ObjectStore};
use url::Url;

use crate::error::{Result, TsFileError};

/// The URL schemes [`store_for_url`] builds stores for.
pub const SUPPORTED_SCHEMES: &[&str] = &["s3", "s3a", "gs", "gcs", "http", "https"];

/// Settings of an object store by `object_store` configuration key (see the module doc).
/// `Debug` shows the keys only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StorageOptions {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.values.keys()).finish()
    }
}

impl StorageOptions {
    /// Options from `(key, value)` pairs; keys are matched case-insensitively.
    pub fn from_pairs<K: AsRef<str>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let values = pairs.into_iter().map(|(k, v)| (k.as_ref().trim().to_ascii_lowercase(), v.into())).collect();
        StorageOptions { values }
    }

    /// Set `key` to `value`.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.values.insert(key.trim().to_ascii_lowercase(), value.into());
    }

    /// Whether no option is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `message` with every option value that could be a credential replaced by `***`:
    /// values of keys naming a secret, and every other value of two characters or more.
    pub fn scrub(&self, message: &str) -> String {
        let mut out = message.to_string();
        let mut values: Vec<&str> = self
            .values
            .iter()
            .filter(|(k, v)| !v.is_empty() && (v.len() >= 2 || SECRET_WORDS.iter().any(|w| k.contains(w))))
            .map(|(_, v)| v.as_str())
            .collect();
        // Longer values first, so a value containing another is replaced whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        for v in values {
            out = out.replace(v, "***");
        }
        out
    }

    /// The keys set, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }
}

/// Parts of key names whose values are credentials.
const SECRET_WORDS: &[&str] = &["secret", "key", "token", "password", "credential", "service_account"];

/// Whether `key` configures some store other than the one being built: such keys are
/// skipped (one options map may serve URLs of several schemes), unknown ones are errors.
fn other_store_key(key: &str) -> bool {
    key.parse::<AmazonS3ConfigKey>().is_ok() || key.parse::<GoogleConfigKey>().is_ok() || key.parse::<ClientConfigKey>().is_ok()
}

fn unknown(key: &str, store: &str) -> TsFileError {
    TsFileError::InvalidArgument(format!(
        "unknown storage option '{key}' for {store} (object_store configuration keys, e.g. aws_access_key_id, \
         aws_region, aws_endpoint, google_service_account, allow_http)"
    ))
}

fn build_error(url: &Url, options: &StorageOptions, e: object_store::Error) -> TsFileError {
    // object_store's builder errors may quote a value ("failed to parse \"…\" as boolean").
    TsFileError::InvalidArgument(options.scrub(&format!("object store for {}: {e}", redacted(url))))
}

/// `url` without user info or query (which may hold credentials), for messages.
pub fn redacted(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_password(None);
    let _ = shown.set_username("");
    shown.set_query(None);
    shown.to_string()
}

/// The object store serving `url`'s bucket or origin (scheme, host and port), built from
/// `options` over the environment. A scheme not in [`SUPPORTED_SCHEMES`] is
/// [`TsFileError::Unsupported`], naming it.
pub fn store_for_url(url: &Url, options: &StorageOptions) -> Result<Arc<dyn ObjectStore>> {
    match url.scheme() {
        "s3" | "s3a" => {
            let mut b = AmazonS3Builder::from_env().with_url(url.as_str());
            for (k, v) in &options.values {
                match k.parse::<AmazonS3ConfigKey>() {
                    Ok(key) => b = b.with_config(key, v),
                    Err(_) if other_store_key(k) => {}
                    Err(_) => return Err(unknown(k, "S3")),
                }
            }
            Ok(Arc::new(b.build().map_err(|e| build_error(url, options, e))?))
        }
        "gs" | "gcs" => {
            let mut b = GoogleCloudStorageBuilder::from_env().with_url(url.as_str());
            for (k, v) in &options.values {
                match k.parse::<GoogleConfigKey>() {
                    Ok(key) => b = b.with_config(key, v),
                    Err(_) if other_store_key(k) => {}
                    Err(_) => return Err(unknown(k, "GCS")),
                }
            }
            Ok(Arc::new(b.build().map_err(|e| build_error(url, options, e))?))
        }
        "http" | "https" => {
            // Plain HTTP is what an `http://` URL asks for.
            let mut client = ClientOptions::new().with_allow_http(true);
            for (k, v) in &options.values {
                let key = k.strip_prefix("aws_").filter(|_| k == "aws_allow_http").unwrap_or(k);
                match key.parse::<ClientConfigKey>() {
                    Ok(key) => client = client.with_config(key, v),
                    Err(_) if other_store_key(k) => {}
                    Err(_) => return Err(unknown(k, "HTTP")),
                }
            }
            let store = HttpBuilder::new()
                .with_client_options(client)
                .with_url(url.origin().ascii_serialization())
                .build()
                .map_err(|e| build_error(url, options, e))?;
            Ok(Arc::new(store))
        }
        other => Err(unsupported_scheme(other)),
    }
}

/// The error for a URL scheme no store is built for.
pub fn unsupported_scheme(scheme: &str) -> TsFileError {
    TsFileError::Unsupported {
        what: format!("URL scheme '{scheme}://' (object stores: s3://, gs://, http://, https://; or a local path)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_options_debug_shows_keys_never_values() {
        let o = StorageOptions::from_pairs([("AWS_Secret_Access_Key", "SECRET-123"), ("aws_region", "eu-west-1")]);
        let shown = format!("{o:?}");
        assert_eq!(shown, r#"{"aws_region", "aws_secret_access_key"}"#);
        assert!(!shown.contains("SECRET"));
        assert_eq!(o.keys().collect::<Vec<_>>(), ["aws_region", "aws_secret_access_key"]);
    }

    #[test]
    fn test_stores_by_scheme_and_errors_without_values() {
        let secret = "SECRET-VALUE-42";
        let opts = StorageOptions::from_pairs([
            ("aws_access_key_id", "AKID"),
            ("aws_secret_access_key", secret),
            ("aws_region", "us-east-1"),
            ("aws_endpoint", "http://127.0.0.1:9"),
            ("aws_allow_http", "true"),
        ]);
        let s3 = store_for_url(&Url::parse("s3://bucket/dir/a.tsfile").unwrap(), &opts).unwrap();
        assert!(s3.to_string().contains("bucket"), "{s3}");
        assert!(!s3.to_string().contains(secret));
        // One options map serves several schemes: AWS keys are skipped for HTTP.
        assert!(store_for_url(&Url::parse("http://127.0.0.1:9/x/a.tsfile").unwrap(), &opts).is_ok());
        // An unknown key is an error naming the key, not the value.
        let bad = StorageOptions::from_pairs([("aws_secret_acess_key", secret)]);
        let e = store_for_url(&Url::parse("s3://bucket/a").unwrap(), &bad).unwrap_err().to_string();
        assert!(e.contains("aws_secret_acess_key") && !e.contains(secret), "{e}");
        // A bad value of a known key: the builder's error, no value either.
        let bad = StorageOptions::from_pairs([("aws_allow_http", secret)]);
        let e = store_for_url(&Url::parse("s3://bucket/a").unwrap(), &bad).map(|_| ()).unwrap_err().to_string();
        assert!(!e.contains(secret), "{e}");
        // Schemes without a store.
        for (url, scheme) in [("az://c/a.tsfile", "az"), ("ftp://h/a.tsfile", "ftp"), ("memory:///a", "memory")] {
            let e = store_for_url(&Url::parse(url).unwrap(), &StorageOptions::default()).map(|_| ()).unwrap_err();
            assert!(matches!(e, TsFileError::Unsupported { .. }), "{e}");
            assert!(e.to_string().contains(&format!("'{scheme}://'")), "{e}");
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn test_redacted_urls_drop_user_info_and_query() {
        let u = Url::parse("https://user:pw@host:8080/a.tsfile?X-Amz-Signature=abc").unwrap();
        assert_eq!(redacted(&u), "https://host:8080/a.tsfile");
    }
}
