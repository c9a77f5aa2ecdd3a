//! Writing through DataFusion: `COPY (query) TO 'x.tsfile' STORED AS TSFILE OPTIONS (...)`,
//! `COPY … TO 'dir/'`, `INSERT INTO` a TsFile table over a directory (new files only), read
//! back through SQL bit for bit; statistics answers on written files against decoding; a
//! failed `COPY` leaves nothing behind.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use datafusion_tsfile::datafusion::{register_tsfile, register_tsfile_format, TsFileReadOptions};

use crate::sql::block_on;
use crate::write_roundtrip::{batches, expected_rows, random_case, rows_of};

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tsfile-write-sql-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn run(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")).collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn count_of(batches: &[RecordBatch]) -> i64 {
    batches[0].column(0).as_primitive::<arrow_array::types::UInt64Type>().value(0) as i64
}

fn tsfiles(dir: &PathBuf) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn test_copy_random_tables_read_back_through_sql() {
    let dir = fresh_dir("copy");
    block_on(async {
        for seed in [11u64, 12, 13, 14, 15, 16] {
            let case = random_case(seed);
            let ctx = SessionContext::new();
            register_tsfile_format(&ctx).unwrap();
            // Two partitions: the sink reads them in order, so flushes never see a device's
            // rows out of time order.
            let parts = batches(&case, 53);
            let half = parts.len() / 2;
            let mem = MemTable::try_new(case.schema.clone(), vec![parts[..half].to_vec(), parts[half..].to_vec()]).unwrap();
            ctx.register_table("src", Arc::new(mem)).unwrap();
            let path = dir.join(format!("case{seed}.tsfile"));
            let opts: Vec<String> = case.options.iter().map(|(k, v)| format!("'tsfile.{k}' '{v}'")).collect();
            let sql = format!("COPY (SELECT * FROM src) TO '{}' STORED AS TSFILE OPTIONS ({})", path.display(), opts.join(", "));
            let written = run(&ctx, &sql).await;
            assert_eq!(count_of(&written), case.rows.len() as i64, "seed {seed}");
            register_tsfile(&ctx, "back", &[path.to_str().unwrap()], TsFileReadOptions::default()).await.unwrap();
            let got = run(&ctx, "SELECT * FROM back").await;
            assert_eq!(rows_of(&got, &case), expected_rows(&case), "seed {seed}");
        }
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_copy_to_directory_then_insert_into_adds_new_files_only() {
    let dir = fresh_dir("insert");
    let root = dir.join("weather");
    std::fs::create_dir_all(&root).unwrap();
    block_on(async {
        let ctx = SessionContext::new();
        register_tsfile_format(&ctx).unwrap();
        run(
            &ctx,
            "CREATE TABLE src AS SELECT CAST(t AS BIGINT) AS time, 'd' || CAST(t % 5 AS VARCHAR) AS dev, \
                   CASE WHEN t % 7 = 0 THEN NULL ELSE CAST(t AS DOUBLE) / 4 END AS v FROM generate_series(1, 5000) AS s(t)",
        )
        .await;
        let sql = format!("COPY (SELECT * FROM src) TO '{}/' STORED AS TSFILE OPTIONS ('tsfile.tags' 'dev')", root.display());
        assert_eq!(count_of(&run(&ctx, &sql).await), 5000);
        let before = tsfiles(&root);
        assert!(
            !before.is_empty() && before.iter().all(|(n, _)| n.ends_with(".tsfile")),
            "{:?}",
            before.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        run(
            &ctx,
            &format!("CREATE EXTERNAL TABLE ext STORED AS TSFILE LOCATION '{}/' OPTIONS ('tsfile.tags' 'dev')", root.display()),
        )
        .await;
        let total = run(&ctx, "SELECT count(*) AS n, count(v) AS nv, sum(v) AS s FROM ext").await;
        let want = run(&ctx, "SELECT count(*) AS n, count(v) AS nv, sum(v) AS s FROM src").await;
        assert_eq!(pretty_format_batches(&total).unwrap().to_string(), pretty_format_batches(&want).unwrap().to_string());
        // The table name is the directory's.
        let f = datafusion_tsfile::TsFile::open(root.join(&before[0].0)).unwrap();
        assert_eq!(f.table_names(), ["weather"]);

        let inserted =
            run(&ctx, "INSERT INTO ext SELECT CAST(time + 100000 AS TIMESTAMP) AS time, dev, v FROM src WHERE time <= 1000")
                .await;
        assert_eq!(count_of(&inserted), 1000);
        let after = tsfiles(&root);
        assert!(after.len() > before.len());
        for old in &before {
            assert!(after.contains(old), "{} was rewritten", old.0);
        }
        let n = run(&ctx, "SELECT count(*) FROM ext").await;
        assert_eq!(n[0].column(0).as_primitive::<Int64Type>().value(0), 6000);
        let rows = run(&ctx, "SELECT dev, count(*) AS n FROM ext GROUP BY dev ORDER BY dev").await;
        let devs = rows[0].column(0);
        assert_eq!(devs.len(), 5);
        // INSERT OVERWRITE is refused.
        let e = ctx.sql("INSERT OVERWRITE ext SELECT * FROM ext").await;
        let e = match e {
            Ok(df) => df.collect().await.map(|_| ()).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.to_lowercase().contains("overwrit"), "{e}");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_statistics_answers_on_written_files_equal_decoding() {
    let dir = fresh_dir("stats");
    let path = dir.join("s.tsfile");
    block_on(async {
        let ctx = SessionContext::new();
        register_tsfile_format(&ctx).unwrap();
        run(&ctx, "CREATE TABLE src AS SELECT to_timestamp_millis(t * 1000) AS time, 'd' || CAST(t % 3 AS VARCHAR) AS dev, \
                   CASE WHEN t % 11 = 0 THEN NULL WHEN t % 13 = 0 THEN CAST('NaN' AS DOUBLE) ELSE CAST(t AS DOUBLE) - 9000 END AS v, \
                   CAST(t * 7919 % 1000 AS INT) AS i, CAST(t % 97 AS VARCHAR) AS s FROM generate_series(1, 30000) AS x(t)")
            .await;
        let sql = format!(
            "COPY (SELECT * FROM src) TO '{}' STORED AS TSFILE OPTIONS ('tsfile.tags' 'dev', 'tsfile.page_max_points' '1000', 'tsfile.memory_limit' '200k', 'tsfile.sort' 'true')",
            path.display()
        );
        run(&ctx, &sql).await;
        let q = "SELECT count(*) AS n, count(v) AS nv, min(i) AS a, max(i) AS b, sum(i) AS c, min(s) AS d, max(s) AS e, \
                 min(time) AS f, max(time) AS g FROM t";
        let mut answers = Vec::new();
        for stats in ["true", "false"] {
            let c = SessionContext::new();
            register_tsfile_format(&c).unwrap();
            run(
                &c,
                &format!(
                    "CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION '{}' OPTIONS ('tsfile.statistics_aggregates' '{stats}')",
                    path.display()
                ),
            )
            .await;
            answers.push(pretty_format_batches(&run(&c, q).await).unwrap().to_string());
            let plan = pretty_format_batches(&run(&c, &format!("EXPLAIN {q}")).await).unwrap().to_string();
            assert_eq!(plan.contains("StatisticsAggregateExec"), stats == "true", "{plan}");
        }
        assert_eq!(answers[0], answers[1]);
        let want = run(&ctx, &q.replace("FROM t", "FROM src")).await;
        assert_eq!(answers[0], pretty_format_batches(&want).unwrap().to_string());
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_failed_copy_leaves_nothing() {
    let dir = fresh_dir("fail");
    block_on(async {
        let ctx = SessionContext::new();
        register_tsfile_format(&ctx).unwrap();
        run(
            &ctx,
            "CREATE TABLE dup AS SELECT CAST(t % 10 AS BIGINT) AS time, 'a' AS dev, t AS v FROM generate_series(1, 100) AS x(t)",
        )
        .await;
        for target in ["x.tsfile", "sub/"] {
            let sql = format!(
                "COPY (SELECT * FROM dup) TO '{}' STORED AS TSFILE OPTIONS ('tsfile.tags' 'dev')",
                dir.join(target).display()
            );
            let e = match ctx.sql(&sql).await {
                Ok(df) => df.collect().await.map(|_| ()).unwrap_err().to_string(),
                Err(e) => e.to_string(),
            };
            assert!(e.contains("duplicate timestamp"), "{e}");
        }
        let bad = ctx.sql(&format!("COPY (SELECT 1 AS x) TO '{}' STORED AS TSFILE", dir.join("y.tsfile").display())).await;
        let e = match bad {
            Ok(df) => df.collect().await.map(|_| ()).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("no time column 'time'"), "{e}");
        let left: Vec<PathBuf> = walk(&dir);
        assert!(left.is_empty(), "left behind: {left:?}");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

fn walk(dir: &PathBuf) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
