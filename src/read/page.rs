//! Page payloads: decompression and the three payload layouts.
//!
//! ```text
//! non-aligned page:   UVarInt time_len, time stream[time_len], value stream (rest)
//! aligned time page:  time stream (whole payload)
//! aligned value page: int32 position_count, bitmap[ceil(n/8)] (MSB first, 1 = present),
//!                     value stream holding only the present values
//! ```
//!
//! Read pipeline per page: stored bytes → decrypt (encrypted files, see [`crate::crypto`])
//! → decompress to exactly `uncompressed_size` → split the payload → decode by count.

use crate::compression;
use crate::encoding::{self, DecodeOptions};
use crate::read::check::{decode_i64_checked, PageCheck};
use crate::error::{Result, TsFileError};
use std::sync::Arc;

use crate::format::chunk::{ChunkHeader, RawPage};
use crate::format::reader::{FileReader, PageDecryptor};
use crate::format::{ByteSource, Compression, Cursor, Encoding};

/// How the stored pages of one chunk become payloads: the chunk's compression and the
/// file's page decryptor (none for plaintext files).
#[derive(Debug, Clone)]
pub struct PageCodec<'c> {
    chunk: &'c ChunkHeader,
    compression: Compression,
    decryptor: Option<Arc<dyn PageDecryptor>>,
}

impl<'c> PageCodec<'c> {
    /// The codec for `chunk` of `file`. An encrypted file without a usable key is an
    /// [`TsFileError::Encrypted`] error here, before any page is touched.
    pub fn new<S: ByteSource>(file: &FileReader<S>, chunk: &'c ChunkHeader) -> Result<Self> {
        Ok(PageCodec { chunk, compression: chunk.compression()?, decryptor: crate::crypto::decryptor_of(file)? })
    }

    /// The codec for `chunk` with a decryptor already resolved for its file.
    pub fn with_decryptor(chunk: &'c ChunkHeader, decryptor: Option<Arc<dyn PageDecryptor>>) -> Result<Self> {
        Ok(PageCodec { chunk, compression: chunk.compression()?, decryptor })
    }

    /// The chunk's compression.
    #[cfg(any(test, feature = "experimental"))]
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The header of the chunk the pages belong to.
    pub fn chunk(&self) -> &'c ChunkHeader {
        self.chunk
    }
}

/// Reusable buffers of [`payload`] (decrypted and decompressed bytes) and of a time page's
/// timestamps when only some of them are kept.
#[derive(Debug, Default)]
pub struct PageBuffers {
    decrypted: Vec<u8>,
    payload: Vec<u8>,
    /// Timestamps of the page being decoded; see [`PageBuffers::take_times`].
    times: Vec<i64>,
}

/// Buffers above this size are not kept for the next chunk group of the thread.
const REUSED_BUFFER_LIMIT: usize = 4 << 20;

thread_local! {
    /// The page buffers of this thread, kept from one chunk group to the next: a scan
    /// decodes thousands of chunk groups, and fresh buffers cost an allocation and the
    /// kernel's zeroing of new pages for every page.
    static REUSED: std::cell::RefCell<PageBuffers> = std::cell::RefCell::new(PageBuffers::default());
}

impl PageBuffers {
    /// Run `f` with this thread's reusable buffers (fresh ones when they are already in use
    /// further up the stack). Buffers that grew above 4 MiB are released afterwards.
    pub fn with_reused<R>(f: impl FnOnce(&mut PageBuffers) -> R) -> R {
        REUSED.with(|cell| match cell.try_borrow_mut() {
            Ok(mut bufs) => {
                let r = f(&mut bufs);
                let times = bufs.times.capacity().saturating_mul(8);
                if bufs.payload.capacity().max(bufs.decrypted.capacity()).max(times) > REUSED_BUFFER_LIMIT {
                    *bufs = PageBuffers::default();
                }
                r
            }
            Err(_) => f(&mut PageBuffers::default()),
        })
    }

    /// The thread's buffer for a time page's timestamps, emptied (taken out so that it can be
    /// filled while a payload borrowed from the other buffers is read); give it back with
    /// [`PageBuffers::put_times`].
    pub fn take_times(&mut self) -> Vec<i64> {
        let mut t = std::mem::take(&mut self.times);
        t.clear();
        t
    }

    /// Keep `times` for the next chunk group (when larger than the buffer held).
    pub fn put_times(&mut self, times: Vec<i64>) {
        if times.capacity() > self.times.capacity() {
            self.times = times;
        }
    }
}

