//! Deterministic corruption sweep over every file of the conformance corpus, run in CI.
//!
//! Per file:
//!
//! * **Truncation** at every structure boundary (head, encryption header, chunk group and
//!   chunk headers, page headers and payloads, chunk ends, the separator, device index
//!   ranges, TsFileMetadata, `L`, the tail magic): opening the prefix and scanning its data
//!   section forward must return `Ok` or `Err`.
//! * **Seeded byte flips** (half anywhere, half within two bytes of a boundary): the
//!   altered file is opened and every device whose data or metadata the flip can reach is
//!   read in full. A flip in the data section reaches the device owning that chunk; a flip
//!   in the footer reaches the devices whose series metadata or table schema now differ
//!   from the original's (all of them when the device list itself differs). Reading the
//!   other devices would repeat the original read.
//!
//! Every read must return `Ok` or `Err` — never panic, never hang (each file runs on a worker
//! thread with a deadline) — and its peak heap use, measured by the binary's per-thread
//! counting allocator ([`crate::alloc`]), must stay under [`bound`].
//!
//! **The bound.** The reader's allocations are bounded by its limits, and the sweep sets the
//! limits in proportion to the input (`limits`, the same as the fuzz targets): decoded
//! bytes and page sizes at most `16 × len + 1 MiB`, metadata at most `len`. A read then holds
//! at most the parsed metadata (a small multiple of `len`: strings and vectors of what the
//! footer encodes), the decoded values (≤ the decoded-bytes limit), one page's decompression
//! and scratch buffers (≤ the page limit each) and the Arrow batches assembled from the
//! values (another copy of them). `64 × len + 8 MiB` covers that with room to spare while
//! staying far below what an unchecked length (gigabytes) would allocate.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use datafusion_tsfile::format::chunk::{ChunkHeaderSuffix, PageIter};
use datafusion_tsfile::format::scan::scan_data_section;
use datafusion_tsfile::format::{DeviceEntry, DeviceId, FileReader, TableSchema, TimeseriesMetadata};
use datafusion_tsfile::{TableRead, TsFile, TsFileError, TsFileOptions};

use crate::alloc::measure;
use crate::common::corpus_dir;

/// Flips per file.
const FLIPS: usize = 300;
/// Truncated prefixes per file that are also scanned forward.
const SCANS: usize = 200;
/// Seed of the flip generator.
const SEED: u64 = 0x7473_6669_6c65_2d37;
/// Longest a single file's sweep may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(120);

/// Reader limits proportional to the input (see the module doc).
fn limits(len: usize) -> TsFileOptions {
    let mut o = TsFileOptions::default();
    let budget = len.saturating_mul(16).saturating_add(1 << 20);
    o.read.max_metadata_bytes = len as u64;
    o.read.max_decoded_bytes = budget as u64;
    o.read.decode.max_page_bytes = budget;
    o.read.decode.max_page_values = budget / 8;
    o.read.decode.max_dictionary_bytes = budget;
    o.read.decode.max_string_bytes = budget;
    o
}

/// Largest peak heap use a read of `len` input bytes may reach.
fn bound(len: usize) -> usize {
    64 * len + (8 << 20)
}

/// xorshift64*: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// What a read of one device needs: its table (table model) or none (tree model).
#[derive(Debug, Clone, PartialEq)]
struct Target {
    table: Option<String>,
    device: DeviceId,
}

/// The original file's structure: boundaries, chunk owners and the metadata to diff against.
struct Plan {
    boundaries: Vec<u64>,
    chunks: Vec<(Range<u64>, Target)>,
    meta_offset: u64,
    devices: Vec<(DeviceEntry, Option<Vec<TimeseriesMetadata>>)>,
    schemas: Vec<TableSchema>,
}

fn target_of(schemas: &[TableSchema], device: &DeviceId) -> Target {
    let table = device.table_name().filter(|t| schemas.iter().any(|s| s.name == *t)).map(str::to_string);
    Target { table, device: device.clone() }
}

