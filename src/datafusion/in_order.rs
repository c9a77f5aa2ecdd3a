//! [`InOrderExec`]: one partition holding its input's partitions one after the other.
//!
//! The TsFile sink needs every device's rows in time order across the writer's flushes.
//! DataFusion would merge a multi-partition input in arrival order, interleaving the
//! partitions of, say, a Parquet file read in byte ranges: a device cut by a range boundary
//! would then see its later rows first. This node reads the partitions concurrently
//! ([`execute_in_order`], a few batches ahead each) and emits them in partition order, which
//! for a file scan is the files' order. It does not ask for its input to be repartitioned, so
//! the optimizer leaves a file scan below it unsplit (a split into byte ranges would still be
//! read in order, but a round-robin repartition would not).

use std::fmt;
use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PhysicalExpr, PlanProperties};

use crate::datafusion::ordered::execute_in_order;

/// Batches each input partition may run ahead of the output.
const AHEAD: usize = 4;

/// The partitions of its input, concatenated in order (see the module doc).
#[derive(Debug)]
pub struct InOrderExec {
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl InOrderExec {
    /// Wrap `input`.
    pub fn new(input: Arc<dyn ExecutionPlan>) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(input.schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        InOrderExec { input, properties: Arc::new(properties) }
    }
}

impl DisplayAs for InOrderExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InOrderExec")
    }
}

impl ExecutionPlan for InOrderExec {
    fn name(&self) -> &str {
        "InOrderExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        match <[_; 1]>::try_from(children) {
            Ok([input]) => Ok(Arc::new(InOrderExec::new(input))),
            Err(_) => Err(DataFusionError::Internal("InOrderExec takes one child".into())),
        }
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!("InOrderExec has one partition, not {partition}")));
        }
        execute_in_order(self.input.clone(), context, AHEAD)
    }
}
