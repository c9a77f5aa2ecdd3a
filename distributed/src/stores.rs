//! Object stores on a cluster: *where* the data is travels with the session, *who reads it*
//! stays with each process.
//!
//! A client sets the S3 endpoint, region and addressing of a session ([`S3Settings`], keys
//! `s3.*`, e.g. `SET s3.endpoint = 'http://minio:9000'`); Ballista ships session settings
//! with every job, so the scheduler (which plans byte ranges from footers) and the executors
//! (which read the pages) build the same stores for any `s3://bucket/…` location they meet.
//! Credentials never travel: each process signs its requests with its own
//! ([`StoreCredentials`]: given explicitly, or the `AWS_*` environment, the web identity or
//! the instance profile of the machine), as each executor holds its own keys for encrypted
//! files. Setting `s3.access_key_id` and the like in a session is refused with a message
//! saying so.
//!
//! `http(s)://` locations need no settings: the store of a URL's origin is made on first use.
//! Stores registered in a process by hand (`RuntimeEnv::register_object_store`) win.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::{plan_datafusion_err, DataFusionError, Result};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::prelude::SessionConfig;
use object_store::aws::AmazonS3Builder;
use object_store::http::HttpBuilder;
use object_store::{ClientOptions, ObjectStore};
use url::Url;

/// Where S3 objects are: the session settings `s3.endpoint`, `s3.region`, `s3.allow_http`
/// and `s3.virtual_hosted_style_request`. Unset settings fall back to each process's
/// environment (`AWS_ENDPOINT`, `AWS_REGION`, …), then to AWS's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct S3Settings {
    /// Endpoint URL of an S3-compatible service (`http://127.0.0.1:9000`).
    pub endpoint: Option<String>,
    /// Region (`us-east-1`).
    pub region: Option<String>,
    /// Allow plain `http://` endpoints.
    pub allow_http: Option<bool>,
    /// Address buckets as `bucket.endpoint` instead of `endpoint/bucket`.
    pub virtual_hosted_style_request: Option<bool>,
}

const ENDPOINT: &str = "endpoint";
const REGION: &str = "region";
const ALLOW_HTTP: &str = "allow_http";
const VIRTUAL_HOSTED: &str = "virtual_hosted_style_request";
const SECRETS: [&str; 4] = ["access_key_id", "secret_access_key", "session_token", "token"];

impl ConfigExtension for S3Settings {
    const PREFIX: &'static str = "s3";
}

impl ExtensionOptions for S3Settings {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let text = || (!value.is_empty()).then(|| value.to_string());
        match key {
            ENDPOINT => self.endpoint = text(),
            REGION => self.region = text(),
            ALLOW_HTTP => self.allow_http = parse_flag(key, value)?,
            VIRTUAL_HOSTED => self.virtual_hosted_style_request = parse_flag(key, value)?,
            k if SECRETS.contains(&k) => {
                return Err(DataFusionError::Configuration(format!(
                    "s3.{k}: credentials are not session settings (they would travel to the scheduler and \
                     every executor with each job); give each process its own: AWS_ACCESS_KEY_ID / \
                     AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN in its environment, or its instance role"
                )))
            }
            other => {
                return Err(DataFusionError::Configuration(format!(
                    "unknown setting 's3.{other}' (known: s3.{ENDPOINT}, s3.{REGION}, s3.{ALLOW_HTTP}, s3.{VIRTUAL_HOSTED})"
                )))
            }
        }
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        let entry = |key: &str, value: Option<String>, description| ConfigEntry { key: format!("s3.{key}"), value, description };
        vec![
            entry(
                ENDPOINT,
                self.endpoint.clone(),
                "Endpoint of an S3-compatible service (unset: the process's AWS_ENDPOINT, else AWS)",
            ),
            entry(REGION, self.region.clone(), "S3 region (unset: the process's AWS_REGION)"),
            entry(ALLOW_HTTP, self.allow_http.map(|b| b.to_string()), "Allow plain http:// S3 endpoints"),
            entry(
                VIRTUAL_HOSTED,
                self.virtual_hosted_style_request.map(|b| b.to_string()),
                "Address buckets as bucket.endpoint rather than endpoint/bucket",
            ),
        ]
    }
}

fn parse_flag(key: &str, value: &str) -> Result<Option<bool>> {
    match value.to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "true" => Ok(Some(true)),
        "false" => Ok(Some(false)),
        _ => Err(DataFusionError::Configuration(format!("s3.{key}: expected true or false, got '{value}'"))),
    }
}

