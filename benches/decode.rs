//! Micro-benchmarks of the hot paths, on real pages of the bundled sample (written by the
//! C++ implementation with its defaults: TS_2DIFF time/INT32/INT64, GORILLA FLOAT/DOUBLE,
//! PLAIN BOOLEAN/STRING, LZ4):
//!
//! * `decode/<TYPE>/<ENCODING>`: decoding decompressed value streams (values/s);
//! * `decode/time/TS_2DIFF`: the aligned time streams;
//! * `lz4`: decompressing every page (bytes/s of output);
//! * `page`: decompress + decode of whole value pages, as a scan does (values/s);
//! * `metadata`: opening the file and looking up one device.
//!
//! ```sh
//! cargo bench --bench decode
//! ```

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::hint::black_box;

use arrow_buffer::BooleanBufferBuilder;
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use datafusion_tsfile::compression::decompress;
use datafusion_tsfile::encoding::{self, BinaryValues, DecodeOptions};
use datafusion_tsfile::format::chunk::PageIter;
use datafusion_tsfile::format::{ChunkRole, Compression, Encoding, FileReader, TsDataType};
use datafusion_tsfile::read::column::count_present;
use datafusion_tsfile::read::page::split_value_page;

/// One decompressed page: its value stream and how many values it holds.
struct Page {
    compressed: Vec<u8>,
    uncompressed_size: usize,
    compression: Compression,
    payload: Vec<u8>,
    role: ChunkRole,
}

fn sample() -> Bytes {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.tsfile");
    Bytes::from(std::fs::read(path).expect("data/sample.tsfile"))
}

/// Every page of the sample, grouped by (type, encoding).
fn pages_by_kind(bytes: &Bytes) -> BTreeMap<(TsDataType, Encoding), Vec<Page>> {
    let reader = FileReader::open(bytes.clone()).expect("open");
    let mut out: BTreeMap<(TsDataType, Encoding), Vec<Page>> = BTreeMap::new();
    for d in reader.all_devices().expect("devices") {
        for s in reader.series(&d).expect("series") {
            for c in &s.chunks {
                let chunk = reader.read_chunk(c.offset).expect("chunk");
                let h = &chunk.header;
                let (ty, enc, comp) = (h.data_type().expect("type"), h.encoding().expect("enc"), h.compression().expect("comp"));
                for p in PageIter::new(h, &chunk.data).expect("pages") {
                    let p = p.expect("page");
                    if p.header.is_empty_value_page {
                        continue;
                    }
                    let payload = decompress(comp, p.data, p.header.uncompressed_size as usize).expect("decompress");
                    out.entry((ty, enc)).or_default().push(Page {
                        compressed: p.data.to_vec(),
                        uncompressed_size: p.header.uncompressed_size as usize,
                        compression: comp,
                        payload,
                        role: h.role(),
                    });
                }
            }
        }
    }
    out
}

/// Decode one value stream (time pages: the whole payload; value pages: the present values).
fn decode(ty: TsDataType, enc: Encoding, page: &[u8], role: ChunkRole, opts: &DecodeOptions) -> usize {
    if role == ChunkRole::AlignedTime {
        let mut out = Vec::new();
        encoding::decode_time(enc, page, &mut out, opts).expect("time");
        return out.len();
    }
    let vp = split_value_page(page).expect("value page");
    let n = count_present(vp.bitmap, vp.rows);
    let data = vp.values;
    match ty {
        TsDataType::Boolean => {
            let mut b = BooleanBufferBuilder::new(n);
            encoding::decode_bool(enc, data, n, &mut b, opts).expect("bool");
        }
        TsDataType::Int32 | TsDataType::Date => {
            let mut v = Vec::new();
            encoding::decode_i32(enc, data, n, &mut v, opts).expect("i32");
        }
        TsDataType::Int64 | TsDataType::Timestamp => {
            let mut v = Vec::new();
            encoding::decode_i64(enc, data, n, &mut v, opts).expect("i64");
        }
        TsDataType::Float => {
            let mut v = Vec::new();
            encoding::decode_f32(enc, data, n, &mut v, opts).expect("f32");
        }
        TsDataType::Double => {
            let mut v = Vec::new();
            encoding::decode_f64(enc, data, n, &mut v, opts).expect("f64");
        }
        _ => {
            let mut v = BinaryValues::new();
            encoding::decode_binary(enc, ty, data, n, &mut v, opts).expect("binary");
        }
    }
    n
}

fn bench_decoders(c: &mut Criterion) {
    let bytes = sample();
    let kinds = pages_by_kind(&bytes);
    let opts = DecodeOptions::default();
    let mut g = c.benchmark_group("decode");
    for ((ty, enc), pages) in &kinds {
        let values: usize = pages.iter().map(|p| decode(*ty, *enc, &p.payload, p.role, &opts)).sum();
        let name = if *ty == TsDataType::Vector { format!("time/{enc}") } else { format!("{ty}/{enc}") };
        g.throughput(Throughput::Elements(values as u64));
        g.bench_function(name, |b| {
            b.iter(|| pages.iter().map(|p| decode(*ty, *enc, black_box(&p.payload), p.role, &opts)).sum::<usize>())
        });
    }
    g.finish();

    let all: Vec<&Page> = kinds.values().flatten().collect();
    let mut g = c.benchmark_group("lz4");
    let out_bytes: usize = all.iter().map(|p| p.uncompressed_size).sum();
    g.throughput(Throughput::Bytes(out_bytes as u64));
    g.bench_function("decompress_all_pages", |b| {
        b.iter(|| {
            let mut buf = Vec::new();
            for p in &all {
                datafusion_tsfile::compression::decompress_into(
                    p.compression,
                    black_box(&p.compressed),
                    p.uncompressed_size,
                    &mut buf,
                )
                .expect("lz4");
            }
            buf.len()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("page");
    for ((ty, enc), pages) in &kinds {
        let values: usize = pages.iter().map(|p| decode(*ty, *enc, &p.payload, p.role, &opts)).sum();
        let name = if *ty == TsDataType::Vector { format!("time/{enc}+LZ4") } else { format!("{ty}/{enc}+LZ4") };
        g.throughput(Throughput::Elements(values as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut buf = Vec::new();
                let mut n = 0;
                for p in pages {
                    datafusion_tsfile::compression::decompress_into(p.compression, &p.compressed, p.uncompressed_size, &mut buf)
                        .expect("decompress");
                    n += decode(*ty, *enc, &buf, p.role, &opts);
                }
                n
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("metadata");
    g.bench_function("open", |b| b.iter(|| FileReader::open(black_box(bytes.clone())).expect("open").metadata().meta_offset));
    let reader = FileReader::open(bytes.clone()).expect("open");
    let devices = reader.all_devices().expect("devices");
    let target = devices[devices.len() / 2].device.clone();
    g.bench_function("find_device_and_series", |b| {
        b.iter(|| {
            let d = reader.find_device(black_box(&target)).expect("find").expect("present");
            reader.find_series(&d, "temperature").expect("series").map(|s| s.chunks.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench_decoders);
criterion_main!(benches);
