//! IoTDB's companion files: the input as a `.resource` time index, a `.mods2` deletion file
//! and (as lossy UTF-8) a `.mods` text file; every deletion parsed is matched against a few
//! devices (tree and table) so path patterns and TAG predicates run on hostile input.
#![no_main]

use datafusion_tsfile::format::DeviceId;
use datafusion_tsfile::iotdb::{parse_mods_v1, parse_mods_v2, parse_resource, DataFileName};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_resource(data);
    let text = String::from_utf8_lossy(data);
    let _ = DataFileName::parse(&text);
    let mut deletions = parse_mods_v1(&text);
    if let Ok(more) = parse_mods_v2(data) {
        deletions.extend(more);
    }
    let devices = [
        DeviceId::from_tree_path("root.sg.d1"),
        DeviceId::from_tree_path("root.a.b.c.d.e"),
        DeviceId::new(vec![Some("t".into()), None, Some("x".into())]),
    ];
    for d in &deletions {
        for device in &devices {
            let _ = d.deletes(device, "s1", 0, 100);
            let _ = d.deletes(device, "", i64::MIN, 0);
        }
    }
});
