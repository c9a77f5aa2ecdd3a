//! Record batches that span devices.
//!
//! A fleet file holds many devices with few rows each (10,000 devices × 100 points is
//! typical of a flushed memtable). One batch per device would hand DataFusion thousands of
//! tiny batches, each paying per-batch costs in every operator and channel above the scan.
//! [`DeviceBatcher`] gathers the decoded rows of consecutive devices into batches of about
//! the session's batch size instead:
//!
//! * a device with at least `batch_size` rows is passed through as
//!   [`assemble_batches`] cuts it (after the rows gathered so far), so large devices cost
//!   no copy;
//! * a smaller device's rows are decoded in place after the rows gathered so far
//!   ([`DeviceBatcher::push_with`]; [`DeviceBatcher::push`] copies an already decoded group);
//!   a batch is emitted as soon as the next device might not fit, so batches never exceed
//!   `batch_size` rows and rows keep their order (device by device, time within a device);
//! * TAG columns are built once per batch: a dictionary whose values are the tag values of
//!   the batch's devices (a value repeated by consecutive devices is stored once) and whose
//!   keys repeat each device's entry over its rows.

use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{new_null_array, ArrayRef, DictionaryArray, PrimitiveArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::NullBufferBuilder;
use arrow_schema::SchemaRef;

use crate::arrow::array::{build_array, tag_array, time_array};
use crate::arrow::batch::{assemble_batches, ColumnSource};
use crate::arrow::schema::TimeUnit;
use crate::error::{Result, TsFileError};
use crate::format::{DeviceId, TsDataType};
use crate::read::aligned::DecodedGroup;

/// Gathers decoded chunk groups of consecutive devices into record batches of at most
/// `batch_size` rows (see the module doc).
#[derive(Debug)]
pub struct DeviceBatcher {
    schema: SchemaRef,
    sources: Vec<ColumnSource>,
    /// TsFile type and name of each decoded FIELD column, in the groups' order.
    fields: Vec<(TsDataType, String)>,
    unit: TimeUnit,
    batch_size: usize,
    /// Types of the decoded FIELD columns.
    types: Vec<TsDataType>,
    /// Gathered rows: timestamps and field columns, one dictionary per TAG source.
    rows: DecodedGroup,
    tags: Vec<TagColumn>,
}

/// The dictionary of one TAG column being gathered.
#[derive(Debug)]
struct TagColumn {
    segment: usize,
    keys: Vec<i32>,
    nulls: NullBufferBuilder,
    values: StringBuilder,
    /// The last value appended to `values` (reused for a following device with the same value).
    last: Option<String>,
}

impl TagColumn {
    fn new(segment: usize) -> Self {
        TagColumn { segment, keys: Vec::new(), nulls: NullBufferBuilder::new(0), values: StringBuilder::new(), last: None }
    }

    /// Append `rows` rows of `value` (null when `None`).
    fn push(&mut self, value: Option<&str>, rows: usize) -> Result<()> {
        match value {
            None => {
                self.keys.resize(self.keys.len() + rows, 0);
                self.nulls.append_n_nulls(rows);
            }
            Some(v) => {
                if self.last.as_deref() != Some(v) {
                    self.values.append_value(v);
                    let last = self.last.get_or_insert_with(String::new);
                    last.clear();
                    last.push_str(v);
                }
                let key = i32::try_from(self.values.len().saturating_sub(1)).map_err(|_| {
                    TsFileError::corrupt("column", None, "internal: more TAG values in a batch than keys can index")
                })?;
                self.keys.resize(self.keys.len() + rows, key);
                self.nulls.append_n_non_nulls(rows);
            }
        }
        Ok(())
    }

    /// The gathered rows as a dictionary array; the column starts over.
    fn finish(&mut self) -> Result<ArrayRef> {
        let n = self.keys.len();
        let keys = PrimitiveArray::<Int32Type>::new(
            std::mem::replace(&mut self.keys, Vec::with_capacity(n)).into(),
            self.nulls.finish(),
        );
        self.last = None;
        let values: ArrayRef = Arc::new(self.values.finish());
        Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values)?))
    }
}