impl S3Settings {
    /// The settings of `config` (defaults when it has none).
    pub fn of(config: &SessionConfig) -> S3Settings {
        config.options().extensions.get::<S3Settings>().cloned().unwrap_or_default()
    }
}

/// The credentials one process signs S3 requests with. Never shipped, never printed.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub enum StoreCredentials {
    /// The process's environment: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
    /// `AWS_SESSION_TOKEN`, a web identity token, or the instance profile.
    #[default]
    Environment,
    /// Static keys.
    Static {
        /// Access key id.
        access_key_id: String,
        /// Secret access key.
        secret_access_key: String,
        /// Session token of temporary credentials.
        session_token: Option<String>,
    },
}

impl fmt::Debug for StoreCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreCredentials::Environment => f.write_str("Environment"),
            StoreCredentials::Static { .. } => f.write_str("Static(<redacted>)"),
        }
    }
}

/// The object stores of one process: its credentials and the stores it has built, shared by
/// every session and task of the process (one HTTP connection pool per bucket and settings).
#[derive(Debug, Default)]
pub struct ClusterStores {
    credentials: StoreCredentials,
    built: Mutex<HashMap<(S3Settings, String), Arc<dyn ObjectStore>>>,
}

impl ClusterStores {
    /// Stores that sign S3 requests with `credentials`.
    pub fn new(credentials: StoreCredentials) -> Arc<ClusterStores> {
        Arc::new(ClusterStores { credentials, built: Mutex::new(HashMap::new()) })
    }

    /// A runtime for a session with `config`: its registry makes S3 and HTTP stores on first
    /// use from the session's [`S3Settings`] and this process's credentials.
    pub fn runtime(self: &Arc<Self>, config: &SessionConfig) -> Result<Arc<RuntimeEnv>> {
        let registry =
            SessionStores { settings: S3Settings::of(config), stores: self.clone(), own: DefaultObjectStoreRegistry::new() };
        RuntimeEnvBuilder::new().with_object_store_registry(Arc::new(registry)).build_arc()
    }

    fn s3(&self, settings: &S3Settings, bucket: &str) -> Result<Arc<dyn ObjectStore>> {
        let key = (settings.clone(), bucket.to_string());
        let mut built = self.built.lock().map_err(|_| DataFusionError::Internal("object store cache poisoned".into()))?;
        if let Some(store) = built.get(&key) {
            return Ok(store.clone());
        }
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        if let StoreCredentials::Static { access_key_id, secret_access_key, session_token } = &self.credentials {
            builder = builder.with_access_key_id(access_key_id).with_secret_access_key(secret_access_key);
            if let Some(token) = session_token {
                builder = builder.with_token(token);
            }
        }
        if let Some(endpoint) = &settings.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        if let Some(region) = &settings.region {
            builder = builder.with_region(region);
        }
        if let Some(allow) = settings.allow_http {
            builder = builder.with_allow_http(allow);
        }
        if let Some(virtual_hosted) = settings.virtual_hosted_style_request {
            builder = builder.with_virtual_hosted_style_request(virtual_hosted);
        }
        let store: Arc<dyn ObjectStore> =
            Arc::new(builder.build().map_err(|e| plan_datafusion_err!("S3 store for bucket '{bucket}': {e}"))?);
        built.insert(key, store.clone());
        Ok(store)
    }
}

/// The registry of one session's runtime: stores registered by hand first, then stores made
/// on demand by the process's [`ClusterStores`].
#[derive(Debug)]
struct SessionStores {
    settings: S3Settings,
    stores: Arc<ClusterStores>,
    own: DefaultObjectStoreRegistry,
}

