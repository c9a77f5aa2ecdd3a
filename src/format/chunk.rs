//! The data section's structures: chunk group headers, chunk headers, page headers,
//! operation index ranges and the Page-AEAD file encryption header.
//!
//! ```text
//! ChunkGroupHeader := byte 0x00, DeviceID
//! ChunkHeader      := byte marker, VarString measurement_id, UVarInt data_size,
//!                     byte data_type, byte compression_type, byte encoding_type,
//!                     [int64 chunk_ordinal, int32 auth_size, byte auth[auth_size]]  (Page AEAD)
//! Page             := UVarInt uncompressed_size, UVarInt compressed_size,
//!                     [Statistics]            (multi-page chunks: marker low bits 0x01)
//!                     byte stored_data[compressed_size]
//! EmptyValuePage   := UVarInt 0              (aligned value chunks: all rows null)
//! OperationIndexRange := byte 0x04, int64 min, int64 max
//! FileEncryptionHeader := byte 0x06, UVarInt payload_size, payload   (at offset 7 only)
//! ```
//!
//! `data_size` counts every page header and payload of the chunk, never the chunk header;
//! the next structure starts exactly `data_size` bytes after the header. The chunk header's
//! type, compression and encoding bytes are kept raw so a chunk with an unknown id can still
//! be skipped; the typed accessors report the unknown id.

use crate::error::{Result, TsFileError};
use crate::format::{marker, Compression, Cursor, DeviceId, Encoding, Statistics, TsDataType};

/// How chunk headers end in a file (selected by the file encryption header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChunkHeaderSuffix {
    /// Plain files: nothing after `encoding_type`.
    #[default]
    None,
    /// Page AEAD as in the format seed: `int64 chunk_ordinal`, `int32 auth_size`, auth bytes.
    AeadOrdinalAndAuthentication,
    /// Page AEAD as in the draft implementation (PR #866 AAD v2): `int64 chunk_ordinal` only.
    AeadOrdinal,
}

/// The role of a chunk, from the high bits of its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkRole {
    /// A non-aligned chunk: each page holds a time stream and a value stream.
    NonAligned,
    /// The time chunk of an aligned chunk set.
    AlignedTime,
    /// A value chunk of an aligned chunk set.
    AlignedValue,
}

/// A parsed chunk header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Absolute offset of the marker byte.
    pub offset: u64,
    /// The marker byte (`0x01`, `0x05`, `0x41`, `0x45`, `0x81`, `0x85`).
    pub marker: u8,
    /// Measurement name (empty for a time chunk).
    pub measurement: String,
    /// Bytes of page headers and payloads that follow the header.
    pub data_size: u64,
    /// Raw data type id.
    pub data_type: u8,
    /// Raw compression id.
    pub compression: u8,
    /// Raw encoding id.
    pub encoding: u8,
    /// Page AEAD chunk ordinal, when the file has the AEAD suffix.
    pub chunk_ordinal: Option<i64>,
    /// Page AEAD chunk authentication bytes, when present.
    pub authentication: Option<Vec<u8>>,
    /// Serialized size of the header (the pages start at `offset + header_len`).
    pub header_len: u64,
}

impl ChunkHeader {
    /// Parse a chunk header starting at its marker.
    pub fn parse(c: &mut Cursor<'_>, suffix: ChunkHeaderSuffix) -> Result<ChunkHeader> {
        let offset = c.offset();
        let marker = c.u8("chunk marker")?;
        if !marker::is_chunk(marker) {
            return Err(TsFileError::corrupt("chunk header", Some(offset), format!("0x{marker:02x} is not a chunk marker")));
        }
        let measurement = c.var_string_required("chunk measurement id")?;
        let data_size = u64::from(c.uvarint("chunk data size")?);
        let data_type = c.u8("chunk data type")?;
        let compression = c.u8("chunk compression")?;
        let encoding = c.u8("chunk encoding")?;
        let (chunk_ordinal, authentication) = match suffix {
            ChunkHeaderSuffix::None => (None, None),
            ChunkHeaderSuffix::AeadOrdinal | ChunkHeaderSuffix::AeadOrdinalAndAuthentication => {
                let at = c.offset();
                let ord = c.i64("chunk ordinal")?;
                if ord < 0 {
                    return Err(TsFileError::corrupt("chunk header", Some(at), format!("negative chunk ordinal {ord}")));
                }
                let auth = if suffix == ChunkHeaderSuffix::AeadOrdinalAndAuthentication {
                    let at = c.offset();
                    let n = c.i32("chunk authentication size")?;
                    let n = usize::try_from(n).map_err(|_| {
                        TsFileError::corrupt("chunk header", Some(at), format!("negative authentication size {n}"))
                    })?;
                    Some(c.bytes(n, "chunk authentication")?.to_vec())
                } else {
                    None
                };
                (Some(ord), auth)
            }
        };
        let header_len = c.offset() - offset;
        Ok(ChunkHeader {
            offset,
            marker,
            measurement,
            data_size,
            data_type,
            compression,
            encoding,
            chunk_ordinal,
            authentication,
            header_len,
        })
    }

