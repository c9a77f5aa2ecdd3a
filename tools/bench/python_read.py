"""Reading a whole TsFile into Python: datafusion_tsfile.read_tsfile against the official
`tsfile` package's to_dataframe on the same file, and pyarrow.parquet.read_table on its
snappy Parquet twin (the peer of issue "Python package").

    python tools/bench/python_read.py --data bench-data --name M --runs 5

Needs a venv with the release wheel of python/ (`maturin build --release`), pyarrow and
`tsfile` 2.5.0. Every reader runs in-process, the three interleaved run by run (so a noisy
moment hits all of them), after one unmeasured warm-up each (page cache and imports). The
answers are compared: same row count and the same sum of a numeric column. Prints the
medians and the ratios of ours to each peer.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="bench-data", type=Path)
    parser.add_argument("--name", default="M")
    parser.add_argument("--runs", default=5, type=int)
    parser.add_argument("--column", default="reading", help="numeric column whose sum must agree")
    args = parser.parse_args()

    import pyarrow.parquet as pq
    import tsfile

    import datafusion_tsfile as tsf

    ts_path = str(args.data / f"{args.name}.tsfile")
    pq_path = str(args.data / f"{args.name}.snappy.parquet")
    col = args.column

    def ours() -> tuple[int, float]:
        t = tsf.read_tsfile(ts_path)
        return t.num_rows, float(t[col].to_numpy().sum())

    def official() -> tuple[int, float]:
        df = tsfile.to_dataframe(ts_path)
        return len(df), float(df[col].sum())

    def parquet() -> tuple[int, float]:
        t = pq.read_table(pq_path)
        return t.num_rows, float(t[col].to_numpy().sum())

    readers: dict[str, Callable[[], tuple[int, float]]] = {
        "datafusion_tsfile.read_tsfile": ours,
        "tsfile.to_dataframe (official)": official,
        "pyarrow.parquet.read_table": parquet,
    }
    answers = {name: f() for name, f in readers.items()}  # warm-up, and the answers
    first = next(iter(answers.values()))
    for name, answer in answers.items():
        if answer[0] != first[0] or abs(answer[1] - first[1]) > 1e-9 * max(1.0, abs(first[1])):
            raise SystemExit(f"answers differ: {name} gave {answer}, ours {first}")
    times: dict[str, list[float]] = {name: [] for name in readers}
    for _ in range(args.runs):
        for name, f in readers.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"{args.name}: {first[0]:,} rows, sum({col}) = {first[1]:.6g}; {args.runs} runs, medians:")
    for name, v in times.items():
        print(f"  {name:34} {med[name]:8.3f} s  (min {min(v):.3f}, max {max(v):.3f})")
    ours_s = med["datafusion_tsfile.read_tsfile"]
    print(f"  official / ours = {med['tsfile.to_dataframe (official)'] / ours_s:.2f}x faster")
    print(f"  ours / parquet  = {ours_s / med['pyarrow.parquet.read_table']:.2f}")


if __name__ == "__main__":
    main()
