#!/usr/bin/env python3
"""Generate data/sample.tsfile: a realistic, deterministic table-model TsFile written by
the official Apache TsFile C++ implementation (PyPI package ``tsfile`` 2.5.0).

Table ``weather`` (one table), 300 weather stations:

    time              TIMESTAMP (ms since the epoch, UTC; the table's time column)
    region            TAG    STRING   5 values: central, east, north, south, west
    site              TAG    STRING   6 per region: <region>-site-0 .. <region>-site-5
    device            TAG    STRING   10 per site: ws-<region>-<site>-<n>, e.g. ws-north-3-7
    temperature       FIELD  DOUBLE   deg C, diurnal cycle + random walk, 0.1 resolution
    humidity          FIELD  FLOAT    percent, 0.5 resolution, ~2 % nulls (sensor dropouts)
    pressure          FIELD  INT32    tenths of hPa (10132 = 1013.2 hPa), random walk
    energy_wh         FIELD  INT64    cumulative energy counter in Wh (non-decreasing)
    online            FIELD  BOOLEAN  link status, false during rare outages (5..60 min)
    status            FIELD  STRING   'ok', 'warn' (hot) or 'fault' (offline)
    day               FIELD  DATE     the UTC calendar day of the reading
    last_calibration  FIELD  TIMESTAMP ms, hour-aligned; changes a few times per station

Every station reports once a minute (+- 250 ms jitter) from a start offset within the first
hour of 2024-01-01T00:00:00Z, for 3000..3699 readings (fixed per station). Values come from
numpy PCG64 seeded with (SEED, station index), so the file is byte-for-byte reproducible.

The TsFile is written with TsFileTableWriter.write_arrow_batch, one Arrow batch per station
(all columns present), stations in tag order, with the library's default configuration:
encodings TS_2DIFF (time, INT32, INT64, DATE, TIMESTAMP), GORILLA (FLOAT, DOUBLE),
PLAIN (BOOLEAN, STRING), compression LZ4.

After writing, the whole file is read back with the library's own reader and compared with
the generated rows. data/sample.expected.json holds facts computed from the generated arrays.

Usage (from the repository root):

    python3 -m venv .venv && .venv/bin/pip install tsfile==2.5.0 pyarrow numpy
    .venv/bin/python tools/gen_sample.py            # writes data/sample.tsfile + .expected.json
"""

import argparse
import hashlib
import importlib.metadata
import json
import os
import sys

import numpy as np
import pyarrow as pa

SEED = 20240101
T0_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
MINUTE_MS = 60_000
REGIONS = ["central", "east", "north", "south", "west"]
SITES_PER_REGION = 6
DEVICES_PER_SITE = 10
TABLE = "weather"
FIELDS = [
    ("temperature", "DOUBLE"),
    ("humidity", "FLOAT"),
    ("pressure", "INT32"),
    ("energy_wh", "INT64"),
    ("online", "BOOLEAN"),
    ("status", "STRING"),
    ("day", "DATE"),
    ("last_calibration", "TIMESTAMP"),
]
TAGS = ["region", "site", "device"]


def stations():
    """(index, region, site, device) in tag order (the order rows are written)."""
    out = []
    for region in REGIONS:
        for s in range(SITES_PER_REGION):
            for n in range(DEVICES_PER_SITE):
                out.append((len(out), region, f"{region}-site-{s}", f"ws-{region}-{s}-{n}"))
    return out


