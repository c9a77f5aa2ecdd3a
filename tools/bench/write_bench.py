"""Writing TsFiles (issue "Write TsFiles"): the four measures of its target table, in one run.

    python tools/bench/write_bench.py --data bench-data --name M --tsfile target/bench/release/tsfile --runs 3

1. ``COPY (SELECT * FROM '<name>.snappy.parquet') TO 'x.tsfile' STORED AS TSFILE`` against
   the same engine's ``COPY … TO 'x.parquet' STORED AS PARQUET`` (snappy), each a fresh
   ``tsfile sql`` process under ``/usr/bin/time -v`` (wall time and peak RSS), the two
   interleaved run by run; medians and their ratio.
2. The size of our file against the C++ writer's ``<name>.tsfile`` (gen_data.py: same rows,
   the C++ library's defaults).
3. With ``--python`` (a venv holding the release wheel of python/, pyarrow and ``tsfile``
   2.5.0): the Parquet twin loaded into memory once, then ``datafusion_tsfile.write_tsfile``
   against the official ``TsFileTableWriter.write_arrow_batch`` (one tablet per device, its
   defaults), interleaved in one process; medians and their ratio. Then each writer's peak
   RSS growth over one write, each in a fresh process holding only the input table (its
   high-water mark reset through /proc/self/clear_refs just before the write).

Every output is read back (row count) and removed.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TAGS = "region,device"


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB) and stdout of `cmd` under /usr/bin/time -v."""
    t0 = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return wall, rss, done.stdout


def copy_sql(src: str, out: str, fmt: str) -> str:
    if fmt == "tsfile":
        return f"COPY (SELECT * FROM '{src}') TO '{out}' STORED AS TSFILE OPTIONS ('tsfile.tags' '{TAGS}')"
    return f"COPY (SELECT * FROM '{src}') TO '{out}' STORED AS PARQUET OPTIONS ('format.compression' 'snappy')"


def sql_measures(args: argparse.Namespace, tmp: Path) -> dict:
    src = str(args.data / f"{args.name}.snappy.parquet")
    runs: dict[str, list[tuple[float, int]]] = {"tsfile": [], "parquet": []}
    sizes = {}
    for r in range(args.runs + 1):  # the first round warms the page cache, unmeasured
        for fmt in ("tsfile", "parquet"):
            out = tmp / f"out.{fmt}"
            wall, rss, _ = timed([args.tsfile, "sql", "-q", "-c", copy_sql(src, str(out), fmt)])
            sizes[fmt] = out.stat().st_size
            if r > 0:
                runs[fmt].append((wall, rss))
            if fmt == "tsfile" and r == args.runs:
                _, _, text = timed([args.tsfile, "sql", "-q", "--format", "csv", "-c", f"SELECT count(*) FROM '{out}'"])
                rows = int(text.strip().splitlines()[-1])
            out.unlink()
    med = {f: statistics.median(w for w, _ in v) for f, v in runs.items()}
    return {
        "rows": rows,
        "tsfile_s": med["tsfile"],
        "parquet_s": med["parquet"],
        "ratio": med["tsfile"] / med["parquet"],
        "tsfile_walls": [round(w, 2) for w, _ in runs["tsfile"]],
        "parquet_walls": [round(w, 2) for w, _ in runs["parquet"]],
        "tsfile_rss_mib": max(r for _, r in runs["tsfile"]) / 1024,
        "parquet_rss_mib": max(r for _, r in runs["parquet"]) / 1024,
        "ours_bytes": sizes["tsfile"],
        "parquet_bytes": sizes["parquet"],
        "cpp_bytes": (args.data / f"{args.name}.tsfile").stat().st_size,
    }


