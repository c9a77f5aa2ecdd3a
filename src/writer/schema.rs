//! Arrow schema → TsFile table: which column is time, which are TAGs, ATTRIBUTEs and FIELDs,
//! and each FIELD's TsFile type, encoding and compression.
//!
//! | Arrow | TsFile |
//! | --- | --- |
//! | `Boolean` | BOOLEAN |
//! | `Int8`, `Int16`, `Int32`, `UInt8`, `UInt16` | INT32 |
//! | `Int64`, `UInt32`, `UInt64` (values above `i64::MAX` are an error) | INT64 |
//! | `Float16`, `Float32` | FLOAT |
//! | `Float64` | DOUBLE |
//! | `Utf8`, `LargeUtf8`, `Utf8View`, dictionaries of them | STRING (TEXT when the field's `tsfile.type` metadata says so) |
//! | `Binary`, `LargeBinary`, `BinaryView`, `FixedSizeBinary`, dictionaries of them | BLOB |
//! | `Date32`, `Date64` | DATE (`YYYYMMDD`, years 0–9999) |
//! | `Timestamp` (any unit, time zone dropped) | TIMESTAMP (the value as is) |
//!
//! Other types (decimals, times of day, intervals, nested types, `Null`) are an
//! [`TsFileError::Unsupported`] error naming the column. TAG columns must be strings (or
//! dictionaries of strings); a field whose metadata says `tsfile.category = ATTRIBUTE` is
//! written as an ATTRIBUTE column (in the schema only: TsFiles store no attribute values).

use arrow_schema::{DataType, Field, Schema};

use crate::arrow::schema::{CATEGORY_KEY, TYPE_KEY};
use crate::error::{Result, TsFileError};
use crate::format::TsDataType;
use crate::write::file::TableColumn;
use crate::write::{ColumnOptions, FieldSpec};
use crate::writer::options::TsFileWriterOptions;

/// Where each Arrow column goes.
#[derive(Debug, Clone)]
pub struct WritePlan {
    /// Index of the time column.
    pub time: usize,
    /// Indices of the TAG columns, in DeviceID segment order.
    pub tags: Vec<usize>,
    /// Index and type of each FIELD column, in the writer's field order.
    pub fields: Vec<(usize, TsDataType)>,
    /// The table's columns (schema order, time excluded).
    pub columns: Vec<TableColumn>,
}

fn is_string(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_string(v),
        _ => false,
    }
}

fn category(f: &Field) -> Option<&str> {
    f.metadata().get(CATEGORY_KEY).map(String::as_str)
}

/// The TsFile type a FIELD of this Arrow field is written as.
pub fn tsfile_type(f: &Field) -> Result<TsDataType> {
    let text = f.metadata().get(TYPE_KEY).is_some_and(|t| t.eq_ignore_ascii_case("TEXT"));
    fn of(t: &DataType, text: bool) -> Option<TsDataType> {
        Some(match t {
            DataType::Boolean => TsDataType::Boolean,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::UInt8 | DataType::UInt16 => TsDataType::Int32,
            DataType::Int64 | DataType::UInt32 | DataType::UInt64 => TsDataType::Int64,
            DataType::Float16 | DataType::Float32 => TsDataType::Float,
            DataType::Float64 => TsDataType::Double,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View if text => TsDataType::Text,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => TsDataType::String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => TsDataType::Blob,
            DataType::Date32 | DataType::Date64 => TsDataType::Date,
            DataType::Timestamp(..) => TsDataType::Timestamp,
            DataType::Dictionary(_, v) => {
                return of(v, text).filter(|t| t.physical() == Some(crate::format::PhysicalType::Binary))
            }
            _ => return None,
        })
    }
    of(f.data_type(), text).ok_or_else(|| {
        TsFileError::unsupported(format!("writing column '{}' of Arrow type {} to a TsFile", f.name(), f.data_type()))
    })
}

/// Plan the table for `schema` under `options`.
pub fn plan(schema: &Schema, options: &TsFileWriterOptions) -> Result<WritePlan> {
    let find = |name: &str| {
        schema
            .fields()
            .iter()
            .position(|f| f.name() == name)
            .or_else(|| schema.fields().iter().position(|f| f.name().eq_ignore_ascii_case(name)))
    };
    let time = find(&options.time_column).ok_or_else(|| {
        TsFileError::InvalidArgument(format!(
            "no time column '{}' in the input (columns: {}); set the option time_column",
            options.time_column,
            schema.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(", ")
        ))
    })?;
    let time_field = schema.field(time);
    if !matches!(time_field.data_type(), DataType::Timestamp(..) | DataType::Int64) {
        return Err(TsFileError::unsupported(format!(
            "time column '{}' of type {}: expected Timestamp or Int64",
            time_field.name(),
            time_field.data_type()
        )));
    }
    let tags: Vec<usize> = match &options.tags {
        Some(names) => names
            .iter()
            .map(|n| find(n).ok_or_else(|| TsFileError::InvalidArgument(format!("TAG column '{n}' is not in the input"))))
            .collect::<Result<_>>()?,
        None => {
            let marked: Vec<usize> = (0..schema.fields().len()).filter(|&i| category(schema.field(i)) == Some("TAG")).collect();
            if marked.is_empty() {
                (0..schema.fields().len())
                    .filter(|&i| i != time && matches!(schema.field(i).data_type(), DataType::Dictionary(_, v) if is_string(v)))
                    .collect()
            } else {
                marked
            }
        }
    };
    let mut columns = Vec::new();
    let mut fields = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if i == time {
            continue;
        }
        if tags.contains(&i) {
            if i == time || !is_string(f.data_type()) {
                return Err(TsFileError::InvalidArgument(format!(
                    "TAG column '{}' must be a string column, not {}",
                    f.name(),
                    f.data_type()
                )));
            }
            continue;
        }
        if category(f) == Some("ATTRIBUTE") {
            columns.push(TableColumn::Attribute(f.name().clone()));
            continue;
        }
        let data_type = tsfile_type(f)?;
        let key = f.name().to_ascii_lowercase();
        let mut opts = ColumnOptions::default_for(data_type);
        if let Some(e) = options.encodings.get(&key) {
            opts.encoding = *e;
        }
        if let Some(c) = options.compressions.get(&key).copied().or(options.compression) {
            opts.compression = c;
        }
        fields.push((i, data_type));
        columns.push(TableColumn::Field(FieldSpec { name: f.name().clone(), data_type, options: opts }));
    }
    if tags.contains(&time) {
        return Err(TsFileError::InvalidArgument("the time column cannot be a TAG".into()));
    }
    // TAGs first, in the order of the option (their order is the DeviceID's segment order).
    let mut all: Vec<TableColumn> = tags.iter().map(|&t| TableColumn::Tag(schema.field(t).name().clone())).collect();
    all.extend(columns);
    Ok(WritePlan { time, tags, fields, columns: all })
}

/// The time column's encoding and compression under `options`.
pub fn time_options(options: &TsFileWriterOptions) -> ColumnOptions {
    let mut t = options.format.time;
    let key = options.time_column.to_ascii_lowercase();
    if let Some(e) = options.encodings.get(&key).or(options.encodings.get("time")) {
        t.encoding = *e;
    }
    if let Some(c) = options.compressions.get(&key).or(options.compressions.get("time")).copied().or(options.compression) {
        t.compression = c;
    }
    t
}