    /// The chunk's role.
    pub fn role(&self) -> ChunkRole {
        if self.marker & 0x80 != 0 {
            ChunkRole::AlignedTime
        } else if self.marker & 0x40 != 0 {
            ChunkRole::AlignedValue
        } else {
            ChunkRole::NonAligned
        }
    }

    /// True when pages carry statistics (marker low bits `0x01`: several pages).
    pub fn has_page_statistics(&self) -> bool {
        self.marker & 0x3f == 0x01
    }

    /// Absolute offset of the first page header.
    pub fn data_offset(&self) -> u64 {
        self.offset + self.header_len
    }

    /// Absolute offset just past the chunk.
    pub fn end_offset(&self) -> u64 {
        self.data_offset().saturating_add(self.data_size)
    }

    /// The data type (`VECTOR` for a time chunk).
    pub fn data_type(&self) -> Result<TsDataType> {
        TsDataType::try_from(self.data_type).map_err(|e| e.context(self.describe()))
    }

    /// The compression.
    pub fn compression(&self) -> Result<Compression> {
        Compression::try_from(self.compression).map_err(|e| e.context(self.describe()))
    }

    /// The encoding.
    pub fn encoding(&self) -> Result<Encoding> {
        Encoding::try_from(self.encoding).map_err(|e| e.context(self.describe()))
    }

    fn describe(&self) -> String {
        format!("chunk '{}' at offset {}", self.measurement, self.offset)
    }
}

/// A parsed page header.
#[derive(Debug, Clone, PartialEq)]
pub struct PageHeader {
    /// Absolute offset of the page header.
    pub offset: u64,
    /// Size of the payload after decompression (0 for an empty value page).
    pub uncompressed_size: u32,
    /// Size of the stored payload.
    pub compressed_size: u32,
    /// Page statistics (multi-page chunks only).
    pub statistics: Option<Statistics>,
    /// True for the all-null aligned value page written as a single `UVarInt(0)`.
    pub is_empty_value_page: bool,
    /// Absolute offset of the payload.
    pub data_offset: u64,
}

impl PageHeader {
    /// Parse a page header of a chunk with the given header, leaving the cursor at the
    /// payload. `stats_type` is the chunk's data type (`VECTOR` for time chunks).
    pub fn parse(c: &mut Cursor<'_>, chunk: &ChunkHeader, stats_type: TsDataType) -> Result<PageHeader> {
        let offset = c.offset();
        let uncompressed_size = c.uvarint("page uncompressed size")?;
        if uncompressed_size == 0 && chunk.role() == ChunkRole::AlignedValue {
            return Ok(PageHeader {
                offset,
                uncompressed_size: 0,
                compressed_size: 0,
                statistics: None,
                is_empty_value_page: true,
                data_offset: c.offset(),
            });
        }
        let compressed_size = c.uvarint("page compressed size")?;
        let statistics = if chunk.has_page_statistics() { Some(Statistics::parse(c, stats_type)?) } else { None };
        let data_offset = c.offset();
        if compressed_size as usize > c.remaining() {
            return Err(TsFileError::corrupt(
                "page header",
                Some(offset),
                format!("page of {compressed_size} bytes runs past the end of its chunk ({} bytes left)", c.remaining()),
            ));
        }
        Ok(PageHeader { offset, uncompressed_size, compressed_size, statistics, is_empty_value_page: false, data_offset })
    }
}

/// One page of a chunk: header and stored (possibly compressed/encrypted) payload.
#[derive(Debug, Clone, PartialEq)]
pub struct RawPage<'a> {
    /// The header.
    pub header: PageHeader,
    /// The stored payload bytes (`compressed_size` of them).
    pub data: &'a [u8],
}

/// Iterates the pages of a chunk's data region (exactly `data_size` bytes).
#[derive(Debug, Clone)]
pub struct PageIter<'a, 'h> {
    cursor: Cursor<'a>,
    chunk: &'h ChunkHeader,
    stats_type: TsDataType,
    failed: bool,
}

impl<'a, 'h> PageIter<'a, 'h> {
    /// Pages of `chunk`, whose data region is `data` (starting at `chunk.data_offset()`).
    pub fn new(chunk: &'h ChunkHeader, data: &'a [u8]) -> Result<Self> {
        let stats_type = chunk.data_type()?;
        Ok(PageIter { cursor: Cursor::new(data, chunk.data_offset()), chunk, stats_type, failed: false })
    }
}

