//! Full reads from arbitrary bytes: open, then read every table (all columns, every device)
//! and every tree-model device (all measurements) to the end, once whole and once with a
//! time range and a projection.
#![no_main]

use bytes::Bytes;
use datafusion_tsfile::{TableRead, TsFile};
use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let bytes = Bytes::copy_from_slice(data);
    let Ok(file) = TsFile::from_source(Box::new(bytes), "fuzz".into(), common::options(data.len())) else {
        return;
    };
    for t in file.table_names() {
        if let Ok(batches) = file.read_table(&t, TableRead::default()) {
            for b in batches {
                if b.is_err() {
                    break;
                }
            }
        }
        // A narrower read exercises page skipping and partial pages.
        let last = file.arrow_schema(&t).ok().and_then(|s| s.fields().last().map(|f| f.name().clone()));
        let mut read = TableRead::default().with_time_range(-1000, 1_700_000_000_500).with_batch_size(7);
        if let Some(col) = last {
            read = read.with_projection([col]);
        }
        if let Ok(batches) = file.read_table(&t, read) {
            for b in batches {
                if b.is_err() {
                    break;
                }
            }
        }
    }
    for p in file.tree_prefixes() {
        let Ok(devices) = file.devices(&p) else { continue };
        for d in devices {
            let _ = file.read_tree_device(&d, None, None);
        }
    }
});