impl DeviceBatcher {
    /// A batcher producing batches of `schema` whose columns come from `sources`; `fields`
    /// gives the TsFile type and name of each decoded FIELD column in the groups' order.
    pub fn new(
        schema: SchemaRef,
        sources: Vec<ColumnSource>,
        fields: Vec<(TsDataType, String)>,
        unit: TimeUnit,
        batch_size: usize,
    ) -> Result<Self> {
        let types: Vec<TsDataType> = fields.iter().map(|(ty, _)| *ty).collect();
        let rows = DecodedGroup::new(&types)?;
        let tags = sources
            .iter()
            .filter_map(|s| if let ColumnSource::Tag(seg) = s { Some(TagColumn::new(*seg)) } else { None })
            .collect();
        Ok(DeviceBatcher { schema, sources, fields, unit, batch_size: batch_size.max(1), types, rows, tags })
    }

    /// Rows gathered and not yet emitted.
    pub fn pending_rows(&self) -> usize {
        self.rows.rows()
    }

    /// Add the decoded rows of one chunk group of `device` (the group is left empty);
    /// returns the batches that are complete.
    pub fn push(&mut self, device: &DeviceId, group: &mut DecodedGroup) -> Result<Vec<RecordBatch>> {
        if group.columns.len() != self.types.len() {
            return Err(TsFileError::corrupt("column", None, "internal: a decoded group with another number of fields"));
        }
        self.push_with(device, group.rows(), |out| {
            out.times.extend_from_slice(&group.times);
            group.times.clear();
            for (mine, theirs) in out.columns.iter_mut().zip(group.columns.iter_mut()) {
                mine.append_builder(theirs)?;
            }
            Ok(())
        })
    }