impl<'a> Iterator for PageIter<'a, '_> {
    type Item = Result<RawPage<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.cursor.is_empty() {
            return None;
        }
        let r = PageHeader::parse(&mut self.cursor, self.chunk, self.stats_type).and_then(|header| {
            let data = self.cursor.bytes(header.compressed_size as usize, "page data")?;
            Ok(RawPage { header, data })
        });
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

/// An operation index range record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationIndexRange {
    /// Minimum operation sequence number of the batch.
    pub min: i64,
    /// Maximum operation sequence number.
    pub max: i64,
}

/// The Page-AEAD file encryption header at offset 7.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEncryptionHeader {
    /// Header format version (1).
    pub version: u8,
    /// Encryption provider id.
    pub provider_id: String,
    /// Provider profile id.
    pub profile_id: String,
    /// Key id in the provider's key store.
    pub key_id: String,
    /// Key version.
    pub key_version: String,
    /// 16-byte file identity used in the associated data.
    pub file_crypto_id: Vec<u8>,
    /// The data key wrapped by the provider.
    pub wrapped_data_key: Vec<u8>,
    /// Total serialized size including marker and length.
    pub total_len: u64,
}

const MAX_ENCRYPTION_HEADER: u32 = 1 << 20;

impl FileEncryptionHeader {
    /// Parse the header starting at its `0x06` marker.
    pub fn parse(c: &mut Cursor<'_>) -> Result<FileEncryptionHeader> {
        let start = c.offset();
        let m = c.u8("encryption header marker")?;
        if m != marker::ENCRYPTION_HEADER {
            return Err(TsFileError::corrupt("encryption header", Some(start), format!("marker 0x{m:02x}")));
        }
        let size = c.uvarint("encryption header size")?;
        if size == 0 || size > MAX_ENCRYPTION_HEADER {
            return Err(TsFileError::corrupt("encryption header", Some(start), format!("payload size {size} outside 1..=1 MiB")));
        }
        let payload_at = c.offset();
        let payload = c.bytes(size as usize, "encryption header payload")?;
        let mut p = Cursor::new(payload, payload_at);
        let version = p.u8("encryption header version")?;
        if version != 1 {
            return Err(TsFileError::unsupported(format!("file encryption header version {version}")));
        }
        let mut text = |what: &str| -> Result<String> {
            let at = p.offset();
            let s = p.var_string_required(what)?;
            if s.trim().is_empty() {
                return Err(TsFileError::corrupt("encryption header", Some(at), format!("blank {what}")));
            }
            Ok(s)
        };
        let provider_id = text("provider id")?;
        let profile_id = text("profile id")?;
        let key_id = text("key id")?;
        let key_version = text("key version")?;
        let at = p.offset();
        let n = p.uvarint("file crypto id length")? as usize;
        if n != 16 {
            return Err(TsFileError::corrupt("encryption header", Some(at), format!("file crypto id of {n} bytes, expected 16")));
        }
        let file_crypto_id = p.bytes(n, "file crypto id")?.to_vec();
        let at = p.offset();
        let n = p.uvarint("wrapped key length")? as usize;
        if n == 0 {
            return Err(TsFileError::corrupt("encryption header", Some(at), "empty wrapped data key"));
        }
        let wrapped_data_key = p.bytes(n, "wrapped data key")?.to_vec();
        p.expect_end("encryption header")?;
        Ok(FileEncryptionHeader {
            version,
            provider_id,
            profile_id,
            key_id,
            key_version,
            file_crypto_id,
            wrapped_data_key,
            total_len: c.offset() - start,
        })
    }
}

/// Parse a chunk group header starting at its `0x00` marker.
pub fn parse_chunk_group_header(c: &mut Cursor<'_>) -> Result<DeviceId> {
    let at = c.offset();
    let m = c.u8("chunk group marker")?;
    if m != marker::CHUNK_GROUP_HEADER {
        return Err(TsFileError::corrupt("chunk group header", Some(at), format!("marker 0x{m:02x}")));
    }
    DeviceId::parse(c)
}

