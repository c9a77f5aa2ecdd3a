//! The legacy, property-based encryption scheme (footer properties).
//!
//! ```text
//! TsFileMetadata properties (UTF-8 values):
//!   encryptLevel  "0" | "1" | "2"          absent or null = 0
//!   encryptType   "AES128" | "org.apache.tsfile.encrypt.AES128" | "SM4128" | ... | "UNENCRYPTED"
//!   encryptKey    comma-separated signed decimal bytes, e.g. "30,42,125,-46,..."
//!
//! level 1: data key = encryptKey bytes (stored in the clear)
//! level 2: data key = CTR-decrypt(master key, encryptKey bytes)      (master key from the user)
//! page:    plaintext = CTR(data key, IV = data key) XOR stored bytes (every page starts afresh)
//! ```
//!
//! AES128 is AES-128 in CTR mode with the whole 16-byte counter block incremented big-endian.
//! SM4128 is SM4 with a counter in the *first* four bytes of the block (big-endian, wrapping),
//! the remaining twelve bytes fixed. The scheme has no integrity check: a wrong key shows up
//! only as pages that fail to decompress or decode, so a level-2 key is also compared with
//! the data key Java writers derive from the master key (SHA-256 of a fixed phrase and the
//! key) to turn such failures into "wrong master key?" errors.

use aes::cipher::{KeyIvInit, StreamCipher};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::crypto::keys::{EncryptionKeys, KEY_LEN};
use crate::error::{Result, TsFileError};
use crate::format::metadata::TsFileMetadata;

/// Longest `encryptKey` property accepted (characters), as in the Java reader.
const MAX_ENCRYPT_KEY_CHARS: usize = 5120;

/// A legacy page cipher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyAlgorithm {
    /// AES-128-CTR, IV = key, 128-bit big-endian counter.
    Aes128,
    /// SM4 with a 32-bit big-endian counter in the first four bytes, IV = key.
    Sm4,
}

impl LegacyAlgorithm {
    /// Name as written by Java (`AES128`, `SM4128`).
    pub fn name(self) -> &'static str {
        match self {
            LegacyAlgorithm::Aes128 => "AES128",
            LegacyAlgorithm::Sm4 => "SM4128",
        }
    }

    /// XOR the keystream for `key` (IV = key, counter from zero) into `data`.
    pub fn apply_keystream(self, key: &[u8; KEY_LEN], data: &mut [u8]) -> Result<()> {
        match self {
            LegacyAlgorithm::Aes128 => {
                let mut c = ctr::Ctr128BE::<aes::Aes128>::new(key.into(), key.into());
                c.apply_keystream(data);
                Ok(())
            }
            LegacyAlgorithm::Sm4 => sm4_ctr(key, data),
        }
    }
}

#[cfg(feature = "sm4")]
fn sm4_ctr(key: &[u8; KEY_LEN], data: &mut [u8]) -> Result<()> {
    use sm4::cipher::{BlockEncrypt, KeyInit};
    let cipher = sm4::Sm4::new(key.into());
    let base = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    for (i, chunk) in data.chunks_mut(16).enumerate() {
        let mut block = *key;
        // The counter wraps modulo 2^32, as the Java implementation's int arithmetic does.
        let ctr = base.wrapping_add(i as u32);
        block[..4].copy_from_slice(&ctr.to_be_bytes());
        let mut b = sm4::cipher::generic_array::GenericArray::from(block);
        cipher.encrypt_block(&mut b);
        for (d, k) in chunk.iter_mut().zip(b.iter()) {
            *d ^= k;
        }
    }
    Ok(())
}

#[cfg(not(feature = "sm4"))]
fn sm4_ctr(_key: &[u8; KEY_LEN], _data: &mut [u8]) -> Result<()> {
    Err(TsFileError::unsupported("encryptType SM4128 (built without the `sm4` feature)"))
}

/// The footer's encryption properties, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LegacyProperties {
    /// Level 0, absent, or an UNENCRYPTED type: pages are plaintext.
    Plain,
    /// Pages are encrypted.
    Encrypted {
        /// 1 (key in the clear) or 2 (key wrapped by the master key).
        level: u8,
        /// The cipher.
        algorithm: LegacyAlgorithm,
        /// The `encryptKey` bytes (the data key at level 1, the wrapped key at level 2).
        key: Zeroizing<Vec<u8>>,
    },
}