impl ObjectStoreRegistry for SessionStores {
    fn register_store(&self, url: &Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        self.own.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.own.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.own.get_store(url) {
            return Ok(store);
        }
        let store: Arc<dyn ObjectStore> = match url.scheme() {
            "s3" => {
                let bucket =
                    url.host_str().filter(|b| !b.is_empty()).ok_or_else(|| plan_datafusion_err!("no bucket in '{url}'"))?;
                self.stores.s3(&self.settings, bucket)?
            }
            "http" | "https" => Arc::new(
                HttpBuilder::new()
                    .with_client_options(ClientOptions::new().with_allow_http(true))
                    .with_url(url.origin().ascii_serialization())
                    .build()
                    .map_err(|e| plan_datafusion_err!("HTTP store for '{url}': {e}"))?,
            ),
            _ => return self.own.get_store(url),
        };
        self.own.register_store(url, store.clone());
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config() -> SessionConfig {
        SessionConfig::new().with_option_extension(S3Settings::default())
    }

    #[test]
    fn test_settings_are_set_with_full_keys_and_listed_with_them() {
        let mut c = config();
        c.options_mut().set("s3.endpoint", "http://127.0.0.1:9000").unwrap();
        c.options_mut().set("s3.allow_http", "TRUE").unwrap();
        c.options_mut().set("s3.region", "eu-west-1").unwrap();
        let s = S3Settings::of(&c);
        assert_eq!(s.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(s.allow_http, Some(true));
        assert_eq!(s.region.as_deref(), Some("eu-west-1"));
        assert_eq!(s.virtual_hosted_style_request, None);
        // What Ballista ships: full keys, which set them again on the other side.
        let shipped: Vec<_> = c.options().entries().into_iter().filter(|e| e.key.starts_with("s3.")).collect();
        let mut other = config();
        for e in &shipped {
            if let Some(v) = &e.value {
                other.options_mut().set(&e.key, v).unwrap();
            }
        }
        assert_eq!(S3Settings::of(&other), s);
        assert_eq!(shipped.len(), 4);
    }

    #[test]
    fn test_credentials_and_unknown_keys_are_refused_with_the_reason() {
        let mut c = config();
        for key in ["access_key_id", "secret_access_key", "session_token"] {
            let e = c.options_mut().set(&format!("s3.{key}"), "AKIAEXAMPLE").unwrap_err().to_string();
            assert!(e.contains("credentials are not session settings"), "{e}");
            assert!(!e.contains("AKIAEXAMPLE"), "{e}");
        }
        let e = c.options_mut().set("s3.endpiont", "x").unwrap_err().to_string();
        assert!(e.contains("unknown setting 's3.endpiont'") && e.contains("s3.endpoint"), "{e}");
        let e = c.options_mut().set("s3.allow_http", "yes").unwrap_err().to_string();
        assert!(e.contains("expected true or false"), "{e}");
        assert_eq!(S3Settings::of(&c), S3Settings::default());
    }

    #[test]
    fn test_static_credentials_are_not_printed() {
        let c = StoreCredentials::Static {
            access_key_id: "AKIAEXAMPLE".into(),
            secret_access_key: "very-secret".into(),
            session_token: Some("tok".into()),
        };
        let stores = ClusterStores::new(c.clone());
        let printed = format!("{c:?} {stores:?}");
        assert!(!printed.contains("AKIA") && !printed.contains("very-secret") && !printed.contains("tok\""), "{printed}");
    }

    #[test]
    fn test_registry_builds_each_bucket_once_and_keeps_stores_registered_by_hand() {
        let stores = ClusterStores::new(StoreCredentials::Static {
            access_key_id: "a".into(),
            secret_access_key: "b".into(),
            session_token: None,
        });
        let mut c = config();
        c.options_mut().set("s3.endpoint", "http://127.0.0.1:1").unwrap();
        c.options_mut().set("s3.allow_http", "true").unwrap();
        let rt1 = stores.runtime(&c).unwrap();
        let rt2 = stores.runtime(&c).unwrap();
        let a = Url::parse("s3://bucket-a/x/y.tsfile").unwrap();
        let s1 = rt1.object_store_registry.get_store(&a).unwrap();
        let s2 = rt2.object_store_registry.get_store(&a).unwrap();
        assert!(Arc::ptr_eq(&s1, &s2), "one store per bucket and settings in a process");
        let b = Url::parse("s3://bucket-b/").unwrap();
        assert!(!Arc::ptr_eq(&s1, &rt1.object_store_registry.get_store(&b).unwrap()));
        let mine: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        rt1.register_object_store(&a, mine.clone());
        assert!(Arc::ptr_eq(&rt1.object_store_registry.get_store(&a).unwrap(), &mine));
        let e = rt1.object_store_registry.get_store(&Url::parse("hdfs://nn/x").unwrap()).unwrap_err().to_string();
        assert!(e.contains("hdfs"), "{e}");
        assert!(rt1.object_store_registry.get_store(&Url::parse("file:///tmp").unwrap()).is_ok());
        assert!(rt1.object_store_registry.get_store(&Url::parse("http://127.0.0.1:1/a/b.tsfile").unwrap()).is_ok());
    }
}