/// Move a page's decoded timestamps from `page_times` to `out`, leaving `page_times` empty
/// for the next page. A buffer mostly filled is moved whole into an empty `out` (no copy;
/// `page_times` starts over without capacity); otherwise the timestamps are copied, so that
/// `out` does not hold a whole page's capacity for a few rows (a narrow time range keeps
/// about 1% of every page, and `out` becomes an Arrow buffer that lives as long as its
/// batch) and `page_times` keeps its capacity.
pub fn move_times(page_times: &mut Vec<i64>, out: &mut Vec<i64>) {
    if out.is_empty() && page_times.len() >= page_times.capacity() / 2 {
        std::mem::swap(out, page_times);
    } else {
        out.extend_from_slice(page_times);
    }
    page_times.clear();
}

/// The decrypted and decompressed payload of page `index` (0-based within its chunk) —
/// borrowed from `page` when it is stored in the clear and uncompressed. A declared
/// `uncompressed_size` above `opts.max_page_bytes` is rejected before anything is allocated.
pub fn payload<'a>(
    codec: &PageCodec<'_>,
    index: usize,
    page: &RawPage<'a>,
    bufs: &'a mut PageBuffers,
    opts: &DecodeOptions,
) -> Result<&'a [u8]> {
    let size = page.header.uncompressed_size as usize;
    if size > opts.max_page_bytes {
        return Err(TsFileError::LimitExceeded {
            what: "uncompressed size of one page (option max_page_bytes)".into(),
            value: size as u64,
            limit: opts.max_page_bytes as u64,
        });
    }
    let PageBuffers { decrypted, payload, .. } = bufs;
    let (stored, decryptor): (&'a [u8], _) = match &codec.decryptor {
        Some(d) if d.decrypt_page(codec.chunk, index, &page.header, page.data, decrypted)? => (decrypted.as_slice(), Some(d)),
        _ => (page.data, None),
    };
    let hint = |e: TsFileError| match decryptor.and_then(|d| d.failure_hint()) {
        Some(h) => e.context(h),
        None => e,
    };
    if codec.compression == Compression::Uncompressed {
        if stored.len() != size {
            return Err(hint(TsFileError::Decompress {
                codec: "UNCOMPRESSED",
                detail: format!("stored {} bytes but the header says {size}", stored.len()),
            }));
        }
        return Ok(stored);
    }
    compression::decompress_into(codec.compression, stored, size, payload).map_err(hint)?;
    Ok(payload.as_slice())
}

/// Split a non-aligned payload into its time and value streams.
pub fn split_nonaligned(payload: &[u8]) -> Result<(&[u8], &[u8])> {
    let mut c = Cursor::new(payload, 0);
    let time_len = c.uvarint("time stream length")? as usize;
    let time = c.bytes(time_len, "time stream")?;
    Ok((time, c.rest()))
}

/// Decode a time stream. PLAIN and TS_2DIFF derive the count from the stream; other
/// encodings need `count` (from page or chunk statistics). Timestamps must ascend.
pub fn decode_times(
    encoding: Encoding,
    data: &[u8],
    count: Option<u64>,
    opts: &DecodeOptions,
    check: PageCheck<'_>,
    out: &mut Vec<i64>,
) -> Result<()> {
    out.clear();
    let seen_ascending = match (encoding, count) {
        (Encoding::Plain | Encoding::Ts2Diff, Some(n)) => {
            // Stop decoding as soon as the stream holds more timestamps than the statistics
            // count: a corrupt stream never allocates beyond what the page claims.
            let n_values = usize::try_from(n)?;
            encoding::check_count(n_values, 64, opts, "time")?;
            let capped = DecodeOptions { max_page_values: n_values, ..*opts };
            match encoding::decode_time(encoding, data, out, &capped) {
                Err(TsFileError::LimitExceeded { .. }) => {
                    return Err(TsFileError::corrupt(
                        "time stream",
                        None,
                        format!(
                        "{encoding} stream holds more than the {n} timestamps the statistics count (is the time encoding right?)"
                    ),
                    ))
                }
                r => r?,
            }
        }
        (Encoding::Plain | Encoding::Ts2Diff, None) => encoding::decode_time(encoding, data, out, opts)?,
        (e, Some(n)) => {
            decode_i64_checked(e, data, usize::try_from(n)?, out, opts, check)?;
            false
        }
        (e, None) => return Err(TsFileError::unsupported(format!("time stream encoding {e} in a page without statistics"))),
    };
    if let Some(n) = count {
        if out.len() as u64 != n {
            return Err(TsFileError::corrupt(
                "time stream",
                None,
                format!(
                    "{encoding} stream decoded to {} timestamps but the statistics count {n} (is the time encoding right?)",
                    out.len()
                ),
            ));
        }
    }
    if !seen_ascending && !strictly_ascending(out) {
        return Err(not_ascending(encoding));
    }
    Ok(())
}

