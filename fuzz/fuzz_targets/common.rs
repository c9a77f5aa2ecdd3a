//! Shared by the fuzz targets: reader options whose limits scale with the input, so that
//! libFuzzer's `-rss_limit_mb` / `-malloc_limit_mb` flag any allocation the limits failed
//! to stop (with the defaults, a few bytes may legitimately decode to gigabytes).

use datafusion_tsfile::TsFileOptions;

/// Limits proportional to the input: decoded bytes and page sizes at most 64 times the
/// input plus 1 MiB, metadata at most the input.
#[allow(dead_code)]
pub fn options(len: usize) -> TsFileOptions {
    let mut o = TsFileOptions::default();
    let budget = len.saturating_mul(64).saturating_add(1 << 20);
    o.read.max_metadata_bytes = len as u64;
    o.read.max_decoded_bytes = budget as u64;
    o.read.decode.max_page_bytes = budget;
    o.read.decode.max_page_values = budget / 8;
    o.read.decode.max_dictionary_bytes = budget;
    o.read.decode.max_string_bytes = budget;
    o
}
