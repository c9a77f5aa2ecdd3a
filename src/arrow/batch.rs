//! Assembling `RecordBatch`es from a decoded chunk group: the time column, TAG columns
//! (constant per device), null columns and the decoded FIELD columns, in output order, cut to
//! the requested batch size.

use arrow_array::{new_null_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef};

use crate::arrow::array::{build_array, tag_array, time_array};
use crate::arrow::schema::TimeUnit;
use crate::error::{Result, TsFileError};
use crate::format::{DeviceId, TsDataType};
use crate::read::aligned::DecodedGroup;

/// Where one output column comes from.
#[derive(Debug, Clone)]
pub enum ColumnSource {
    /// The time column.
    Time,
    /// A TAG column: DeviceID segment `i`.
    Tag(usize),
    /// A column with no stored values (ATTRIBUTE, or absent from this file): all null.
    Null(DataType),
    /// A string column holding one value (or null) on every row, as a dictionary like TAG
    /// columns: a tree-model device's path and path levels.
    Const(Option<String>),
    /// Decoded FIELD column `i` of the group.
    Field(usize),
}

/// Build the batches of one decoded chunk group. `fields` gives the TsFile type and name of
/// each decoded column, in the group's order.
pub fn assemble_batches(
    schema: &SchemaRef,
    sources: &[ColumnSource],
    device: &DeviceId,
    group: &mut DecodedGroup,
    fields: &[(TsDataType, &str)],
    unit: TimeUnit,
    batch_size: usize,
) -> Result<Vec<RecordBatch>> {
    let rows = group.times.len();
    if rows == 0 {
        return Ok(Vec::new());
    }
    let mut field_arrays: Vec<Option<ArrayRef>> = Vec::with_capacity(fields.len());
    for (col, (ty, name)) in group.columns.iter_mut().zip(fields) {
        let (values, nulls) = col.take();
        field_arrays.push(Some(build_array(values, nulls, *ty, unit, name)?));
    }
    let times = time_array(std::mem::take(&mut group.times), unit);
    let mut arrays = Vec::with_capacity(sources.len());
    for s in sources {
        arrays.push(match s {
            ColumnSource::Time => times.clone(),
            ColumnSource::Tag(seg) => tag_array(device.segment(*seg), rows),
            ColumnSource::Null(ty) => new_null_array(ty, rows),
            ColumnSource::Const(v) => tag_array(v.as_deref(), rows),
            ColumnSource::Field(i) => field_arrays
                .get_mut(*i)
                .and_then(Option::take)
                .ok_or_else(|| TsFileError::corrupt("column", None, "internal: a decoded field is used twice or missing"))?,
        });
    }
    let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &RecordBatchOptions::new().with_row_count(Some(rows)))?;
    let size = batch_size.max(1);
    Ok((0..rows).step_by(size).map(|off| batch.slice(off, size.min(rows - off))).collect())
}
