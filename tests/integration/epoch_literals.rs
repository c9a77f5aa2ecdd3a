//! IoTDB's integer times: `WHERE time > 1704067200000` on a TsFile table compares epoch
//! values in the table's time unit, answers as the timestamp literal would and prunes as it.

use datafusion::physical_plan::collect;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};

use crate::common::repo_path;
use crate::sql::{block_on, ctx, metric};

/// `SELECT count(temperature)` of `filter` over the sample, and the scan's counters
/// (devices, chunk groups, pages pruned; rows decoded), with the sample's time column in `unit`.
fn count(unit: TimeUnit, filter: &str) -> (i64, [usize; 4]) {
    let path = repo_path("data/sample.tsfile");
    block_on(async {
        let c = ctx(2);
        let opts = TsFileReadOptions::default().with_time_unit(unit);
        register_tsfile(&c, "w", &[path.to_str().unwrap()], opts).await.unwrap();
        // The scan reads the pages (no answer from statistics), so its counters tell.
        c.sql("SET tsfile.statistics_aggregates = false").await.unwrap();
        let df = c.sql(&format!("SELECT count(temperature) AS n FROM w WHERE {filter}")).await.unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        let batches = collect(plan.clone(), c.task_ctx()).await.unwrap();
        let n = batches[0].column(0).as_any().downcast_ref::<arrow_array::Int64Array>().unwrap().value(0);
        let pruned = [
            metric(&plan, "devices_pruned"),
            metric(&plan, "chunk_groups_pruned"),
            metric(&plan, "pages_pruned"),
            metric(&plan, "rows_decoded"),
        ];
        (n, pruned)
    })
}

#[test]
fn test_integer_times_are_epoch_values_of_the_time_unit() {
    // The sample spans 1704067200432 ..= 1704292139991 ms.
    let (lo, hi) = (1_704_100_000_000i64, 1_704_150_000_000i64);
    let cases = [
        (format!("time > {lo}"), format!("time > to_timestamp_millis({lo})")),
        (format!("{lo} < time"), format!("to_timestamp_millis({lo}) < time")),
        (
            format!("time >= {lo} AND time < {hi}"),
            format!("time >= to_timestamp_millis({lo}) AND time < to_timestamp_millis({hi})"),
        ),
        (format!("time BETWEEN {lo} AND {hi}"), format!("time BETWEEN to_timestamp_millis({lo}) AND to_timestamp_millis({hi})")),
        (
            format!("time NOT BETWEEN {lo} AND {hi}"),
            format!("time NOT BETWEEN to_timestamp_millis({lo}) AND to_timestamp_millis({hi})"),
        ),
        ("time = 1704067200432".into(), "time = to_timestamp_millis(1704067200432)".into()),
        (
            "time IN (1704067200432, 1704292139991, 5)".into(),
            "time IN (to_timestamp_millis(1704067200432), to_timestamp_millis(1704292139991))".into(),
        ),
        ("time <> 1704067200432".into(), "time <> to_timestamp_millis(1704067200432)".into()),
        ("time <= 0".into(), "time <= to_timestamp_millis(0)".into()),
        ("time > -1".into(), "time > to_timestamp_millis(-1)".into()),
        ("time > 1704292139991".into(), "time > to_timestamp_millis(1704292139991)".into()),
    ];
    for (integer, timestamp) in &cases {
        let (n, pruned) = count(TimeUnit::Millisecond, integer);
        let (want, want_pruned) = count(TimeUnit::Millisecond, timestamp);
        assert_eq!(n, want, "{integer}");
        // Pruning is that of the timestamp literal.
        assert_eq!(pruned, want_pruned, "{integer}");
        // And the same as comparing the raw INT64 time column.
        assert_eq!(count(TimeUnit::Raw, integer).0, n, "{integer}");
    }
    // Real values, not two empty answers: the whole file, one row at each end, a range that
    // prunes.
    assert_eq!(count(TimeUnit::Millisecond, "time > -1").0, 1_006_239);
    assert_eq!(count(TimeUnit::Millisecond, "time = 1704067200432").0, 1);
    assert_eq!(count(TimeUnit::Millisecond, "time IN (1704067200432, 1704292139991, 5)").0, 2);
    assert_eq!(count(TimeUnit::Millisecond, "time <= 0").0, 0);
    // A range past the file's end reads nothing (the file is pruned by its statistics); a
    // range inside it decodes the pages it cuts.
    let (n, pruned) = count(TimeUnit::Millisecond, "time > 1704292139991");
    assert_eq!((n, pruned[3]), (0, 0), "{pruned:?}");
    assert!(count(TimeUnit::Millisecond, &format!("time BETWEEN {lo} AND {hi}")).1[3] > 0);
    assert_eq!(count(TimeUnit::Millisecond, "time > to_timestamp_millis(1704292139991)").1, pruned);
    // A table read with `time_unit = 'us'` holds the file's values as microseconds: the
    // integers are the same raw values, compared as microseconds.
    for filter in [format!("time BETWEEN {lo} AND {hi}"), "time = 1704067200432".into(), format!("time < {lo}")] {
        let (n, _) = count(TimeUnit::Microsecond, &filter);
        assert_eq!(n, count(TimeUnit::Millisecond, &filter).0, "{filter}");
        assert!(n > 0, "{filter}");
    }
}
