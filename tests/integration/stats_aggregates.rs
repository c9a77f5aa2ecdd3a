//! Aggregations answered from statistics (`StatisticsAggregateExec`): every answer equals
//! the one decoding gives (the same table with `statistics_aggregates = false`), on every
//! table of the corpus and on the sample, with one and several partitions; the rule is
//! taken where it should be, and a file the statistics cannot answer falls back.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::RecordBatch;
use arrow_schema::DataType;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::physical_plan::{displayable, ExecutionPlan};
use datafusion::prelude::SessionContext;
use datafusion_tsfile::arrow::schema::CATEGORY_KEY;
use datafusion_tsfile::datafusion::{register_tsfile, register_tsfile_schema, TsFileReadOptions};
use datafusion_tsfile::format::Encoding;

use crate::common::{file_path, manifest, manifest_files, repo_path};
use crate::sql::{block_on, count_rows, ctx, metric_of, quote, run};

/// A cell: floats compared within 1e-9 relative (summation order differs), the rest exactly.
#[derive(Debug, Clone)]
enum Val {
    F(f64),
    Other(String),
}

impl PartialEq for Val {
    fn eq(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::F(a), Val::F(b)) => {
                (a.is_nan() && b.is_nan()) || a == b || ((a - b).abs() <= 1e-9 * a.abs().max(b.abs()) && a.signum() == b.signum())
            }
            (Val::Other(a), Val::Other(b)) => a == b,
            _ => false,
        }
    }
}

fn values(batches: &[RecordBatch]) -> Vec<Vec<Val>> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| match c.data_type() {
                        _ if c.is_null(i) => Val::Other("null".into()),
                        DataType::Float64 => Val::F(c.as_primitive::<Float64Type>().value(i)),
                        DataType::Float32 => Val::F(f64::from(c.as_primitive::<Float32Type>().value(i))),
                        _ => Val::Other(array_value_to_string(c, i).unwrap()),
                    })
                    .collect(),
            );
        }
    }
    out
}

/// Sum of metric `name` over every node of the plan.
fn plan_metric(plan: &Arc<dyn ExecutionPlan>, name: &str) -> usize {
    metric_of(plan, name, |_| true)
}

fn uses_statistics(plan: &Arc<dyn ExecutionPlan>) -> bool {
    displayable(plan.as_ref()).indent(true).to_string().contains("StatisticsAggregateExec")
}

/// Fields queried per table.
const MAX_FIELDS: usize = 6;

/// What a battery of queries did.
#[derive(Debug, Default)]
struct Tally {
    queries: usize,
    rewritten: usize,
    fell_back: usize,
}

/// Aggregation queries over `table` (column categories from the schema): per field, a
/// global one and one grouped by every TAG column; per time column the same.
async fn queries(c: &SessionContext, table: &str, by_first_tag: bool) -> Vec<String> {
    let schema = c.table(table).await.unwrap().schema().as_arrow().clone();
    let mut tags = Vec::new();
    let mut fields = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        match f.metadata().get(CATEGORY_KEY).map(String::as_str) {
            _ if i == 0 => {}
            Some("TAG") => tags.push(quote(f.name())),
            Some("ATTRIBUTE") => {}
            _ => fields.push((quote(f.name()), f.data_type().clone())),
        }
    }
    let time = quote(schema.field(0).name());
    let mut aggs = vec![format!("count(*), min({time}), max({time})")];
    // A few fields per table keep the battery short (the corpus' wide tables have hundreds).
    for (name, ty) in fields.iter().take(MAX_FIELDS) {
        let mut a = format!("count({name})");
        if !matches!(ty, DataType::Binary) {
            a += &format!(", min({name}), max({name})");
        }
        if matches!(ty, DataType::Int32 | DataType::Int64 | DataType::Float32 | DataType::Float64) {
            a += &format!(", sum({name}), avg({name})");
        }
        aggs.push(a);
    }
    let mut out = Vec::new();
    for a in &aggs {
        out.push(format!("SELECT {a} FROM {{t}}"));
        if !tags.is_empty() {
            let g = tags.join(", ");
            out.push(format!("SELECT {g}, {a} FROM {{t}} GROUP BY {g} ORDER BY {g}"));
            if by_first_tag {
                out.push(format!("SELECT {}, {a} FROM {{t}} GROUP BY 1 ORDER BY 1", tags[0]));
            }
        }
    }
    out
}

/// Run every query on `on.t` and `off.t` and compare.
async fn compare_tables(c: &SessionContext, on: &str, off: &str, by_first_tag: bool, tally: &mut Tally) {
    for q in queries(c, on, by_first_tag).await {
        let (a, plan) = run(c, &q.replace("{t}", on)).await;
        let (b, _) = run(c, &q.replace("{t}", off)).await;
        assert_eq!(values(&a), values(&b), "{q} on {on}");
        tally.queries += 1;
        if uses_statistics(&plan) {
            tally.rewritten += 1;
            if plan_metric(&plan, "fallback_partitions") > 0 {
                tally.fell_back += 1;
            }
        }
    }
}

