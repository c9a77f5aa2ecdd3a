//! Differential tests of aggregations answered from statistics (`StatisticsAggregateExec`):
//! every query runs on a table with the rule on and on the same files with
//! `statistics_aggregates = false`, and the answers must agree (float sums and averages
//! within rounding, every other value bit for bit: min/max/first/last of floats keep their
//! zero sign and NaN). Synthetic files put page edges exactly on range bounds and bucket
//! edges and hold NaN, infinities, signed zeros, integer extremes, nulls and empty strings;
//! the corpus and the sample add real writers' files.

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
use crate::sql::{block_on, ctx, metric_of, quote, run};
use crate::writer::{write_tsfile, Device, Table, Val, BOOLEAN, DOUBLE, INT32, INT64, STRING, TEXT};

/// One cell of an answer.
#[derive(Debug, Clone)]
enum Cell {
    /// A float of a sum or an average: equal within 1e-9 relative (summation order).
    Rounded(f64),
    /// Any other float: equal bit for bit (NaN of any payload equal to NaN of the same sign).
    Exact(f64),
    Other(String),
}

impl PartialEq for Cell {
    fn eq(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Rounded(a), Cell::Rounded(b)) => {
                (a.is_nan() && b.is_nan())
                    || a == b
                    || ((a - b).abs() <= 1e-9 * a.abs().max(b.abs()) && a.signum() == b.signum())
                    || (a - b).abs() <= 1e-12
            }
            (Cell::Exact(a), Cell::Exact(b)) => {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan() && a.is_sign_negative() == b.is_sign_negative())
            }
            (Cell::Other(a), Cell::Other(b)) => a == b,
            _ => false,
        }
    }
}

fn cells(batches: &[RecordBatch]) -> Vec<Vec<Cell>> {
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        for i in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .zip(schema.fields())
                    .map(|(c, f)| {
                        let name = f.name().to_ascii_lowercase();
                        let rounded = name.starts_with("sum(") || name.starts_with("avg(");
                        let float = match c.data_type() {
                            _ if c.is_null(i) => None,
                            DataType::Float64 => Some(c.as_primitive::<Float64Type>().value(i)),
                            DataType::Float32 => Some(f64::from(c.as_primitive::<Float32Type>().value(i))),
                            _ => None,
                        };
                        match float {
                            Some(v) if rounded => Cell::Rounded(v),
                            Some(v) => Cell::Exact(v),
                            None if c.is_null(i) => Cell::Other("NULL".into()),
                            None => Cell::Other(array_value_to_string(c, i).unwrap()),
                        }
                    })
                    .collect(),
            );
        }
    }
    out
}

/// What a query is expected to do besides giving the reference answer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// Only the answer is checked (DataFusion may plan it away, e.g. a folded contradiction).
    Any,
    /// Replaced by `StatisticsAggregateExec` (which may still fall back).
    Rewritten,
    /// Rewritten, some unit answered from statistics, at most this many pages decoded.
    Stats { max_decoded: usize },
}

/// How one query was answered (the statistics node's metrics).
#[derive(Debug, Default, Clone, Copy)]
struct Outcome {
    rewritten: bool,
    units_from_statistics: usize,
    pages_decoded: usize,
    fallback: usize,
}

/// Totals of a battery.
#[derive(Debug, Default)]
struct Tally {
    queries: usize,
    rewritten: usize,
    from_statistics: usize,
    fell_back: usize,
}

impl Tally {
    fn add(&mut self, o: Outcome) {
        self.queries += 1;
        self.rewritten += usize::from(o.rewritten);
        self.from_statistics += usize::from(o.units_from_statistics > 0);
        self.fell_back += usize::from(o.fallback > 0);
    }
}

fn stat_metric(plan: &Arc<dyn ExecutionPlan>, name: &str) -> usize {
    metric_of(plan, name, |p| p.name() == "StatisticsAggregateExec")
}

