//! The wire form of TsFile tables and scans: the protobuf messages, their tags and the
//! option pairs. Knows the read options, not the table or scan types, so the scan can
//! serialize itself through it without a circle between `source` and the codecs.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::proto::ExecutionPlanEncodeCtx;
use datafusion_proto::protobuf;
use prost::Message;

use crate::crypto::EncryptionKeys;
use crate::datafusion::options::TsFileReadOptions;

/// Leading bytes of an encoded [`TsFileTable`].
pub(super) const TABLE_TAG: &[u8] = b"tsfile-table/1\0";
/// Leading bytes of an encoded TsFile scan (extension node of a physical plan).
pub(super) const SCAN_TAG: &[u8] = b"tsfile-scan/1\0";

/// One option as `key = value`.
#[derive(Clone, PartialEq, Message)]
pub(super) struct OptionPair {
    #[prost(string, tag = "1")]
    pub(super) key: String,
    #[prost(string, tag = "2")]
    pub(super) value: String,
}

/// A [`TsFileTable`] on the wire.
#[derive(Clone, PartialEq, Message)]
pub(super) struct TableNode {
    /// Files, directories or globs, as given to the table.
    #[prost(string, repeated, tag = "1")]
    pub(super) paths: Vec<String>,
    /// [`TsFileReadOptions::to_pairs`].
    #[prost(message, repeated, tag = "2")]
    pub(super) options: Vec<OptionPair>,
    /// The partition columns (names and types), in order.
    #[prost(message, optional, tag = "3")]
    pub(super) partition_cols: Option<protobuf::Schema>,
}

/// A TsFile scan on the wire.
#[derive(Clone, PartialEq, Message)]
pub(super) struct ScanNode {
    /// The format-independent part of the scan (file groups, schema, projection, ...).
    #[prost(message, optional, tag = "1")]
    pub(super) base: Option<protobuf::FileScanExecConf>,
    /// The pruning predicate over the table schema.
    #[prost(message, optional, tag = "2")]
    pub(super) predicate: Option<protobuf::PhysicalExprNode>,
    /// [`TsFileReadOptions::to_pairs`].
    #[prost(message, repeated, tag = "3")]
    pub(super) options: Vec<OptionPair>,
}

pub(super) fn proto_err(what: &str, e: impl fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("TsFile plan codec: {what}: {e}"))
}

pub(super) fn options_to_wire(options: &TsFileReadOptions) -> Vec<OptionPair> {
    options.to_pairs().into_iter().map(|(key, value)| OptionPair { key, value }).collect()
}

pub(super) fn options_from_wire(pairs: &[OptionPair], keys: &EncryptionKeys) -> Result<TsFileReadOptions> {
    let map: HashMap<String, String> = pairs.iter().map(|p| (p.key.clone(), p.value.clone())).collect();
    let options = TsFileReadOptions::default().apply(&map).map_err(|e| proto_err("options", e))?;
    // Keys (master key, Page-AEAD provider id, providers) are the receiving process's.
    Ok(options.with_keys(keys.clone()))
}

/// Strip `tag` from `buf`, or `None` when the bytes are not ours.
pub(super) fn untag<'a>(buf: &'a [u8], tag: &[u8]) -> Option<&'a [u8]> {
    buf.strip_prefix(tag)
}

pub(super) fn tagged(tag: &[u8], message: &impl Message) -> Vec<u8> {
    let mut out = Vec::with_capacity(tag.len() + message.encoded_len());
    out.extend_from_slice(tag);
    message.encode_raw(&mut out);
    out
}

/// Serialize a TsFile scan as a physical-plan extension node (the `FileSource::try_to_proto`
/// hook of [`TsFileSource`]).
pub(crate) fn encode_scan(
    predicate: Option<&Arc<dyn PhysicalExpr>>,
    options: &TsFileReadOptions,
    base: &FileScanConfig,
    ctx: &ExecutionPlanEncodeCtx<'_>,
) -> Result<protobuf::PhysicalPlanNode> {
    let node = ScanNode {
        base: Some(base.try_to_proto(ctx)?),
        predicate: predicate.map(|p| ctx.encode_expr(p)).transpose()?,
        options: options_to_wire(options),
    };
    Ok(protobuf::PhysicalPlanNode {
        physical_plan_type: Some(protobuf::physical_plan_node::PhysicalPlanType::Extension(protobuf::PhysicalExtensionNode {
            node: tagged(SCAN_TAG, &node),
            inputs: Vec::new(),
        })),
    })
}