#[test]
fn test_statistics_aggregates_equal_decoding_on_every_corpus_table() {
    block_on(async {
        let mut tally = Tally::default();
        // Three partitions: byte-range splits and partial states merged by DataFusion
        // (one partition, final values, is covered on the sample).
        for partitions in [3] {
            for entry in manifest_files(&manifest()) {
                let path = file_path(&entry);
                // Tree-model tables always fall back; two files of them show it.
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                if name.starts_with("tree_") && !matches!(name.as_str(), "tree_chunk_groups.tsfile" | "tree_enc_double.tsfile") {
                    continue;
                }
                let c = ctx(partitions);
                let p = path.to_str().unwrap();
                let mut options = TsFileReadOptions::default();
                if let Some(enc) = entry["reader_hints"]["nonaligned_time_encoding"].as_str() {
                    options.read.nonaligned_time_encoding = Encoding::from_name(enc).unwrap();
                }
                let names = register_tsfile_schema(&c, "on", p, options.clone()).await.unwrap();
                register_tsfile_schema(&c, "off", p, options.with_statistics_aggregates(false)).await.unwrap();
                for n in names {
                    let (on, off) = (format!("on.{}", quote(&n)), format!("off.{}", quote(&n)));
                    compare_tables(&c, &on, &off, false, &mut tally).await;
                }
            }
        }
        // Most of the battery is answered from statistics; some of it falls back (tree-model
        // tables; floats holding NaN or infinities; INT64 sums beyond 2^53; TEXT extremes).
        // Global count/min/max of non-float columns are not aggregations any more: DataFusion
        // answers them from the table's statistics.
        assert!(tally.queries > 300, "{tally:?}");
        assert!(tally.rewritten * 2 > tally.queries, "{tally:?}");
        assert!(tally.fell_back > 0 && tally.fell_back < tally.rewritten, "{tally:?}");
    });
}

