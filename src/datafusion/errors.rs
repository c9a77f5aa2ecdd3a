//! Crate errors as DataFusion errors.

use datafusion::common::DataFusionError;

use crate::error::TsFileError;

/// Convert a crate error into a DataFusion error (keeping the message and the source).
pub(crate) fn df_err(e: TsFileError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