/// Run `q` (with `{t}` for the table) on `on` and `off`, compare, check `expect`.
async fn compare(c: &SessionContext, on: &str, off: &str, q: &str, expect: Expect) -> Outcome {
    let (a, plan) = run(c, &q.replace("{t}", on)).await;
    let (b, _) = run(c, &q.replace("{t}", off)).await;
    let shown = || displayable(plan.as_ref()).indent(true).to_string();
    let (ca, cb) = (cells(&a), cells(&b));
    if ca != cb {
        let first = ca.iter().zip(&cb).enumerate().find(|(_, (x, y))| x != y);
        let bits = |r: &[Cell]| {
            r.iter()
                .map(|c| format!("{c:?}/{:x?}", if let Cell::Exact(v) | Cell::Rounded(v) = c { v.to_bits() } else { 0 }))
                .collect::<Vec<_>>()
        };
        let detail = first.map(|(i, (x, y))| format!("row {i}: statistics {:?}\n decoding {:?}", bits(x), bits(y)));
        panic!("{q} (on {on}): {} rows vs {}; {}\n{}", ca.len(), cb.len(), detail.unwrap_or_default(), shown());
    }
    let o = Outcome {
        rewritten: shown().contains("StatisticsAggregateExec"),
        units_from_statistics: ["series_from_statistics", "chunks_from_statistics", "pages_from_statistics"]
            .iter()
            .map(|m| stat_metric(&plan, m))
            .sum(),
        pages_decoded: stat_metric(&plan, "pages_decoded"),
        fallback: stat_metric(&plan, "fallback_partitions"),
    };
    match expect {
        Expect::Any => {}
        // Also a GROUP BY that a filter makes constant (`region = 'north'`, `time = 7`): a
        // sorted aggregation, whose output order the node keeps.
        Expect::Rewritten => assert!(o.rewritten, "{q}: {o:?}\n{}", shown()),
        Expect::Stats { max_decoded } => {
            assert!(o.rewritten && o.fallback == 0, "{q}: {o:?}\n{}", shown());
            assert!(o.units_from_statistics > 0, "{q}: nothing from statistics {o:?}");
            assert!(o.pages_decoded <= max_decoded, "{q}: {o:?}, want at most {max_decoded} pages decoded");
        }
    }
    o
}

fn s(v: &str) -> String {
    v.to_string()
}

fn ts(ms: i64) -> String {
    format!("to_timestamp_millis({ms})")
}

// ---------------------------------------------------------------------------------------
// Synthetic table: pages of 5 rows, six devices.

const PAGE: usize = 5;
const HOUR: i64 = 3_600_000;

/// Per row: d DOUBLE, i INT32, l INT64, b BOOLEAN, s STRING, x TEXT (`None`: null).
type Row = (i64, [Option<Val>; 6]);

fn device(tags: &[&str], rows: Vec<Row>, absent: &[&str]) -> Device {
    let names = ["d", "i", "l", "b", "s", "x"];
    let types = [DOUBLE, INT32, INT64, BOOLEAN, STRING, TEXT];
    let mut segments = vec![s("t")];
    segments.extend(tags.iter().map(|t| s(t)));
    let columns = (0..6)
        .filter(|c| !absent.contains(&names[*c]))
        .map(|c| (s(names[c]), types[c], rows.iter().map(|r| r.1[c].clone()).collect()))
        .collect();
    Device::Aligned { segments, times: rows.iter().map(|r| r.0).collect(), columns }
}

fn full(t: i64, d: f64, i: i32, l: i64, b: bool, st: &str, x: &str) -> Row {
    (
        t,
        [
            Some(Val::F64(d)),
            Some(Val::I32(i)),
            Some(Val::I64(l)),
            Some(Val::Bool(b)),
            Some(Val::Text(s(st))),
            Some(Val::Text(s(x))),
        ],
    )
}

