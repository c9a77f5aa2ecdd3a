#!/usr/bin/env python3
"""Whole-process comparison: `tsfile sql -q -f <workload>.ts.sql` on the TsFile against the
same binary on the snappy Parquet twin (`<workload>.pq.sql`), as a new user would run them.

Each workload in `queries/` is a pair of SQL files (the Parquet twin's time column is Int64,
so its SQL converts with `to_timestamp_millis`); `queries/sizes.txt` names the data set each
one reads (`bench-data/<size>.tsfile`, `bench-data/<size>.snappy.parquet`, written by
`gen_data.py`). Per workload: one warm-up run of each (whose CSV answers are compared: same
rows, floats equal within 1e-9 relative), then `--runs` counted runs alternating TsFile and
Parquet. Start-up (`tsfile sql -q -c 'SELECT 1'`, median of as many runs) is subtracted from
both medians before the ratio ours / Parquet is taken.

From the repository root, after `cargo build --release -p tsfile-cli`:

    python3 tools/bench/e2e.py --bin target/release/tsfile --runs 5
    python3 tools/bench/e2e.py --workloads latest,daily --runs 9
"""

import argparse
import csv
import io
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
QUERIES = os.path.join(HERE, "queries")


def run(cmd):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return elapsed, out.stdout


def rows(text):
    """CSV rows without the header (column names differ between the two tables)."""
    return list(csv.reader(io.StringIO(text)))[1:]


def same_cell(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-9) or (math.isnan(x) and math.isnan(y))


def same_answer(a, b):
    ra, rb = rows(a), rows(b)
    return len(ra) == len(rb) and all(len(x) == len(y) and all(map(same_cell, x, y)) for x, y in zip(ra, rb))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/tsfile")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workloads", help="comma-separated names (default: all in queries/sizes.txt)")
    a = ap.parse_args()
    sizes = dict(line.split() for line in open(os.path.join(QUERIES, "sizes.txt")) if line.strip())
    names = a.workloads.split(",") if a.workloads else list(sizes)
    base = [a.bin, "sql", "-q", "--format", "csv", "--maxrows", "inf"]
    startup = statistics.median(run(base + ["-c", "SELECT 1"])[0] for _ in range(a.runs + 1))
    print(f"start-up {startup * 1000:.1f} ms (median), subtracted; {a.runs} counted runs each\n")
    print("| workload | size | ours ms | Parquet ms | ours / Parquet | answers |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for name in names:
        ts = base + ["-f", os.path.join(QUERIES, f"{name}.ts.sql")]
        pq = base + ["-f", os.path.join(QUERIES, f"{name}.pq.sql")]
        _, ts_out = run(ts)
        _, pq_out = run(pq)
        ok = "equal" if same_answer(ts_out, pq_out) else "DIFFER"
        t_ts, t_pq = [], []
        for i in range(a.runs):
            for cmd, acc in ([(ts, t_ts), (pq, t_pq)] if i % 2 == 0 else [(pq, t_pq), (ts, t_ts)]):
                acc.append(run(cmd)[0])
        m_ts = max(statistics.median(t_ts) - startup, 1e-4)
        m_pq = max(statistics.median(t_pq) - startup, 1e-4)
        print(f"| {name} | {sizes[name]} | {m_ts * 1000:.0f} | {m_pq * 1000:.0f} | {m_ts / m_pq:.2f} | {ok} |", flush=True)


if __name__ == "__main__":
    main()
