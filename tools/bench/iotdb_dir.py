#!/usr/bin/env python3
"""IoTDB-shaped benchmark directories from the D100 files (`gen_data.py --size D --files 100
--name D100`), for the `layout = iotdb` workloads of `e2e.py`:

  bench-data/IOTDB100/   sequence/root.bench/1/<k>/<t>-<k+1>-0-0.tsfile (+ .resource): the
                         100 time-partition files of D100, one per partition
  bench-data/IOTDB100U/  the same, plus per partition one unsequence file rewriting 10% of
                         its points (every row whose time in ms is divisible by 10, with
                         temperature + 1 and reading + 1), as an out-of-order write would
  bench-data/IOTDB100U.dedup.parquet
                         the rows IoTDB answers for IOTDB100U (written by `tsfile sql` with
                         layout = iotdb), for the Parquet side of `latest_IOTDB100U`

`.resource` files are written here from each file's per-device time ranges (asked of
`tsfile sql`): version 1, time-index type 3 (DeviceIDs), as IoTDB 2.x writes them.

    python3 tools/bench/iotdb_dir.py --bin target/release/tsfile
"""

import argparse
import csv
import io
import os
import shutil
import struct
import subprocess
import sys

TABLE = "sensors"


def sql(binary, *statements):
    cmd = [binary, "sql", "-q", "--format", "csv", "--maxrows", "inf"]
    for s in statements:
        cmd += ["-c", s]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{statements}: {out.stderr}")
    return list(csv.reader(io.StringIO(out.stdout)))[1:]


def uvarint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v == 0:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def zigzag_varint(v):
    return uvarint(((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)


def device_id(segments):
    out = uvarint(len(segments))
    for s in segments:
        b = s.encode()
        out += zigzag_varint(len(b)) + b
    return out


def resource(devices):
    """devices: [(segments, start, end)] -> .resource bytes."""
    out = bytearray([1, 3]) + struct.pack(">i", len(devices))
    for _, start, end in devices:
        out += struct.pack(">qq", start, end)
    for slot, (segments, _, _) in enumerate(devices):
        out += device_id(segments) + struct.pack(">i", slot)
    return bytes(out + bytes(16))


def write_resource(binary, path):
    rows = sql(
        binary,
        f"SELECT region, device, CAST(min(time) AS BIGINT), CAST(max(time) AS BIGINT) FROM '{path}' "
        "GROUP BY region, device ORDER BY region, device",
    )
    devices = [([TABLE, r[0], r[1]], int(r[2]), int(r[3])) for r in rows]
    with open(path + ".resource", "wb") as f:
        f.write(resource(devices))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/tsfile")
    ap.add_argument("--data", default="bench-data")
    a = ap.parse_args()
    src = os.path.join(a.data, "D100", "tsfile")
    parts = sorted(p for p in os.listdir(src) if p.endswith(".tsfile"))
    for name in ("IOTDB100", "IOTDB100U"):
        shutil.rmtree(os.path.join(a.data, name), ignore_errors=True)
    for k, part in enumerate(parts):
        for name in ("IOTDB100", "IOTDB100U"):
            d = os.path.join(a.data, name, "sequence", "root.bench", "1", str(k))
            os.makedirs(d, exist_ok=True)
            dst = os.path.join(d, f"{1700000000000 + k}-{k + 1}-0-0.tsfile")
            shutil.copyfile(os.path.join(src, part), dst)
            write_resource(a.bin, dst)
        d = os.path.join(a.data, "IOTDB100U", "unsequence", "root.bench", "1", str(k))
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, f"{1700000000000 + k}-{1000 + k}-0-0.tsfile")
        sql(
            a.bin,
            f"COPY (SELECT time, region, device, temperature + 1 AS temperature, humidity, status, reading + 1 AS reading, label "
            f"FROM '{os.path.join(src, part)}' WHERE CAST(time AS BIGINT) % 10 = 0) "
            f"TO '{dst}' STORED AS TSFILE OPTIONS ('tsfile.tags' 'region,device', 'tsfile.table' '{TABLE}')",
        )
        write_resource(a.bin, dst)
        print(f"partition {k}", end="\r", flush=True)
    out = os.path.join(a.data, "IOTDB100U.dedup.parquet")
    sql(
        a.bin,
        f"CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION '{os.path.join(a.data, 'IOTDB100U')}' OPTIONS ('tsfile.layout' 'iotdb')",
        f"COPY (SELECT * FROM t ORDER BY region, device, time) TO '{out}' STORED AS PARQUET OPTIONS ('format.compression' 'snappy')",
    )
    print(f"\nwrote {a.data}/IOTDB100, {a.data}/IOTDB100U and {out}")


if __name__ == "__main__":
    main()
