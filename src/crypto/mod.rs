//! Encrypted pages: which scheme a file uses, the keys it needs, and page decryption.
//!
//! Only page payloads are ever encrypted; headers, statistics and all metadata stay in
//! the clear, so schema, statistics and pruning work without keys. A reader decrypts the
//! `compressed_size` stored bytes of a page, then decompresses and decodes them:
//!
//! ```text
//! offset 7 = 0x06 FileEncryptionHeader  → Page AEAD ([`aead`]): authenticated, per-page AAD
//! footer encryptLevel = 1 | 2           → legacy CTR scheme ([`legacy`]): no integrity check
//! neither (or level 0 / UNENCRYPTED)    → plaintext
//! ```
//!
//! A file with both a header and footer level 1/2 is rejected as inconsistent. Keys come
//! from the user ([`EncryptionKeys`]); without a usable key a file's cipher is
//! [`PageCipher::Locked`] and every page read fails with [`TsFileError::Encrypted`] — data is
//! never returned as if it were plaintext.

pub mod aead;
pub mod keys;
pub mod legacy;
pub mod provider;
#[cfg(any(test, feature = "test-util"))]
pub mod seal;

use std::sync::Arc;

pub use aead::AesGcmKeyWrapProvider;
pub use keys::{EncryptionKeys, MasterKey};
pub use legacy::{LegacyAlgorithm, LegacyCipher};
pub use provider::{KeyProvider, PageAead};

use crate::error::{Result, TsFileError};
use crate::format::chunk::{ChunkHeader, PageHeader};
use crate::format::metadata::TsFileMetadata;
use crate::format::reader::{FileReader, PageDecryptor};
use crate::format::{ByteSource, FileEncryptionHeader};
use legacy::LegacyProperties;

/// Resolve `file`'s page cipher from `keys` and attach it (also for plaintext files, so a
/// reader is never left guessing). Errors for malformed or inconsistent encryption
/// metadata and for a key that demonstrably does not fit (an AES key wrap that fails); a
/// missing key attaches [`PageCipher::Locked`], whose page reads fail with
/// [`TsFileError::Encrypted`].
pub fn unlock<S: ByteSource>(file: &mut FileReader<S>, keys: &EncryptionKeys) -> Result<()> {
    let c = PageCipher::for_file(file.encryption_header(), file.metadata(), keys)?;
    file.set_decryptor(Arc::new(c));
    Ok(())
}

/// The page decryptor of `file` under `keys`; an encrypted file without a usable key is an
/// [`TsFileError::Encrypted`] error (the SQL scan calls this once per file).
pub fn decryptor_for<S: ByteSource>(file: &FileReader<S>, keys: &EncryptionKeys) -> Result<Arc<dyn PageDecryptor>> {
    let c = PageCipher::for_file(file.encryption_header(), file.metadata(), keys)?;
    c.check_unlocked()?;
    Ok(Arc::new(c))
}

/// The decryptor `file` reads pages with: the one attached by [`unlock`] (an error if it is
/// locked), else none for a plaintext file and an [`TsFileError::Encrypted`] error (or a
/// metadata error) for an encrypted one.
pub fn decryptor_of<S: ByteSource>(file: &FileReader<S>) -> Result<Option<Arc<dyn PageDecryptor>>> {
    if let Some(d) = file.decryptor() {
        d.check_ready()?;
        return Ok(Some(d.clone()));
    }
    if !file.declares_encryption() {
        return Ok(None);
    }
    let c = PageCipher::for_file(file.encryption_header(), file.metadata(), &EncryptionKeys::default())?;
    c.check_unlocked()?;
    Ok(if c.is_encrypted() { Some(Arc::new(c)) } else { None })
}

/// How the pages of one file are turned back into their stored (compressed) plaintext.
#[derive(Clone)]
pub enum PageCipher {
    /// Pages are plaintext.
    Plain,
    /// Legacy property-based encryption with a usable data key.
    Legacy(LegacyCipher),
    /// Page AEAD with an unwrapped data key.
    Aead(AeadCipher),
    /// Encrypted, and no usable key was supplied: reading a page is an error with this text.
    Locked(String),
}

impl std::fmt::Debug for PageCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageCipher::Plain => f.write_str("Plain"),
            PageCipher::Legacy(c) => c.fmt(f),
            PageCipher::Aead(c) => {
                f.debug_struct("Aead").field("provider", &c.provider_id).field("overhead", &c.overhead).finish()
            }
            PageCipher::Locked(why) => f.debug_tuple("Locked").field(why).finish(),
        }
    }
}

/// Page AEAD state of one file: the page cipher and the file-constant part of the AAD.
#[derive(Clone)]
pub struct AeadCipher {
    provider_id: String,
    aad_prefix: Vec<u8>,
    overhead: usize,
    pages: Arc<dyn PageAead>,
}