fn not_ascending(encoding: Encoding) -> TsFileError {
    TsFileError::corrupt(
        "time stream",
        None,
        format!("{encoding} timestamps are not strictly ascending (is the time encoding right?)"),
    )
}

/// Decode the timestamps of a page of `count` rows that fall within `range` (all of them
/// without one) into `out`, and return the rows they are. A TS_2DIFF stream is decoded only
/// in the blocks that can hold timestamps of the range (the others are checked by their
/// headers), other encodings whole; the decoded timestamps must ascend, as in
/// [`decode_times`].
pub fn decode_time_window(
    encoding: Encoding,
    data: &[u8],
    count: u64,
    range: Option<(i64, i64)>,
    opts: &DecodeOptions,
    check: PageCheck<'_>,
    out: &mut Vec<i64>,
) -> Result<std::ops::Range<usize>> {
    let (Encoding::Ts2Diff, Some((lo, hi))) = (encoding, range) else {
        decode_times(encoding, data, Some(count), opts, check, out)?;
        let keep = time_window(out, range);
        out.truncate(keep.end);
        out.drain(..keep.start);
        return Ok(keep);
    };
    let n = usize::try_from(count)?;
    encoding::check_count(n, 64, opts, "time")?;
    out.clear();
    let first = encoding::ts2diff::decode_time_window(data, n, lo, hi, out)?;
    if !strictly_ascending(out) {
        return Err(not_ascending(encoding));
    }
    let window = time_window(out, range);
    out.truncate(window.end);
    out.drain(..window.start);
    Ok(first + window.start..first + window.end)
}

/// True when every timestamp is greater than the one before it. Compares blocks of pairs
/// without stopping inside a block, which the compiler turns into vector instructions
/// (this runs over every timestamp a scan decodes).
fn strictly_ascending(t: &[i64]) -> bool {
    const BLOCK: usize = 1024;
    let pairs = t.len().saturating_sub(1);
    let (a, b) = (t.get(..pairs).unwrap_or(&[]), t.get(1..).unwrap_or(&[]));
    a.chunks(BLOCK).zip(b.chunks(BLOCK)).all(|(x, y)| x.iter().zip(y).fold(true, |ok, (p, q)| ok & (p < q)))
}

/// The parts of an aligned value page.
#[derive(Debug, Clone, Copy)]
pub struct ValuePage<'a> {
    /// Number of rows (must equal the matching time page's timestamp count).
    pub rows: usize,
    /// Presence bitmap, MSB first.
    pub bitmap: &'a [u8],
    /// Encoded present values.
    pub values: &'a [u8],
}

/// Split an aligned value payload.
pub fn split_value_page(payload: &[u8]) -> Result<ValuePage<'_>> {
    let mut c = Cursor::new(payload, 0);
    let n = c.i32("value page row count")?;
    let rows = usize::try_from(n).map_err(|_| TsFileError::corrupt("value page", None, format!("negative row count {n}")))?;
    let bitmap = c.bytes(rows.div_ceil(8), "value page bitmap")?;
    Ok(ValuePage { rows, bitmap, values: c.rest() })
}

