//! TsFile types → Arrow types.
//!
//! | TsFile                         | Arrow                                                   |
//! |--------------------------------|---------------------------------------------------------|
//! | time column                    | `Timestamp(ms)` by default ([`TimeUnit`]); `Int64` raw  |
//! | TAG (STRING)                   | `Dictionary(Int32, Utf8)`: one value per device, no per-row copies |
//! | BOOLEAN, INT32, INT64          | `Boolean`, `Int32`, `Int64`                             |
//! | FLOAT, DOUBLE                  | `Float32`, `Float64`                                    |
//! | TEXT, STRING                   | `Utf8`                                                  |
//! | BLOB, OBJECT                   | `Binary`                                                |
//! | DATE (`YYYYMMDD`)              | `Date32`                                                |
//! | TIMESTAMP field                | `Timestamp` in the time column's unit                   |
//! | ATTRIBUTE                      | `Utf8`, always null (values are not stored in files)    |
//!
//! Every field carries its TsFile column category and type in its metadata under
//! `tsfile.category` and `tsfile.type`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{Result, TsFileError};
use crate::format::{ColumnCategory, TableSchema, TsDataType};

/// Metadata key holding a field's TsFile column category.
pub const CATEGORY_KEY: &str = "tsfile.category";
/// Metadata key holding a field's TsFile data type.
pub const TYPE_KEY: &str = "tsfile.type";

/// The Arrow representation of the time column and TIMESTAMP fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum TimeUnit {
    /// `Timestamp(Millisecond)` (the default; what IoTDB uses).
    #[default]
    Millisecond,
    /// `Timestamp(Microsecond)`.
    Microsecond,
    /// `Timestamp(Nanosecond)`.
    Nanosecond,
    /// Plain `Int64`.
    Raw,
}

impl TimeUnit {
    /// The option value that [`TimeUnit::parse`] reads back: `ms`, `us`, `ns` or `raw`.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
            TimeUnit::Raw => "raw",
        }
    }

    /// Parse `ms`, `us`, `ns` or `raw`.
    pub fn parse(s: &str) -> Result<TimeUnit> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "ms" | "millisecond" | "milliseconds" => TimeUnit::Millisecond,
            "us" | "microsecond" | "microseconds" => TimeUnit::Microsecond,
            "ns" | "nanosecond" | "nanoseconds" => TimeUnit::Nanosecond,
            "raw" | "int64" => TimeUnit::Raw,
            other => return Err(TsFileError::InvalidArgument(format!("time_unit '{other}': expected ms, us, ns or raw"))),
        })
    }

    /// The Arrow type of timestamps in this unit.
    pub fn data_type(self) -> DataType {
        match self {
            TimeUnit::Millisecond => DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
            TimeUnit::Microsecond => DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None),
            TimeUnit::Nanosecond => DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, None),
            TimeUnit::Raw => DataType::Int64,
        }
    }
}

/// The Arrow type of TAG columns.
pub fn tag_data_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The Arrow type of a FIELD of `data_type`.
pub fn value_data_type(data_type: TsDataType, unit: TimeUnit) -> Result<DataType> {
    Ok(match data_type {
        TsDataType::Boolean => DataType::Boolean,
        TsDataType::Int32 => DataType::Int32,
        TsDataType::Int64 => DataType::Int64,
        TsDataType::Float => DataType::Float32,
        TsDataType::Double => DataType::Float64,
        TsDataType::Text | TsDataType::String => DataType::Utf8,
        TsDataType::Blob | TsDataType::Object => DataType::Binary,
        TsDataType::Date => DataType::Date32,
        TsDataType::Timestamp => unit.data_type(),
        TsDataType::Vector | TsDataType::Unknown => {
            return Err(TsFileError::unsupported(format!("column values of type {data_type}")))
        }
    })
}

fn with_meta(field: Field, category: &str, ty: &str) -> Field {
    field.with_metadata(HashMap::from([(CATEGORY_KEY.to_string(), category.to_string()), (TYPE_KEY.to_string(), ty.to_string())]))
}

/// The time column's name: the schema's TIME-category column, else `time`.
pub fn time_column_name(schema: &TableSchema) -> &str {
    schema.time_column().map_or("time", |c| c.name.as_str())
}

/// The time column's Arrow field.
pub fn time_field(name: &str, unit: TimeUnit) -> Field {
    with_meta(Field::new(name, unit.data_type(), false), "TIME", "INT64")
}

/// The Arrow schema of a table: the time column, then every other column in schema order.
pub fn table_arrow_schema(schema: &TableSchema, unit: TimeUnit) -> Result<SchemaRef> {
    let mut fields = vec![time_field(time_column_name(schema), unit)];
    for c in &schema.columns {
        let f = match c.category {
            ColumnCategory::Time => continue,
            ColumnCategory::Tag => Field::new(&c.name, tag_data_type(), true),
            ColumnCategory::Attribute => Field::new(&c.name, DataType::Utf8, true),
            ColumnCategory::Field => Field::new(&c.name, value_data_type(c.data_type, unit)?, true),
        };
        fields.push(with_meta(f, c.category.name(), c.data_type.name()));
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// A TAG-like string column (`Dictionary(Int32, Utf8)`, category `TAG`, type `STRING`) that
/// is not stored in a table schema: a tree-model table's `device` and path level columns.
pub fn tag_field(name: &str, nullable: bool) -> Field {
    with_meta(Field::new(name, tag_data_type(), nullable), "TAG", TsDataType::String.name())
}

/// The Arrow field of a tree-model measurement.
pub fn measurement_field(name: &str, data_type: TsDataType, unit: TimeUnit) -> Result<Field> {
    Ok(with_meta(Field::new(name, value_data_type(data_type, unit)?, true), "FIELD", data_type.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_time_unit_parse() {
        assert_eq!(TimeUnit::parse("US").unwrap(), TimeUnit::Microsecond);
        assert_eq!(TimeUnit::parse("raw").unwrap().data_type(), DataType::Int64);
        assert!(TimeUnit::parse("days").is_err());
    }

    #[test]
    fn test_value_types() {
        assert_eq!(value_data_type(TsDataType::Date, TimeUnit::Millisecond).unwrap(), DataType::Date32);
        assert_eq!(
            value_data_type(TsDataType::Timestamp, TimeUnit::Nanosecond).unwrap(),
            DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, None)
        );
        assert!(value_data_type(TsDataType::Vector, TimeUnit::Millisecond).is_err());
    }
}