fn edge_file() -> Vec<u8> {
    // A: times 0..29, pages [0,4] [5,9] … [25,29]; plain values.
    let a: Vec<Row> = (0..30)
        .map(|k| {
            full(
                k,
                k as f64 * 0.5 - 3.0,
                (k as i32 * 7) % 11 - 5,
                k * 1000 - 7,
                k % 3 == 0,
                &format!("s{k:02}"),
                &format!("x{}", 30 - k),
            )
        })
        .collect();
    // B: negative times -20..9; NaN first in a page, NaN inside one, infinities, integer extremes.
    let b: Vec<Row> = (-20..10i64)
        .map(|t| {
            let k = (t + 20) as usize;
            let d = match k {
                5 => f64::NAN,
                12 => f64::NAN,
                16 => f64::INFINITY,
                18 => f64::NEG_INFINITY,
                21 => f64::INFINITY,
                27 => f64::NEG_INFINITY,
                _ => k as f64 * 0.25,
            };
            let i = match k % 5 {
                0..=2 => i32::MAX,
                3 => i32::MIN,
                _ => k as i32,
            };
            let l = match k {
                0..=9 => i64::MAX - k as i64,
                10..=14 => i64::MIN + k as i64,
                15..=19 => (1i64 << 53) + k as i64,
                _ => -(k as i64),
            };
            let st = if k.is_multiple_of(4) { "" } else { "b" };
            full(t, d, i, l, (k / 5).is_multiple_of(2), st, if k.is_multiple_of(3) { "" } else { "zz" })
        })
        .collect();
    // C: signed zeros in both orders, times 100, 103, …, 142.
    let zeros = [0.0, -0.0, 1.0, 2.0, 3.0, -1.0, -0.0, 0.0, -2.0, -0.0, -0.0, -0.0, 0.0, -0.0, 0.0];
    let c: Vec<Row> = zeros
        .iter()
        .enumerate()
        .map(|(k, z)| full(100 + 3 * k as i64, *z, if k % 2 == 0 { i32::MIN } else { -1 }, i64::MIN / 2, true, "c", "c"))
        .collect();
    // D: site null, no `s` column; nulls at the first and last time, a whole null page of `i`.
    let d: Vec<Row> = (0..20i64)
        .map(|k| {
            let t = 2 * k;
            let dv = (k != 0 && k != 19).then_some(Val::F64(k as f64 * -1.5));
            let iv = (!(5..10).contains(&k)).then_some(Val::I32(k as i32 * 100));
            let lv = (8..12).contains(&k).then_some(Val::I64(k * 3));
            let bv = (k % 2 == 0).then_some(Val::Bool(k % 4 == 0));
            let xv = match k % 3 {
                0 => None,
                1 => Some(Val::Text(s(""))),
                _ => Some(Val::Text(format!("d{k}"))),
            };
            (t, [dv, iv, lv, bv, None, xv])
        })
        .collect();
    let d = device(&["south"], d, &["s"]);
    // E: every 12 minutes for 48 hours: each page is exactly one hour.
    let e: Vec<Row> = (0..240i64)
        .map(|k| {
            let t = k * HOUR / 5;
            full(t, (k % 17) as f64 * 0.25 - 2.0, (k % 13) as i32, k * k, k % 7 == 0, &format!("e{:03}", k % 50), "e")
        })
        .collect();
    // F: sparse times around zero, the ms, second and day edges: single-point buckets.
    let ft = [-25 * HOUR, -1, 0, 1, 999, 1_000, 1_001, 86_399_999, 86_400_000, 30 * HOUR];
    let f: Vec<Row> =
        ft.iter().enumerate().map(|(k, t)| full(*t, k as f64, k as i32, -(k as i64), k % 2 == 1, "f", "f")).collect();
    let devices = [
        device(&["north", "s1"], a, &[]),
        device(&["north", "s2"], b, &[]),
        device(&["south", "s1"], c, &[]),
        d,
        device(&["east", "s3"], e, &[]),
        device(&["west", "s4"], f, &[]),
    ];
    let table = Table {
        name: s("t"),
        tags: vec![s("region"), s("site")],
        fields: vec![(s("d"), DOUBLE), (s("i"), INT32), (s("l"), INT64), (s("b"), BOOLEAN), (s("s"), STRING), (s("x"), TEXT)],
    };
    write_tsfile(&devices, &[table], PAGE)
}