fn plan(bytes: &Bytes) -> Plan {
    let reader = FileReader::open(bytes.clone()).expect("corpus file opens");
    let md = reader.metadata();
    let len = bytes.len() as u64;
    let mut b = BTreeSet::from([0, 6, 7, reader.data_start(), md.meta_offset, md.meta_offset + 1]);
    let meta_start = len - 10 - reader.metadata_len();
    b.extend([meta_start, len - 10, len - 6, len - 1]);
    let mut chunks = Vec::new();
    let scan = scan_data_section(bytes, ChunkHeaderSuffix::None).expect("corpus file scans");
    for g in &scan.chunk_groups {
        b.insert(g.offset);
        let target = target_of(&md.table_schemas, &g.device);
        for c in &g.chunks {
            let h = &c.header;
            b.extend([h.offset, h.data_offset(), h.end_offset()]);
            chunks.push((h.offset..h.end_offset(), target.clone()));
            let chunk = reader.read_chunk(h.offset).expect("corpus chunk reads");
            for p in PageIter::new(h, &chunk.data).expect("corpus pages") {
                let p = p.expect("corpus page");
                b.extend([p.header.offset, p.header.data_offset]);
            }
        }
    }
    let mut devices = Vec::new();
    for d in reader.all_devices().expect("corpus index walks") {
        b.extend([d.measurement_root.start, d.measurement_root.end]);
        let series = reader.series(&d).ok();
        devices.push((d, series));
    }
    b.retain(|&x| x <= len);
    Plan { boundaries: b.into_iter().collect(), chunks, meta_offset: md.meta_offset, devices, schemas: md.table_schemas.clone() }
}

/// Read one device completely; the number of rows read.
fn read_device(file: &TsFile, t: &Target) -> Result<usize, TsFileError> {
    match &t.table {
        Some(table) => {
            let mut rows = 0;
            for b in file.read_table(table, TableRead::default().with_devices(vec![t.device.clone()]))? {
                rows += b?.num_rows();
            }
            Ok(rows)
        }
        None => Ok(file.read_tree_device(&t.device, None, None)?.num_rows()),
    }
}

/// Open an altered file and read every device the alteration at `pos` can reach.
fn read_altered(bytes: Bytes, pos: u64, plan: &Plan) -> Result<usize, TsFileError> {
    let len = bytes.len();
    let file = TsFile::from_source(Box::new(bytes), "flipped".into(), limits(len))?;
    for t in file.table_names() {
        file.arrow_schema(&t)?;
    }
    let mut targets: Vec<Target> = Vec::new();
    if pos >= 7 && pos < plan.meta_offset {
        targets.extend(plan.chunks.iter().filter(|(r, _)| r.contains(&pos)).map(|(_, t)| t.clone()));
    } else {
        // Footer (or head): diff the metadata against the original's.
        let r = file.structure();
        let schemas = &r.metadata().table_schemas;
        let devices = r.all_devices()?;
        let same_list = devices.len() == plan.devices.len();
        for (i, d) in devices.iter().enumerate() {
            let series = r.series(d).ok();
            let t = target_of(schemas, &d.device);
            let schema_changed = t
                .table
                .as_ref()
                .is_some_and(|n| schemas.iter().find(|s| &s.name == n) != plan.schemas.iter().find(|s| &s.name == n));
            let unchanged = same_list && plan.devices.get(i).is_some_and(|(pd, ps)| *pd == *d && *ps == series);
            if !unchanged || schema_changed {
                targets.push(t);
            }
        }
    }
    let mut rows = 0;
    for t in &targets {
        match read_device(&file, t) {
            Ok(n) => rows += n,
            Err(e) => return Err(e),
        }
    }
    Ok(rows)
}

/// Results of one file's sweep.
#[derive(Debug, Default)]
struct Outcome {
    truncations: usize,
    flips: usize,
    flip_errors: usize,
    peak: usize,
    bound: usize,
    slowest: Duration,
    over_bound: Vec<String>,
}

