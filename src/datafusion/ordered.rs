//! A plan's rows in partition order, its partitions still running concurrently.
//!
//! DataFusion's `execute_stream` merges partitions in whatever order their batches come,
//! interleaving devices. Over a TsFile scan each partition is a run of the input (a file, or
//! a byte range of one) read device by device, so reading the partitions one after the
//! other gives each device's rows together and in time order, files in the order listed.
//! (Within a partition devices come in the index's order, by identifier.) Each partition
//! runs in its own task at most
//! `ahead` batches in front of the reader, which bounds memory to about
//! `partitions × ahead` batches.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use futures::StreamExt;
use tokio::sync::mpsc::{channel, Receiver};

/// The batches of every partition of `plan`, partition 0 first; see the module doc. Must
/// be called inside a tokio runtime (the partitions are spawned on it). Dropping the
/// stream stops every partition.
pub fn execute_in_order(
    plan: Arc<dyn ExecutionPlan>,
    context: Arc<TaskContext>,
    ahead: usize,
) -> Result<SendableRecordBatchStream> {
    let partitions = plan.output_partitioning().partition_count();
    if partitions == 1 {
        return plan.execute(0, context);
    }
    let mut receivers: VecDeque<Receiver<Result<RecordBatch>>> = VecDeque::with_capacity(partitions);
    let mut tasks = Vec::with_capacity(partitions);
    for partition in 0..partitions {
        let (tx, rx) = channel(ahead.max(1));
        let mut stream = plan.execute(partition, Arc::clone(&context))?;
        tasks.push(SpawnedTask::spawn(async move {
            while let Some(item) = stream.next().await {
                let failed = item.is_err();
                if tx.send(item).await.is_err() || failed {
                    break;
                }
            }
        }));
        receivers.push_back(rx);
    }
    let batches = futures::stream::unfold((receivers, tasks), |(mut receivers, tasks)| async move {
        loop {
            let next = receivers.front_mut()?.recv().await;
            match next {
                Some(item) => return Some((item, (receivers, tasks))),
                None => {
                    receivers.pop_front();
                }
            }
        }
    });
    Ok(Box::pin(RecordBatchStreamAdapter::new(plan.schema(), batches)))
}