/// A temporary directory holding `copies` copies of `bytes`, removed on drop.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8], copies: usize) -> TempFile {
        let dir = std::env::temp_dir().join(format!("tsfile-stats-answers-{}-{name}-{copies}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for k in 0..copies {
            std::fs::write(dir.join(format!("{name}{k}.tsfile")), bytes).unwrap();
        }
        TempFile(dir)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// The set-ups a synthetic file is queried in: one file and one partition (the rule's
/// `Single` mode), two copies of it in two partitions (`Partial` states merged by
/// DataFusion), and one file in two partitions (a round-robin repartition between the scan
/// and the partial aggregation, which the rule looks through: one partition holds the file,
/// the other empty partial states).
fn setups(name: &str, bytes: &[u8]) -> Vec<(TempFile, usize)> {
    vec![
        (TempFile::new(name, bytes, 1), 1),
        (TempFile::new(name, bytes, 2), 2),
        (TempFile::new(&format!("{name}-spread"), bytes, 1), 2),
    ]
}

async fn register_pair(c: &SessionContext, path: &str, opts: TsFileReadOptions) {
    register_tsfile(c, "on", &[path], opts.clone()).await.unwrap();
    register_tsfile(c, "off", &[path], opts.with_statistics_aggregates(false)).await.unwrap();
}

const AGG_NUMBERS: &str = "count(*), count(d), sum(d), avg(d), min(d), max(d), min(time), max(time)";
const AGG_INTEGERS: &str = "count(i), sum(i), avg(i), min(i), max(i), count(l), sum(l), avg(l), min(l), max(l)";
const AGG_OTHERS: &str = "count(b), min(b), max(b), count(s), min(s), max(s), count(x), min(x), max(x)";
const AGG_POSITIONED: &str = "first_value(d ORDER BY time), last_value(d ORDER BY time), \
     first_value(d ORDER BY time) IGNORE NULLS, last_value(d ORDER BY time) IGNORE NULLS, \
     first_value(i ORDER BY time DESC), last_value(l ORDER BY time DESC) IGNORE NULLS, \
     first_value(s ORDER BY time), last_value(x ORDER BY time), first_value(b ORDER BY time DESC) IGNORE NULLS";

/// The synthetic battery: every range × grouping × aggregate list.
async fn synthetic_battery(c: &SessionContext, tally: &mut Tally) {
    // (predicate, the range is one the rule reads)
    let ranges: Vec<(String, bool)> = vec![
        (String::new(), true),
        // Exactly a page of A and B: [5, 9].
        (format!("time >= {} AND time <= {}", ts(5), ts(9)), true),
        // One before and one after.
        (format!("time >= {} AND time <= {}", ts(4), ts(10)), true),
        (format!("time > {} AND time < {}", ts(4), ts(10)), true),
        // Inside one page.
        (format!("time > {} AND time < {}", ts(5), ts(9)), true),
        (format!("time = {}", ts(7)), true),
        (format!("time BETWEEN {} AND {}", ts(10), ts(19)), true),
        // Negative times, page edges of B.
        (format!("time >= {} AND time < {}", ts(-15), ts(-5)), true),
        (format!("time < {}", ts(0)), true),
        // Hour edges of E.
        (format!("time >= {} AND time < {}", ts(HOUR), ts(3 * HOUR)), true),
        (format!("time > {} AND time <= {}", ts(HOUR), ts(3 * HOUR)), true),
        // Nothing: empty, after every row, contradictory.
        (format!("time >= {} AND time < {}", ts(6), ts(6)), false),
        (format!("time > {}", ts(48 * HOUR)), true),
        (format!("time >= {}", ts(30 * HOUR)), true),
        (format!("time > {} AND time < {}", ts(20), ts(10)), false),
        // Everything.
        (format!("time >= {} AND time <= {}", ts(-100 * HOUR), ts(100 * HOUR)), true),
    ];
    let tag_filters = ["", "region = 'north'", "site <> 's1'", "region IN ('south', 'west')", "site IS NULL"];
    for (ri, (range, readable)) in ranges.iter().enumerate() {
        for (ti, tag) in tag_filters.iter().enumerate() {
            // Every range without TAG filter, and TAG filters combined with a few ranges.
            if ti > 0 && ![0, 1, 7, 9].contains(&ri) {
                continue;
            }
            let conj: Vec<&str> = [range.as_str(), *tag].into_iter().filter(|p| !p.is_empty()).collect();
            let filter = if conj.is_empty() { String::new() } else { format!(" WHERE {}", conj.join(" AND ")) };
            let groupings: [(&str, bool); 7] = [
                ("", false),
                ("region", false),
                ("region, site", true),
                ("date_bin(INTERVAL '3 milliseconds', time)", false),
                ("date_bin(INTERVAL '5 milliseconds', time, TIMESTAMP '1970-01-01T00:00:00.002'), region, site", true),
                ("date_bin(INTERVAL '1 hour', time), region", false),
                ("region, site, date_bin(INTERVAL '1 day', time)", true),
            ];
            for (g, per_device) in groupings {
                for aggs in [AGG_NUMBERS, AGG_INTEGERS, AGG_OTHERS, AGG_POSITIONED] {
                    // first/last only per device: rows of two devices tie on time.
                    if aggs == AGG_POSITIONED && !per_device {
                        continue;
                    }
                    let q = if g.is_empty() {
                        format!("SELECT {aggs} FROM {{t}}{filter}")
                    } else {
                        let n = g.split(", ").count();
                        let order: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
                        format!("SELECT {g}, {aggs} FROM {{t}}{filter} GROUP BY {g} ORDER BY {}", order.join(", "))
                    };
                    // Without a filter and groups DataFusion may answer from the scan's statistics.
                    let expect = if !readable || (g.is_empty() && filter.is_empty()) { Expect::Any } else { Expect::Rewritten };
                    tally.add(compare(c, "on", "off", &q, expect).await);
                }
            }
        }
    }
}

#[test]
fn test_stats_answers_synthetic_edges() {
    block_on(async {
        for (file, partitions) in setups("edges", &edge_file()) {
            let c = ctx(partitions);
            register_pair(&c, file.path(), TsFileReadOptions::default()).await;
            let mut tally = Tally::default();
            synthetic_battery(&c, &mut tally).await;
            println!("stats_answers synthetic, {partitions} partition(s): {tally:?}");
            assert!(tally.rewritten * 5 >= tally.queries * 4, "{tally:?}");
            assert!(tally.from_statistics * 5 >= tally.queries, "{tally:?}");
            // Grouped float min/max over NaN, zeros or lone infinities run the original plan.
            assert!(tally.fell_back * 5 < tally.queries, "{tally:?}");
        }
    });
}

/// Units answered from statistics where they should be, and only straddling pages decoded.
#[test]
fn test_stats_answers_synthetic_units() {
    block_on(async {
        for (file, partitions) in setups("units", &edge_file()) {
            let c = ctx(partitions);
            register_pair(&c, file.path(), TsFileReadOptions::default()).await;
            let all = format!("time >= {} AND time <= {}", ts(-100 * HOUR), ts(100 * HOUR));
            let cases: Vec<(String, Expect)> = vec![
                // Exactly page [5, 9] of device north/s1: one page from its statistics.
                (
                    format!(
                        "SELECT count(*), count(i), sum(i), min(l), max(l), min(s), count(x) FROM {{t}} \
                         WHERE region = 'north' AND site = 's1' AND time >= {} AND time <= {}",
                        ts(5),
                        ts(9)
                    ),
                    Expect::Stats { max_decoded: 0 },
                ),
                // The same range over every device: pages of north/* inside, three straddling.
                (
                    format!("SELECT count(*), count(i), sum(i), min(i), max(i), sum(l) FROM {{t}} WHERE time BETWEEN {} AND {}", ts(5), ts(9)),
                    Expect::Stats { max_decoded: 3 * partitions },
                ),
                // Everything: series statistics (the NaN series of north/s2 is not summed here).
                (
                    format!("SELECT count(*), count(d), sum(i), avg(i), min(l), max(l), min(b), max(s), min(time) FROM {{t}} WHERE {all}"),
                    Expect::Stats { max_decoded: 0 },
                ),
                // One-hour buckets on hour-aligned pages; with a range of whole hours.
                (
                    "SELECT date_bin(INTERVAL '1 hour', time), count(*), sum(i), avg(d), min(i), last_value(s ORDER BY time) \
                     FROM {t} WHERE region = 'east' GROUP BY 1 ORDER BY 1"
                        .to_string(),
                    Expect::Stats { max_decoded: 0 },
                ),
                (
                    format!(
                        "SELECT date_bin(INTERVAL '1 day', time), count(*), sum(d), max(l) FROM {{t}} \
                         WHERE region = 'east' AND time >= {} AND time < {} GROUP BY 1 ORDER BY 1",
                        ts(HOUR),
                        ts(3 * HOUR)
                    ),
                    Expect::Stats { max_decoded: 0 },
                ),
                // 5 ms buckets on the 5-row pages of north/s1 (origin 0): no page decoded.
                (
                    "SELECT date_bin(INTERVAL '5 milliseconds', time), count(*), sum(i), min(l), first_value(x ORDER BY time) \
                     FROM {t} WHERE region = 'north' AND site = 's1' GROUP BY 1 ORDER BY 1"
                        .to_string(),
                    Expect::Stats { max_decoded: 0 },
                ),
                // Origin 2 ms: every page straddles an edge.
                (
                    "SELECT date_bin(INTERVAL '5 milliseconds', time, TIMESTAMP '1970-01-01T00:00:00.002'), count(*), sum(i) \
                     FROM {t} WHERE region = 'north' AND site = 's1' GROUP BY 1 ORDER BY 1"
                        .to_string(),
                    Expect::Rewritten,
                ),
                // first/last by time DESC per device, nulls at the first and last row of south/NULL.
                (
                    format!(
                        "SELECT region, site, first_value(d ORDER BY time DESC), last_value(d ORDER BY time DESC), \
                         first_value(d ORDER BY time DESC) IGNORE NULLS, last_value(i ORDER BY time DESC) IGNORE NULLS, \
                         last_value(s ORDER BY time) FROM {{t}} WHERE {all} GROUP BY 1, 2 ORDER BY 1, 2"
                    ),
                    Expect::Stats { max_decoded: 0 },
                ),
                // A bucket of one point (device west/s4), negative times.
                (
                    "SELECT date_bin(INTERVAL '1 second', time), count(*), sum(i), min(l), max(s) FROM {t} \
                     WHERE site = 's4' GROUP BY 1 ORDER BY 1"
                        .to_string(),
                    Expect::Rewritten,
                ),
            ];
            for (q, expect) in cases {
                compare(&c, "on", "off", &q, expect).await;
            }
            // After every row: nothing read at all.
            let q = format!("SELECT count(*), sum(d), min(s) FROM {{t}} WHERE time > {}", ts(48 * HOUR));
            let o = compare(&c, "on", "off", &q, Expect::Rewritten).await;
            assert_eq!((o.units_from_statistics, o.pages_decoded), (0, 0), "{q}");
        }
    });
}

/// A device per float shape, grouped: DataFusion's grouped min/max is order-dependent at
/// NaN and equal zeros and never reaches a lone infinity; the rule runs the original plan.
#[test]
fn test_stats_answers_grouped_float_extremes() {
    let shapes: [(&str, Vec<f64>); 7] = [
        ("plain", vec![1.5, -2.0, 3.0, 4.0]),
        ("nan_first", vec![f64::NAN, 1.0, 2.0, 5.0]),
        ("nan_inside", vec![1.0, 7.0, f64::NAN, 2.0]),
        ("neg_inf", vec![f64::NEG_INFINITY, f64::NEG_INFINITY]),
        ("pos_inf", vec![f64::INFINITY, f64::INFINITY, f64::INFINITY]),
        ("zeros_pos_first", vec![0.0, -0.0, -1.0, 0.0]),
        ("zeros_neg_first", vec![-0.0, 0.0, 1.0, -0.0]),
    ];
    let devices: Vec<Device> = shapes
        .iter()
        .map(|(name, vals)| {
            let rows = vals.iter().enumerate().map(|(k, v)| full(k as i64, *v, k as i32, k as i64, true, "v", "v")).collect();
            device(&["r", name], rows, &[])
        })
        .collect();
    let table = Table {
        name: s("t"),
        tags: vec![s("region"), s("site")],
        fields: vec![(s("d"), DOUBLE), (s("i"), INT32), (s("l"), INT64), (s("b"), BOOLEAN), (s("s"), STRING), (s("x"), TEXT)],
    };
    // Pages of 2 rows: statistics answer some pages, NaN pages are decoded.
    block_on(async {
        for (file, partitions) in setups("floats", &write_tsfile(&devices, &[table], 2)) {
            let c = ctx(partitions);
            register_pair(&c, file.path(), TsFileReadOptions::default()).await;
            for (name, _) in &shapes {
                let q = format!("SELECT region, min(d), max(d), count(d) FROM {{t}} WHERE site = '{name}' GROUP BY region");
                let o = compare(&c, "on", "off", &q, Expect::Any).await;
                assert!(o.rewritten, "{q}: {o:?}");
                assert_eq!(o.fallback > 0, *name != "plain", "{q}: {o:?}");
                // Ungrouped, the total order of Arrow's kernels: answered.
                let q = format!("SELECT min(d), max(d), count(d) FROM {{t}} WHERE site = '{name}'");
                let o = compare(&c, "on", "off", &q, Expect::Rewritten).await;
                assert_eq!(o.fallback, 0, "{q}: {o:?}");
            }
            let q = "SELECT site, min(d), max(d) FROM {t} GROUP BY site ORDER BY site";
            compare(&c, "on", "off", q, Expect::Rewritten).await;
            let q = "SELECT date_bin(INTERVAL '2 milliseconds', time), min(d), max(d) FROM {t} GROUP BY 1 ORDER BY 1";
            compare(&c, "on", "off", q, Expect::Rewritten).await;
        }
    });
}

// ---------------------------------------------------------------------------------------
// Real writers' files: the corpus (table and tree model) and the sample.

/// A column of a registered table: quoted name and Arrow type.
struct Columns {
    time: String,
    tags: Vec<String>,
    fields: Vec<(String, DataType)>,
}

async fn columns(c: &SessionContext, table: &str) -> Columns {
    let schema = c.table(table).await.unwrap().schema().as_arrow().clone();
    let mut out = Columns { time: quote(schema.field(0).name()), tags: Vec::new(), fields: Vec::new() };
    for f in schema.fields().iter().skip(1) {
        match f.metadata().get(CATEGORY_KEY).map(String::as_str) {
            Some("TAG") => out.tags.push(quote(f.name())),
            Some("ATTRIBUTE") => {}
            _ => out.fields.push((quote(f.name()), f.data_type().clone())),
        }
    }
    out
}

/// One scalar of a one-row query on `table` (as text; `None` for NULL or no row).
async fn scalar(c: &SessionContext, sql: &str) -> Option<String> {
    let (b, _) = run(c, sql).await;
    let b = b.iter().find(|b| b.num_rows() > 0)?;
    (!b.column(0).is_null(0)).then(|| array_value_to_string(b.column(0), 0).unwrap())
}

/// Fields queried per table (wide tables have hundreds).
const FIELDS: usize = 4;

/// The battery over a table pair: aggregates × filters (none, the middle third of its time
/// span, with TAG predicates) × groupings (none, every TAG, `date_bin` of a seventh of the
/// span, both); first/last per device. Each query is compared; `check` sees each outcome.
async fn table_battery(c: &SessionContext, on: &str, off: &str, tally: &mut Tally, check: impl Fn(&str, &Outcome)) {
    let cols = columns(c, off).await;
    let time = &cols.time;
    let lo = scalar(c, &format!("SELECT CAST(min({time}) AS BIGINT) FROM {off}")).await;
    let hi = scalar(c, &format!("SELECT CAST(max({time}) AS BIGINT) FROM {off}")).await;
    let (Some(lo), Some(hi)) = (lo, hi) else { return };
    let (lo, hi): (i64, i64) = (lo.parse().unwrap(), hi.parse().unwrap());
    let span = i128::from(hi) - i128::from(lo);
    let at = |k: i128| i64::try_from(i128::from(lo) + span * k / 3).unwrap();
    let (a, b) = (at(1), at(2));
    // A seventh of the span (bounded: DataFusion's intervals and date_bin are nanoseconds).
    let stride = i64::try_from(span / 7).unwrap_or(i64::MAX).clamp(1, 1_000_000_000_000);
    let mut filters = vec![String::new(), format!("{time} >= {} AND {time} < {}", ts(a), ts(b))];
    if let Some(tag) = cols.tags.first() {
        if let Some(v) = scalar(c, &format!("SELECT {tag} FROM {off} WHERE {tag} IS NOT NULL ORDER BY 1 LIMIT 1")).await {
            let v = v.replace('\'', "''");
            filters.push(format!("{} AND {tag} = '{v}'", filters[1]));
            filters.push(format!("{tag} <> '{v}' AND {time} <= {}", ts(b)));
        }
        filters.push(format!("{tag} IS NULL"));
    }
    let mut aggs = vec![format!("count(*), min({time}), max({time})")];
    let mut positioned = Vec::new();
    for (name, ty) in cols.fields.iter().take(FIELDS) {
        let numeric = matches!(ty, DataType::Int32 | DataType::Int64 | DataType::Float32 | DataType::Float64);
        let ordered = numeric || matches!(ty, DataType::Boolean | DataType::Utf8 | DataType::Date32 | DataType::Timestamp(..));
        let mut a = format!("count({name})");
        if ordered {
            a += &format!(", min({name}), max({name})");
            positioned.push(format!(
                "first_value({name} ORDER BY {time}), last_value({name} ORDER BY {time}) IGNORE NULLS, \
                 first_value({name} ORDER BY {time} DESC)"
            ));
        }
        if numeric {
            a += &format!(", sum({name}), avg({name})");
        }
        aggs.push(a);
    }
    let bucket = format!("date_bin(INTERVAL '{stride} milliseconds', {time})");
    let tags = cols.tags.join(", ");
    let mut groupings = vec![(String::new(), false), (bucket.clone(), false)];
    if !tags.is_empty() {
        groupings.push((tags.clone(), true));
        groupings.push((format!("{bucket}, {tags}"), true));
    }
    for filter in &filters {
        let filter = if filter.is_empty() { String::new() } else { format!(" WHERE {filter}") };
        for (g, per_device) in &groupings {
            let lists: Vec<&String> = aggs.iter().chain(positioned.iter().filter(|_| *per_device)).collect();
            for a in lists {
                let q = if g.is_empty() {
                    format!("SELECT {a} FROM {{t}}{filter}")
                } else {
                    let n = g.split(", ").count();
                    let order: Vec<String> = (1..=n).map(|i| format!("{i} NULLS FIRST")).collect();
                    format!("SELECT {g}, {a} FROM {{t}}{filter} GROUP BY {g} ORDER BY {}", order.join(", "))
                };
                let o = compare(c, on, off, &q, Expect::Any).await;
                check(&q, &o);
                tally.add(o);
            }
        }
    }
}

fn corpus_options(entry: &serde_json::Value) -> TsFileReadOptions {
    let mut options = TsFileReadOptions::default();
    if let Some(enc) = entry["reader_hints"]["nonaligned_time_encoding"].as_str() {
        options.read.nonaligned_time_encoding = Encoding::from_name(enc).unwrap();
    }
    options
}

async fn corpus_battery(model: &str, partitions: usize, tally: &mut Tally) {
    for entry in manifest_files(&manifest()) {
        let name = entry["name"].as_str().unwrap().to_string();
        if entry["model"] != model || !name.starts_with(&format!("{model}_")) {
            continue;
        }
        let c = ctx(partitions);
        let p = file_path(&entry);
        let p = p.to_str().unwrap();
        let options = corpus_options(&entry);
        let names = register_tsfile_schema(&c, "on", p, options.clone()).await.unwrap();
        register_tsfile_schema(&c, "off", p, options.with_statistics_aggregates(false)).await.unwrap();
        for n in names {
            let (on, off) = (format!("on.{}", quote(&n)), format!("off.{}", quote(&n)));
            table_battery(&c, &on, &off, tally, |q, o| {
                // Tree-model tables are a merge of series: the rule falls back.
                if model == "tree" {
                    assert!(!o.rewritten || o.fallback > 0, "{name}: {q}: {o:?}");
                }
            })
            .await;
        }
    }
}

#[test]
fn test_stats_answers_corpus_tables() {
    block_on(async {
        // One partition: with several, DataFusion's own grouped float min/max differs between
        // two runs of one plan when a group holds a NaN (partial states merge in arrival
        // order), so the plan without statistics is no fixed reference.
        for partitions in [1] {
            let mut tally = Tally::default();
            corpus_battery("table", partitions, &mut tally).await;
            println!("stats_answers corpus tables, {partitions} partition(s): {tally:?}");
            assert!(tally.queries > 500, "{tally:?}");
            assert!(tally.rewritten * 2 > tally.queries && tally.from_statistics * 4 > tally.queries, "{tally:?}");
        }
    });
}

#[test]
fn test_stats_answers_corpus_tree_tables_fall_back() {
    block_on(async {
        let mut tally = Tally::default();
        // One partition: DataFusion's own grouped float min/max depends on the order partial
        // states merge in (NaN), so two runs of one plan may differ with several.
        corpus_battery("tree", 1, &mut tally).await;
        println!("stats_answers corpus tree tables: {tally:?}");
        assert!(tally.queries > 100 && tally.fell_back > 0, "{tally:?}");
        assert_eq!(tally.from_statistics, 0, "{tally:?}");
    });
}

#[test]
fn test_stats_answers_sample() {
    let sample = repo_path("data/sample.tsfile");
    block_on(async {
        for partitions in [1, 2] {
            let c = ctx(partitions);
            register_pair(&c, sample.to_str().unwrap(), TsFileReadOptions::default()).await;
            let mut tally = Tally::default();
            table_battery(&c, "on", "off", &mut tally, |_, _| {}).await;
            println!("stats_answers sample, {partitions} partition(s): {tally:?}");
            // Each device is one single-page chunk: only whole-span queries use statistics.
            assert!(tally.from_statistics > 0 && tally.rewritten * 2 > tally.queries, "{tally:?}");
        }
    });
}