fn sweep_file(name: String, bytes: Bytes, seed: u64) -> Outcome {
    let len = bytes.len();
    let plan = plan(&bytes);
    let mut out = Outcome { bound: bound(len), ..Default::default() };
    let check = |what: String, peak: usize, took: Duration, out: &mut Outcome| {
        out.peak = out.peak.max(peak);
        out.slowest = out.slowest.max(took);
        if peak > out.bound {
            out.over_bound.push(format!("{name} {what}: peak {peak} bytes > bound {}", out.bound));
        }
    };
    // Opening a prefix stops at the tail; the forward scan reads the whole prefix, so it runs
    // on at most SCANS evenly spread cuts (all of them for small files).
    let scan_every = plan.boundaries.len().div_ceil(SCANS).max(1);
    for (i, &cut) in plan.boundaries.iter().enumerate() {
        let prefix = bytes.slice(..cut as usize);
        let t = Instant::now();
        let (_, peak) = measure(|| {
            let opened = TsFile::from_source(Box::new(prefix.clone()), "cut".into(), limits(len));
            if cut < len as u64 {
                assert!(opened.is_err(), "{name}: the prefix of {cut} bytes opened");
            }
            if i % scan_every == 0 {
                let _ = scan_data_section(&prefix, ChunkHeaderSuffix::None);
            }
        });
        check(format!("cut at {cut}"), peak, t.elapsed(), &mut out);
        out.truncations += 1;
    }
    let mut rng = Rng(seed);
    for _ in 0..FLIPS {
        let pos = if rng.next() & 1 == 0 {
            rng.below(len)
        } else {
            let b = plan.boundaries[rng.below(plan.boundaries.len())] as usize;
            (b + rng.below(5)).saturating_sub(2).min(len - 1)
        };
        let mask = (rng.below(255) + 1) as u8;
        let mut v = bytes.to_vec();
        v[pos] ^= mask;
        let altered = Bytes::from(v);
        let t = Instant::now();
        let (r, peak) = measure(|| read_altered(altered, pos as u64, &plan));
        check(format!("flip {mask:#04x} at {pos}"), peak, t.elapsed(), &mut out);
        out.flips += 1;
        out.flip_errors += usize::from(r.is_err());
    }
    out
}

#[test]
fn test_sweep_truncations_and_flips_never_panic_hang_or_overallocate() {
    let dir = corpus_dir().join("files");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "tsfile"));
    files.sort();
    assert!(files.len() >= 30, "corpus has only {} files", files.len());
    // Largest files first so that the workers finish together.
    files.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)));
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
    let (tx, rx) = mpsc::channel();
    let queue = std::sync::Arc::new(std::sync::Mutex::new(files.clone()));
    let start = Instant::now();
    for _ in 0..workers {
        let (tx, queue) = (tx.clone(), queue.clone());
        std::thread::spawn(move || loop {
            let Some(path) = queue.lock().unwrap().pop() else { break };
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let bytes = Bytes::from(std::fs::read(&path).unwrap());
            let seed = SEED ^ name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sweep_file(name.clone(), bytes, seed)));
            if tx.send((name, r.map_err(|_| ()))).is_err() {
                break;
            }
        });
    }
    drop(tx);
    let mut results: HashMap<String, Outcome> = HashMap::new();
    while results.len() < files.len() {
        match rx.recv_timeout(DEADLINE) {
            Ok((name, Ok(o))) => {
                results.insert(name, o);
            }
            Ok((name, Err(()))) => panic!("{name}: a read panicked (see the message above)"),
            Err(_) => {
                panic!("no file finished within {DEADLINE:?}: a read hangs (done: {:?})", results.keys().collect::<Vec<_>>())
            }
        }
    }
    let over: Vec<&String> = results.values().flat_map(|o| &o.over_bound).collect();
    assert!(over.is_empty(), "allocation above the bound:\n{over:#?}");
    let (t, f, e) = results.values().fold((0, 0, 0), |a, o| (a.0 + o.truncations, a.1 + o.flips, a.2 + o.flip_errors));
    let (peak_name, worst) = results
        .iter()
        .max_by(|a, b| (a.1.peak as f64 / a.1.bound as f64).total_cmp(&(b.1.peak as f64 / b.1.bound as f64)))
        .unwrap();
    let slowest = results.values().map(|o| o.slowest).max().unwrap_or_default();
    println!(
        "sweep: {} files, {t} truncations, {f} flips ({e} errors), 0 panics, peak alloc {} KiB (bound {} KiB, {peak_name}), slowest read {slowest:?}, {:?} total",
        results.len(),
        worst.peak >> 10,
        worst.bound >> 10,
        start.elapsed()
    );
}