/// Parse an operation index range starting at its `0x04` marker.
pub fn parse_operation_index_range(c: &mut Cursor<'_>) -> Result<OperationIndexRange> {
    let at = c.offset();
    let m = c.u8("operation index marker")?;
    if m != marker::OPERATION_INDEX_RANGE {
        return Err(TsFileError::corrupt("operation index range", Some(at), format!("marker 0x{m:02x}")));
    }
    Ok(OperationIndexRange { min: c.i64("operation index min")?, max: c.i64("operation index max")? })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk_bytes(marker: u8, name: &str, data_size: u8, dt: u8) -> Vec<u8> {
        let mut b = vec![marker, (name.len() * 2) as u8];
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&[data_size, dt, 7, 4]);
        b
    }

    #[test]
    fn test_chunk_header_parse_and_roles() {
        let b = chunk_bytes(0x45, "v", 53, 2);
        let h = ChunkHeader::parse(&mut Cursor::new(&b, 100), ChunkHeaderSuffix::None).unwrap();
        assert_eq!(h.role(), ChunkRole::AlignedValue);
        assert!(!h.has_page_statistics());
        assert_eq!(h.data_offset(), 100 + b.len() as u64);
        assert_eq!(h.end_offset(), h.data_offset() + 53);
        assert_eq!(h.compression().unwrap(), Compression::Lz4);
        assert_eq!(h.encoding().unwrap(), Encoding::Ts2Diff);
        let t = ChunkHeader::parse(&mut Cursor::new(&chunk_bytes(0x81, "", 0, 6), 0), ChunkHeaderSuffix::None).unwrap();
        assert_eq!(t.role(), ChunkRole::AlignedTime);
        assert!(t.has_page_statistics());
    }

    #[test]
    fn test_chunk_header_aead_suffix_vector() {
        // From the Page-AEAD test vectors: value chunk 'v' with ordinal 1.
        let mut b = chunk_bytes(0x45, "v", 53, 2);
        b.extend_from_slice(&1i64.to_be_bytes());
        let h = ChunkHeader::parse(&mut Cursor::new(&b, 0), ChunkHeaderSuffix::AeadOrdinal).unwrap();
        assert_eq!(h.chunk_ordinal, Some(1));
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(&[0xaa, 0xbb]);
        let h = ChunkHeader::parse(&mut Cursor::new(&b, 0), ChunkHeaderSuffix::AeadOrdinalAndAuthentication).unwrap();
        assert_eq!(h.authentication.as_deref(), Some(&[0xaa, 0xbb][..]));
        assert_eq!(h.header_len, b.len() as u64);
    }

    #[test]
    fn test_chunk_header_unknown_ids_are_lazy_errors() {
        let mut b = chunk_bytes(0x05, "s", 0, 2);
        b[5] = 5; // compression id 5 is unassigned
        let h = ChunkHeader::parse(&mut Cursor::new(&b, 0), ChunkHeaderSuffix::None).unwrap();
        assert!(h.compression().is_err());
        assert!(ChunkHeader::parse(&mut Cursor::new(&[0x09, 0], 0), ChunkHeaderSuffix::None).is_err());
    }

    #[test]
    fn test_pages_empty_value_page_and_stats() {
        let h = ChunkHeader::parse(&mut Cursor::new(&chunk_bytes(0x41, "v", 0, 10), 0), ChunkHeaderSuffix::None).unwrap();
        // empty page, then a page with time-only stats (BLOB) and 2 payload bytes
        let mut data = vec![0x00, 0x02, 0x02, 1];
        data.extend_from_slice(&0i64.to_be_bytes());
        data.extend_from_slice(&0i64.to_be_bytes());
        data.extend_from_slice(&[0xab, 0xcd]);
        let pages: Vec<_> = PageIter::new(&h, &data).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(pages.len(), 2);
        assert!(pages[0].header.is_empty_value_page);
        assert_eq!(pages[1].data, &[0xab, 0xcd]);
        assert_eq!(pages[1].header.statistics.as_ref().unwrap().count, 1);
    }

    #[test]
    fn test_page_past_chunk_end() {
        let h = ChunkHeader::parse(&mut Cursor::new(&chunk_bytes(0x05, "s", 0, 2), 0), ChunkHeaderSuffix::None).unwrap();
        let data = [0x10, 0x10, 1, 2, 3];
        let r: Vec<_> = PageIter::new(&h, &data).unwrap().collect();
        assert_eq!(r.len(), 1);
        assert!(r[0].as_ref().unwrap_err().to_string().contains("past the end"));
    }

    #[test]
    fn test_encryption_header_vector() {
        // The header of the Page-AEAD test vectors (payload of 0x65 bytes).
        let mut p = vec![1u8];
        for s in ["test-aead-provider", "AES_GCM_128_AES_WRAP_128_V1", "test-key", "1"] {
            p.push((s.len() * 2) as u8);
            p.extend_from_slice(s.as_bytes());
        }
        p.push(16);
        p.extend(0x40u8..0x50);
        p.push(24);
        p.extend([0u8; 24]);
        let mut b = vec![0x06, p.len() as u8];
        b.extend(&p);
        let h = FileEncryptionHeader::parse(&mut Cursor::new(&b, 7)).unwrap();
        assert_eq!(h.provider_id, "test-aead-provider");
        assert_eq!(h.key_version, "1");
        assert_eq!(h.total_len, b.len() as u64);
        assert_eq!(p.len(), 0x65);
        let mut bad = b.clone();
        bad[2] = 2;
        assert!(FileEncryptionHeader::parse(&mut Cursor::new(&bad, 7)).is_err());
    }
}
