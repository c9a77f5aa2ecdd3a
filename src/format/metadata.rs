//! TsFileMetadata: the root of the footer, and the table schemas it holds.
//!
//! ```text
//! TsFileMetadata := UVarInt table_index_count, (VarString table_name, MetadataIndexNode root)*,
//!                   UVarInt table_schema_count, (VarString table_name, TableSchema)*,
//!                   int64 meta_offset, BloomFilter, VarInt property_count,
//!                   (VarString key, VarBinary value)*
//! TableSchema    := UVarInt column_count, (MeasurementSchema, int32 column_category)*
//! MeasurementSchema := String32 name, byte data_type, byte encoding, byte compression,
//!                      int32 property_count, (String32 key, String32 value)*
//! ```
//!
//! It sits just before the trailing `int32 L` + magic and must consume exactly `L` bytes.
//! `meta_offset` points at the `0x02` separator that ends the data section. Property values
//! are raw bytes (null and empty differ) and are kept byte for byte.

use crate::error::{Result, TsFileError};
use crate::format::index::{IndexLevel, MetadataIndexNode};
use crate::format::{BloomFilter, ColumnCategory, Compression, Cursor, Encoding, TsDataType};

/// One column of a table schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSchema {
    /// Column name, with the case stored in the file.
    pub name: String,
    /// Value type.
    pub data_type: TsDataType,
    /// Raw encoding id (TAG/ATTRIBUTE columns carry one although they have no chunks).
    pub encoding: u8,
    /// Raw compression id.
    pub compression: u8,
    /// Schema properties (`String32` key/value; values may be null).
    pub properties: Vec<(String, Option<String>)>,
    /// TAG, FIELD, ATTRIBUTE or TIME.
    pub category: ColumnCategory,
}

impl ColumnSchema {
    /// The encoding, if the id is known.
    pub fn encoding(&self) -> Result<Encoding> {
        Encoding::try_from(self.encoding)
    }

    /// The compression, if the id is known.
    pub fn compression(&self) -> Result<Compression> {
        Compression::try_from(self.compression)
    }
}

/// A table's schema, columns in declared order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSchema {
    /// Table name.
    pub name: String,
    /// Columns in schema order (TAG order defines DeviceID segment order).
    pub columns: Vec<ColumnSchema>,
}

impl TableSchema {
    fn parse(c: &mut Cursor<'_>, name: String) -> Result<TableSchema> {
        let start = c.offset();
        let n = c.uvarint("table column count")? as usize;
        // A column takes at least 4+1+1+1+4+4 bytes.
        if n.saturating_mul(15) > c.remaining() {
            return Err(TsFileError::corrupt(
                "table schema",
                Some(start),
                format!("{n} columns cannot fit in {} bytes", c.remaining()),
            ));
        }
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            let col_at = c.offset();
            let cname = c
                .string32("column name")?
                .ok_or_else(|| TsFileError::corrupt("table schema", Some(col_at), "null column name"))?;
            let dt_at = c.offset();
            let data_type = TsDataType::try_from(c.u8("column data type")?)
                .map_err(|e| e.context(format!("column '{cname}' at offset {dt_at}")))?;
            let encoding = c.u8("column encoding")?;
            let compression = c.u8("column compression")?;
            let pc_at = c.offset();
            let pcount = c.i32("column property count")?;
            let pcount = usize::try_from(pcount)
                .map_err(|_| TsFileError::corrupt("table schema", Some(pc_at), format!("negative property count {pcount}")))?;
            if pcount.saturating_mul(8) > c.remaining() {
                return Err(TsFileError::corrupt(
                    "table schema",
                    Some(pc_at),
                    format!("{pcount} properties cannot fit in {} bytes", c.remaining()),
                ));
            }
            let mut properties = Vec::with_capacity(pcount);
            for _ in 0..pcount {
                let k_at = c.offset();
                let k = c
                    .string32("column property key")?
                    .ok_or_else(|| TsFileError::corrupt("table schema", Some(k_at), "null property key"))?;
                let v = c.string32("column property value")?;
                properties.push((k, v));
            }
            let cat_at = c.offset();
            let category = ColumnCategory::try_from(c.i32("column category")?)
                .map_err(|e| e.context(format!("column '{cname}' at offset {cat_at}")))?;
            columns.push(ColumnSchema { name: cname, data_type, encoding, compression, properties, category });
        }
        Ok(TableSchema { name, columns })
    }

    /// The TAG columns, in schema order.
    pub fn tag_columns(&self) -> impl Iterator<Item = &ColumnSchema> {
        self.columns.iter().filter(|c| c.category == ColumnCategory::Tag)
    }

    /// The FIELD columns, in schema order.
    pub fn field_columns(&self) -> impl Iterator<Item = &ColumnSchema> {
        self.columns.iter().filter(|c| c.category == ColumnCategory::Field)
    }

    /// The TIME-category column, if the schema declares one.
    pub fn time_column(&self) -> Option<&ColumnSchema> {
        self.columns.iter().find(|c| c.category == ColumnCategory::Time)
    }
}

/// A table index root: the device index tree of one table (or tree-model path prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableIndexRoot {
    /// The table name (tree model: DeviceID segment 0).
    pub name: String,
    /// Root node of the device index.
    pub root: MetadataIndexNode,
}