def station_rows(index, region, site, device):
    """All rows of one station as numpy arrays (None-free; humidity has a null mask)."""
    rng = np.random.default_rng([SEED, index])
    n = 3000 + int(rng.integers(0, 700))
    start = T0_MS + int(rng.integers(0, 60)) * MINUTE_MS + int(rng.integers(0, 1000))
    time = start + np.arange(n, dtype=np.int64) * MINUTE_MS + rng.integers(-250, 251, size=n)

    minutes_of_day = ((time - T0_MS) // MINUTE_MS) % 1440
    diurnal = 4.0 * np.sin((minutes_of_day - 540) / 1440.0 * 2 * np.pi)
    base = rng.uniform(-5.0, 25.0)
    temperature = np.round(base + diurnal + np.cumsum(rng.normal(0.0, 0.03, n)), 1)

    humidity = np.clip(
        rng.uniform(40.0, 80.0) - 1.5 * diurnal + np.cumsum(rng.normal(0.0, 0.08, n)), 0.0, 100.0
    )
    humidity = (np.round(humidity * 2.0) / 2.0).astype(np.float32)
    # Dropouts: runs of 1..30 missing readings starting at ~0.1 % of the minutes.
    humidity_null = np.zeros(n, dtype=bool)
    for s in np.flatnonzero(rng.random(n) < 0.001):
        humidity_null[s : s + int(rng.integers(1, 31))] = True

    pressure = (
        int(rng.integers(10050, 10200)) + np.cumsum(rng.integers(-1, 2, size=n)) // 3
    ).astype(np.int32)
    energy_wh = int(rng.integers(0, 5_000_000)) + np.cumsum(rng.poisson(2.0, n)).astype(np.int64)
    # Link outages: start at ~0.05 % of the minutes and last 5..60 readings.
    online = np.ones(n, dtype=bool)
    for s in np.flatnonzero(rng.random(n) < 0.0005):
        online[s : s + int(rng.integers(5, 61))] = False
    status = np.where(~online, "fault", np.where(temperature > base + 5.0, "warn", "ok"))
    day_ordinal = (time // 86_400_000).astype("datetime64[D]")
    # Calibrated before the series starts, then at a few random readings (hour-aligned).
    initial = start - start % 3_600_000 - int(rng.integers(1, 90)) * 86_400_000
    calibrated = rng.random(n) < 0.0015
    last_calibration = np.maximum.accumulate(
        np.where(calibrated, time - time % 3_600_000, initial)
    ).astype(np.int64)

    return {
        "time": time,
        "region": region,
        "site": site,
        "device": device,
        "temperature": temperature,
        "humidity": humidity,
        "humidity_null": humidity_null,
        "pressure": pressure,
        "energy_wh": energy_wh,
        "online": online,
        "status": status,
        "day": day_ordinal,
        "last_calibration": last_calibration,
    }


def to_arrow(r):
    n = len(r["time"])
    return pa.table(
        {
            "time": pa.array(r["time"], pa.int64()),
            "region": pa.array([r["region"]] * n, pa.string()),
            "site": pa.array([r["site"]] * n, pa.string()),
            "device": pa.array([r["device"]] * n, pa.string()),
            "temperature": pa.array(r["temperature"], pa.float64()),
            "humidity": pa.array(r["humidity"], pa.float32(), mask=r["humidity_null"]),
            "pressure": pa.array(r["pressure"], pa.int32()),
            "energy_wh": pa.array(r["energy_wh"], pa.int64()),
            "online": pa.array(r["online"], pa.bool_()),
            "status": pa.array(r["status"].tolist(), pa.string()),
            "day": pa.array(r["day"], pa.date32()),
            # The Arrow import of tsfile 2.5.0 accepts TIMESTAMP fields only as timestamp[ns];
            # it stores the raw int64 unchanged, so these are milliseconds as declared.
            "last_calibration": pa.array(r["last_calibration"], pa.timestamp("ns")),
        }
    )


def schema():
    from tsfile import ColumnCategory, ColumnSchema, TableSchema, TSDataType

    cols = [ColumnSchema(t, TSDataType.STRING, ColumnCategory.TAG) for t in TAGS]
    cols += [ColumnSchema(name, TSDataType[ty], ColumnCategory.FIELD) for name, ty in FIELDS]
    return TableSchema(TABLE, cols)


def facts(rows):
    """The expected facts, computed from the generated arrays."""
    time = np.concatenate([r["time"] for r in rows])
    n = len(time)
    humidity_non_null = int(sum(int((~r["humidity_null"]).sum()) for r in rows))
    non_null = {c: n for c in ["time"] + TAGS + [f for f, _ in FIELDS]}
    non_null["humidity"] = humidity_non_null
    status = np.concatenate([r["status"] for r in rows])
    day = np.concatenate([r["day"] for r in rows])
    temperature = np.concatenate([r["temperature"] for r in rows])
    per_region = {}
    for r in rows:
        per_region[r["region"]] = per_region.get(r["region"], 0) + len(r["time"])
    return {
        "table": TABLE,
        "row_count": n,
        "device_count": len(rows),
        "columns": [{"name": "time", "type": "TIMESTAMP", "category": "TIME"}]
        + [{"name": t, "type": "STRING", "category": "TAG"} for t in TAGS]
        + [{"name": f, "type": ty, "category": "FIELD"} for f, ty in FIELDS],
        "non_null_counts": non_null,
        "time_min": int(time.min()),
        "time_max": int(time.max()),
        "rows_per_region": per_region,
        "rows_first_device": {"device": rows[0]["device"], "rows": len(rows[0]["time"])},
        "rows_last_device": {"device": rows[-1]["device"], "rows": len(rows[-1]["time"])},
        "min_rows_per_device": min(len(r["time"]) for r in rows),
        "max_rows_per_device": max(len(r["time"]) for r in rows),
        "sum_energy_wh": int(sum(int(r["energy_wh"].sum()) for r in rows)),
        "sum_pressure": int(sum(int(r["pressure"].astype(np.int64).sum()) for r in rows)),
        "online_true_count": int(sum(int(r["online"].sum()) for r in rows)),
        "status_counts": {s: int((status == s).sum()) for s in ("ok", "warn", "fault")},
        "temperature_min": float(temperature.min()),
        "temperature_max": float(temperature.max()),
        "day_min": str(day.min()),
        "day_max": str(day.max()),
        "distinct_days": int(len(np.unique(day))),
    }


def verify_with_reader(path, rows):
    """Read the whole file back with the library's own reader; it must equal what was written."""
    from tsfile import TsFileReader

    names = TAGS + [f for f, _ in FIELDS]
    reader = TsFileReader(path)
    result = reader.query_table(TABLE, names, batch_size=65536)
    batches = []
    while True:
        t = result.read_arrow_batch()
        if t is None or t.num_rows == 0:
            break
        batches.append(t)
    result.close()
    reader.close()
    order = [(c, "ascending") for c in ["region", "site", "device", "time"]]
    got = pa.concat_tables(batches).sort_by(order)
    want = pa.concat_tables([to_arrow(r) for r in rows]).sort_by(order)
    if got.schema != want.schema:
        raise SystemExit(f"read-back schema differs:\n{got.schema}\nvs\n{want.schema}")
    for name in want.column_names:
        if not got.column(name).equals(want.column(name)):
            raise SystemExit(f"read-back mismatch in column {name}")
    print(f"verified with the tsfile reader: {got.num_rows} rows identical", file=sys.stderr)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(root, "data", "sample.tsfile"))
    ap.add_argument("--no-verify", action="store_true", help="skip reading the file back")
    a = ap.parse_args()

    import tsfile

    rows = [station_rows(*s) for s in stations()]
    expected = facts(rows)
    if os.path.exists(a.out):
        os.remove(a.out)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    writer = tsfile.TsFileTableWriter(a.out, schema())
    for r in rows:
        writer.write_arrow_batch(to_arrow(r))
    writer.close()

    cfg = tsfile.get_tsfile_config()
    with open(a.out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    expected = {
        "file": os.path.basename(a.out),
        "generator": "tools/gen_sample.py",
        "tsfile_python_package": importlib.metadata.version("tsfile"),
        "seed": SEED,
        "bytes": os.path.getsize(a.out),
        "sha256": digest,
        **expected,
        "writer_config": {
            k.rstrip("_"): (v.name if hasattr(v, "name") else v)
            for k, v in cfg.items()
            if any(s in k for s in ("encoding", "compress", "page_writer"))
        },
    }
    if not a.no_verify:
        verify_with_reader(a.out, rows)
    with open(os.path.splitext(a.out)[0] + ".expected.json", "w", encoding="utf-8", newline="\n") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")
    print(
        f"{a.out}: {expected['bytes'] / 1e6:.2f} MB, {expected['row_count']} rows, "
        f"{expected['device_count']} devices, sha256 {digest}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