/// Row range `[a, b)` of ascending `times` that falls within `[lo, hi]`.
pub fn time_window(times: &[i64], range: Option<(i64, i64)>) -> std::ops::Range<usize> {
    match range {
        None => 0..times.len(),
        Some((lo, hi)) => {
            let a = times.partition_point(|&t| t < lo);
            let b = times.partition_point(|&t| t <= hi).max(a);
            a..b
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_split_nonaligned() {
        let p = [0x02, 1, 2, 9];
        let (t, v) = split_nonaligned(&p).unwrap();
        assert_eq!(t, &[1, 2]);
        assert_eq!(v, &[9]);
        assert!(split_nonaligned(&[0x08, 1]).is_err());
    }

    #[test]
    fn test_move_times_moves_full_pages_and_copies_narrow_windows() {
        // A page mostly kept moves into an empty output without a copy.
        let mut page: Vec<i64> = Vec::with_capacity(1000);
        page.extend(0..1000);
        let ptr = page.as_ptr();
        let mut out = Vec::new();
        move_times(&mut page, &mut out);
        assert_eq!((out.len(), out.as_ptr()), (1000, ptr));
        assert!(page.is_empty());
        // A second page appends by copy.
        page.extend(1000..1600);
        move_times(&mut page, &mut out);
        assert_eq!(out, (0..1600).collect::<Vec<i64>>());
        assert!(page.is_empty() && page.capacity() >= 600);
        // A narrow window is copied into an exactly sized output; the page buffer keeps its
        // capacity for the next page.
        let mut page: Vec<i64> = Vec::with_capacity(1000);
        page.extend(500..510);
        let mut out = Vec::new();
        move_times(&mut page, &mut out);
        assert_eq!(out, (500..510).collect::<Vec<i64>>());
        assert_eq!(out.capacity(), 10);
        assert!(page.is_empty() && page.capacity() == 1000);
    }

    #[test]
    fn test_split_value_page() {
        let p = [0, 0, 0, 9, 0xff, 0x80, 7];
        let v = split_value_page(&p).unwrap();
        assert_eq!((v.rows, v.bitmap, v.values), (9, &[0xff, 0x80][..], &[7][..]));
        assert!(split_value_page(&[0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(split_value_page(&[0, 0, 0, 17, 0]).is_err());
    }

    #[test]
    fn test_decode_times_stops_at_the_statistics_count() {
        let data = crate::encoding::ts2diff::encode::i64(&(0..1000).collect::<Vec<_>>());
        let opts = DecodeOptions::default();
        let mut out = Vec::new();
        decode_times(Encoding::Ts2Diff, &data, Some(1000), &opts, PageCheck::default(), &mut out).unwrap();
        assert_eq!(out.len(), 1000);
        // Statistics that count fewer points than the stream holds: corrupt, and decoding
        // stops at the count (no more than it is produced or reserved).
        let e = decode_times(Encoding::Ts2Diff, &data, Some(10), &opts, PageCheck::default(), &mut out).unwrap_err();
        assert!(matches!(&e, TsFileError::Corrupt { what, .. } if what == "time stream"), "{e:?}");
        assert!(e.to_string().contains("more than the 10 timestamps"), "{e}");
        assert!(out.len() <= 10);
        // A count above the page limit names the option before anything is decoded.
        let small = DecodeOptions { max_page_values: 100, ..opts };
        let e = decode_times(Encoding::Ts2Diff, &data, Some(1000), &small, PageCheck::default(), &mut out).unwrap_err();
        assert!(e.to_string().contains("(option max_page_values)"), "{e}");
        let e = decode_times(Encoding::Plain, &[0; 16], Some(u64::from(u32::MAX)), &opts, PageCheck::default(), &mut out).unwrap_err();
        assert!(matches!(e, TsFileError::LimitExceeded { .. }), "{e:?}");
    }

    #[test]
    fn test_payload_rejects_pages_above_max_page_bytes() {
        use crate::format::chunk::PageHeader;
        let header = PageHeader {
            offset: 0,
            uncompressed_size: 5000,
            compressed_size: 3,
            statistics: None,
            is_empty_value_page: false,
            data_offset: 2,
        };
        let page = RawPage { header, data: &[1, 2, 3] };
        let opts = DecodeOptions { max_page_bytes: 4096, ..Default::default() };
        let mut bufs = PageBuffers::default();
        let chunk = ChunkHeader {
            offset: 0,
            marker: 0x05,
            measurement: "s".into(),
            data_size: 5,
            data_type: 2,
            compression: 2,
            encoding: 0,
            chunk_ordinal: None,
            authentication: None,
            header_len: 0,
        };
        let codec = PageCodec { chunk: &chunk, compression: Compression::Zstd, decryptor: None };
        let e = payload(&codec, 0, &page, &mut bufs, &opts).unwrap_err();
        assert!(matches!(e, TsFileError::LimitExceeded { value: 5000, limit: 4096, .. }), "{e:?}");
        assert!(e.to_string().contains("(option max_page_bytes)"));
        assert_eq!(bufs.payload.capacity(), 0);
    }

    #[test]
    fn test_decode_time_window_equals_decoding_everything() {
        use crate::encoding::{plain, ts2diff};
        let opts = DecodeOptions::default();
        let times: Vec<i64> = (0..1000i64).map(|i| 50_000 + i * 1000 + (i * 37) % 500).collect();
        for data in [ts2diff::encode::i64(&times), ts2diff::encode::i64_blocks(&times, 10)] {
            for enc_data in [(Encoding::Ts2Diff, data.clone()), (Encoding::Plain, plain::encode::i64(&times))] {
                let (enc, data) = enc_data;
                for range in [
                    None,
                    Some((0, 10)),
                    Some((60_000, 70_000)),
                    Some((177_100, 177_100)),
                    Some((0, i64::MAX)),
                    Some((2_000_000, 3_000_000)),
                ] {
                    let mut all = Vec::new();
                    decode_times(enc, &data, Some(1000), &opts, PageCheck::default(), &mut all).unwrap();
                    let expect = time_window(&all, range);
                    let mut out = vec![1, 2, 3];
                    let keep = decode_time_window(enc, &data, 1000, range, &opts, PageCheck::default(), &mut out).unwrap();
                    assert_eq!(keep, expect, "{enc:?} {range:?}");
                    assert_eq!(out, all[expect], "{enc:?} {range:?}");
                }
            }
        }
        // Timestamps out of order inside a decoded block are still found.
        let mut bad = times.clone();
        bad.swap(500, 501);
        let data = ts2diff::encode::i64_blocks(&bad, 10);
        let mut out = Vec::new();
        let e = decode_time_window(Encoding::Ts2Diff, &data, 1000, Some((550_000, 552_000)), &opts, PageCheck::default(), &mut out).unwrap_err();
        assert!(e.to_string().contains("not strictly ascending"), "{e}");
        // ... and a count the stream does not hold, whatever the range.
        assert!(decode_time_window(Encoding::Ts2Diff, &data, 999, Some((0, 1)), &opts, PageCheck::default(), &mut out).is_err());
        let small = DecodeOptions { max_page_values: 100, ..opts };
        let e = decode_time_window(Encoding::Ts2Diff, &data, 1000, Some((0, 1)), &small, PageCheck::default(), &mut out).unwrap_err();
        assert!(e.to_string().contains("(option max_page_values)"), "{e}");
    }

    #[test]
    fn test_decode_times_requires_ascending_timestamps() {
        use crate::encoding::{plain, ts2diff};
        let opts = DecodeOptions::default();
        let good: Vec<i64> = (0..300).map(|i| i * 7 - 1000).collect();
        let mut bad_ones = Vec::new();
        for i in [1, 5, 150, 299] {
            let mut equal = good.clone();
            equal[i] = equal[i - 1];
            let mut down = good.clone();
            down[i] = down[i - 1] - 3;
            bad_ones.extend([equal, down]);
        }
        // TS_2DIFF headers show the good streams ascend; everything else is compared value by
        // value (PLAIN, equal or descending pairs, also across blocks). Extremes are fine.
        let at_min: Vec<i64> = [i64::MIN, i64::MIN + 1, 0, i64::MAX].to_vec();
        let mut out = Vec::new();
        for (times, ok) in bad_ones.iter().map(|t| (t, false)).chain([(&good, true), (&at_min, true)]) {
            let n = Some(times.len() as u64);
            for (enc, data) in [
                (Encoding::Ts2Diff, ts2diff::encode::i64(times)),
                (Encoding::Ts2Diff, ts2diff::encode::i64_blocks(times, 3)),
                (Encoding::Plain, plain::encode::i64(times)),
            ] {
                let r = decode_times(enc, &data, n, &opts, PageCheck::default(), &mut out);
                match r {
                    Ok(()) => {
                        assert!(ok, "{enc:?} accepted {times:?}");
                        assert_eq!(&out, times);
                    }
                    Err(e) => {
                        assert!(!ok, "{enc:?} refused {times:?}: {e}");
                        assert!(e.to_string().contains("not strictly ascending"), "{e}");
                    }
                }
            }
        }
    }

    #[test]
    fn test_strictly_ascending_across_blocks() {
        let t: Vec<i64> = (0..3000).collect();
        assert!(strictly_ascending(&t));
        assert!(strictly_ascending(&[]));
        assert!(strictly_ascending(&[5]));
        for i in [1, 1023, 1024, 1025, 2047, 2999] {
            let mut bad = t.clone();
            bad[i] = bad[i - 1];
            assert!(!strictly_ascending(&bad), "equal pair at {i}");
            bad[i] = bad[i - 1] - 1;
            assert!(!strictly_ascending(&bad), "descending pair at {i}");
        }
    }

    #[test]
    fn test_time_window_bounds() {
        let t = [1, 3, 5, 7];
        assert_eq!(time_window(&t, None), 0..4);
        assert_eq!(time_window(&t, Some((3, 5))), 1..3);
        assert_eq!(time_window(&t, Some((8, 9))), 4..4);
        assert_eq!(time_window(&t, Some((i64::MIN, i64::MAX))), 0..4);
        assert_eq!(time_window(&t, Some((6, 2))), 3..3);
    }
}