/// A footer property: a UTF-8 key and a nullable raw value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// Key.
    pub key: String,
    /// Raw value bytes; `None` is null, distinct from empty.
    pub value: Option<Vec<u8>>,
}

/// The parsed TsFileMetadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsFileMetadata {
    /// Device index roots, one per table-index key, in file order. For a version-3 file,
    /// one synthesized leaf node per DeviceID segment 0, in name order.
    pub table_index: Vec<TableIndexRoot>,
    /// Explicit table schemas (table model), in file order.
    pub table_schemas: Vec<TableSchema>,
    /// Offset of the `0x02` separator.
    pub meta_offset: u64,
    /// The series bloom filter, if any.
    pub bloom_filter: Option<BloomFilter>,
    /// Properties, in file order.
    pub properties: Vec<Property>,
    /// The file's version byte (4, or 3 for a file read through `format::v3`).
    pub version: u8,
    /// Version-3 files only: the shape of the stored path-keyed device index, from which
    /// `table_index` was synthesized (see `format::v3`).
    pub v3_device_index: Option<V3DeviceIndex>,
}

impl TsFileMetadata {
    /// Parse exactly the bytes of a TsFileMetadata (`c` spans exactly `L` bytes).
    pub fn parse(c: &mut Cursor<'_>, file_len: u64) -> Result<TsFileMetadata> {
        let start = c.offset();
        let n = c.uvarint("table index count")? as usize;
        if n > c.remaining() {
            return Err(TsFileError::corrupt(
                "file metadata",
                Some(start),
                format!("{n} table index roots cannot fit in {} bytes", c.remaining()),
            ));
        }
        let mut table_index = Vec::with_capacity(n);
        for _ in 0..n {
            let name = c.var_string_required("table index name")?;
            let root = MetadataIndexNode::parse(c, IndexLevel::Device, file_len)
                .map_err(|e| e.context(format!("device index root of table '{name}'")))?;
            table_index.push(TableIndexRoot { name, root });
        }
        let s_at = c.offset();
        let n = c.uvarint("table schema count")? as usize;
        if n > c.remaining() {
            return Err(TsFileError::corrupt(
                "file metadata",
                Some(s_at),
                format!("{n} table schemas cannot fit in {} bytes", c.remaining()),
            ));
        }
        let mut table_schemas = Vec::with_capacity(n);
        for _ in 0..n {
            let name = c.var_string_required("table schema name")?;
            let schema = TableSchema::parse(c, name.clone()).map_err(|e| e.context(format!("schema of table '{name}'")))?;
            table_schemas.push(schema);
        }
        let mo_at = c.offset();
        let raw = c.i64("meta_offset")?;
        let meta_offset = u64::try_from(raw)
            .ok()
            .filter(|&o| o < file_len)
            .ok_or_else(|| TsFileError::corrupt("meta_offset", Some(mo_at), format!("{raw} is outside the file")))?;
        let bloom_filter = BloomFilter::parse(c)?;
        let p_at = c.offset();
        let pcount = c.varint("property count")?;
        let pcount = usize::try_from(pcount)
            .map_err(|_| TsFileError::corrupt("file metadata", Some(p_at), format!("negative property count {pcount}")))?;
        if pcount.saturating_mul(2) > c.remaining() {
            return Err(TsFileError::corrupt(
                "file metadata",
                Some(p_at),
                format!("{pcount} properties cannot fit in {} bytes", c.remaining()),
            ));
        }
        let mut properties = Vec::with_capacity(pcount);
        for _ in 0..pcount {
            let key = c.var_string_required("property key")?;
            let value = c.var_binary("property value")?.map(<[u8]>::to_vec);
            properties.push(Property { key, value });
        }
        c.expect_end("file metadata")?;
        Ok(TsFileMetadata {
            table_index,
            table_schemas,
            meta_offset,
            bloom_filter,
            properties,
            version: crate::format::VERSION_V4,
            v3_device_index: None,
        })
    }

    /// The schema of table `name`, if the file declares it.
    pub fn table_schema(&self, name: &str) -> Option<&TableSchema> {
        self.table_schemas.iter().find(|t| t.name == name)
    }

    /// The device index root of table (or tree path prefix) `name`.
    pub fn table_root(&self, name: &str) -> Option<&MetadataIndexNode> {
        self.table_index.iter().find(|t| t.name == name).map(|t| &t.root)
    }

    /// The raw value of property `key`: `None` if absent, `Some(None)` if null.
    pub fn property(&self, key: &str) -> Option<Option<&[u8]>> {
        self.properties.iter().find(|p| p.key == key).map(|p| p.value.as_deref())
    }
}

/// The shape of a version-3 file's stored device index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct V3DeviceIndex {
    /// Devices (LEAF_DEVICE entries).
    pub devices: u64,
    /// INTERNAL_DEVICE nodes, the root included when it is one.
    pub internal_device_nodes: u64,
    /// Levels of the device tree, the leaf level included.
    pub device_levels: u32,
    /// Offset of the serialized root node (the start of TsFileMetadata).
    pub root_offset: u64,
}
