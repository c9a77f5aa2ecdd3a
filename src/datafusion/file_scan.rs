//! What every scan of one file shares, whatever the data model: where the file is, its
//! parsed metadata, the query's schemas, projection, pruning predicate, options, metrics,
//! decode budget and page decryptor, plus the fetch of chunk ranges. The table-model scan
//! (`opener.rs`) and the tree-model scan (`tree_scan.rs`) each add their own device list.

use std::ops::Range;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_optimizer::pruning::PruningPredicate;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::arrow::schema::TimeUnit;
use crate::datafusion::errors::df_err;
use crate::datafusion::metadata::FileMeta;
use crate::datafusion::metrics::TsFileScanMetrics;
use crate::datafusion::options::TsFileReadOptions;
use crate::format::reader::PageDecryptor;
use crate::format::FileReader;
use crate::io::{fetch_ranges, RangeSource};
use crate::read::DecodeBudget;

/// The state one partition needs to scan one file.
pub(crate) struct FileScan {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) location: Path,
    /// The file as the user names it (in errors).
    pub(crate) name: String,
    pub(crate) meta: Arc<FileMeta>,
    /// The table's file schema.
    pub(crate) schema: SchemaRef,
    /// The projected schema (what batches carry).
    pub(crate) projected: SchemaRef,
    /// Projected column indices into `schema`.
    pub(crate) indices: Vec<usize>,
    pub(crate) pruning: Option<Arc<PruningPredicate>>,
    pub(crate) options: TsFileReadOptions,
    pub(crate) batch_size: usize,
    pub(crate) metrics: TsFileScanMetrics,
    pub(crate) unit: TimeUnit,
    /// Decoded bytes of the whole scan, shared by its partitions (`max_decoded_bytes`).
    pub(crate) budget: Arc<DecodeBudget>,
    /// Page decryption with the scan's keys (a no-op for plaintext files).
    pub(crate) decryptor: Arc<dyn PageDecryptor>,
}

impl FileScan {
    /// A TsFile error as a DataFusion error naming the file.
    pub(crate) fn err(&self, e: crate::TsFileError) -> DataFusionError {
        df_err(e.in_file(&self.name))
    }

    /// Indices of the devices this partition owns: those whose first chunk starts in
    /// `range` (all when `None`), so byte-range splits never split a device. Counted in the
    /// `devices_total` metric.
    pub(crate) fn owned_devices(&self, first_offsets: impl Iterator<Item = u64>, range: Option<(u64, u64)>) -> Vec<usize> {
        let owned = crate::plan::devices_in_range(first_offsets, range);
        self.metrics.devices_total.add(owned.len());
        owned
    }

    /// The byte range of the chunk at `offset` (header and pages).
    pub(crate) fn chunk_range(&self, offset: u64) -> Result<Range<u64>> {
        let end = self.meta.plan.chunk_end(offset).map_err(|e| self.err(e))?;
        Ok(offset..end)
    }

    /// Fetch `ranges` (coalesced) and return a reader over them that decrypts with the
    /// scan's keys.
    pub(crate) async fn fetch(&self, ranges: Vec<Range<u64>>) -> Result<FileReader<RangeSource>> {
        let io = self.metrics.io_time.timer();
        let parts = fetch_ranges(&self.store, &self.location, ranges).await.map_err(|e| self.err(e))?;
        io.done();
        self.metrics.bytes_scanned.add(parts.iter().map(|(_, b)| b.len()).sum());
        self.metrics.requests.add(parts.len());
        let mut view = self.meta.reader().with_source(self.meta.reader().source().with_parts(parts));
        view.set_decryptor(self.decryptor.clone());
        Ok(view)
    }
}