    /// Add the rows of one device that `decode` appends to the group it is given (at most
    /// `max_rows` rows, for example the device's row count from its statistics): decoded in
    /// place after the rows gathered so far when the device is small, into a group of its
    /// own (cut into batches, no copy) when it holds a batch or more. Returns the batches
    /// that are complete. After an error the batcher must be discarded.
    pub fn push_with(
        &mut self,
        device: &DeviceId,
        max_rows: usize,
        decode: impl FnOnce(&mut DecodedGroup) -> Result<()>,
    ) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        if max_rows >= self.batch_size {
            out.extend(self.finish()?);
            let mut own = DecodedGroup::new(&self.types)?;
            decode(&mut own)?;
            if own.rows() > 0 {
                let fields: Vec<(TsDataType, &str)> = self.fields.iter().map(|(t, n)| (*t, n.as_str())).collect();
                out.extend(assemble_batches(&self.schema, &self.sources, device, &mut own, &fields, self.unit, self.batch_size)?);
            }
            return Ok(out);
        }
        if self.pending_rows() + max_rows > self.batch_size {
            out.extend(self.finish()?);
        }
        let before = self.pending_rows();
        decode(&mut self.rows)?;
        let added = self.pending_rows().saturating_sub(before);
        if self.pending_rows() > before + max_rows || self.rows.columns.iter().any(|c| c.len() != self.pending_rows()) {
            return Err(TsFileError::corrupt("column", None, "internal: a device decoded more rows than announced"));
        }
        for tag in &mut self.tags {
            tag.push(device.segment(tag.segment), added)?;
        }
        if self.pending_rows() >= self.batch_size {
            out.extend(self.finish()?);
        }
        Ok(out)
    }

    /// The gathered rows as one batch (`None` when nothing is pending); the batcher starts over.
    pub fn finish(&mut self) -> Result<Option<RecordBatch>> {
        let rows = self.rows.rows();
        if rows == 0 {
            return Ok(None);
        }
        let mut field_arrays: Vec<Option<ArrayRef>> = Vec::with_capacity(self.rows.columns.len());
        for (col, (ty, name)) in self.rows.columns.iter_mut().zip(&self.fields) {
            let (values, nulls) = col.take();
            col.reserve(rows);
            field_arrays.push(Some(build_array(values, nulls, *ty, self.unit, name)?));
        }
        let mut tag_arrays: Vec<Option<ArrayRef>> = Vec::with_capacity(self.tags.len());
        for tag in &mut self.tags {
            tag_arrays.push(Some(tag.finish()?));
        }
        let times = time_array(std::mem::replace(&mut self.rows.times, Vec::with_capacity(rows)), self.unit);
        let missing = || TsFileError::corrupt("column", None, "internal: a gathered column is used twice or missing");
        let mut arrays = Vec::with_capacity(self.sources.len());
        let mut next_tag = 0usize;
        for s in &self.sources {
            arrays.push(match s {
                ColumnSource::Time => times.clone(),
                ColumnSource::Tag(_) => {
                    next_tag += 1;
                    tag_arrays.get_mut(next_tag - 1).and_then(Option::take).ok_or_else(missing)?
                }
                ColumnSource::Null(ty) => new_null_array(ty, rows),
                ColumnSource::Const(v) => tag_array(v.as_deref(), rows),
                ColumnSource::Field(i) => field_arrays.get_mut(*i).and_then(Option::take).ok_or_else(missing)?,
            });
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(Some(RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use arrow_schema::{DataType, Field, Schema};

    use crate::encoding::BinaryValues;
    use crate::read::column::{ColumnBuilder, ColumnValues};

    /// Output: time, tag 1, a constant, value (DOUBLE, every third row null), tag 2,
    /// a null column, label (STRING).
    fn schema() -> SchemaRef {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        Arc::new(Schema::new(vec![
            Field::new("time", DataType::Int64, false),
            Field::new("region", dict.clone(), true),
            Field::new("path", dict.clone(), true),
            Field::new("value", DataType::Float64, true),
            Field::new("device", dict, true),
            Field::new("attr", DataType::Utf8, true),
            Field::new("label", DataType::Utf8, true),
        ]))
    }

    fn sources() -> Vec<ColumnSource> {
        vec![
            ColumnSource::Time,
            ColumnSource::Tag(1),
            ColumnSource::Const(Some("root.x".into())),
            ColumnSource::Field(0),
            ColumnSource::Tag(2),
            ColumnSource::Null(DataType::Utf8),
            ColumnSource::Field(1),
        ]
    }

    fn fields() -> Vec<(TsDataType, String)> {
        vec![(TsDataType::Double, "value".into()), (TsDataType::String, "label".into())]
    }

    /// Device `d`: region `r<d/3>` (null for d = 4), device `dev<d>`; `rows` rows.
    fn device(d: usize) -> DeviceId {
        let region = (d != 4).then(|| format!("r{}", d / 3));
        DeviceId::new(vec![Some("t".into()), region, Some(format!("dev{d}"))])
    }

    fn group(d: usize, rows: usize) -> DecodedGroup {
        let mut value = ColumnBuilder::new(TsDataType::Double).unwrap();
        let mut label = ColumnBuilder::new(TsDataType::String).unwrap();
        for i in 0..rows {
            if i % 3 == 2 {
                value.append_nulls(1).unwrap();
            } else {
                value.push_value_from(&ColumnValues::Double(vec![d as f64 + i as f64 / 100.0]), 0).unwrap();
            }
            let mut s = BinaryValues::new();
            s.push(format!("l{d}-{i}").as_bytes()).unwrap();
            label.push_value_from(&ColumnValues::Binary(s), 0).unwrap();
        }
        let times = (0..rows as i64).map(|i| d as i64 * 1000 + i).collect();
        DecodedGroup { times, columns: vec![value, label], pages_total: 1, pages_pruned: 0 }
    }

    fn cells(batches: &[RecordBatch]) -> Vec<String> {
        let mut out = Vec::new();
        for b in batches {
            for i in 0..b.num_rows() {
                let row: Vec<String> = b
                    .columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(i) {
                            return "null".to_string();
                        }
                        match c.data_type() {
                            DataType::Int64 => c.as_primitive::<arrow_array::types::Int64Type>().value(i).to_string(),
                            DataType::Float64 => c.as_primitive::<arrow_array::types::Float64Type>().value(i).to_string(),
                            DataType::Utf8 => c.as_string::<i32>().value(i).to_string(),
                            DataType::Dictionary(..) => {
                                let d = c.as_dictionary::<Int32Type>();
                                let k = d.keys().value(i) as usize;
                                d.values().as_string::<i32>().value(k).to_string()
                            }
                            other => panic!("unexpected type {other}"),
                        }
                    })
                    .collect();
                out.push(row.join("|"));
            }
        }
        out
    }

    /// Rows per device: empty, single rows, exactly and more than the batch size, and runs
    /// that fill a batch exactly or overflow it by one.
    const ROWS: [usize; 12] = [0, 1, 3, 5, 8, 2, 20, 1, 7, 1, 4, 4];

    #[test]
    fn test_gathered_batches_hold_the_rows_of_per_device_batches() {
        for batch_size in [1, 2, 7, 8, 9, 64] {
            let mut per_device = Vec::new();
            let mut gathered = Vec::new();
            let mut b = DeviceBatcher::new(schema(), sources(), fields(), TimeUnit::Raw, batch_size).unwrap();
            let f = fields();
            let f: Vec<(TsDataType, &str)> = f.iter().map(|(t, n)| (*t, n.as_str())).collect();
            for (d, rows) in ROWS.iter().enumerate() {
                let mut g = group(d, *rows);
                per_device
                    .extend(assemble_batches(&schema(), &sources(), &device(d), &mut g, &f, TimeUnit::Raw, batch_size).unwrap());
                let mut g = group(d, *rows);
                gathered.extend(b.push(&device(d), &mut g).unwrap());
                assert!(g.times.is_empty(), "the group was taken");
            }
            gathered.extend(b.finish().unwrap());
            assert_eq!(b.pending_rows(), 0);
            assert!(b.finish().unwrap().is_none(), "nothing pending after finish");
            let total: usize = ROWS.iter().sum();
            assert_eq!(cells(&gathered), cells(&per_device), "batch size {batch_size}");
            assert_eq!(cells(&gathered).len(), total);
            assert!(gathered.iter().all(|g| (1..=batch_size).contains(&g.num_rows())), "batch size {batch_size}");
            // Fewer batches than devices with rows once devices are small against the batch.
            if batch_size >= 8 {
                assert!(gathered.len() < per_device.len(), "batch size {batch_size}: {} batches", gathered.len());
            }
        }
    }

    #[test]
    fn test_tag_dictionaries_store_a_value_repeated_by_consecutive_devices_once() {
        let mut b = DeviceBatcher::new(schema(), sources(), fields(), TimeUnit::Raw, 100).unwrap();
        // Devices 0, 1, 2 share region r0; 3 is r1; 4 has a null region; 5 is r1 again.
        for d in 0..6 {
            assert!(b.push(&device(d), &mut group(d, 2)).unwrap().is_empty());
        }
        let batch = b.finish().unwrap().unwrap();
        assert_eq!(batch.num_rows(), 12);
        let region = batch.column(1).as_dictionary::<Int32Type>();
        let values: Vec<&str> = region.values().as_string::<i32>().iter().flatten().collect();
        assert_eq!(values, ["r0", "r1"], "r0 once for three devices; r1 reused after the null device");
        let keys: Vec<Option<i32>> = region.keys().iter().collect();
        let (a, b) = (Some(0), Some(1));
        assert_eq!(keys, [a, a, a, a, a, a, b, b, None, None, b, b]);
        assert_eq!(region.null_count(), 2);
        assert!(region.is_null(8) && region.is_null(9));
        let device = batch.column(4).as_dictionary::<Int32Type>();
        assert_eq!(device.values().len(), 6);
        assert_eq!(batch.column(2).as_dictionary::<Int32Type>().values().as_string::<i32>().value(0), "root.x");
        assert_eq!(batch.column(5).null_count(), 12);
        assert_eq!(batch.column(3).null_count(), 0, "rows 0 and 1 of each device are non-null");
    }

    #[test]
    fn test_a_group_with_another_number_of_fields_is_an_error() {
        let mut b = DeviceBatcher::new(schema(), sources(), fields(), TimeUnit::Raw, 10).unwrap();
        let mut g = group(0, 3);
        g.columns.pop();
        assert!(b.push(&device(0), &mut g).is_err());
    }
}
