//! Malformed pages: real corpus files with one page altered must fail with an error that
//! names the file, the series, the page and its offset — never a panic, never wrong rows.

use bytes::Bytes;
use datafusion_tsfile::format::chunk::PageIter;
use datafusion_tsfile::format::{ChunkRole, Compression, DeviceId, Encoding, FileReader, TsDataType};
use datafusion_tsfile::{TableRead, TsFile, TsFileError, TsFileOptions};

use crate::common::corpus_dir;

/// A page found in a corpus file.
struct Found {
    bytes: Vec<u8>,
    device: DeviceId,
    measurement: String,
    table: Option<String>,
    page_offset: u64,
    data_offset: u64,
    uncompressed_size: u32,
}

fn find_page(file: &str, pred: impl Fn(Compression, Encoding, ChunkRole, TsDataType) -> bool) -> Found {
    let bytes = std::fs::read(corpus_dir().join("files").join(format!("{file}.tsfile"))).unwrap();
    let reader = FileReader::open(Bytes::from(bytes.clone())).unwrap();
    for d in reader.all_devices().unwrap() {
        for s in reader.series(&d).unwrap() {
            for c in &s.chunks {
                let chunk = reader.read_chunk(c.offset).unwrap();
                let h = &chunk.header;
                let (Ok(comp), Ok(enc), Ok(ty)) = (h.compression(), h.encoding(), h.data_type()) else { continue };
                if !pred(comp, enc, h.role(), ty) {
                    continue;
                }
                let page = PageIter::new(h, &chunk.data).unwrap().next().unwrap().unwrap();
                if page.header.is_empty_value_page {
                    continue;
                }
                let table = reader.metadata().table_schema(d.device.table_name().unwrap()).map(|t| t.name.clone());
                return Found {
                    bytes,
                    device: d.device.clone(),
                    measurement: s.measurement.clone(),
                    table,
                    page_offset: page.header.offset,
                    data_offset: page.header.data_offset,
                    uncompressed_size: page.header.uncompressed_size,
                };
            }
        }
    }
    panic!("no matching page in {file}");
}

/// Read the altered file the way a user would and return the error.
fn read_error(f: &Found, bytes: Vec<u8>) -> TsFileError {
    let file = TsFile::from_source(Box::new(Bytes::from(bytes)), "altered.tsfile".into(), TsFileOptions::default()).unwrap();
    let r = match &f.table {
        Some(t) => file.read_table(t, TableRead::default()).and_then(|it| it.collect::<Result<Vec<_>, _>>()).map(|_| ()),
        None => file.read_tree_device(&f.device, None, None).map(|_| ()),
    };
    r.expect_err("altered file read without error")
}

fn assert_names_page(e: &TsFileError, f: &Found) {
    let s = e.to_string();
    assert!(s.contains("altered.tsfile"), "no file in: {s}");
    assert!(s.contains(&format!("'{}'", f.measurement)), "no series in: {s}");
    assert!(s.contains(&format!("page 0 at offset {}", f.page_offset)), "no page/offset in: {s}");
}

#[test]
fn test_malformed_wrong_decompressed_size() {
    let f = find_page("tree_enc_int64", |c, e, _, _| c == Compression::Lz4 && e == Encoding::Plain);
    let mut b = f.bytes.clone();
    // Lower the declared uncompressed size by one, keeping the varint length.
    let at = f.page_offset as usize;
    assert!(b[at] & 0x7f > 0);
    b[at] -= 1;
    let e = read_error(&f, b);
    assert!(e.to_string().contains("LZ4 decompression failed"), "{e}");
    assert_names_page(&e, &f);
}

#[test]
fn test_malformed_value_page_row_count() {
    let f = find_page("table_enc_0", |c, _, r, _| c == Compression::Uncompressed && r == ChunkRole::AlignedValue);
    let mut b = f.bytes.clone();
    let at = f.data_offset as usize;
    let n = i32::from_be_bytes(b[at..at + 4].try_into().unwrap());
    b[at..at + 4].copy_from_slice(&(n - 8).to_be_bytes());
    let e = read_error(&f, b);
    assert_names_page(&e, &f);
    assert!(e.to_string().contains("the time page has"), "{e}");
}

#[test]
fn test_malformed_bitmap_count_mismatch() {
    let f = find_page("table_enc_0", |c, e, r, t| {
        c == Compression::Uncompressed && e == Encoding::Plain && r == ChunkRole::AlignedValue && t == TsDataType::Double
    });
    let mut b = f.bytes.clone();
    let at = f.data_offset as usize + 4;
    // Clear every presence bit: the stream then holds values nobody reads.
    let n = i32::from_be_bytes(b[at - 4..at].try_into().unwrap()) as usize;
    for x in &mut b[at..at + n.div_ceil(8)] {
        *x = 0;
    }
    let e = read_error(&f, b);
    assert_names_page(&e, &f);
}

#[test]
fn test_malformed_truncated_time_stream() {
    let f = find_page("tree_enc_int32", |c, e, r, _| {
        c == Compression::Uncompressed && e == Encoding::Plain && r == ChunkRole::NonAligned
    });
    let mut b = f.bytes.clone();
    // The payload starts with UVarInt time_len: shorten the time stream by one byte.
    let at = f.data_offset as usize;
    assert!(b[at] & 0x7f > 0);
    b[at] -= 1;
    let e = read_error(&f, b);
    assert_names_page(&e, &f);
}

#[test]
fn test_malformed_impossible_bit_width() {
    let f = find_page("tree_enc_int64", |c, e, r, _| {
        c == Compression::Uncompressed && e == Encoding::Ts2Diff && r == ChunkRole::NonAligned
    });
    let mut b = f.bytes.clone();
    // Time stream: UVarInt time_len, then the first TS_2DIFF block: i32 n, i32 width.
    let mut at = f.data_offset as usize;
    while b[at] & 0x80 != 0 {
        at += 1;
    }
    at += 1 + 4;
    b[at..at + 4].copy_from_slice(&65i32.to_be_bytes());
    let e = read_error(&f, b);
    assert_names_page(&e, &f);
}

#[test]
fn test_malformed_dictionary_index_out_of_range() {
    let f = find_page("tree_enc_text", |c, e, r, _| {
        c == Compression::Uncompressed && e == Encoding::Dictionary && r == ChunkRole::NonAligned
    });
    let mut b = f.bytes.clone();
    // Skip the time stream, then lower the dictionary's entry count to 1 entry.
    let mut at = f.data_offset as usize;
    let mut time_len = 0usize;
    let mut shift = 0;
    loop {
        let x = b[at];
        time_len |= ((x & 0x7f) as usize) << shift;
        shift += 7;
        at += 1;
        if x & 0x80 == 0 {
            break;
        }
    }
    at += time_len;
    // entry_count is a zig-zag VarInt; set it to 1 (0x02) if it is a one-byte value > 1.
    assert!(b[at] & 0x80 == 0 && b[at] > 2, "dictionary too small to alter");
    b[at] = 0x02;
    let e = read_error(&f, b);
    assert_names_page(&e, &f);
    let _ = f.uncompressed_size;
}
