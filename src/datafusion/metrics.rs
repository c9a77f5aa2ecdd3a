//! Metrics of a TsFile scan, shown by `EXPLAIN ANALYZE` on the `DataSourceExec`.
//!
//! | metric | meaning |
//! | --- | --- |
//! | `devices_total` | devices of the table owned by the scanned byte ranges |
//! | `devices_pruned` | devices skipped by tag values or series statistics (no I/O) |
//! | `chunk_groups_total` / `chunk_groups_pruned` | chunk groups of the remaining devices / skipped by chunk statistics |
//! | `chunks_total` / `chunks_pruned` | chunks of the non-aligned (tree-model) series of the remaining devices / skipped by chunk statistics |
//! | `pages_total` / `pages_pruned` | pages of the read chunk groups and non-aligned chunks / skipped by page statistics (not decompressed) |
//! | `predicate_evaluation_errors` | evaluations of the pruning predicate against statistics (devices, chunk groups, chunks or pages) that failed: the units are kept and read, never pruned, and the query does not fail (see [`prune_or_keep`](crate::datafusion::pruning::prune_or_keep)) |
//! | `rows_decoded` | rows decoded and returned by the scan |
//! | `bytes_scanned` | bytes of chunk data fetched |
//! | `requests` | requests that fetched chunk data (after coalescing nearby ranges; remote stores send them concurrently) |
//! | `metadata_requests` / `metadata_bytes` | requests and bytes that fetched footers and index areas (zero on a cache hit: planning usually loads them) |
//! | `metadata_load_time` | time to fetch and parse footers (zero on a cache hit) |
//! | `io_time` | time fetching chunk data |
//! | `decode_time` | time decompressing and decoding pages into Arrow |

use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder, Time};

/// Handles to the metrics of one file scanned by one partition.
#[derive(Debug, Clone)]
pub struct TsFileScanMetrics {
    /// Devices owned by the scanned ranges.
    pub devices_total: Count,
    /// Devices pruned before any data I/O.
    pub devices_pruned: Count,
    /// Chunk groups of the remaining devices.
    pub chunk_groups_total: Count,
    /// Chunk groups pruned by chunk statistics.
    pub chunk_groups_pruned: Count,
    /// Chunks of the non-aligned series of the remaining devices.
    pub chunks_total: Count,
    /// Non-aligned chunks pruned by chunk statistics.
    pub chunks_pruned: Count,
    /// Pages of the chunk groups read.
    pub pages_total: Count,
    /// Pages pruned by page statistics.
    pub pages_pruned: Count,
    /// Failed evaluations of the pruning predicate (the units were kept).
    pub predicate_evaluation_errors: Count,
    /// Rows produced.
    pub rows_decoded: Count,
    /// Chunk bytes fetched.
    pub bytes_scanned: Count,
    /// Requests that fetched chunk bytes.
    pub requests: Count,
    /// Requests that fetched footers and index areas.
    pub metadata_requests: Count,
    /// Bytes of footers and index areas fetched.
    pub metadata_bytes: Count,
    /// Footer fetch + parse time.
    pub metadata_load_time: Time,
    /// Chunk fetch time.
    pub io_time: Time,
    /// Decompress + decode time.
    pub decode_time: Time,
}

impl TsFileScanMetrics {
    /// Register the metrics of `filename` for `partition`.
    pub fn new(set: &ExecutionPlanMetricsSet, partition: usize, filename: &str) -> Self {
        let count = |name: &'static str| {
            MetricBuilder::new(set).with_new_label("filename", filename.to_string()).counter(name, partition)
        };
        let time = |name: &'static str| {
            MetricBuilder::new(set).with_new_label("filename", filename.to_string()).subset_time(name, partition)
        };
        TsFileScanMetrics {
            devices_total: count("devices_total"),
            devices_pruned: count("devices_pruned"),
            chunk_groups_total: count("chunk_groups_total"),
            chunk_groups_pruned: count("chunk_groups_pruned"),
            chunks_total: count("chunks_total"),
            chunks_pruned: count("chunks_pruned"),
            pages_total: count("pages_total"),
            pages_pruned: count("pages_pruned"),
            predicate_evaluation_errors: count("predicate_evaluation_errors"),
            rows_decoded: count("rows_decoded"),
            bytes_scanned: count("bytes_scanned"),
            requests: count("requests"),
            metadata_requests: count("metadata_requests"),
            metadata_bytes: count("metadata_bytes"),
            metadata_load_time: time("metadata_load_time"),
            io_time: time("io_time"),
            decode_time: time("decode_time"),
        }
    }
}

impl crate::plan::AccessCounter for TsFileScanMetrics {
    fn devices(&self, total: usize, pruned: usize) {
        self.devices_pruned.add(pruned);
        let _ = total; // counted when the partition's devices are chosen (`FileScan::owned_devices`)
    }

    fn chunk_groups(&self, total: usize, pruned: usize) {
        self.chunk_groups_total.add(total);
        self.chunk_groups_pruned.add(pruned);
    }

    fn pages(&self, total: usize, pruned: usize, rows: usize) {
        self.pages_total.add(total);
        self.pages_pruned.add(pruned);
        self.rows_decoded.add(rows);
    }
}