/// Read and check `encryptLevel`, `encryptType` and `encryptKey`.
pub fn properties(md: &TsFileMetadata) -> Result<LegacyProperties> {
    let text = |key: &str| -> Result<Option<String>> {
        match md.property(key).flatten() {
            None => Ok(None),
            Some(v) => std::str::from_utf8(v)
                .map(|s| Some(s.trim().to_string()))
                .map_err(|_| TsFileError::corrupt(format!("{key} property"), None, "not UTF-8")),
        }
    };
    let level = match text("encryptLevel")?.as_deref() {
        None | Some("0") => return Ok(LegacyProperties::Plain),
        Some("1") => 1,
        Some("2") => 2,
        Some(other) => return Err(TsFileError::corrupt("encryptLevel property", None, format!("unknown level '{other}'"))),
    };
    let ty = text("encryptType")?.unwrap_or_default();
    let short = ty.strip_prefix("org.apache.tsfile.encrypt.").unwrap_or(&ty);
    let algorithm = match short {
        "UNENCRYPTED" => return Ok(LegacyProperties::Plain),
        "AES128" => LegacyAlgorithm::Aes128,
        "SM4128" => LegacyAlgorithm::Sm4,
        "" => {
            return Err(TsFileError::Encrypted {
                detail: format!(
                "encryptLevel {level} without an encryptType (the C++ writer's encrypt flag writes this with no key material; \
                     the pages cannot be read safely)"
            ),
            })
        }
        other => return Err(TsFileError::unsupported(format!("encryptType '{other}' (known: AES128, SM4128, UNENCRYPTED)"))),
    };
    let key_text = text("encryptKey")?.unwrap_or_default();
    if key_text.is_empty() {
        return Err(TsFileError::Encrypted {
            detail: format!("encryptLevel {level}, encryptType {} without an encryptKey", algorithm.name()),
        });
    }
    let key = parse_key_property(&key_text)?;
    if key.len() != KEY_LEN {
        return Err(TsFileError::corrupt(
            "encryptKey property",
            None,
            format!("{} bytes, a {} key has {KEY_LEN}", key.len(), algorithm.name()),
        ));
    }
    Ok(LegacyProperties::Encrypted { level, algorithm, key })
}

/// Parse `"30,42,-46"` (signed decimal bytes) into bytes.
fn parse_key_property(text: &str) -> Result<Zeroizing<Vec<u8>>> {
    if text.len() > MAX_ENCRYPT_KEY_CHARS {
        return Err(TsFileError::corrupt("encryptKey property", None, format!("{} characters", text.len())));
    }
    let mut out = Zeroizing::new(Vec::new());
    for part in text.split(',') {
        let b: i8 = part
            .trim()
            .parse()
            .map_err(|_| TsFileError::corrupt("encryptKey property", None, "not a list of signed bytes (-128..127)"))?;
        out.push(b as u8);
    }
    Ok(out)
}

/// The data key Java writers derive from a master key: SHA-256("IoTDB is the best" ‖ master)[0..16].
pub fn derived_data_key(master: &[u8; KEY_LEN]) -> [u8; KEY_LEN] {
    let mut h = Sha256::new();
    h.update(b"IoTDB is the best");
    h.update(master);
    let d = h.finalize();
    let mut out = [0u8; KEY_LEN];
    out.copy_from_slice(&d[..KEY_LEN]);
    out
}

/// A legacy cipher ready to decrypt pages of one file.
#[derive(Clone)]
pub struct LegacyCipher {
    /// The cipher.
    pub algorithm: LegacyAlgorithm,
    /// 1 or 2.
    pub level: u8,
    data_key: Zeroizing<[u8; KEY_LEN]>,
    /// Level 2: whether the unwrapped key equals the Java derivation from the master key
    /// (`false` hints at a wrong master key; other writers may use random keys).
    pub key_check: Option<bool>,
}

impl std::fmt::Debug for LegacyCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacyCipher")
            .field("algorithm", &self.algorithm)
            .field("level", &self.level)
            .field("data_key", &"<redacted>")
            .field("key_check", &self.key_check)
            .finish()
    }
}

impl LegacyCipher {
    /// The cipher for a file with these properties; `Ok(None)` when the level needs a
    /// master key that `keys` lacks.
    pub fn new(level: u8, algorithm: LegacyAlgorithm, key: &[u8], keys: &EncryptionKeys) -> Result<Option<LegacyCipher>> {
        let mut data_key = Zeroizing::new([0u8; KEY_LEN]);
        if key.len() != KEY_LEN {
            return Err(TsFileError::corrupt("encryptKey property", None, format!("{} bytes", key.len())));
        }
        data_key.copy_from_slice(key);
        let key_check = if level == 2 {
            let Some(master) = keys.master_key() else { return Ok(None) };
            algorithm.apply_keystream(master.bytes(), &mut data_key[..])?;
            Some(*data_key == derived_data_key(master.bytes()))
        } else {
            None
        };
        Ok(Some(LegacyCipher { algorithm, level, data_key, key_check }))
    }

