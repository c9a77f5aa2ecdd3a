#!/usr/bin/env python3
"""Python reads from an object store: ``datafusion_tsfile.read_tsfile('s3://…/M.tsfile')``
against ``pyarrow.parquet.read_table`` of the Parquet twin from the same server.

Both files are put into bucket ``bench`` of an S3-compatible server (moto, started here on
127.0.0.1 by ``tools/test-servers/serve.py``); each run reads the whole table into a
``pyarrow.Table`` (row counts compared), TsFile and Parquet interleaved run by run after one
unmeasured round; medians of ``--runs`` and their ratio. Every run is in this process (the
libraries are imported once), so the time is the read alone.

moto answers from memory, so times are CPU and per-request cost rather than network latency.

From the repository root, with a venv holding the release wheel of ``python/``, pyarrow,
and the test servers' requirements (``tools/test-servers/requirements.txt``)::

    <venv>/bin/python tools/bench/python_remote.py --data bench-data --name M --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="bench-data", type=Path)
    p.add_argument("--name", default="M")
    p.add_argument("--runs", default=5, type=int)
    args = p.parse_args()

    import boto3
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    import datafusion_tsfile as tsf

    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tools/test-servers/serve.py"), "--http-root", str(args.data), "--bucket", "bench"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        endpoint = json.loads(server.stdout.readline())["s3"]
        creds = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}
        s3 = boto3.client("s3", endpoint_url=endpoint, **creds)
        tsfile_key, parquet_key = f"{args.name}.tsfile", f"{args.name}.snappy.parquet"
        for key in (tsfile_key, parquet_key):
            s3.upload_file(str(args.data / key), "bench", key)
        options = {
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
            "aws_region": "us-east-1",
            "aws_endpoint": endpoint,
            "aws_allow_http": "true",
        }
        host = endpoint.split("://", 1)[1]
        fs = pafs.S3FileSystem(
            access_key="test", secret_key="test", region="us-east-1", endpoint_override=host, scheme="http"
        )

        def ours() -> int:
            return tsf.read_tsfile(f"s3://bench/{tsfile_key}", storage_options=options).num_rows

        def theirs() -> int:
            return pq.read_table(f"bench/{parquet_key}", filesystem=fs).num_rows

        rows = (ours(), theirs())  # unmeasured round; answers compared
        if rows[0] != rows[1]:
            sys.exit(f"row counts differ: TsFile {rows[0]}, Parquet {rows[1]}")
        times: dict[str, list[float]] = {"tsfile": [], "parquet": []}
        for _ in range(args.runs):
            for name, read in (("tsfile", ours), ("parquet", theirs)):
                t0 = time.perf_counter()
                read()
                times[name].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"rows: {rows[0]:,}")
        for k, v in times.items():
            print(f"{k}: median {med[k]:.3f} s (runs {', '.join(f'{t:.3f}' for t in v)})")
        print(f"ratio read_tsfile / pyarrow.parquet.read_table: {med['tsfile'] / med['parquet']:.2f}")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
