"""The time-series workloads (tools/bench/queries) from Python, three ways, in one process:
`datafusion_tsfile.sql` (the package's own engine: aggregates answered from statistics),
a datafusion-python 55 `SessionContext` over `TsFileTable` (its own aggregation above our
pruned scan), and the same datafusion-python session over the snappy Parquet twin.

    python tools/bench/python_sql.py --data bench-data --runs 5

Needs a venv with the release wheel of python/, `datafusion` 55 and pyarrow. Each workload's
`.ts.sql` runs on the TsFile and its `.pq.sql` on the Parquet twin, the quoted location
replaced by a registered table `t`. The three answers are compared (same rows in the same
order; floats to 1e-9 relative) before anything is timed; then the three run interleaved,
after one unmeasured warm-up each. Prints the medians and the ratios to Parquet.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

QUERIES = Path(__file__).resolve().parent / "queries"
WORKLOADS = "latest,earliest,agg_by_device,threshold_double,threshold_double_none,one_device,hourly,daily,half_span"
LOCATION = re.compile(r"'[^']*\.(tsfile|parquet)'")


def same(a: list[dict], b: list[dict]) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for va, vb in zip(ra.values(), rb.values()):
            if isinstance(va, float) and isinstance(vb, float):
                if not (math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-9) or (math.isnan(va) and math.isnan(vb))):
                    return False
            elif va != vb:
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="bench-data", type=Path)
    parser.add_argument("--runs", default=5, type=int)
    parser.add_argument("--workloads", default=WORKLOADS)
    args = parser.parse_args()

    from datafusion import SessionContext

    import datafusion_tsfile as tsf

    print(f"{'workload':24} {'tsf.sql':>9} {'df+TsFile':>10} {'df+Parquet':>11}   sql/pq  df+ts/pq")
    for name in args.workloads.split(","):
        ts_text = (QUERIES / f"{name}.ts.sql").read_text().strip().rstrip(";")
        size = Path(LOCATION.search(ts_text).group(0).strip("'")).name.split(".")[0]
        ts_sql = LOCATION.sub("t", ts_text)
        pq_sql = LOCATION.sub("t", (QUERIES / f"{name}.pq.sql").read_text().strip().rstrip(";"))
        table = tsf.TsFileTable(str(args.data / f"{size}.tsfile"))
        ts_ctx = SessionContext()
        ts_ctx.register_table("t", table)
        pq_ctx = SessionContext()
        pq_ctx.register_parquet("t", str(args.data / f"{size}.snappy.parquet"))
        systems: dict[str, Callable[[], list[dict]]] = {
            "sql": lambda: tsf.sql(ts_sql, {"t": table}).to_pylist(),
            "df_ts": lambda: ts_ctx.sql(ts_sql).to_arrow_table().to_pylist(),
            "df_pq": lambda: pq_ctx.sql(pq_sql).to_arrow_table().to_pylist(),
        }
        answers = {k: f() for k, f in systems.items()}  # warm-up, and the answers
        for k, rows in answers.items():
            if not same(rows, answers["df_pq"]):
                raise SystemExit(f"{name}: {k} differs from Parquet ({len(rows)} vs {len(answers['df_pq'])} rows)")
        times: dict[str, list[float]] = {k: [] for k in systems}
        for _ in range(args.runs):
            for k, f in systems.items():
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(
            f"{name + ' (' + size + ')':24} {med['sql']:9.3f} {med['df_ts']:10.3f} {med['df_pq']:11.3f}"
            f"   {med['sql'] / med['df_pq']:6.3f}  {med['df_ts'] / med['df_pq']:6.3f}"
        )


if __name__ == "__main__":
    main()
