//! Key material supplied by the user: the 16-byte master key and Page-AEAD key providers.
//!
//! Keys never come from the reader's environment implicitly: a caller passes them through
//! [`EncryptionKeys`] (the Rust builder), the `master_key` table option, the CLI's
//! `--master-key` flag or its `TSFILE_MASTER_KEY` variable. Key bytes are wiped on drop and
//! every `Debug` rendering prints `<redacted>`; no error message quotes a key.

use std::fmt;
use std::sync::Arc;

use zeroize::Zeroizing;

use crate::crypto::provider::KeyProvider;
use crate::error::{Result, TsFileError};

/// Length of a master key, a legacy data key and an AES-128 key-encryption key.
pub const KEY_LEN: usize = 16;

/// Provider id the `master_key` serves as key-encryption key for by default (the public
/// Page-AEAD test provider; see [`EncryptionKeys::with_aead_provider_id`]).
pub const DEFAULT_AEAD_PROVIDER_ID: &str = "test-aead-provider";

/// A 16-byte secret: the legacy scheme's master key, or the key-encryption key of the
/// built-in Page-AEAD profile.
#[derive(Clone, PartialEq, Eq)]
pub struct MasterKey(Zeroizing<[u8; KEY_LEN]>);

impl MasterKey {
    /// A key from its 16 raw bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<MasterKey> {
        let arr: [u8; KEY_LEN] = bytes.try_into().map_err(|_| {
            TsFileError::InvalidArgument(format!("a master key has {KEY_LEN} bytes, this one has {}", bytes.len()))
        })?;
        Ok(MasterKey(Zeroizing::new(arr)))
    }

    /// A key from text: 32 hex digits (optionally prefixed `hex:`), or exactly 16
    /// characters of ASCII/UTF-8 taken as raw bytes (optionally prefixed `text:`). The
    /// error never quotes the value.
    pub fn parse(text: &str) -> Result<MasterKey> {
        let bad = || {
            TsFileError::InvalidArgument(format!(
                "master_key: expected 32 hex digits or 16 bytes of text (got {} characters; the value is not shown)",
                text.chars().count()
            ))
        };
        if let Some(t) = text.strip_prefix("text:") {
            return Self::from_bytes(t.as_bytes()).map_err(|_| bad());
        }
        let hex = text.strip_prefix("hex:").unwrap_or(text);
        if hex.len() == 2 * KEY_LEN && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            let mut out = Zeroizing::new([0u8; KEY_LEN]);
            for (i, o) in out.iter_mut().enumerate() {
                let pair = hex.get(2 * i..2 * i + 2).ok_or_else(bad)?;
                *o = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
            }
            return Ok(MasterKey(out));
        }
        if text.starts_with("hex:") {
            return Err(bad());
        }
        Self::from_bytes(text.as_bytes()).map_err(|_| bad())
    }

    /// The raw key bytes.
    pub fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MasterKey(<redacted>)")
    }
}

/// Everything a reader may use to decrypt pages.
///
/// * `master_key` — legacy `encryptLevel = 2` files: unwraps the data key stored in the
///   footer. Page-AEAD files whose provider id is [`aead_provider_id`](Self::aead_provider_id)
///   (default `test-aead-provider`): the AES key-wrap KEK of the built-in
///   `AES_GCM_128_AES_WRAP_128_V1` profile.
/// * `providers` — Page-AEAD key providers registered by the application (a KMS client,
///   say); a provider whose id matches the file's header wins over the built-in one.
///
/// ```
/// use datafusion_tsfile::crypto::{EncryptionKeys, MasterKey};
/// let keys = EncryptionKeys::default().with_master_key(MasterKey::parse("tsfile-rs-master")?);
/// assert!(keys.master_key().is_some());
/// assert_eq!(format!("{keys:?}").contains("tsfile-rs"), false);
/// # Ok::<(), datafusion_tsfile::TsFileError>(())
/// ```
#[derive(Clone, Default)]
pub struct EncryptionKeys {
    master_key: Option<MasterKey>,
    aead_provider_id: Option<String>,
    providers: Vec<Arc<dyn KeyProvider>>,
}

impl EncryptionKeys {
    /// Use `key` as the master key (legacy level 2) and built-in Page-AEAD KEK.
    pub fn with_master_key(mut self, key: MasterKey) -> Self {
        self.master_key = Some(key);
        self
    }

    /// The provider id the master key is a KEK for (default `test-aead-provider`).
    pub fn with_aead_provider_id(mut self, id: impl Into<String>) -> Self {
        self.aead_provider_id = Some(id.into());
        self
    }

    /// Register a Page-AEAD key provider.
    pub fn with_provider(mut self, provider: Arc<dyn KeyProvider>) -> Self {
        self.providers.push(provider);
        self
    }

    /// The master key, if one was given.
    pub fn master_key(&self) -> Option<&MasterKey> {
        self.master_key.as_ref()
    }

    /// The provider id the master key serves as built-in KEK for.
    pub fn aead_provider_id(&self) -> &str {
        self.aead_provider_id.as_deref().unwrap_or(DEFAULT_AEAD_PROVIDER_ID)
    }

    /// The registered provider for `provider_id`.
    pub fn provider(&self, provider_id: &str) -> Option<&Arc<dyn KeyProvider>> {
        self.providers.iter().find(|p| p.provider_id() == provider_id)
    }

    /// True when no key material at all was supplied.
    pub fn is_empty(&self) -> bool {
        self.master_key.is_none() && self.providers.is_empty()
    }
}

impl fmt::Debug for EncryptionKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.providers.iter().map(|p| p.provider_id()).collect();
        f.debug_struct("EncryptionKeys")
            .field("master_key", &self.master_key.as_ref().map(|_| "<redacted>"))
            .field("aead_provider_id", &self.aead_provider_id())
            .field("providers", &ids)
            .finish()
    }
}

/// Two key sets are equal when they hold the same master key, built-in provider id and
/// the same provider objects (by identity).
impl PartialEq for EncryptionKeys {
    fn eq(&self, other: &Self) -> bool {
        self.master_key == other.master_key
            && self.aead_provider_id() == other.aead_provider_id()
            && self.providers.len() == other.providers.len()
            && self.providers.iter().zip(&other.providers).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl Eq for EncryptionKeys {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_parse_hex_and_text() {
        let hex = MasterKey::parse("747366696c652d72732d6d6173746572").unwrap();
        let text = MasterKey::parse("tsfile-rs-master").unwrap();
        assert_eq!(hex, text);
        assert_eq!(MasterKey::parse("hex:747366696C652D72732D6D6173746572").unwrap(), text);
        assert_eq!(MasterKey::parse("text:tsfile-rs-master").unwrap(), text);
        assert_eq!(hex.bytes()[0], 0x74);
    }

    #[test]
    fn test_parse_errors_do_not_quote_the_value() {
        for bad in ["short", "tsfile-rs-master-17", "hex:0011", "747366696c652d72732d6d61737465zz"] {
            let e = MasterKey::parse(bad).unwrap_err().to_string();
            assert!(!e.contains(bad), "{e}");
            assert!(e.contains("32 hex digits"), "{e}");
        }
    }

    #[test]
    fn test_debug_is_redacted() {
        let k = EncryptionKeys::default().with_master_key(MasterKey::parse("tsfile-rs-master").unwrap());
        let d = format!("{k:?} {:?}", k.master_key());
        assert!(!d.contains("tsfile") && !d.contains("74"), "{d}");
        assert!(d.contains("<redacted>"));
        assert_eq!(k, k.clone());
        assert_ne!(k, EncryptionKeys::default());
    }
}
