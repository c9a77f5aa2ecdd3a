//! Page AEAD: authenticated page bodies keyed through a pluggable key provider.
//!
//! ```text
//! FileEncryptionHeader (offset 7): provider_id, profile_id, key_id, key_version,
//!                                  file_crypto_id[16], wrapped_data_key
//! chunk header suffix:             int64 chunk_ordinal
//! page body:                       profile-defined, compressed_size = plaintext + overhead
//!
//! associated data, version 2 (big-endian):
//!   int32 2 | int32 len + provider_id | int32 len + profile_id | int32 len + key_id |
//!   int32 len + key_version | int32 16 + file_crypto_id | int64 chunk_ordinal |
//!   int32 page_index | int32 uncompressed_size | int32 compressed_plaintext_size
//! ```
//!
//! TsFile names no algorithm: the header's provider id selects a [`KeyProvider`], which
//! unwraps the data key and returns the [`PageAead`] of the header's profile. The one public
//! profile, `AES_GCM_128_AES_WRAP_128_V1`, is built in ([`AesGcmKeyWrapProvider`]): the data
//! key is AES-key-wrapped (RFC 3394) under a 16-byte KEK and a page body is
//! `IV[12] ‖ AES-128-GCM ciphertext ‖ tag[16]`. A page is verified before a byte of it is
//! decompressed; a failed tag is an error, never a plaintext fallback.

use std::fmt;

use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, KeyInit, Nonce, Tag};
use zeroize::Zeroizing;

use crate::crypto::keys::{MasterKey, KEY_LEN};
use crate::crypto::provider::{KeyProvider, PageAead};
use crate::error::{Result, TsFileError};
use crate::format::FileEncryptionHeader;

/// The profile id of the built-in AES-128-GCM / AES key-wrap profile.
pub const AES_GCM_128_AES_WRAP_128_V1: &str = "AES_GCM_128_AES_WRAP_128_V1";
/// GCM nonce length of that profile.
pub const GCM_IV_LEN: usize = 12;
/// GCM tag length of that profile.
pub const GCM_TAG_LEN: usize = 16;

/// The file-constant head of the version-2 associated data (everything before the ordinal).
pub fn aad_prefix(h: &FileEncryptionHeader) -> Vec<u8> {
    let mut a = Vec::with_capacity(64 + h.provider_id.len() + h.profile_id.len());
    a.extend_from_slice(&2i32.to_be_bytes());
    for part in
        [h.provider_id.as_bytes(), h.profile_id.as_bytes(), h.key_id.as_bytes(), h.key_version.as_bytes(), &h.file_crypto_id]
    {
        a.extend_from_slice(&(part.len() as i32).to_be_bytes());
        a.extend_from_slice(part);
    }
    a
}

/// The full associated data of one page: `prefix` from [`aad_prefix`] plus the page fields.
pub fn page_aad(prefix: &[u8], chunk_ordinal: i64, page_index: u32, uncompressed: u32, plaintext: u32, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(prefix);
    out.extend_from_slice(&chunk_ordinal.to_be_bytes());
    out.extend_from_slice(&page_index.to_be_bytes());
    out.extend_from_slice(&uncompressed.to_be_bytes());
    out.extend_from_slice(&plaintext.to_be_bytes());
}

/// The built-in provider of the `AES_GCM_128_AES_WRAP_128_V1` profile: data keys wrapped
/// with AES key wrap under a 16-byte KEK, pages sealed with AES-128-GCM.
#[derive(Clone)]
pub struct AesGcmKeyWrapProvider {
    provider_id: String,
    kek: MasterKey,
}

impl fmt::Debug for AesGcmKeyWrapProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AesGcmKeyWrapProvider").field("provider_id", &self.provider_id).field("kek", &"<redacted>").finish()
    }
}

impl AesGcmKeyWrapProvider {
    /// A provider answering to `provider_id` with key-encryption key `kek`.
    pub fn new(provider_id: impl Into<String>, kek: MasterKey) -> Self {
        AesGcmKeyWrapProvider { provider_id: provider_id.into(), kek }
    }
}

impl KeyProvider for AesGcmKeyWrapProvider {
    fn provider_id(&self) -> &str {
        &self.provider_id
    }

    fn open_file(&self, header: &FileEncryptionHeader) -> Result<Box<dyn PageAead>> {
        if header.profile_id != AES_GCM_128_AES_WRAP_128_V1 {
            return Err(TsFileError::unsupported(format!(
                "Page-AEAD profile '{}' of provider '{}' (built in: {AES_GCM_128_AES_WRAP_128_V1})",
                header.profile_id, header.provider_id
            )));
        }
        if header.wrapped_data_key.len() != KEY_LEN + 8 {
            return Err(TsFileError::corrupt(
                "encryption header",
                None,
                format!(
                    "wrapped data key of {} bytes, {AES_GCM_128_AES_WRAP_128_V1} wraps {KEY_LEN}-byte keys into {}",
                    header.wrapped_data_key.len(),
                    KEY_LEN + 8
                ),
            ));
        }
        let kek = aes_kw::KekAes128::from(*self.kek.bytes());
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        kek.unwrap(&header.wrapped_data_key, &mut key[..]).map_err(|_| TsFileError::Encrypted {
            detail: format!(
                "the data key (provider '{}', key_id '{}', key_version '{}') does not unwrap with the given key: wrong master_key",
                header.provider_id, header.key_id, header.key_version
            ),
        })?;
        let cipher = Aes128Gcm::new_from_slice(&key[..])
            .map_err(|_| TsFileError::Encrypted { detail: "unwrapped data key has the wrong length".into() })?;
        Ok(Box::new(AesGcmPages { cipher }))
    }
}

