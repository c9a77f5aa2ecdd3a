//! Plan serialization (feature `proto`): TsFile tables and scans inside the protobuf plans
//! of `datafusion-proto`, so distributed engines (Ballista, datafusion-distributed) can ship
//! them between processes.
//!
//! * Logical plans: [`TsFileLogicalCodec`] encodes a [`TsFileTable`] as its paths, options
//!   and partition columns (the schema travels in the plan itself) and rebuilds it without
//!   reading a file.
//! * Physical plans: a TsFile `DataSourceExec` serializes itself through the
//!   `FileSource::try_to_proto` hook as an extension node — the shared file-scan
//!   configuration (file groups with their byte ranges, schema, projection, limit,
//!   statistics), the pruning predicate and the options. [`TsFilePhysicalCodec`] decodes it.
//!
//! Both codecs wrap an inner codec (DataFusion's default, or an engine's own such as
//! Ballista's) and hand it everything that is not theirs. Their encodings start with a tag
//! (`tsfile-table/1`, `tsfile-scan/1`) so foreign bytes are never misread.
//!
//! Per-process state is rebuilt on the receiving side: every decoded table and scan shares
//! the codec's metadata cache (one footer read per file per process), and gets fresh
//! metrics and decode budget. Key material never travels: options are written without
//! `master_key` or key providers, and decoded plans take the receiving codec's keys
//! ([`TsFileLogicalCodec::with_keys`]), so an executor is given the keys in its own
//! configuration.

use std::fmt;
use std::sync::Arc;

use arrow_schema::{DataType, Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::physical_plan::FileSource;
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::from_proto::{
    parse_physical_expr_with_converter, parse_protobuf_file_scan_config, parse_table_schema_from_proto,
};
use datafusion_proto::physical_plan::{
    DefaultPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use prost::Message;

use crate::crypto::EncryptionKeys;
use crate::datafusion::metadata::MetadataCache;
use crate::datafusion::source::TsFileSource;
use crate::datafusion::table::TsFileTable;

pub(crate) mod wire;

use wire::{options_from_wire, options_to_wire, proto_err, tagged, untag, ScanNode, TableNode, SCAN_TAG, TABLE_TAG};

/// Keys and metadata cache of the decoding process, shared by both codecs.
#[derive(Clone, Default)]
struct ProcessState {
    keys: EncryptionKeys,
    cache: Arc<MetadataCache>,
}

impl fmt::Debug for ProcessState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessState").field("keys", &self.keys).finish_non_exhaustive()
    }
}

/// The `with_keys` / `with_cache` builders of a codec holding a [`ProcessState`].
macro_rules! process_state_builders {
    ($what:literal) => {
        #[doc = concat!("Keys given to every decoded ", $what, " (encrypted files): the sender's keys never travel.")]
        pub fn with_keys(mut self, keys: EncryptionKeys) -> Self {
            self.state.keys = keys;
            self
        }

        /// Share a metadata cache with other codecs of this process (one footer read per file).
        pub fn with_cache(mut self, cache: Arc<MetadataCache>) -> Self {
            self.state.cache = cache;
            self
        }
    };
}

/// Scalar, aggregate and window functions are not ours: both codecs hand them to `inner`.
macro_rules! forward_functions {
    () => {
        fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
            self.inner.try_decode_udf(name, buf)
        }

        fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
            self.inner.try_encode_udf(node, buf)
        }

        fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
            self.inner.try_decode_udaf(name, buf)
        }

        fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
            self.inner.try_encode_udaf(node, buf)
        }

        fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
            self.inner.try_decode_udwf(name, buf)
        }

        fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
            self.inner.try_encode_udwf(node, buf)
        }
    };
}

/// `LogicalExtensionCodec` for [`TsFileTable`]; everything else goes to the inner codec.
#[derive(Debug, Clone)]
pub struct TsFileLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
    state: ProcessState,
}

impl Default for TsFileLogicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(DefaultLogicalExtensionCodec {}))
    }
}

impl TsFileLogicalCodec {
    /// A codec handing what is not a TsFile table to `inner` (e.g. an engine's own codec).
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        TsFileLogicalCodec { inner, state: ProcessState::default() }
    }

    process_state_builders!("table");
}

impl LogicalExtensionCodec for TsFileLogicalCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(body) = untag(buf, TABLE_TAG) else {
            return self.inner.try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let node = TableNode::decode(body).map_err(|e| proto_err("table", e))?;
        let options = options_from_wire(&node.options, &self.state.keys)?;
        let partition_cols: Vec<(String, DataType)> = match &node.partition_cols {
            Some(s) => {
                let s = Schema::try_from(s).map_err(|e| proto_err("partition columns", e))?;
                s.fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect()
            }
            None => Vec::new(),
        };
        let table = TsFileTable::with_schema(&node.paths, schema, options, partition_cols, self.state.cache.clone())?
            .with_statistics_cache(ctx.runtime_env().cache_manager.get_file_statistic_cache());
        Ok(Arc::new(table))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(table) = node.downcast_ref::<TsFileTable>() else {
            return self.inner.try_encode_table_provider(table_ref, node, buf);
        };
        let partition_schema = Schema::new(
            table.partition_cols().iter().map(|(n, t)| arrow_schema::Field::new(n, t.clone(), false)).collect::<Vec<_>>(),
        );
        let message = TableNode {
            paths: table.paths().to_vec(),
            options: options_to_wire(table.options()),
            partition_cols: Some(protobuf::Schema::try_from(&partition_schema).map_err(|e| proto_err("partition columns", e))?),
        };
        buf.extend_from_slice(&tagged(TABLE_TAG, &message));
        Ok(())
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    forward_functions!();
}

/// `PhysicalExtensionCodec` that decodes TsFile scans; everything else goes to the inner
/// codec. (Encoding needs no codec: a TsFile scan serializes itself.)
#[derive(Debug, Clone)]
pub struct TsFilePhysicalCodec {
    inner: Arc<dyn PhysicalExtensionCodec>,
    state: ProcessState,
}

impl Default for TsFilePhysicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(DefaultPhysicalExtensionCodec {}))
    }
}

impl TsFilePhysicalCodec {
    /// A codec handing what is not a TsFile scan to `inner` (e.g. an engine's own codec).
    pub fn new(inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        TsFilePhysicalCodec { inner, state: ProcessState::default() }
    }

    process_state_builders!("scan");

    fn decode_scan(
        &self,
        body: &[u8],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let node = ScanNode::decode(body).map_err(|e| proto_err("scan", e))?;
        let base = node.base.as_ref().ok_or_else(|| proto_err("scan", "no file scan configuration"))?;
        let table_schema = parse_table_schema_from_proto(base)?;
        let options = options_from_wire(&node.options, &self.state.keys)?;
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        let predicate = node
            .predicate
            .as_ref()
            .map(|p| parse_physical_expr_with_converter(p, table_schema.table_schema(), &decode_ctx, converter))
            .transpose()?;
        let source = TsFileSource::new(table_schema, options, self.state.cache.clone()).with_predicate(predicate);
        let config = parse_protobuf_file_scan_config(base, &decode_ctx, converter, Arc::new(source) as Arc<dyn FileSource>)?;
        Ok(DataSourceExec::from_data_source(config))
    }
}

impl PhysicalExtensionCodec for TsFilePhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match untag(buf, SCAN_TAG) {
            Some(body) => self.decode_scan(body, ctx, converter),
            None => self.inner.try_decode(buf, inputs, ctx, converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        self.inner.try_encode(node, buf, converter)
    }

    forward_functions!();
}