#[test]
fn test_statistics_aggregates_on_sample_read_no_page() {
    let sample = repo_path("data/sample.tsfile");
    let dir = std::env::temp_dir().join(format!("tsfile-stats-agg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for n in ["a.tsfile", "b.tsfile"] {
        std::fs::copy(&sample, dir.join(n)).unwrap();
    }
    block_on(async {
        // One partition: the aggregation is `Single`, final values come from statistics.
        let c = ctx(1);
        let one = sample.to_str().unwrap();
        register_tsfile(&c, "one", &[one], TsFileReadOptions::default()).await.unwrap();
        register_tsfile(&c, "one_off", &[one], TsFileReadOptions::default().with_statistics_aggregates(false)).await.unwrap();
        let mut tally = Tally::default();
        compare_tables(&c, "one", "one_off", true, &mut tally).await;
        // Global count/min/max of non-float columns are constants of DataFusion's own
        // statistics rule (no aggregation left); everything else is answered here, except
        // min/max of temperature per device: some device's extreme is a zero, and DataFusion's
        // grouped float min/max keeps whichever zero it sees first, so the original plan runs.
        assert_eq!(tally.rewritten, tally.queries - 3, "{tally:?}");
        assert!(tally.fell_back <= 1, "{tally:?}");

        for partitions in [2, 3] {
            // Partial states per byte range of two files, merged by DataFusion.
            let c = ctx(partitions);
            let two = dir.to_str().unwrap();
            register_tsfile(&c, "two", &[two], TsFileReadOptions::default()).await.unwrap();
            register_tsfile(&c, "two_off", &[two], TsFileReadOptions::default().with_statistics_aggregates(false)).await.unwrap();
            let sql = "SELECT region, count(*), avg(temperature), max(humidity), sum(energy_wh) FROM two GROUP BY region ORDER BY region";
            let (b, plan) = run(&c, sql).await;
            let (decoded, _) = run(&c, &sql.replace("FROM two", "FROM two_off")).await;
            assert_eq!(values(&b), values(&decoded));
            assert_eq!(plan_metric(&plan, "series_from_statistics"), 600);
            assert_eq!(plan_metric(&plan, "pages_decoded"), 0);
            assert_eq!(plan_metric(&plan, "fallback_partitions"), 0);
            let rows = values(&b);
            assert_eq!(rows.len(), 5);
            // Per-region counts of data/README.md, twice (two copies).
            assert_eq!(rows[0][0], Val::Other("central".into()));
            assert_eq!(rows[0][1], Val::Other((2 * 202_155).to_string()));

            // A device whose temperature extreme is a zero: DataFusion's grouped float
            // min/max keeps the zero it sees first, so every partition runs the original plan
            // (a scan partition may read another's files, so it is all or none).
            let sql = "SELECT device, min(temperature), max(temperature), count(*) FROM two GROUP BY device ORDER BY device";
            let (b, plan) = run(&c, sql).await;
            let (decoded, _) = run(&c, &sql.replace("FROM two", "FROM two_off")).await;
            assert_eq!(values(&b), values(&decoded));
            assert!(uses_statistics(&plan));
            assert_eq!(plan_metric(&plan, "fallback_partitions"), partitions);
            assert_eq!(count_rows(&b), 300);
            // Without GROUP BY, the total order is DataFusion's too: answered, with the pages
            // that may hold a zero extreme decoded.
            let sql = "SELECT min(temperature), max(temperature), count(*) FROM two WHERE region = 'north'";
            let (b, plan) = run(&c, sql).await;
            let (decoded, _) = run(&c, &sql.replace("FROM two", "FROM two_off")).await;
            assert_eq!(values(&b), values(&decoded));
            assert_eq!(plan_metric(&plan, "fallback_partitions"), 0);
            assert!(plan_metric(&plan, "series_from_statistics") > 100);
        }
    });
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn test_statistics_aggregates_not_taken_where_rows_are_filtered_or_values_needed() {
    block_on(async {
        let c = ctx(2);
        register_tsfile(&c, "w", &[repo_path("data/sample.tsfile").to_str().unwrap()], TsFileReadOptions::default())
            .await
            .unwrap();
        for sql in [
            "SELECT avg(temperature) FROM w WHERE temperature > 10",
            "SELECT avg(temperature) FROM w WHERE time > to_timestamp_millis(1704100000000) OR device = 'ws-central-0-0'",
            "SELECT avg(temperature) FROM w WHERE date_part('hour', time) = 3",
            "SELECT device, date_bin(interval '1 month', time), avg(temperature) FROM w GROUP BY 1, 2",
            "SELECT last_value(temperature ORDER BY pressure) FROM w",
            "SELECT pressure, count(*) FROM w GROUP BY pressure",
            "SELECT count(DISTINCT pressure) FROM w",
            "SELECT avg(temperature) FILTER (WHERE pressure > 1000) FROM w",
            "SELECT avg(temperature + 1) FROM w",
            "SELECT median(temperature) FROM w",
            "SELECT count(*), median(temperature) FROM w",
        ] {
            let (_, plan) = run(&c, sql).await;
            assert!(!uses_statistics(&plan), "{sql}:\n{}", displayable(plan.as_ref()).indent(true));
        }
        // Time ranges, TAG filters, date_bin buckets and first/last by time are taken.
        for sql in [
            "SELECT avg(temperature) FROM w WHERE time > to_timestamp_millis(1704100000000)",
            "SELECT avg(temperature) FROM w WHERE device = 'ws-central-0-0'",
            "SELECT date_bin(interval '1 hour', time), avg(temperature) FROM w GROUP BY 1",
            "SELECT device, last_value(temperature ORDER BY time), max(time) FROM w GROUP BY device",
        ] {
            let (_, plan) = run(&c, sql).await;
            assert!(uses_statistics(&plan), "{sql}:\n{}", displayable(plan.as_ref()).indent(true));
        }
        // The option turns it off; on, a plain aggregation takes it.
        let sql = "SELECT avg(temperature), sum(energy_wh) FROM w";
        assert!(uses_statistics(&run(&c, sql).await.1));
        register_tsfile(
            &c,
            "w_off",
            &[repo_path("data/sample.tsfile").to_str().unwrap()],
            TsFileReadOptions::default().with_statistics_aggregates(false),
        )
        .await
        .unwrap();
        assert!(!uses_statistics(&run(&c, &sql.replace(" w", " w_off")).await.1));
    });
}

/// A GROUP BY column that the filter fixes (`device = '…'`) makes DataFusion plan a sorted
/// aggregation; it is answered from statistics too, in the order the plan promises, with one
/// partition and with a round-robin repartition spreading the file over two.
#[test]
fn test_statistics_aggregates_sorted_groups_fixed_by_the_filter() {
    let path = repo_path("data/sample.tsfile");
    let path = path.to_str().unwrap();
    block_on(async {
        for partitions in [1, 2] {
            let c = ctx(partitions);
            register_tsfile(&c, "w", &[path], TsFileReadOptions::default()).await.unwrap();
            register_tsfile(&c, "w_off", &[path], TsFileReadOptions::default().with_statistics_aggregates(false)).await.unwrap();
            for sql in [
                "SELECT device, max(time), last_value(temperature ORDER BY time), count(*) FROM w \
                 WHERE device = 'ws-central-0-0' GROUP BY device",
                "SELECT device, date_bin(interval '1 day', time) AS b, count(*), min(humidity), max(time) FROM w \
                 WHERE device = 'ws-central-0-0' GROUP BY device, b ORDER BY device, b",
                "SELECT region, device, count(*), sum(energy_wh) FROM w WHERE region = 'north' AND device LIKE 'ws-north-1%' \
                 GROUP BY region, device ORDER BY device",
            ] {
                let (b, plan) = run(&c, sql).await;
                let (decoded, _) = run(&c, &sql.replace("FROM w ", "FROM w_off ")).await;
                assert!(uses_statistics(&plan), "{sql}:\n{}", displayable(plan.as_ref()).indent(true));
                assert_eq!(plan_metric(&plan, "fallback_partitions"), 0, "{sql}");
                assert!(count_rows(&b) > 0, "{sql}");
                assert_eq!(values(&b), values(&decoded), "{sql} ({partitions} partitions)");
            }
        }
    });
}
