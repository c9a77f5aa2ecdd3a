#!/usr/bin/env python3
"""Remote reads: the workloads of `queries/` with both files on an S3-compatible server
(moto, started here on 127.0.0.1 by `tools/test-servers/serve.py`), as
`tsfile sql --object-store-profiling summary -f <workload>.{ts,pq}.sql` with the local paths
replaced by `s3://bench/...`. Per workload and format: the object-store requests (GET and
HEAD) and bytes the query made (datafusion-cli's instrumented store counts them), and the
median wall time of `--runs` runs with start-up subtracted; answers compared as in `e2e.py`.

moto answers from memory on this machine, so times are mostly CPU and per-request cost, not
network latency; requests and bytes are what carries over to a real object store.

From the repository root, after `cargo build --release -p tsfile-cli` and with the venv the
tests create (`target/test-venv`, see README "Object stores"):

    target/test-venv/bin/python tools/bench/remote.py --bin target/release/tsfile --runs 5
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import boto3

from e2e import QUERIES, run, same_answer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_WORKLOADS = "one_device,agg_by_device,latest,threshold_double,threshold_double_none"


def profile(text):
    """(GET count, GET bytes, HEAD count) summed over the profiling tables in `text`."""
    gets = get_bytes = heads = 0
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7:
            continue
        op, metric, *_, total, count = cells
        if op == "Get" and metric == "size":
            gets += int(count)
            get_bytes += float(total.rstrip(" B") or 0)
        elif op == "Head" and metric == "duration":
            heads += int(count)
    return gets, int(get_bytes), heads


def answer(text):
    """The CSV answer: the lines before the first blank line or the profiling report (none for an empty answer)."""
    out = []
    for line in text.splitlines():
        if line.startswith("Object Store Profiling"):
            break
        if not line.strip() or line.startswith(("Object Store Profiling", "Elapsed", "tsfile sql")) or re.match(r"\d+ row", line):
            if out:
                break
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/tsfile")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    ap.add_argument("--data", default="bench-data")
    a = ap.parse_args()
    sizes = dict(line.split() for line in open(os.path.join(QUERIES, "sizes.txt")) if line.strip())
    sizes.update(one_device="M", agg_by_device="M")
    names = a.workloads.split(",")

    server = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "tools/test-servers/serve.py"), "--http-root", a.data, "--bucket", "bench"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    endpoint = json.loads(server.stdout.readline())["s3"]
    client = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
    )
    for size in sorted({sizes[n] for n in names}):
        for name in (f"{size}.tsfile", f"{size}.snappy.parquet"):
            client.upload_file(os.path.join(a.data, name), "bench", name)
    env = dict(
        os.environ,
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_REGION="us-east-1",
        AWS_ENDPOINT=endpoint,
        AWS_ALLOW_HTTP="true",
    )
    os.environ.update(env)

    base = [a.bin, "sql", "--format", "csv", "--maxrows", "inf", "--object-store-profiling", "summary"]
    startup = statistics.median(run([a.bin, "sql", "-q", "-c", "SELECT 1"])[0] for _ in range(a.runs + 1))
    print(f"S3 (moto) on 127.0.0.1; start-up {startup * 1000:.1f} ms (median), subtracted; {a.runs} counted runs each\n")
    print("| workload | size | ours GET / HEAD | ours bytes | Parquet GET / HEAD | Parquet bytes | ours ms | Parquet ms | ours / Parquet | answers |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name in names:
        cmds = []
        for fmt in ("ts", "pq"):
            sql = open(os.path.join(QUERIES, f"{name}.{fmt}.sql")).read().replace(f"'{'bench-data'}/", "'s3://bench/")
            cmds.append(base + ["-c", sql.strip().rstrip(";")])
        (_, ts_out), (_, pq_out) = run(cmds[0]), run(cmds[1])
        ok = "equal" if same_answer(answer(ts_out), answer(pq_out)) else "DIFFER"
        (ts_get, ts_bytes, ts_head), (pq_get, pq_bytes, pq_head) = profile(ts_out), profile(pq_out)
        times = ([], [])
        for i in range(a.runs):
            order = (0, 1) if i % 2 == 0 else (1, 0)
            for k in order:
                times[k].append(run(cmds[k])[0])
        m_ts = max(statistics.median(times[0]) - startup, 1e-4)
        m_pq = max(statistics.median(times[1]) - startup, 1e-4)
        print(
            f"| {name} | {sizes[name]} | {ts_get} / {ts_head} | {ts_bytes:,} | {pq_get} / {pq_head} | {pq_bytes:,} | "
            f"{m_ts * 1000:.0f} | {m_pq * 1000:.0f} | {m_ts / m_pq:.2f} | {ok} |",
            flush=True,
        )
    server.stdin.close()
    server.wait(timeout=30)


if __name__ == "__main__":
    main()
