//! `tsfile inspect`: show the structure of a TsFile without decoding values (except the
//! pages of writer-dependent encodings, decoded both ways for the writer evidence).
//!
//! The summary is built once as a JSON value (the `--json` output); the human-readable
//! tree is rendered from the same data, so the two never disagree.

use std::collections::BTreeMap;

use datafusion_tsfile::datadir::{summarize, DataDirReader};
use datafusion_tsfile::format::chunk::{ChunkHeaderSuffix, PageIter};
use datafusion_tsfile::format::scan::{scan_data_section, ScanReport};
use datafusion_tsfile::format::{ByteSource, FileReader, LocalFile, Statistics, TimeseriesMetadata, ValueStatistics};
use datafusion_tsfile::{survey_writer, TsFileError, WriterSurvey};
use serde_json::{json, Map, Value};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A float as JSON: a number when finite, else the strings `NaN`, `inf`, `-inf`.
fn float(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else if v.is_nan() {
        json!("NaN")
    } else if v > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

/// Bytes as a JSON string when UTF-8, else `{"hex": ...}`; null stays null.
fn text(b: &Option<Box<[u8]>>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => json!(s),
            Err(_) => json!({ "hex": hex(b) }),
        },
    }
}

fn statistics_json(s: &Statistics) -> Value {
    let mut m = Map::new();
    m.insert("count".into(), json!(s.count));
    m.insert("start_time".into(), json!(s.start_time));
    m.insert("end_time".into(), json!(s.end_time));
    let mut put = |k: &str, v: Value| {
        m.insert(k.into(), v);
    };
    match &s.values {
        ValueStatistics::None => {}
        ValueStatistics::Boolean { first, last, true_count } => {
            put("first", json!(first));
            put("last", json!(last));
            put("true_count", json!(true_count));
        }
        ValueStatistics::Int32 { min, max, first, last, sum } => {
            put("min", json!(min));
            put("max", json!(max));
            put("first", json!(first));
            put("last", json!(last));
            put("sum", json!(sum));
        }
        ValueStatistics::Int64 { min, max, first, last, sum } => {
            put("min", json!(min));
            put("max", json!(max));
            put("first", json!(first));
            put("last", json!(last));
            put("sum", float(*sum));
        }
        ValueStatistics::Float { min, max, first, last, sum } => {
            put("min", float(f64::from(*min)));
            put("max", float(f64::from(*max)));
            put("first", float(f64::from(*first)));
            put("last", float(f64::from(*last)));
            put("sum", float(*sum));
        }
        ValueStatistics::Double { min, max, first, last, sum } => {
            put("min", float(*min));
            put("max", float(*max));
            put("first", float(*first));
            put("last", float(*last));
            put("sum", float(*sum));
        }
        ValueStatistics::Text { first, last } => {
            put("first", text(first));
            put("last", text(last));
        }
        ValueStatistics::String { first, last, min, max } => {
            put("min", text(min));
            put("max", text(max));
            put("first", text(first));
            put("last", text(last));
        }
    }
    Value::Object(m)
}

fn series_json<S: ByteSource>(reader: &FileReader<S>, t: &TimeseriesMetadata) -> Result<Value, TsFileError> {
    let mut chunks = Vec::with_capacity(t.chunks.len());
    for c in &t.chunks {
        let chunk = reader.read_chunk(c.offset)?;
        let h = &chunk.header;
        let pages = PageIter::new(h, &chunk.data)?.collect::<Result<Vec<_>, _>>()?;
        let name = |id: u8, f: fn(u8) -> Option<&'static str>| f(id).map_or(json!(format!("unknown({id})")), |n| json!(n));
        chunks.push(json!({
            "offset": c.offset,
            "encoding": name(h.encoding, |i| datafusion_tsfile::format::Encoding::try_from(i).ok().map(|e| e.name())),
            "compression": name(h.compression, |i| datafusion_tsfile::format::Compression::try_from(i).ok().map(|e| e.name())),
            "pages": pages.len(),
            "empty_pages": pages.iter().filter(|p| p.header.is_empty_value_page).count(),
            "data_size": h.data_size,
            "statistics": statistics_json(&c.statistics),
        }));
    }
    Ok(json!({
        "measurement": t.measurement,
        "data_type": t.data_type.name(),
        "aligned_time": t.is_aligned_time(),
        "statistics": statistics_json(&t.statistics),
        "chunks": chunks,
    }))
}