    /// Decrypt one page body into `out` (replacing its contents).
    pub fn decrypt(&self, stored: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.extend_from_slice(stored);
        self.algorithm.apply_keystream(&self.data_key, out)
    }

    /// Text added to a page error after decryption: the scheme cannot tell a wrong key
    /// from corrupt data, so say which it more likely is.
    pub fn failure_hint(&self) -> String {
        match self.key_check {
            Some(false) => format!(
                "after {} decryption; the unwrapped data key is not the one derived from this master key: wrong master_key?",
                self.algorithm.name()
            ),
            Some(true) => format!("after {} decryption with a verified master key: the page is corrupt", self.algorithm.name()),
            None => {
                format!("after {} decryption (level 1 key from the file): the page or its key is corrupt", self.algorithm.name())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn test_level2_unwrap_vector() {
        // spec/encryption.md §6: wrapped key → data key under master "tsfile-rs-master".
        let master: [u8; 16] = *b"tsfile-rs-master";
        let mut k = hex("1e2a7dd2375e11c4396689d63d564654");
        LegacyAlgorithm::Aes128.apply_keystream(&master, &mut k).unwrap();
        assert_eq!(k, hex("276d7597c60fc5182b38f0d356858def"));
        assert_eq!(derived_data_key(&master).to_vec(), k);
    }

    #[test]
    fn test_aes_page_vector() {
        let key: [u8; 16] = hex("276d7597c60fc5182b38f0d356858def").try_into().unwrap();
        let mut page = hex("a2afc117cad1c0836cccf9779f0e8fae8eeb");
        LegacyAlgorithm::Aes128.apply_keystream(&key, &mut page).unwrap();
        assert_eq!(page, hex("560000000200010090010000000000000001"));
    }

    #[test]
    fn test_key_property() {
        let k = parse_key_property("30,42,125,-46,55,94,17,-60,57,102,-119,-42,61,86,70,84").unwrap();
        assert_eq!(k.to_vec(), hex("1e2a7dd2375e11c4396689d63d564654"));
        assert!(parse_key_property("1,2,300").is_err());
        assert!(parse_key_property("1,,2").is_err());
        assert!(parse_key_property(&"1,".repeat(3000)).is_err());
    }

    #[cfg(feature = "sm4")]
    #[test]
    fn test_sm4_block_and_counter() {
        use sm4::cipher::{BlockEncrypt, KeyInit};
        // GB/T 32907 example: key = plaintext = 0123456789abcdeffedcba9876543210.
        let key: [u8; 16] = hex("0123456789abcdeffedcba9876543210").try_into().unwrap();
        let c = sm4::Sm4::new((&key).into());
        let mut b = sm4::cipher::generic_array::GenericArray::from(key);
        c.encrypt_block(&mut b);
        assert_eq!(b.to_vec(), hex("681edf34d206965e86b3e94f536e4246"));
        // Counter mode: block i encrypts key with its first four bytes + i; block 0 = the
        // keystream above, and a wrap of the 32-bit counter leaves bytes 4..16 alone.
        let mut zeros = [0u8; 40];
        LegacyAlgorithm::Sm4.apply_keystream(&key, &mut zeros).unwrap();
        assert_eq!(zeros[..16], b[..]);
        let mut block1 = key;
        block1[..4].copy_from_slice(&0x0123_4568u32.to_be_bytes());
        let mut b1 = sm4::cipher::generic_array::GenericArray::from(block1);
        c.encrypt_block(&mut b1);
        assert_eq!(zeros[16..32], b1[..]);
        let wrap: [u8; 16] = hex("ffffffff89abcdeffedcba9876543210").try_into().unwrap();
        let mut two = [0u8; 32];
        LegacyAlgorithm::Sm4.apply_keystream(&wrap, &mut two).unwrap();
        let c2 = sm4::Sm4::new((&wrap).into());
        let mut b2 = sm4::cipher::generic_array::GenericArray::from(
            hex("0000000089abcdeffedcba9876543210").try_into().unwrap_or([0u8; 16]),
        );
        c2.encrypt_block(&mut b2);
        assert_eq!(two[16..], b2[..]);
    }
}
