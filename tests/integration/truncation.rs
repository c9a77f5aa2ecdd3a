//! Truncation sweep: every prefix of several corpus files is an error (or, for the forward
//! scan, a report with an error), never a panic; and a file cut in its data section still
//! yields the chunk groups that were complete before the cut.

use bytes::Bytes;
use datafusion_tsfile::format::chunk::ChunkHeaderSuffix;
use datafusion_tsfile::format::scan::scan_data_section;
use datafusion_tsfile::format::FileReader;

use crate::common::corpus_dir;

const FILES: &[&str] = &["table_multi_tables", "tree_chunk_groups", "table_null_tags", "tree_extremes", "empty"];

fn load(name: &str) -> Bytes {
    let p = corpus_dir().join("files").join(format!("{name}.tsfile"));
    Bytes::from(std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

#[test]
fn test_truncated_prefixes_are_errors() {
    let mut checked = 0;
    for name in FILES {
        let full = load(name);
        assert!(FileReader::open(full.clone()).is_ok(), "{name}: the whole file must open");
        for cut in 0..full.len() {
            let prefix = full.slice(..cut);
            // Opening must fail: the tail is gone.
            assert!(FileReader::open(prefix.clone()).is_err(), "{name}: prefix {cut} opened");
            // The scan must not panic and must report why it stopped.
            if let Ok(report) = scan_data_section(&prefix, ChunkHeaderSuffix::None) {
                assert!(report.error.is_some() || report.separator_offset.is_some(), "{name}: cut {cut}");
                assert!(report.last_good_offset <= cut as u64);
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000, "only {checked} prefixes checked");
}

#[test]
fn test_scan_of_file_cut_mid_data_lists_complete_groups() {
    let full = load("tree_chunk_groups");
    let whole = scan_data_section(&full, ChunkHeaderSuffix::None).unwrap();
    assert!(whole.error.is_none());
    assert!(whole.chunk_groups.len() >= 4);
    // Cut in the middle of the 4th chunk group's first chunk.
    let g3 = &whole.chunk_groups[3];
    let first_chunk = &g3.chunks[0].header;
    let cut = (first_chunk.data_offset() + first_chunk.data_size / 2) as usize;
    let report = scan_data_section(&full.slice(..cut), ChunkHeaderSuffix::None).unwrap();
    assert!(report.error.is_some());
    assert_eq!(report.separator_offset, None);
    let complete: Vec<_> = report.chunk_groups.iter().filter(|g| g.complete).collect();
    assert_eq!(complete.len(), 3);
    for (a, b) in complete.iter().zip(&whole.chunk_groups) {
        assert_eq!(a.device, b.device);
        assert_eq!(a.chunks.len(), b.chunks.len());
    }
    assert_eq!(report.chunk_groups[3].device, g3.device);
    assert!(!report.chunk_groups[3].complete);
    assert_eq!(report.last_good_offset, first_chunk.offset);
}
