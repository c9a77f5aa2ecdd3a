//! Page decoding for every (type, encoding, compression), page headers included.
//!
//! Input layout (see `tools/fuzz_seeds.py`, which writes real chunks this way):
//!
//! ```text
//! byte 0  data type id (any byte; unknown ids must be errors)
//! byte 1  encoding id
//! byte 2  compression id
//! byte 3  chunk marker (0x01/0x05 non-aligned, 0x81/0x85 aligned time, 0x41/0x45 value)
//! byte 4  bit 0: non-aligned time encoding PLAIN instead of TS_2DIFF;
//!         bit 1: keep only the second half of each page's rows (scratch/spread path)
//! rest    the chunk's data region: page headers (sizes, statistics) and stored payloads
//! ```
//!
//! A chunk header is built around the region and every page goes through the read layer's
//! pipeline: header parse, decompress, payload split, time and value decoding.
#![no_main]

use datafusion_tsfile::format::chunk::PageIter;
use datafusion_tsfile::format::{ChunkHeader, ChunkRole, Cursor, Encoding};
use datafusion_tsfile::read::check::PageCheck;
use datafusion_tsfile::read::column::ColumnBuilder;
use datafusion_tsfile::read::page::{decode_times, payload, split_nonaligned, split_value_page, PageBuffers, PageCodec};
use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let Some((head, region)) = data.split_first_chunk::<5>() else { return };
    let [dt, enc, comp, marker, flags] = *head;
    let opts = common::options(data.len()).read.decode;
    // marker, VarString "" (zig-zag 0), UVarInt data_size, type, compression, encoding.
    let mut h = vec![marker, 0];
    let mut n = region.len() as u32;
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            h.push(b);
            break;
        }
        h.push(b | 0x80);
    }
    h.extend_from_slice(&[dt, comp, enc]);
    let Ok(header) = ChunkHeader::parse(&mut Cursor::new(&h, 0), Default::default()) else { return };
    let (Ok(data_type), Ok(encoding), Ok(codec)) =
        (header.data_type(), header.encoding(), PageCodec::with_decryptor(&header, None))
    else {
        return;
    };
    let Ok(pages) = PageIter::new(&header, region) else { return };
    let time_encoding = if flags & 1 != 0 { Encoding::Plain } else { Encoding::Ts2Diff };
    let mut bufs = PageBuffers::default();
    let mut times = Vec::new();
    let mut builder = ColumnBuilder::new(data_type).ok();
    for (index, page) in pages.enumerate() {
        let Ok(page) = page else { return };
        if page.header.is_empty_value_page {
            continue;
        }
        let count = page.header.statistics.as_ref().map(|s| s.count);
        let Ok(payload) = payload(&codec, index, &page, &mut bufs, &opts) else { continue };
        match header.role() {
            ChunkRole::AlignedTime => {
                let _ = decode_times(encoding, payload, count, &opts, PageCheck::default(), &mut times);
            }
            ChunkRole::NonAligned => {
                let Ok((time_stream, values)) = split_nonaligned(payload) else { continue };
                if decode_times(time_encoding, time_stream, count, &opts, PageCheck::default(), &mut times).is_err() {
                    continue;
                }
                if let Some(b) = builder.as_mut() {
                    let rows = times.len();
                    let keep = if flags & 2 != 0 { rows / 2..rows } else { 0..rows };
                    let _ = b.append_range(encoding, values, rows, keep, &opts);
                }
            }
            ChunkRole::AlignedValue => {
                let Ok(vp) = split_value_page(payload) else { continue };
                if let Some(b) = builder.as_mut() {
                    let keep = if flags & 2 != 0 { vp.rows / 2..vp.rows } else { 0..vp.rows };
                    let _ = b.append_with_bitmap(encoding, vp.values, vp.bitmap, vp.rows, keep, &opts);
                }
            }
        }
        // Keep memory per input bounded like the read layer's budget would.
        if builder.as_ref().is_some_and(|b| b.byte_size() > opts.max_page_bytes) {
            builder = ColumnBuilder::new(data_type).ok();
        }
    }
});