impl PageCipher {
    /// The cipher for a file with this header and metadata under `keys`. Errors are for
    /// malformed or inconsistent encryption metadata and for keys that are demonstrably
    /// wrong (an AES key wrap that fails); a missing key gives [`PageCipher::Locked`].
    pub fn for_file(header: Option<&FileEncryptionHeader>, md: &TsFileMetadata, keys: &EncryptionKeys) -> Result<PageCipher> {
        let props = legacy::properties(md)?;
        if let Some(h) = header {
            if let LegacyProperties::Encrypted { level, .. } = props {
                return Err(TsFileError::corrupt(
                    "encryption",
                    None,
                    format!("the file has a Page-AEAD header and footer encryptLevel {level}: inconsistent"),
                ));
            }
            return Self::for_aead(h, keys);
        }
        match props {
            LegacyProperties::Plain => Ok(PageCipher::Plain),
            LegacyProperties::Encrypted { level, algorithm, key } => match LegacyCipher::new(level, algorithm, &key, keys)? {
                Some(c) => Ok(PageCipher::Legacy(c)),
                None => Ok(PageCipher::Locked(format!(
                    "encryptLevel 2, encryptType {}: the data key is wrapped by a master key; supply it (option master_key, \
                     CLI --master-key or TSFILE_MASTER_KEY)",
                    algorithm.name()
                ))),
            },
        }
    }

    fn for_aead(h: &FileEncryptionHeader, keys: &EncryptionKeys) -> Result<PageCipher> {
        let what = format!(
            "Page-AEAD encrypted (provider '{}', profile '{}', key_id '{}', key_version '{}')",
            h.provider_id, h.profile_id, h.key_id, h.key_version
        );
        let pages: Box<dyn PageAead> = if let Some(p) = keys.provider(&h.provider_id) {
            p.open_file(h)?
        } else if h.provider_id == keys.aead_provider_id() {
            match keys.master_key() {
                Some(kek) => AesGcmKeyWrapProvider::new(h.provider_id.clone(), kek.clone()).open_file(h)?,
                None => {
                    return Ok(PageCipher::Locked(format!(
                        "{what}: a key is required (option master_key, CLI --master-key or TSFILE_MASTER_KEY)"
                    )))
                }
            }
        } else if keys.is_empty() {
            return Ok(PageCipher::Locked(format!("{what}: a key provider for '{}' is required", h.provider_id)));
        } else {
            return Err(TsFileError::unsupported(format!(
                "{what}: no key provider '{}' is registered (the master key serves provider '{}'; set option aead_provider)",
                h.provider_id,
                keys.aead_provider_id()
            )));
        };
        Ok(PageCipher::Aead(AeadCipher {
            provider_id: h.provider_id.clone(),
            aad_prefix: aead::aad_prefix(h),
            overhead: pages.overhead(),
            pages: Arc::from(pages),
        }))
    }

    /// True when pages are stored encrypted (whether or not a key is at hand).
    pub fn is_encrypted(&self) -> bool {
        !matches!(self, PageCipher::Plain)
    }

    /// `Err(Encrypted)` when the file's pages cannot be read with the keys given.
    pub fn check_unlocked(&self) -> Result<()> {
        match self {
            PageCipher::Locked(why) => Err(TsFileError::Encrypted { detail: why.clone() }),
            _ => Ok(()),
        }
    }
}

impl PageDecryptor for PageCipher {
    /// Decrypt the stored bytes of page `page_index` (0-based, counting skipped pages) of
    /// `chunk` into `out`. Returns `false` (and leaves `out` alone) for plaintext files.
    fn decrypt_page(
        &self,
        chunk: &ChunkHeader,
        page_index: usize,
        page: &PageHeader,
        stored: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        match self {
            PageCipher::Plain => Ok(false),
            PageCipher::Locked(why) => Err(TsFileError::Encrypted { detail: why.clone() }),
            PageCipher::Legacy(c) => c.decrypt(stored, out).map(|_| true),
            PageCipher::Aead(c) => {
                let ordinal = chunk.chunk_ordinal.ok_or_else(|| {
                    TsFileError::corrupt("chunk header", Some(chunk.offset), "Page-AEAD chunk without a chunk ordinal")
                })?;
                let plain = stored.len().checked_sub(c.overhead).ok_or_else(|| TsFileError::DecryptFailed {
                    detail: format!(
                        "page body of {} bytes is shorter than the profile's {}-byte overhead",
                        stored.len(),
                        c.overhead
                    ),
                })?;
                let index =
                    u32::try_from(page_index).map_err(|_| TsFileError::corrupt("chunk", Some(chunk.offset), "too many pages"))?;
                let mut aad = Vec::with_capacity(c.aad_prefix.len() + 20);
                aead::page_aad(&c.aad_prefix, ordinal, index, page.uncompressed_size, plain as u32, &mut aad);
                c.pages.open(&aad, stored, out)?;
                if out.len() != plain {
                    return Err(TsFileError::DecryptFailed {
                        detail: format!("page decrypted to {} bytes, expected {plain}", out.len()),
                    });
                }
                Ok(true)
            }
        }
    }

    fn check_ready(&self) -> Result<()> {
        self.check_unlocked()
    }

    /// Text added to a decompression/decoding error of a decrypted page (the legacy scheme
    /// cannot tell a wrong key from corruption).
    fn failure_hint(&self) -> Option<String> {
        match self {
            PageCipher::Legacy(c) => Some(c.failure_hint()),
            _ => None,
        }
    }
}
