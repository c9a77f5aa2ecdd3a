//! The interfaces of Page-AEAD key material: a [`KeyProvider`] unwraps a file's data key and
//! returns the [`PageAead`] that opens its pages. The built-in profile implements them in
//! `aead`; user keys (`keys`) hold providers.

use crate::error::Result;
use crate::format::FileEncryptionHeader;

/// A source of Page-AEAD data keys (a KMS client, a key file, the built-in KEK profile).
pub trait KeyProvider: Send + Sync {
    /// The provider id this object answers to (compared with the file header's).
    fn provider_id(&self) -> &str;

    /// Unwrap the data key of the file with this header and return the cipher of its
    /// profile. An unknown profile, key id or version, or a key that does not unwrap,
    /// is an error.
    fn open_file(&self, header: &FileEncryptionHeader) -> Result<Box<dyn PageAead>>;
}

/// Authenticated decryption of page bodies under one file's data key.
pub trait PageAead: Send + Sync {
    /// Bytes a body holds beyond its plaintext (IV, tag, ...).
    fn overhead(&self) -> usize;

    /// Verify `body` against `aad` and write its plaintext to `out` (replacing its
    /// contents). A failed verification is an error and leaves nothing usable in `out`.
    fn open(&self, aad: &[u8], body: &[u8], out: &mut Vec<u8>) -> Result<()>;
}
