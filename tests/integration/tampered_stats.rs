//! Statistics that contradict themselves never prune and are never exact: files whose
//! statistics the test writer falsifies on purpose (integer, float and STRING min > max, a
//! BOOLEAN true count above the count, a value count above the rows, a time range with start
//! after end) answer every query exactly as a full decode does — with pruning and statistics
//! answers on, through SQL and through the library. (Statistics that lie consistently — a
//! true count or a value count still within the rows — cannot be told from the truth
//! without decoding; the falsifications here always contradict themselves.)

use datafusion::prelude::SessionContext;
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::datafusion::TsFileReadOptions;
use datafusion_tsfile::{TableRead, TsFile};

use crate::float_pruning::{register_three, temp_file};
use crate::sql::{block_on, ctx, rows_of, run};
use crate::writer::{with_tampered_statistics, write_tsfile, Device, Table, Tamper, Val, BOOLEAN, DOUBLE, INT32, INT64, STRING};

/// Rows per device; pages of 40 points (several pages per chunk).
const ROWS: i64 = 130;

fn device(name: &str, k: i64) -> Device {
    let col = |f: &dyn Fn(i64) -> Option<Val>| (0..ROWS).map(f).collect::<Vec<_>>();
    Device::Aligned {
        segments: vec!["t".into(), name.into()],
        times: (0..ROWS).map(|i| k * 1000 + i * 10).collect(),
        columns: vec![
            ("v".into(), INT64, col(&|i| (i % 7 != 3).then_some(Val::I64(k * 100 + i)))),
            ("i".into(), INT32, col(&|i| Some(Val::I32((i * 37 % 101) as i32 - 50)))),
            ("x".into(), DOUBLE, col(&|i| (i % 5 != 1).then_some(Val::F64((i as f64) * 0.5 - 20.0)))),
            ("b".into(), BOOLEAN, col(&|i| (i % 11 != 0).then_some(Val::Bool(i % 3 == 0)))),
            ("s".into(), STRING, col(&|i| Some(Val::Text(format!("{}{}", ["alpha", "mid", "zulu"][(i % 3) as usize], k))))),
        ],
    }
}

fn file(t: Tamper) -> Vec<u8> {
    let table = Table {
        name: "t".into(),
        tags: vec!["dev".into()],
        fields: vec![("v".into(), INT64), ("i".into(), INT32), ("x".into(), DOUBLE), ("b".into(), BOOLEAN), ("s".into(), STRING)],
    };
    with_tampered_statistics(t, || write_tsfile(&[device("d1", 1), device("d2", 2), device("d3", 3)], &[table], 40))
}

/// Queries whose answers statistics could give or prune.
const QUERIES: &[&str] = &[
    "SELECT count(*), count(v), count(x), count(b), count(s) FROM {t}",
    "SELECT min(v), max(v), min(i), max(i), min(x), max(x), min(b), max(b), min(s), max(s) FROM {t}",
    "SELECT dev, min(v), max(v), sum(v), count(v) FROM {t} GROUP BY dev ORDER BY dev",
    "SELECT count(*) FROM {t} WHERE v > 250",
    "SELECT count(*) FROM {t} WHERE v < 150",
    "SELECT count(*) FROM {t} WHERE i = 0",
    "SELECT count(*) FROM {t} WHERE x >= 10.0",
    "SELECT count(*) FROM {t} WHERE b = true",
    "SELECT count(*) FROM {t} WHERE b = false",
    "SELECT count(*) FROM {t} WHERE s > 'n'",
    "SELECT count(*) FROM {t} WHERE s = 'alpha2'",
    "SELECT count(*) FROM {t} WHERE v IS NULL",
    "SELECT count(*) FROM {t} WHERE x IS NOT NULL",
    "SELECT count(*) FROM {t} WHERE time >= 2500 AND time < 3100",
    "SELECT min(time), max(time), count(*) FROM {t} WHERE time BETWEEN 1100 AND 1200",
    "SELECT first_value(v ORDER BY time), last_value(x ORDER BY time) FROM {t}",
];

#[test]
fn test_tampered_statistics_answer_as_a_full_decode() {
    let cases = [
        ("min_gt_max", Tamper { swap_min_max: true, ..Tamper::default() }),
        ("true_count", Tamper { true_count_delta: 1000, ..Tamper::default() }),
        ("count_over_rows", Tamper { count_delta: 1000, ..Tamper::default() }),
    ];
    block_on(async {
        for (name, t) in cases {
            let path = temp_file(&format!("tampered-{name}"), &file(t));
            let c: SessionContext = ctx(2);
            register_three(&c, path.to_str().unwrap(), TsFileReadOptions::default().with_time_unit(TimeUnit::Raw)).await;
            for q in QUERIES {
                let (on, _) = run(&c, &q.replace("{t}", "on")).await;
                let (mem, _) = run(&c, &q.replace("{t}", "mem")).await;
                assert_eq!(rows_of(&on), rows_of(&mem), "{name}: {q}");
            }
            // The library: a time range read equals the full read filtered.
            let lib = TsFile::open(&path).unwrap();
            let count = |read: TableRead| lib.read_table("t", read).unwrap().map(|b| b.unwrap().num_rows()).sum::<usize>();
            assert_eq!(count(TableRead::default().with_time_range(2500, 3099)), 70, "{name}");
            assert_eq!(count(TableRead::default()), 3 * ROWS as usize, "{name}");
        }
    });
}

#[test]
fn test_time_statistics_with_start_after_end_are_an_error() {
    // Caught where statistics are parsed, before anything could prune by them.
    let path = temp_file("tampered-time", &file(Tamper { swap_time: true, ..Tamper::default() }));
    let lib = TsFile::open(&path).unwrap();
    let err = lib.read_table("t", TableRead::default()).and_then(|r| r.collect::<Result<Vec<_>, _>>()).unwrap_err().to_string();
    assert!(err.contains("start_time") && err.contains("> end_time"), "{err}");
    block_on(async {
        let c = ctx(1);
        let opts = TsFileReadOptions::default().with_time_unit(TimeUnit::Raw);
        datafusion_tsfile::datafusion::register_tsfile(&c, "t", &[path.to_str().unwrap()], opts).await.unwrap_or_else(|e| {
            assert!(e.to_string().contains("> end_time"), "{e}");
        });
        if let Ok(df) = c.sql("SELECT count(*) FROM t WHERE time > 5").await {
            let err = df.collect().await.unwrap_err().to_string();
            assert!(err.contains("> end_time"), "{err}");
        }
    });
}
