//! `execute_in_order` and `write_parquet` (the core of `tsfile export` and the Python
//! package's reads and exports): rows device by device (each device's rows together, in
//! time order) whatever the partitioning, the same rows as a one-partition scan; the
//! Parquet file holds exactly the rows `execute_in_order` gives, in its order; progress never goes back
//! and ends at the total; a failing progress callback leaves no file behind.

use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::common::DataFusionError;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::file::properties::WriterProperties;
use datafusion_tsfile::datafusion::{
    count_rows, execute_in_order, register_tsfile, write_parquet, ExportProgress, TsFileReadOptions,
};
use futures::TryStreamExt;

use crate::common::repo_path;
use crate::sql::{ctx, rows_of};

fn sample() -> String {
    repo_path("data/sample.tsfile").to_str().unwrap().to_string()
}

/// The rows of `sql` over the sample registered as `w`, with `partitions` target partitions,
/// read through `execute_in_order`.
async fn in_order(partitions: usize, sql: &str) -> (usize, Vec<RecordBatch>) {
    let c = ctx(partitions);
    register_tsfile(&c, "w", &[&sample()], TsFileReadOptions::default()).await.unwrap();
    let df = c.sql(sql).await.unwrap();
    let task = Arc::new(df.task_ctx());
    let plan = df.create_physical_plan().await.unwrap();
    let n = datafusion::physical_plan::ExecutionPlanProperties::output_partitioning(&plan).partition_count();
    let batches: Vec<RecordBatch> = execute_in_order(plan, task, 2).unwrap().try_collect().await.unwrap();
    (n, batches)
}

/// Rows `[time, device, ..]` come device after device (each device in one run), each
/// device's rows in time order.
fn assert_device_runs(rows: &[Vec<serde_json::Value>]) {
    let mut seen = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        let device = row[1].to_string();
        let new_run = i == 0 || rows[i - 1][1] != row[1];
        if new_run {
            assert!(seen.insert(device.clone()), "device {device} comes back at row {i}");
        } else {
            // Fixed-width millisecond timestamps: text order is time order.
            assert!(rows[i - 1][0].as_str() < row[0].as_str(), "row {i} of {device} goes back in time");
        }
    }
    assert_eq!(seen.len(), 60);
}

#[test]
fn partitions_come_back_device_by_device() {
    crate::sql::block_on(async {
        let sql = "SELECT time, device, temperature, status FROM w WHERE humidity > 40 AND region = 'east'";
        let (one, single) = in_order(1, sql).await;
        assert_eq!(one, 1);
        let want = rows_of(&single);
        assert!(want.len() > 20_000, "{}", want.len());
        assert_device_runs(&want);
        for partitions in [2, 3, 8] {
            let (n, batches) = in_order(partitions, sql).await;
            assert!(n > 1, "{partitions} target partitions gave one partition");
            let got = rows_of(&batches);
            assert_eq!(got.len(), want.len(), "{partitions} partitions: row count");
            assert_device_runs(&got);
            let (mut g, mut w) = (got.clone(), want.clone());
            g.sort_by_key(|r| format!("{r:?}"));
            w.sort_by_key(|r| format!("{r:?}"));
            assert!(g == w, "{partitions} partitions: other rows than one partition's");
        }
        // Nothing matches: an empty stream, not an error.
        let (_, none) = in_order(4, "SELECT * FROM w WHERE temperature > 1000").await;
        assert_eq!(none.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
    });
}

#[test]
fn dropping_an_ordered_stream_early_stops_it() {
    crate::sql::block_on(async {
        let c = ctx(4);
        register_tsfile(&c, "w", &[&sample()], TsFileReadOptions::default()).await.unwrap();
        let df = c.sql("SELECT * FROM w").await.unwrap();
        let task = Arc::new(df.task_ctx());
        let plan = df.create_physical_plan().await.unwrap();
        let mut stream = execute_in_order(plan, task, 1).unwrap();
        let first = stream.try_next().await.unwrap().unwrap();
        assert!(first.num_rows() > 0);
        drop(stream); // must not hang or panic: the partition tasks are aborted
    });
}

fn read_parquet(path: &std::path::Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap().map(|b| b.unwrap()).collect()
}

#[test]
fn write_parquet_holds_the_rows_in_order_with_progress() {
    crate::sql::block_on(async {
        let dir = tempdir();
        let out = dir.join("sample.parquet");
        let c = ctx(4);
        register_tsfile(&c, "w", &[&sample()], TsFileReadOptions::default()).await.unwrap();
        let total = count_rows(&c, "w").await.unwrap();
        assert_eq!(total, Some(1_006_239));
        let sql = "SELECT time, region, device, temperature, online, status FROM w";
        let mut reports: Vec<ExportProgress> = Vec::new();
        let df = c.sql(sql).await.unwrap();
        let rows = write_parquet(df, &out, WriterProperties::default(), total, |p| {
            reports.push(*p);
            Ok(())
        })
        .await
        .unwrap();
        assert_eq!(rows, 1_006_239);
        assert!(!dir.join("sample.parquet.partial").exists());
        let (_, want) = in_order(4, sql).await;
        let got = read_parquet(&out);
        let (got, want) = (rows_of(&got), rows_of(&want));
        assert_eq!(got.len(), want.len());
        // Device by device, each in time order (which device comes first is not promised:
        // it follows the state of the metadata cache).
        let mut done = std::collections::HashSet::new();
        for (i, pair) in got.windows(2).enumerate() {
            let (a, b) = (&pair[0], &pair[1]);
            let (da, db) = ((&a[1], &a[2]), (&b[1], &b[2]));
            if da == db {
                assert!(a[0].as_str() <= b[0].as_str(), "row {i}: time goes back within {da:?}");
            } else {
                assert!(done.insert(da), "row {i}: {da:?} comes back");
            }
        }
        let (mut g, mut w) = (got, want);
        g.sort_by_key(|r| format!("{r:?}"));
        w.sort_by_key(|r| format!("{r:?}"));
        assert!(g == w, "the export holds other rows than the query");
        let last = reports.last().unwrap();
        assert_eq!((last.rows, last.total_rows), (rows, Some(rows)));
        assert!(reports.windows(2).all(|w| w[0].rows < w[1].rows && w[0].bytes <= w[1].bytes));
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn a_failing_progress_callback_leaves_no_file() {
    crate::sql::block_on(async {
        let dir = tempdir();
        let out = dir.join("stopped.parquet");
        let c = ctx(2);
        register_tsfile(&c, "w", &[&sample()], TsFileReadOptions::default()).await.unwrap();
        let df = c.sql("SELECT * FROM w").await.unwrap();
        let mut calls = 0;
        let err = write_parquet(df, &out, WriterProperties::default(), None, |_| {
            calls += 1;
            if calls == 3 {
                return Err(DataFusionError::Execution("stopped by the user".into()));
            }
            Ok(())
        })
        .await
        .unwrap_err();
        assert!(err.to_string().contains("stopped by the user"), "{err}");
        assert_eq!(calls, 3);
        assert!(!out.exists());
        assert!(!dir.join("stopped.parquet.partial").exists());
        // An output directory that does not exist: a clear error, nothing written.
        let df = c.sql("SELECT * FROM w LIMIT 1").await.unwrap();
        let missing = dir.join("no/such/dir/x.parquet");
        let err = write_parquet(df, &missing, WriterProperties::default(), None, |_| Ok(())).await.unwrap_err();
        assert!(err.to_string().contains("cannot create"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tsfile-export-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