def python_measures(args: argparse.Namespace, tmp: Path) -> dict:
    """Run in the --python interpreter (this file, with --in-process)."""

    def run(*extra: str) -> dict:
        code = [args.python, __file__, "--in-process", "--data", str(args.data), "--name", args.name, "--runs", str(args.runs), "--tmp", str(tmp), *extra]
        done = subprocess.run(code, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        return ast.literal_eval(done.stdout.strip().splitlines()[-1])  # the dict in_process() prints

    measures = run()
    for name in ("ours", "official"):
        measures.update(run("--rss-of", name))
    return measures


def status_kib(key: str) -> int:
    """A size field (KiB) of /proc/self/status: VmRSS (resident now), VmHWM (peak)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def reset_peak_rss() -> int | None:
    """Hand freed heap memory back to the kernel (glibc malloc_trim, Arrow's pool), then reset
    this process's peak RSS (VmHWM) to its current RSS (Linux: clear_refs 5); returns that
    RSS in KiB, or None where the reset is not allowed."""
    import ctypes

    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    return status_kib("VmRSS")


def in_process(args: argparse.Namespace) -> None:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    import tsfile

    import datafusion_tsfile as tsf

    sys.path.insert(0, str(Path(__file__).parent))
    from gen_data import tsfile_schema  # the schema gen_data.py writes with

    table = pq.read_table(args.data / f"{args.name}.snappy.parquet")
    fields = [c for c in table.column_names if c not in ("time", "region", "device")]
    # One tablet per device, as gen_data.py writes (rows are device-major).
    devices = table.column("device")
    changes = pc.indices_nonzero(pc.not_equal(devices[1:], devices[:-1])).to_pylist()
    cuts = [0] + [i + 1 for i in changes] + [len(devices)]
    parts = [table.slice(a, b - a) for a, b in zip(cuts, cuts[1:])]
    del devices, changes
    out = Path(args.tmp)

    def ours() -> int:
        p = out / "py_ours.tsfile"
        n = tsf.write_tsfile(table, p, table="sensors", tags=["region", "device"])
        return n

    def official() -> int:
        p = out / "py_official.tsfile"
        if p.exists():
            p.unlink()
        w = tsfile.TsFileTableWriter(str(p), tsfile_schema(fields))
        for part in parts:
            w.write_arrow_batch(part)
        w.close()
        return table.num_rows

    if args.rss_of:
        write = {"ours": ours, "official": official}[args.rss_of]
        base = reset_peak_rss()
        write()
        grown = None if base is None else (status_kib("VmHWM") - base) / 1024
        (out / f"py_{args.rss_of}.tsfile").unlink()
        print(repr({f"{args.rss_of}_rss_growth_mib": grown, "input_rss_mib": (base or 0) / 1024}))
        return

    times: dict[str, list[float]] = {"ours": [], "official": []}
    for r in range(args.runs + 1):
        for name, f in (("ours", ours), ("official", official)):
            t0 = time.perf_counter()
            f()
            if r > 0:
                times[name].append(time.perf_counter() - t0)
    rows = tsf.read_tsfile(out / "py_ours.tsfile", columns=["time"]).num_rows
    sizes = {n: (out / f"py_{n}.tsfile").stat().st_size for n in ("ours", "official")}
    for n in ("ours", "official"):
        (out / f"py_{n}.tsfile").unlink()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(
        repr(
            {
                "rows": rows,
                "ours_s": med["ours"],
                "official_s": med["official"],
                "ratio": med["ours"] / med["official"],
                "ours_runs": [round(x, 2) for x in times["ours"]],
                "official_runs": [round(x, 2) for x in times["official"]],
                "ours_bytes": sizes["ours"],
                "official_bytes": sizes["official"],
            }
        )
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="bench-data", type=Path)
    p.add_argument("--name", default="M")
    p.add_argument("--runs", default=3, type=int)
    p.add_argument("--tsfile", default="target/bench/release/tsfile", help="the release tsfile binary")
    p.add_argument("--python", help="interpreter of a venv with the release wheel, pyarrow and tsfile 2.5.0")
    p.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--tmp", help=argparse.SUPPRESS)
    p.add_argument("--rss-of", choices=["ours", "official"], help=argparse.SUPPRESS)
    args = p.parse_args()
    args.data = args.data.resolve()
    if args.in_process:
        in_process(args)
        return
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if os.path.exists(args.tsfile):
            s = sql_measures(args, tmp)
            print(f"{args.name}: {s['rows']:,} rows")
            print(f"  COPY to TsFile   median {s['tsfile_s']:.2f} s {s['tsfile_walls']}, peak RSS {s['tsfile_rss_mib']:.0f} MiB")
            print(f"  COPY to Parquet  median {s['parquet_s']:.2f} s {s['parquet_walls']}, peak RSS {s['parquet_rss_mib']:.0f} MiB")
            print(f"  time ratio TsFile / Parquet = {s['ratio']:.2f}")
            print(f"  size: ours {s['ours_bytes']:,} B, C++ writer {s['cpp_bytes']:,} B, ratio {s['ours_bytes'] / s['cpp_bytes']:.3f}; snappy Parquet {s['parquet_bytes']:,} B")
        if args.python:
            py = python_measures(args, tmp)
            if not os.path.exists(args.tsfile):
                print(f"{args.name}: {py['rows']:,} rows (no tsfile binary at {args.tsfile}: the Python measure only)")
            print(f"  Python write_tsfile median {py['ours_s']:.2f} s {py['ours_runs']}")
            print(f"  official write_arrow_batch median {py['official_s']:.2f} s {py['official_runs']}")
            print(f"  time ratio ours / official = {py['ratio']:.2f}; sizes ours {py['ours_bytes']:,} B, official {py['official_bytes']:,} B")
            if py["ours_rss_growth_mib"] is not None and py["official_rss_growth_mib"] is not None:
                print(
                    f"  peak RSS growth over one write (fresh process, input table resident: {py['input_rss_mib']:.0f} MiB): "
                    f"ours {py['ours_rss_growth_mib']:.0f} MiB, official {py['official_rss_growth_mib']:.0f} MiB"
                )


if __name__ == "__main__":
    main()