fn markers_json(report: &ScanReport) -> Value {
    let m: BTreeMap<String, u64> = report.markers.iter().map(|(k, v)| (format!("0x{k:02x}"), *v)).collect();
    json!(m)
}

/// The `--json` document for a complete file (footer + index + a forward scan for counts).
pub fn summary(path: &str) -> Result<Value, TsFileError> {
    summary_of(path, LocalFile::open(path)?)
}

/// [`summary`] of the file `name` whose bytes `source` holds.
pub fn summary_of<S: ByteSource>(path: &str, source: S) -> Result<Value, TsFileError> {
    let reader = FileReader::open(source)?;
    let md = reader.metadata();
    let tables: Vec<Value> = md
        .table_schemas
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "columns": t.columns.iter().map(|c| json!({
                    "name": c.name,
                    "data_type": c.data_type.name(),
                    "category": c.category.name(),
                    "encoding": c.encoding().map(|e| e.name().to_string()).unwrap_or_else(|_| format!("unknown({})", c.encoding)),
                    "compression": c.compression().map(|e| e.name().to_string()).unwrap_or_else(|_| format!("unknown({})", c.compression)),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut devices = Vec::new();
    for root in &md.table_index {
        for d in reader.devices(&root.name)? {
            let series = reader.series(&d)?;
            let series: Vec<Value> = series.iter().map(|t| series_json(&reader, t)).collect::<Result<_, _>>()?;
            // Aligned devices have a time column (a series with an empty name).
            let aligned = series.iter().any(|s| s["aligned_time"] == true);
            devices.push(json!({
                "table": root.name,
                "path": d.device.path(),
                "segments": d.device.segments(),
                "aligned": aligned,
                "series": series,
            }));
        }
    }
    let scan = scan_data_section(reader.source(), reader.chunk_header_suffix())?;
    if let Some(e) = scan.error {
        return Err(e.context("scanning the data section"));
    }
    let shape = reader.index_shape()?;
    let properties: Map<String, Value> = md
        .properties
        .iter()
        .map(|p| {
            let shown = match &p.value {
                None => Value::Null,
                // Key material (a level-1 data key or a wrapped level-2 key) is not shown.
                Some(v) if p.key == "encryptKey" && !v.is_empty() => json!({"redacted_bytes": v.len()}),
                Some(v) => json!({"hex": hex(v)}),
            };
            (p.key.clone(), shown)
        })
        .collect();
    let writer = writer_json(&survey_writer(&reader)?);
    Ok(json!({
        "file": path,
        "version": md.version,
        "file_size": reader.len(),
        "metadata_size": reader.metadata_len(),
        "meta_offset": md.meta_offset,
        "encryption_header": reader.encryption_header().map(|h| json!({
            "provider_id": h.provider_id, "profile_id": h.profile_id, "key_id": h.key_id, "key_version": h.key_version,
        })),
        "tables": tables,
        "table_index_keys": md.table_index.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
        "index": {
            "internal_device_nodes": shape.internal_device_nodes,
            "internal_measurement_nodes": shape.internal_measurement_nodes,
            "device_levels": shape.device_levels,
            "measurement_levels": shape.measurement_levels,
        },
        "devices": devices,
        "chunk_groups": scan.chunk_groups.len(),
        "markers": markers_json(&scan),
        "bloom_filter": md.bloom_filter.as_ref().map(|b| json!({
            "bitset_bytes": b.bits.len(), "size_bits": b.size_bits, "hash_functions": b.hash_functions,
        })),
        "properties": properties,
        "writer": writer,
        "operation_index_ranges": scan.operation_index_ranges.iter().map(|r| json!([r.min, r.max])).collect::<Vec<_>>(),
    }))
}

/// The writer decision and its evidence: the footer's signature and what the pages of
/// writer-dependent encodings (decoded both ways) say.
fn writer_json(s: &WriterSurvey) -> Value {
    json!({
        "decision": s.decision().map(|w| w.name()),
        "footer": { "writer": s.footer.writer.map(|w| w.name()), "evidence": s.footer.evidence },
        "pages": {
            "checked": s.pages,
            "decide_java": s.java_pages,
            "decide_cpp": s.cpp_pages,
            "same_either_way": s.same_pages,
            "cannot_tell": s.undecided_pages,
        },
        "contradiction": s.contradiction,
        "pages_skipped": s.skipped,
    })
}

/// The `--scan --json` document: what a forward walk of the data section finds.
pub fn scan_summary(path: &str) -> Result<Value, TsFileError> {
    scan_summary_of(path, LocalFile::open(path)?)
}

/// [`scan_summary`] of the file `name` whose bytes `src` holds.
pub fn scan_summary_of<S: ByteSource>(path: &str, src: S) -> Result<Value, TsFileError> {
    let report = scan_data_section(&src, ChunkHeaderSuffix::AeadOrdinalAndAuthentication)?;
    let groups: Vec<Value> = report
        .chunk_groups
        .iter()
        .map(|g| {
            json!({
                "offset": g.offset,
                "path": g.device.path(),
                "segments": g.device.segments(),
                "complete": g.complete,
                "chunks": g.chunks.iter().map(|c| json!({
                    "offset": c.header.offset,
                    "measurement": c.header.measurement,
                    "marker": format!("0x{:02x}", c.header.marker),
                    "data_type": c.header.data_type().map(|t| t.name().to_string()).unwrap_or_else(|_| format!("unknown({})", c.header.data_type)),
                    "encoding": c.header.encoding().map(|e| e.name().to_string()).unwrap_or_else(|_| format!("unknown({})", c.header.encoding)),
                    "compression": c.header.compression().map(|e| e.name().to_string()).unwrap_or_else(|_| format!("unknown({})", c.header.compression)),
                    "pages": c.pages,
                    "empty_pages": c.empty_pages,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    // The head was checked by the scan: byte 6 is the version (3 or 4).
    let version = src.read(6..7).ok().and_then(|b| b.first().copied()).unwrap_or(4);
    Ok(json!({
        "file": path,
        "version": version,
        "file_size": src.len(),
        "data_start": report.data_start,
        "chunk_groups": groups,
        "markers": markers_json(&report),
        "operation_index_ranges": report.operation_index_ranges.iter().map(|r| json!([r.min, r.max])).collect::<Vec<_>>(),
        "separator_offset": report.separator_offset,
        "last_good_offset": report.last_good_offset,
        "stopped_by": report.error.as_ref().map(|e| e.to_string()),
    }))
}

fn stats_line(s: &Value) -> String {
    let mut parts = vec![format!("count={}", s["count"]), format!("time=[{}, {}]", s["start_time"], s["end_time"])];
    for k in ["min", "max", "first", "last", "sum", "true_count"] {
        if let Some(v) = s.get(k) {
            parts.push(format!("{k}={v}"));
        }
    }
    parts.join(" ")
}

/// Render the summary as an indented tree.
pub fn render(v: &Value) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "{}: TsFile v4, {} bytes; metadata {} bytes; data section ends at {}",
        v["file"].as_str().unwrap_or(""),
        v["file_size"],
        v["metadata_size"],
        v["meta_offset"]
    ));
    if let Some(h) = v.get("encryption_header").filter(|h| !h.is_null()) {
        line(format!("page AEAD encryption header: {h}"));
    }
    let tables = v["tables"].as_array().cloned().unwrap_or_default();
    line(format!("tables ({}):", tables.len()));
    for t in &tables {
        line(format!("  {}", t["name"].as_str().unwrap_or("")));
        for c in t["columns"].as_array().into_iter().flatten() {
            line(format!(
                "    {:<20} {:<9} {:<9} {}/{}",
                c["name"].as_str().unwrap_or(""),
                c["data_type"].as_str().unwrap_or(""),
                c["category"].as_str().unwrap_or(""),
                c["encoding"].as_str().unwrap_or(""),
                c["compression"].as_str().unwrap_or("")
            ));
        }
    }
    let keys: Vec<&str> = v["table_index_keys"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    line(format!("device index keys: {}", keys.join(", ")));
    let idx = &v["index"];
    line(format!(
        "index: {} internal device nodes, {} device levels; {} internal measurement nodes, {} measurement levels",
        idx["internal_device_nodes"], idx["device_levels"], idx["internal_measurement_nodes"], idx["measurement_levels"]
    ));
    let devices = v["devices"].as_array().cloned().unwrap_or_default();
    line(format!("devices ({}):", devices.len()));
    for d in &devices {
        let kind = if d["aligned"] == true { "aligned" } else { "non-aligned" };
        line(format!("  {}  {kind}  segments={}", d["path"].as_str().unwrap_or(""), d["segments"]));
        for s in d["series"].as_array().into_iter().flatten() {
            let chunks = s["chunks"].as_array().cloned().unwrap_or_default();
            let pages: u64 = chunks.iter().filter_map(|c| c["pages"].as_u64()).sum();
            let name = s["measurement"].as_str().unwrap_or("");
            let name = if name.is_empty() { "(time)" } else { name };
            line(format!("    {:<16} {:<9} {}", name, s["data_type"].as_str().unwrap_or(""), stats_line(&s["statistics"])));
            line(format!("      {} chunk(s), {} page(s)", chunks.len(), pages));
            for c in &chunks {
                line(format!(
                    "        chunk @{}: {}/{} {} page(s), {} bytes",
                    c["offset"],
                    c["encoding"].as_str().unwrap_or(""),
                    c["compression"].as_str().unwrap_or(""),
                    c["pages"],
                    c["data_size"]
                ));
            }
        }
    }
    line(format!("chunk groups: {}", v["chunk_groups"]));
    line(format!("markers: {}", v["markers"]));
    match v.get("bloom_filter").filter(|b| !b.is_null()) {
        Some(b) => line(format!(
            "bloom filter: {} bytes, {} bits, {} hash functions",
            b["bitset_bytes"], b["size_bits"], b["hash_functions"]
        )),
        None => line("bloom filter: none".into()),
    }
    let w = &v["writer"];
    let decision = match w["decision"].as_str() {
        Some("java") => "Java",
        Some("cpp") => "C++",
        _ => "undecided",
    };
    line(format!("writer: {decision} (footer: {})", w["footer"]["evidence"].as_str().unwrap_or("")));
    let p = &w["pages"];
    match w["pages_skipped"].as_str() {
        Some(why) => line(format!("  writer-dependent pages not checked: {why}")),
        None => line(format!(
            "  writer-dependent pages (SPRINTZ INT64/TIMESTAMP/DOUBLE, RLBE FLOAT/DOUBLE): {} checked, {} decide Java, {} decide C++, {} read the same either way, {} cannot tell",
            p["checked"], p["decide_java"], p["decide_cpp"], p["same_either_way"], p["cannot_tell"]
        )),
    }
    if let Some(c) = w["contradiction"].as_str() {
        line(format!("  CONTRADICTION: {c}; queries fail on such pages unless option writer_layout forces a writer"));
    }
    line("properties:".into());
    for (k, p) in v["properties"].as_object().into_iter().flatten() {
        let shown = match p.get("hex").and_then(Value::as_str) {
            None if p.get("redacted_bytes").is_some() => format!("<{} bytes, not shown>", p["redacted_bytes"]),
            None => "null".to_string(),
            Some(h) => {
                let bytes: Vec<u8> =
                    (0..h.len() / 2).filter_map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok()).collect();
                match String::from_utf8(bytes) {
                    Ok(s) => format!("{s:?}"),
                    Err(_) => format!("0x{h}"),
                }
            }
        };
        line(format!("  {k} = {shown}"));
    }
    line(format!("operation index ranges: {}", v["operation_index_ranges"]));
    out
}

/// Render a scan summary.
pub fn render_scan(v: &Value) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "{}: forward scan of the data section ({} bytes, data starts at {})",
        v["file"].as_str().unwrap_or(""),
        v["file_size"],
        v["data_start"]
    ));
    let groups = v["chunk_groups"].as_array().cloned().unwrap_or_default();
    line(format!("chunk groups ({}):", groups.len()));
    for g in &groups {
        let status = if g["complete"].as_bool() == Some(true) { "" } else { "  (incomplete: cut off)" };
        line(format!("  @{} {}{status}", g["offset"], g["path"].as_str().unwrap_or("")));
        for c in g["chunks"].as_array().into_iter().flatten() {
            let name = c["measurement"].as_str().unwrap_or("");
            line(format!(
                "    {} {:<16} {:<9} {}/{} {} page(s)",
                c["marker"].as_str().unwrap_or(""),
                if name.is_empty() { "(time)" } else { name },
                c["data_type"].as_str().unwrap_or(""),
                c["encoding"].as_str().unwrap_or(""),
                c["compression"].as_str().unwrap_or(""),
                c["pages"]
            ));
        }
    }
    line(format!("markers: {}", v["markers"]));
    line(format!("operation index ranges: {}", v["operation_index_ranges"]));
    match v["separator_offset"].as_u64() {
        Some(o) => line(format!("separator 0x02 at {o}: data section complete")),
        None => line(format!(
            "no separator: last complete structure ends at {}; stopped by: {}",
            v["last_good_offset"],
            v["stopped_by"].as_str().unwrap_or("?")
        )),
    }
    out
}

/// `tsfile inspect DIR` on an IoTDB data directory (or a database, region or partition of
/// one): its time partitions with the files of each space, overlapping writes, deletions and
/// files without `.resource`, and the files a `layout = iotdb` read leaves out.
pub fn dir_summary(path: &str) -> Result<Value, TsFileError> {
    let reader = DataDirReader::open(path, Default::default())?;
    let parts = summarize(&reader)?;
    let dir = reader.dir();
    let partitions: Vec<Value> = parts
        .iter()
        .map(|p| {
            json!({
                "database": p.database,
                "partition": p.partition,
                "regions": p.regions,
                "sequence_files": p.sequence_files,
                "unsequence_files": p.unsequence_files,
                "files_without_resource": p.files_without_resource,
                "bytes": p.bytes,
                "devices": p.devices,
                "overlapping_devices": p.overlapping_devices,
                "overlapping_files": p.overlapping_files,
                "deletions_mods": p.deletions_v1,
                "deletions_mods2": p.deletions_v2,
            })
        })
        .collect();
    let skipped: Vec<Value> =
        dir.skipped.iter().map(|s| json!({ "path": s.path.display().to_string(), "reason": s.reason })).collect();
    Ok(json!({
        "directory": path,
        "data_files": dir.files.len(),
        "partitions": partitions,
        "skipped": skipped,
    }))
}

/// The text form of [`dir_summary`].
pub fn render_dir(v: &Value) -> String {
    let mut out = String::new();
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let parts = v.get("partitions").and_then(Value::as_array).cloned().unwrap_or_default();
    let skipped = v.get("skipped").and_then(Value::as_array).cloned().unwrap_or_default();
    out.push_str(&format!(
        "IoTDB data directory {}: {} data files in {} partitions, {} files skipped\n",
        v.get("directory").and_then(Value::as_str).unwrap_or_default(),
        n(v, "data_files"),
        parts.len(),
        skipped.len()
    ));
    for p in &parts {
        let s = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let regions: Vec<String> = p
            .get("regions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        out.push_str(&format!(
            "partition {}/{} (region {}): {} sequence + {} unsequence files, {} bytes, {} devices\n",
            s("database"),
            s("partition"),
            regions.join(", "),
            n(p, "sequence_files"),
            n(p, "unsequence_files"),
            n(p, "bytes"),
            n(p, "devices")
        ));
        if n(p, "overlapping_devices") > 0 {
            out.push_str(&format!(
                "  overlapping: {} devices written in {} files at overlapping times (merged by priority when read)\n",
                n(p, "overlapping_devices"),
                n(p, "overlapping_files")
            ));
        }
        if n(p, "deletions_mods") + n(p, "deletions_mods2") > 0 {
            out.push_str(&format!("  deletions: {} in .mods2, {} in .mods\n", n(p, "deletions_mods2"), n(p, "deletions_mods")));
        }
        if n(p, "files_without_resource") > 0 {
            out.push_str(&format!(
                "  without .resource: {} files (time ranges read from their index)\n",
                n(p, "files_without_resource")
            ));
        }
    }
    if !skipped.is_empty() {
        out.push_str("skipped:\n");
        for s in &skipped {
            let t = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            out.push_str(&format!("  {}: {}\n", t("path"), t("reason")));
        }
    }
    out
}
