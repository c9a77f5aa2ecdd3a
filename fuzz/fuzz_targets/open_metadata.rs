//! Whole-file open, metadata and index walk: `TsFile` open with its encryption check (key-less
//! and with a master key), every
//! table, device and series through the index (walks and point look-ups), every chunk
//! header the index points at, the bloom filter, and the forward recovery scan.
#![no_main]

use bytes::Bytes;
use datafusion_tsfile::crypto::{EncryptionKeys, MasterKey, PageCipher};
use datafusion_tsfile::format::chunk::ChunkHeaderSuffix;
use datafusion_tsfile::format::scan::scan_data_section;
use datafusion_tsfile::TsFile;
use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let bytes = Bytes::copy_from_slice(data);
    let _ = scan_data_section(&bytes, ChunkHeaderSuffix::AeadOrdinalAndAuthentication);
    let Ok(file) = TsFile::from_source(Box::new(bytes), "fuzz".into(), common::options(data.len())) else {
        return;
    };
    let r = file.structure();
    // Encryption properties and header, with and without a key (key parsing, unwrap).
    let _ = PageCipher::for_file(r.encryption_header(), r.metadata(), &EncryptionKeys::default());
    if let Ok(k) = MasterKey::parse("tsfile-rs-master") {
        let _ = PageCipher::for_file(r.encryption_header(), r.metadata(), &EncryptionKeys::default().with_master_key(k));
    }
    let _ = r.index_shape();
    for t in file.table_names() {
        let _ = file.arrow_schema(&t);
        let _ = file.devices(&t);
    }
    for p in file.tree_prefixes() {
        let _ = file.devices(&p);
    }
    let Ok(devices) = r.all_devices() else { return };
    let bloom = r.metadata().bloom_filter.clone();
    // Point look-ups re-read index nodes each time: a few per input keep the rate up.
    let mut lookups = 0;
    for d in &devices {
        lookups += 1;
        if lookups <= 16 {
            let _ = r.find_device(&d.device);
        }
        let Ok(series) = r.series(d) else { continue };
        for s in &series {
            lookups += 1;
            if lookups <= 32 {
                let _ = r.find_series(d, &s.measurement);
            }
            if let Some(b) = &bloom {
                let _ = b.may_contain(&d.device.to_string(), &s.measurement);
            }
            for c in &s.chunks {
                if let Ok(h) = r.read_chunk_header(c.offset) {
                    let _ = (h.data_type(), h.encoding(), h.compression());
                }
            }
        }
    }
});
