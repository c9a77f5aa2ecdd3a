//! Structure conformance: every corpus file's metadata, index and data-section shape must
//! match its `MANIFEST.json` entry.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use datafusion_tsfile::format::chunk::ChunkHeaderSuffix;
use datafusion_tsfile::format::scan::scan_data_section;
use datafusion_tsfile::format::{ChunkRole, DeviceId, FileReader, LocalFile};
use serde_json::{json, Value};

use crate::common::{file_path, manifest, manifest_files};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn check_file(entry: &Value) -> Result<(), String> {
    let path = file_path(entry);
    let reader = FileReader::open(LocalFile::open(&path).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let md = reader.metadata();
    let mut problems: Vec<String> = Vec::new();
    fn check(problems: &mut Vec<String>, what: &str, got: Value, want: &Value) {
        if &got != want {
            problems.push(format!("{what}: got {got}, want {want}"));
        }
    }

    // Tables and index keys.
    let tables: BTreeSet<&str> = md.table_schemas.iter().map(|t| t.name.as_str()).collect();
    let want_tables: BTreeSet<&str> = entry["tables"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    check(&mut problems, "tables", json!(tables), &json!(want_tables));
    let keys: Vec<&str> = md.table_index.iter().map(|t| t.name.as_str()).collect();
    check(&mut problems, "table_index_keys", json!(keys), &entry["table_index_keys"]);

    // Devices.
    let devices = reader.all_devices().map_err(|e| e.to_string())?;
    check(&mut problems, "device_count", json!(devices.len()), &entry["device_count"]);
    for e in entry["expected"].as_array().into_iter().flatten() {
        if let Some(segs) = e["segments"].as_array() {
            let id = DeviceId::new(segs.iter().map(|s| s.as_str().map(str::to_string)).collect());
            match reader.find_device(&id) {
                Ok(Some(_)) => {}
                other => problems.push(format!("device {id} not found by lookup: {other:?}")),
            }
        }
    }

    // Every series is found by lookup; every series is in the bloom filter.
    let mut series_total = 0usize;
    for d in &devices {
        let found = reader.find_device(&d.device).map_err(|e| e.to_string())?;
        if found.as_ref() != Some(d) {
            problems.push(format!("device {} lookup gave {found:?}", d.device));
        }
        let series = reader.series(d).map_err(|e| e.to_string())?;
        for s in &series {
            series_total += 1;
            match reader.find_series(d, &s.measurement) {
                Ok(Some(t)) if format!("{t:?}") == format!("{s:?}") => {}
                other => problems.push(format!("series {}.{} lookup gave {other:?}", d.device, s.measurement)),
            }
            if let Some(bf) = &md.bloom_filter {
                if !bf.may_contain(&d.device.path(), &s.measurement) {
                    problems.push(format!("bloom filter misses {}.{}", d.device, s.measurement));
                }
            }
        }
        if let Ok(Some(_)) = reader.find_series(d, "\u{10ffff}no-such-series") {
            problems.push(format!("lookup of a missing series succeeded on {}", d.device));
        }
    }
    if devices.is_empty() && series_total != 0 {
        problems.push("series without devices".into());
    }

    // Bloom filter parameters.
    let bloom = md
        .bloom_filter
        .as_ref()
        .map(|b| json!({"bitset_bytes": b.bits.len(), "size_bits": b.size_bits, "hash_functions": b.hash_functions}));
    check(&mut problems, "bloom_filter", bloom.unwrap_or(Value::Null), &entry["bloom_filter"]);

    // Properties.
    let props: serde_json::Map<String, Value> =
        md.properties.iter().map(|p| (p.key.clone(), p.value.as_ref().map_or(Value::Null, |v| json!({"hex": hex(v)})))).collect();
    check(&mut problems, "properties", Value::Object(props), &entry["properties"]);

    // Shape from the forward scan and the index walk.
    let scan = scan_data_section(reader.source(), ChunkHeaderSuffix::None).map_err(|e| e.to_string())?;
    if let Some(e) = &scan.error {
        problems.push(format!("scan stopped early: {e}"));
    }
    if scan.separator_offset != Some(md.meta_offset) {
        problems.push(format!("scan separator {:?} != meta_offset {}", scan.separator_offset, md.meta_offset));
    }
    let shape = &entry["shape"];
    let chunks: Vec<_> = scan.chunk_groups.iter().flat_map(|g| g.chunks.iter()).collect();
    let mut groups_per_device: HashMap<&DeviceId, u64> = HashMap::new();
    for g in &scan.chunk_groups {
        *groups_per_device.entry(&g.device).or_default() += 1;
        match reader.find_device(&g.device) {
            Ok(Some(_)) => {}
            other => problems.push(format!("scanned device {} not in the index: {other:?}", g.device)),
        }
    }
    let index = reader.index_shape().map_err(|e| e.to_string())?;
    let markers: BTreeMap<String, u64> = scan.markers.iter().map(|(k, v)| (format!("0x{k:02x}"), *v)).collect();
    let got = json!({
        "chunk_groups": scan.chunk_groups.len(),
        "devices": groups_per_device.len(),
        "max_chunk_groups_per_device": groups_per_device.values().max().copied().unwrap_or(0),
        "chunks": chunks.len(),
        "aligned_chunks": chunks.iter().filter(|c| c.header.role() != ChunkRole::NonAligned).count(),
        "max_pages_per_chunk": chunks.iter().map(|c| c.pages).max().unwrap_or(0),
        "multi_page_chunks": chunks.iter().filter(|c| c.pages > 1).count(),
        "empty_value_pages": chunks.iter().map(|c| c.empty_pages).sum::<u64>(),
        "index_internal_device_nodes": index.internal_device_nodes,
        "index_internal_measurement_nodes": index.internal_measurement_nodes,
        "index_device_levels": index.device_levels,
        "index_measurement_levels": index.measurement_levels,
        "operation_index_range_records": scan.operation_index_ranges.len(),
        "markers": markers,
    });
    check(&mut problems, "shape", got, shape);

    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n  "))
    }
}

#[test]
fn test_corpus_structure_matches_manifest() {
    let m = manifest();
    let files = manifest_files(&m);
    assert!(!files.is_empty(), "no corpus files found");
    let mut failed = 0;
    for entry in &files {
        if let Err(e) = check_file(entry) {
            failed += 1;
            eprintln!("FAIL {}:\n  {e}", entry["name"]);
        }
    }
    println!("corpus: {} files checked, {failed} failed", files.len());
    assert_eq!(failed, 0, "{failed} corpus files do not match their manifest");
}