/// AES-128-GCM page bodies: `IV[12] ‖ ciphertext ‖ tag[16]`.
struct AesGcmPages {
    cipher: Aes128Gcm,
}

impl PageAead for AesGcmPages {
    fn overhead(&self) -> usize {
        GCM_IV_LEN + GCM_TAG_LEN
    }

    fn open(&self, aad: &[u8], body: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        let (iv, rest) = body.split_at_checked(GCM_IV_LEN).ok_or_else(too_short)?;
        let ct_len = rest.len().checked_sub(GCM_TAG_LEN).ok_or_else(too_short)?;
        let (ct, tag) = rest.split_at(ct_len);
        out.extend_from_slice(ct);
        let r = self.cipher.decrypt_in_place_detached(Nonce::from_slice(iv), aad, out, Tag::from_slice(tag));
        if r.is_err() {
            out.clear();
            return Err(TsFileError::DecryptFailed {
                detail: "AES-128-GCM tag mismatch: the page, its header fields, its chunk ordinal or the key differ from what was sealed".into(),
            });
        }
        Ok(())
    }
}

fn too_short() -> TsFileError {
    TsFileError::DecryptFailed { detail: format!("page body shorter than the {} bytes of IV and tag", GCM_IV_LEN + GCM_TAG_LEN) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Cursor;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// The vectors of tests/data/encrypted/page_aead_vectors.json.
    struct Vectors {
        header: FileEncryptionHeader,
        kek: MasterKey,
        aad: Vec<u8>,
        body: Vec<u8>,
        plain: Vec<u8>,
    }

    fn vectors() -> Vectors {
        let text = include_str!("../../tests/data/encrypted/page_aead_vectors.json");
        let field = |k: &str| -> String {
            let at = text.find(&format!("\"{k}\": \"")).unwrap() + k.len() + 5;
            text[at..].split('"').next().unwrap().to_string()
        };
        let hb = hex(&field("file_encryption_header_hex"));
        Vectors {
            header: FileEncryptionHeader::parse(&mut Cursor::new(&hb, 7)).unwrap(),
            kek: MasterKey::parse(&field("kek_hex")).unwrap(),
            aad: hex(&field("aad_hex")),
            body: hex(&field("encrypted_page_body_hex")),
            plain: hex(&field("compressed_plaintext_hex")),
        }
    }

    #[test]
    fn test_aad_matches_vector() {
        let v = vectors();
        let mut aad = Vec::new();
        page_aad(&aad_prefix(&v.header), 1, 0, 29, v.plain.len() as u32, &mut aad);
        assert_eq!(aad, v.aad);
    }

    #[test]
    fn test_vector_opens_and_every_flip_fails() {
        let v = vectors();
        let p = AesGcmKeyWrapProvider::new("test-aead-provider", v.kek.clone());
        let pages = p.open_file(&v.header).unwrap();
        assert_eq!(pages.overhead(), 28);
        assert_eq!(v.body.len(), v.plain.len() + 28);
        let mut out = Vec::new();
        pages.open(&v.aad, &v.body, &mut out).unwrap();
        assert_eq!(out, v.plain);
        for i in 0..v.aad.len() {
            let mut aad = v.aad.clone();
            aad[i] ^= 0x01;
            assert!(matches!(pages.open(&aad, &v.body, &mut out), Err(TsFileError::DecryptFailed { .. })), "aad byte {i}");
            assert!(out.is_empty());
        }
        for i in 0..v.body.len() {
            let mut body = v.body.clone();
            body[i] ^= 0x80;
            assert!(pages.open(&v.aad, &body, &mut out).is_err(), "body byte {i}");
        }
        assert!(pages.open(&v.aad, &v.body[..27], &mut out).is_err());
    }

    #[test]
    fn test_wrong_kek_and_profile() {
        let v = vectors();
        let wrong = AesGcmKeyWrapProvider::new("test-aead-provider", MasterKey::from_bytes(&[7u8; 16]).unwrap());
        let e = wrong.open_file(&v.header).err().unwrap();
        assert!(matches!(e, TsFileError::Encrypted { .. }), "{e}");
        let mut h = v.header.clone();
        h.profile_id = "AES_GCM_256".into();
        let p = AesGcmKeyWrapProvider::new("test-aead-provider", v.kek.clone());
        assert!(matches!(p.open_file(&h).err().unwrap(), TsFileError::Unsupported { .. }));
        assert!(!format!("{p:?}").contains("1032"));
    }
}
