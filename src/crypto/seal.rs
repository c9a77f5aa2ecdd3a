//! Encryption helpers for tests: seal pages and wrap keys the way writers do, so tests can
//! build encrypted files and check that the reader opens them. This crate is not a writer,
//! and the legacy scheme is not one to write with (it reuses its keystream for every page).

use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, KeyInit, Nonce};

use crate::crypto::aead::{GCM_IV_LEN, GCM_TAG_LEN};
use crate::crypto::keys::KEY_LEN;
use crate::crypto::legacy::LegacyAlgorithm;
use crate::error::{Result, TsFileError};

/// Encrypt one page body with the legacy scheme (the same keystream XOR as decryption).
pub fn seal_legacy(algorithm: LegacyAlgorithm, data_key: &[u8; KEY_LEN], plain: &[u8]) -> Result<Vec<u8>> {
    let mut out = plain.to_vec();
    algorithm.apply_keystream(data_key, &mut out)?;
    Ok(out)
}

/// The level-2 `encryptKey` bytes: `data_key` encrypted under `master`.
pub fn wrap_legacy_key(algorithm: LegacyAlgorithm, master: &[u8; KEY_LEN], data_key: &[u8; KEY_LEN]) -> Result<[u8; KEY_LEN]> {
    let mut out = *data_key;
    algorithm.apply_keystream(master, &mut out)?;
    Ok(out)
}

/// The `encryptKey` property text: comma-separated signed decimal bytes.
pub fn key_property(bytes: &[u8]) -> String {
    bytes.iter().map(|b| (*b as i8).to_string()).collect::<Vec<_>>().join(",")
}

/// AES key wrap (RFC 3394) of a 16-byte data key under a 16-byte KEK (24 bytes out).
pub fn wrap_aes_kw(kek: &[u8; KEY_LEN], data_key: &[u8; KEY_LEN]) -> Result<Vec<u8>> {
    let mut out = vec![0u8; KEY_LEN + 8];
    aes_kw::KekAes128::from(*kek)
        .wrap(data_key, &mut out)
        .map_err(|_| TsFileError::InvalidArgument("AES key wrap failed".into()))?;
    Ok(out)
}

/// An `AES_GCM_128_AES_WRAP_128_V1` page body: `iv ‖ ciphertext ‖ tag`.
pub fn seal_aes_gcm(data_key: &[u8; KEY_LEN], iv: &[u8; GCM_IV_LEN], aad: &[u8], plain: &[u8]) -> Result<Vec<u8>> {
    let cipher = Aes128Gcm::new_from_slice(data_key).map_err(|_| TsFileError::InvalidArgument("key length".into()))?;
    let mut ct = plain.to_vec();
    let tag = cipher
        .encrypt_in_place_detached(Nonce::from_slice(iv), aad, &mut ct)
        .map_err(|_| TsFileError::InvalidArgument("AES-GCM sealing failed".into()))?;
    let mut out = Vec::with_capacity(GCM_IV_LEN + ct.len() + GCM_TAG_LEN);
    out.extend_from_slice(iv);
    out.extend_from_slice(&ct);
    out.extend_from_slice(&tag);
    Ok(out)
}

/// The serialized FileEncryptionHeader (marker `0x06`, UVarInt size, version-1 payload).
pub fn encryption_header(
    provider: &str,
    profile: &str,
    key_id: &str,
    key_version: &str,
    file_id: &[u8; 16],
    wrapped: &[u8],
) -> Vec<u8> {
    fn uvarint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn var_str(out: &mut Vec<u8>, s: &str) {
        // Zig-zag length, as every VarString.
        uvarint(out, (s.len() as u64) << 1);
        out.extend_from_slice(s.as_bytes());
    }
    let mut p = vec![1u8];
    for s in [provider, profile, key_id, key_version] {
        var_str(&mut p, s);
    }
    uvarint(&mut p, 16);
    p.extend_from_slice(file_id);
    uvarint(&mut p, wrapped.len() as u64);
    p.extend_from_slice(wrapped);
    let mut out = vec![0x06];
    uvarint(&mut out, p.len() as u64);
    out.extend_from_slice(&p);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::aead::AesGcmKeyWrapProvider;
    use crate::crypto::provider::KeyProvider;
    use crate::crypto::MasterKey;
    use crate::format::{Cursor, FileEncryptionHeader};

    #[test]
    fn test_header_matches_vector() {
        let wrapped =
            wrap_aes_kw(&hex16("10325476012345671122334455667700"), &hex16("0102030405060708090a0b0c0d0e0f10")).unwrap();
        let h = encryption_header(
            "test-aead-provider",
            "AES_GCM_128_AES_WRAP_128_V1",
            "test-key",
            "1",
            &hex16("404142434445464748494a4b4c4d4e4f"),
            &wrapped,
        );
        let text = include_str!("../../tests/data/encrypted/page_aead_vectors.json");
        let want = text.split("\"file_encryption_header_hex\": \"").nth(1).unwrap().split('"').next().unwrap();
        let got: String = h.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn test_seal_then_open_round_trip() {
        let kek = hex16("000102030405060708090a0b0c0d0e0f");
        let key = hex16("f0e0d0c0b0a090807060504030201000");
        let h = encryption_header("p", "AES_GCM_128_AES_WRAP_128_V1", "k", "2", &[9; 16], &wrap_aes_kw(&kek, &key).unwrap());
        let h = FileEncryptionHeader::parse(&mut Cursor::new(&h, 7)).unwrap();
        let pages = AesGcmKeyWrapProvider::new("p", MasterKey::from_bytes(&kek).unwrap()).open_file(&h).unwrap();
        for len in [0usize, 1, 15, 16, 17, 1000] {
            let plain: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let body = seal_aes_gcm(&key, &[3; 12], b"aad", &plain).unwrap();
            let mut out = Vec::new();
            pages.open(b"aad", &body, &mut out).unwrap();
            assert_eq!(out, plain);
        }
        assert_eq!(key_property(&[0x1e, 0xd2, 0x80, 0x7f]), "30,-46,-128,127");
    }

    fn hex16(s: &str) -> [u8; 16] {
        let v: Vec<u8> = (0..32).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect();
        v.try_into().unwrap()
    }
}
