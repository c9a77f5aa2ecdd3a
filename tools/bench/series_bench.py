"""Series access for machine learning: `datafusion_tsfile.windows` against the official
`tsfile` package's `TsFileDataFrame` (tsfile 2.5.0, `tsfile.dataset`).

    python tools/bench/series_bench.py --data bench-data --name M --windows 500 --repeats 3 --runs 7

Needs a venv with our wheel (release build for meaningful numbers), numpy, pyarrow and
`tsfile==2.5.0`. Two measures:

(a) random windows: the same random (device, position) picks for both, `--window` points
    of one field (`--field`, default temperature) each: ours `ds[i]` of
    `windows(file, length, stride=1, fields=[field])`, theirs
    `tdf["table.tag1.tag2.field"][pos:pos + length]` (a device-local row slice). Both run
    in this process; samples/s = windows/s x length. Theirs after a warm-up of `--warmup`
    other picks (it keeps no values, so every window reads). Ours twice: "cold", a fresh
    dataset object (made before the clock) taking the measured picks with every read they
    cause (a first epoch), and "after warm-up", a fresh object given the same warm-up
    first (its growing prefetch has then read the file's blocks into the cache). The
    values of a few windows are compared (equal as float64).
(a') one epoch: every non-overlapping window once, shuffled, from a fresh object (ours
    with all its reads), against theirs on the same windows.
(b) time to the first window of a 100-file directory: the file split by device into
    `--files` files (written once with our `write_tsfile` from the Parquet twin into
    `--split-dir`, default a temp dir), then from constructing the dataset object to
    having window 0, ours and theirs, each in a fresh Python process (imports done before
    the clock starts), `--runs` times alternately; medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def pick_windows(devices: list[str], rows: dict[str, int], length: int, n: int, seed: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    picks = []
    eligible = [d for d in devices if rows[d] >= length]
    for _ in range(n):
        d = rng.choice(eligible)
        picks.append((d, rng.randrange(0, rows[d] - length + 1)))
    return picks


def bench_random(args: argparse.Namespace) -> dict:
    import datafusion_tsfile as tsf
    import numpy as np
    from tsfile.dataset import TsFileDataFrame

    path = str(args.data / f"{args.name}.tsfile")
    length = args.window
    field = args.field

    def ours_dataset():
        return tsf.windows(path, length=length, stride=1, fields=[field])

    t0 = time.perf_counter()
    ds = ours_dataset()
    ours_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    tdf = TsFileDataFrame(path, show_progress=False)
    theirs_open = time.perf_counter() - t0

    counts = ds.window_counts()
    rows = {d: int(c) + length - 1 for d, c in counts.items()}
    first_window = {}
    acc = 0
    for d, c in counts.items():
        first_window[d] = acc
        acc += c
    picks = pick_windows(ds.devices, rows, length, args.warmup + args.windows, args.seed)
    warm, measured = picks[: args.warmup], picks[args.warmup :]

    def ours_get(d: str, pos: int, ds=ds):
        return ds[first_window[d] + pos]

    def theirs_get(d: str, pos: int):
        return tdf[f"{d}.{field}"][pos : pos + length]

    # Theirs: after a warm-up on other picks (it keeps no values: every window reads).
    for d, p in warm:
        theirs_get(d, p)
    t0 = time.perf_counter()
    for d, p in measured:
        theirs_get(d, p)
    theirs_s = time.perf_counter() - t0

    # Ours, cold: a fresh dataset (made before the clock), the measured picks with every
    # read they cause (the first epoch of a training run).
    t0 = time.perf_counter()
    for d, p in measured:
        ours_get(d, p)
    ours_cold_s = time.perf_counter() - t0
    cold = ds.cache_info()

    # Ours, after the same warm-up as theirs, on a fresh dataset.
    ds2 = ours_dataset()
    for d, p in warm:
        ours_get(d, p, ds2)
    warm_info = ds2.cache_info()
    t0 = time.perf_counter()
    for d, p in measured:
        ours_get(d, p, ds2)
    ours_warm_s = time.perf_counter() - t0

    # Same values for a few windows.
    checked = 0
    for d, p in measured[:: max(1, len(measured) // 10)]:
        a = ours_get(d, p)[:, 0]
        b = np.asarray(theirs_get(d, p), dtype=np.float64)
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
            raise SystemExit(f"window ({d}, {p}) differs: ours {a[:5]}…, theirs {b[:5]}…")
        checked += 1

    n = len(measured)
    out = {
        "windows": n,
        "window_points": length,
        "field": field,
        "distinct_devices": len({d for d, _ in measured}),
        "open_s": {"ours": ours_open, "theirs": theirs_open},
        "theirs_samples_per_s": n * length / theirs_s,
        "ours_cold_samples_per_s": n * length / ours_cold_s,
        "ours_warm_samples_per_s": n * length / ours_warm_s,
        "ours_cold_reads": cold["reads"],
        "ours_cold_rows_read": cold["rows_read"],
        "ours_cache_bytes": cold["bytes"],
        "ours_warmup_reads": warm_info["reads"],
        "windows_compared": checked,
    }
    tdf.close()
    return out


def bench_epoch(args: argparse.Namespace) -> dict:
    """One training epoch: every non-overlapping window (stride = length) once, in a
    shuffled order, from a fresh dataset object (ours: all reads included)."""
    import datafusion_tsfile as tsf
    from tsfile.dataset import TsFileDataFrame

    path = str(args.data / f"{args.name}.tsfile")
    length = args.window
    field = args.field
    ds = tsf.windows(path, length=length, fields=[field])
    order = list(range(len(ds)))
    random.Random(args.seed).shuffle(order)
    t0 = time.perf_counter()
    for i in order:
        ds[i]
    ours_s = time.perf_counter() - t0
    picks = [ds.locate(i) for i in order]
    tdf = TsFileDataFrame(path, show_progress=False)
    t0 = time.perf_counter()
    for d, p in picks:
        tdf[f"{d}.{field}"][p : p + length]
    theirs_s = time.perf_counter() - t0
    tdf.close()
    n = len(order)
    return {
        "windows": n,
        "ours_s": ours_s,
        "theirs_s": theirs_s,
        "ours_samples_per_s": n * length / ours_s,
        "theirs_samples_per_s": n * length / theirs_s,
        "ours_reads": ds.cache_info()["reads"],
    }


def split_by_device(args: argparse.Namespace, out_dir: Path) -> None:
    """The file's rows as `--files` files of consecutive devices (our writer, from the
    Parquet twin: same rows)."""
    import datafusion_tsfile as tsf
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out_dir.mkdir(parents=True, exist_ok=True)
    if len(list(out_dir.glob("*.tsfile"))) == args.files:
        return
    table = pq.read_table(args.data / f"{args.name}.snappy.parquet")
    devices = sorted(set(table.column("device").unique().to_pylist()))
    per = -(-len(devices) // args.files)
    for k in range(args.files):
        chosen = devices[k * per : (k + 1) * per]
        part = table.filter(pc.is_in(table.column("device"), value_set=__import__("pyarrow").array(chosen)))
        tsf.write_tsfile(part, out_dir / f"part-{k:04d}.tsfile", table="sensors", tags=["region", "device"])


FIRST_OURS = """
import sys, time
import numpy, pandas, pyarrow.compute
import datafusion_tsfile as tsf
t0 = time.perf_counter()
ds = tsf.windows(sys.argv[1], length=int(sys.argv[2]), fields=[sys.argv[3]])
w = ds[0]
print(time.perf_counter() - t0, ds.locate(0)[0], float(w[0, 0]), len(ds))
"""

FIRST_THEIRS = """
import sys, time
import numpy, pandas, pyarrow.compute
from tsfile.dataset import TsFileDataFrame
t0 = time.perf_counter()
tdf = TsFileDataFrame(sys.argv[1], show_progress=False)
w = tdf[0][0:int(sys.argv[2])]
print(time.perf_counter() - t0, str(tdf.list_timeseries()[0]), float(w[0]), len(tdf))
"""


def bench_first(args: argparse.Namespace, directory: Path) -> dict:
    ours, theirs = [], []
    env = dict(os.environ)
    for _ in range(args.runs):
        for code, sink in ((FIRST_OURS, ours), (FIRST_THEIRS, theirs)):
            done = subprocess.run(
                [sys.executable, "-c", code, str(directory), str(args.window), args.field],
                capture_output=True, text=True, env=env, check=True,
            )
            line = done.stdout.strip().splitlines()[-1].split()
            sink.append((float(line[0]), line[1:]))
    return {
        "files": len(list(directory.glob("*.tsfile"))),
        "ours_s": statistics.median(t for t, _ in ours),
        "theirs_s": statistics.median(t for t, _ in theirs),
        "ours_runs": [round(t, 3) for t, _ in ours],
        "theirs_runs": [round(t, 3) for t, _ in theirs],
        "ours_window0": ours[0][1],
        "theirs_window0": theirs[0][1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="bench-data", type=Path)
    parser.add_argument("--name", default="M")
    parser.add_argument("--field", default="temperature")
    parser.add_argument("--window", default=1000, type=int, help="points per window")
    parser.add_argument("--windows", default=500, type=int, help="measured random windows")
    parser.add_argument("--warmup", default=50, type=int)
    parser.add_argument("--seed", default=7, type=int)
    parser.add_argument("--files", default=100, type=int)
    parser.add_argument("--split-dir", type=Path, default=None)
    parser.add_argument("--runs", default=5, type=int, help="fresh processes per reader in (b)")
    parser.add_argument("--repeats", default=3, type=int, help="rounds of (a), medians reported")
    parser.add_argument("--skip", choices=["random", "epoch", "first"], action="append", default=[])
    args = parser.parse_args()

    import datafusion_tsfile as tsf
    import tsfile

    print(f"datafusion_tsfile {tsf.__version__} from {os.path.dirname(tsf.__file__)}; tsfile {tsfile.__version__ if hasattr(tsfile, '__version__') else '?'}")
    result = {}
    if "random" not in args.skip:
        rounds = [bench_random(args) for _ in range(args.repeats)]
        r = dict(rounds[-1])
        for key in ("theirs_samples_per_s", "ours_cold_samples_per_s", "ours_warm_samples_per_s"):
            r[key] = statistics.median(x[key] for x in rounds)
            r[key.replace("_samples_per_s", "_rounds")] = [round(x[key]) for x in rounds]
        result["random"] = r
        print(json.dumps(r, indent=1))
        print(
            f"(a) {r['windows']} random {r['window_points']}-point windows: theirs {r['theirs_samples_per_s']:,.0f} samples/s; "
            f"ours cold {r['ours_cold_samples_per_s']:,.0f} "
            f"({r['ours_cold_samples_per_s'] / r['theirs_samples_per_s']:.1f}x), "
            f"after warm-up {r['ours_warm_samples_per_s']:,.0f} ({r['ours_warm_samples_per_s'] / r['theirs_samples_per_s']:.1f}x)"
        )
    if "epoch" not in args.skip:
        r = bench_epoch(args)
        result["epoch"] = r
        print(json.dumps(r, indent=1))
        print(
            f"(a') one shuffled epoch of {r['windows']} non-overlapping windows: ours {r['ours_s']:.2f} s, "
            f"theirs {r['theirs_s']:.2f} s ({r['theirs_s'] / r['ours_s']:.1f}x)"
        )
    if "first" not in args.skip:
        tmp = None
        directory = args.split_dir
        if directory is None:
            tmp = tempfile.TemporaryDirectory(prefix="series-bench-")
            directory = Path(tmp.name)
        t0 = time.perf_counter()
        split_by_device(args, directory)
        print(f"split into {args.files} files in {time.perf_counter() - t0:.1f} s: {directory}")
        r = bench_first(args, directory)
        result["first"] = r
        print(json.dumps(r, indent=1))
        print(
            f"(b) first window of {r['files']} files: ours {r['ours_s']:.3f} s, theirs {r['theirs_s']:.3f} s "
            f"(ratio {r['ours_s'] / r['theirs_s']:.2f})"
        )
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
