#!/usr/bin/env python3
"""Write TsFiles of random FLOAT/DOUBLE/INT32/INT64 values with the official C++ writer.

The cross-writer property test (`tests/integration/cross_writer.rs`) runs this with a venv
holding `requirements.txt` (PyPI `tsfile` 2.5.0, the C++ core) and checks that the reader
gives every value back bit for bit with default options.

    write_random.py OUT_DIR SEED [SEED ...]

For each seed it writes `OUT_DIR/seed_<seed>_tree.tsfile` (one device per flush round,
non-aligned series, one series per supported (type, encoding) pair, several pages per chunk,
several chunks per series) and `OUT_DIR/seed_<seed>_table.tsfile` (aligned tables whose
columns take the encodings of one writer configuration each), and `OUT_DIR/seed_<seed>.json`
holding what was written:

    {"files": [{"file": ..., "model": "tree"|"table",
                "series": [{"table": t, "device": d, "tags": [...], "column": c,
                            "type": "DOUBLE", "encoding": "RLBE",
                            "times": [...], "values": [bits or int, ...]}]}]}

FLOAT/DOUBLE values are their IEEE bits as unsigned integers (so every NaN payload, -0.0
and subnormal is compared exactly); INT32/INT64 values are the integers.

Values mix NaN of several payloads and both signs, +-inf, -0.0, subnormals, the extremes,
long runs of one value and ordinary values, except where the C++ writer is lossy or wrong by
design (see `LIMITS`); every such exception is listed there with the reason.
"""

import json
import math
import os
import random
import struct
import subprocess
import sys

from tsfile import (
    ColumnCategory,
    ColumnSchema,
    Compressor,
    TableSchema,
    Tablet,
    TimeseriesSchema,
    TsFileWriter,
    TSDataType,
    TSEncoding,
    set_tsfile_config,
)

# (type, encodings the C++ writer 2.5.0 accepts for it); the others raise InvalidArgument
# (FLOAT: RLE, ZIGZAG, CAMEL, GORILLA_V1; DOUBLE: RLE, ZIGZAG, GORILLA_V1; INT32/INT64:
# CAMEL, GORILLA_V1).
SUPPORTED = {
    "FLOAT": ["PLAIN", "RLBE", "GORILLA", "CHIMP", "SPRINTZ", "TS_2DIFF"],
    "DOUBLE": ["PLAIN", "RLBE", "GORILLA", "CHIMP", "SPRINTZ", "TS_2DIFF", "CAMEL"],
    "INT32": ["PLAIN", "RLBE", "GORILLA", "CHIMP", "SPRINTZ", "TS_2DIFF", "RLE", "ZIGZAG"],
    "INT64": ["PLAIN", "RLBE", "GORILLA", "CHIMP", "SPRINTZ", "TS_2DIFF", "RLE", "ZIGZAG"],
}

# Value kinds the C++ writer cannot store exactly, per (type, encoding) (the writer's own
# reader does not read them back either; `known_quirks` of the C++ corpus manifest):
LIMITS = {
    # Lossy by design: scaled by 10^2, rounded, stored as integers (NaN and values that do not
    # fit as raw bits; -0.0 becomes 0.0). Only values with two decimals are written.
    ("FLOAT", "TS_2DIFF"): "decimal",
    ("DOUBLE", "TS_2DIFF"): "decimal",
    # SPRINTZ floats lose negative values, sign changes, NaN, infinities, -0.0 and (DOUBLE)
    # fractions: positive values only (DOUBLE: positive integers).
    ("FLOAT", "SPRINTZ"): "positive",
    ("DOUBLE", "SPRINTZ"): "positive_integer",
    # SPRINTZ integers lose deltas of about 32 bits (INT32) or over ~56 bits (INT64).
    ("INT32", "SPRINTZ"): "small_int",
    ("INT64", "SPRINTZ"): "small_int",
    # CAMEL loses NaN (and infinities after a NaN).
    ("DOUBLE", "CAMEL"): "no_nan",
}

F64_NANS = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF8DEADBEEF0001, 0xFFFFFFFFFFFFFFFF]
F32_NANS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FC0BEEF, 0xFFFFFFFF]


def f64_bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def f64_of(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f32_of(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def special_floats(is_f32):
    """Bit patterns of the special values: NaNs, infinities, zeros, subnormals, extremes."""
    if is_f32:
        return F32_NANS + [0x7F800000, 0xFF800000, 0x80000000, 0x00000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000]
    return F64_NANS + [
        0x7FF0000000000000,
        0xFFF0000000000000,
        0x8000000000000000,
        0x0000000000000000,
        0x0000000000000001,
        0x800FFFFFFFFFFFFF,
        0x7FEFFFFFFFFFFFFF,
        0xFFEFFFFFFFFFFFFF,
        0x0010000000000000,
    ]


def float_bits(rnd, is_f32, limit, prev):
    """One FLOAT/DOUBLE value as its bits, under `limit`."""
    to_bits = f32_bits if is_f32 else f64_bits
    if limit == "decimal":
        return to_bits(round(rnd.uniform(-10000, 10000), 2))
    if limit == "positive":
        return to_bits(rnd.choice([rnd.uniform(0.001, 1000.0), float(rnd.randint(1, 100000))]))
    if limit == "positive_integer":
        return to_bits(float(rnd.randint(1, 10**6)))
    r = rnd.random()
    if prev is not None and r < 0.25:
        return prev  # runs of one value
    if r < 0.45:
        bits = rnd.choice(special_floats(is_f32))
        if limit == "no_nan" and math.isnan((f32_of if is_f32 else f64_of)(bits)):
            return to_bits(1.25)
        return bits
    if r < 0.75:
        return to_bits(rnd.choice([rnd.gauss(0, 1000), rnd.uniform(-1e6, 1e6), round(rnd.uniform(-100, 100), 1)]))
    # Any bit pattern at all (NaNs with random payloads among them).
    bits = rnd.getrandbits(32 if is_f32 else 64)
    if limit == "no_nan" and math.isnan((f32_of if is_f32 else f64_of)(bits)):
        return to_bits(-7.5)
    return bits


def int_value(rnd, is_i32, limit, prev):
    lo, hi = (-(2**31), 2**31 - 1) if is_i32 else (-(2**63), 2**63 - 1)
    if limit == "small_int":
        span = 2**20 if is_i32 else 2**40
        return rnd.randint(-span, span)
    r = rnd.random()
    if prev is not None and r < 0.25:
        return prev
    if r < 0.4:
        return rnd.choice([lo, hi, 0, -1, 1, lo + 1, hi - 1])
    if r < 0.7:
        return rnd.randint(-1000, 1000)
    return rnd.randint(lo, hi)


def series_values(rnd, ty, encoding, n):
    """`n` values of type `ty` for `encoding`: FLOAT/DOUBLE as bits, integers as ints."""
    limit = LIMITS.get((ty, encoding))
    out, prev = [], None
    for _ in range(n):
        if ty in ("FLOAT", "DOUBLE"):
            v = float_bits(rnd, ty == "FLOAT", limit, prev)
        else:
            v = int_value(rnd, ty == "INT32", limit, prev)
        out.append(v)
        prev = v
    return out


def python_value(ty, v):
    """The value handed to the writer (a Python float from the exact bits)."""
    if ty == "FLOAT":
        return f32_of(v)
    if ty == "DOUBLE":
        return f64_of(v)
    return v


def written_bits(ty, v):
    """The bits of what the writer stores for the value we handed it: a FLOAT goes through a
    Python float (a double), which keeps every f32 exactly, NaN payloads included."""
    if ty == "FLOAT":
        return f32_bits(f32_of(v))
    return v


# The C++ writer's defaults (the corpus manifest's `writer_defaults`). The configuration is
# process-wide, so every file starts from these and states its own changes: a seed writes
# the same bytes whichever seeds ran before it.
DEFAULTS = {
    "page_writer_max_point_num_": 10000,
    "time_encoding_type_": TSEncoding.TS_2DIFF,
    "time_compress_type_": Compressor.LZ4,
    "int32_encoding_type_": TSEncoding.TS_2DIFF,
    "int64_encoding_type_": TSEncoding.TS_2DIFF,
    "float_encoding_type_": TSEncoding.GORILLA,
    "double_encoding_type_": TSEncoding.GORILLA,
    "default_compression_type_": Compressor.LZ4,
}


def configure(changes):
    set_tsfile_config({**DEFAULTS, **changes})


def tree_file(path, rnd):
    configure({"page_writer_max_point_num_": rnd.choice([17, 64, 100, 333])})
    w = TsFileWriter(path)
    pairs = [(ty, enc) for ty, encs in SUPPORTED.items() for enc in encs]
    series = []
    devices = [f"root.sg.d{i}" for i in range(rnd.randint(1, 3))]
    for dev in devices:
        for ty, enc in pairs:
            w.register_timeseries(dev, TimeseriesSchema(f"s_{ty}_{enc}".lower(), TSDataType[ty], TSEncoding[enc], Compressor.UNCOMPRESSED))
    t0 = 0
    rounds = rnd.randint(1, 3)
    record = {}
    for _ in range(rounds):
        for dev in devices:
            for ty, enc in pairs:
                name = f"s_{ty}_{enc}".lower()
                n = rnd.choice([1, 2, 5, rnd.randint(10, 400), rnd.randint(400, 1500)])
                vals = series_values(rnd, ty, enc, n)
                tab = Tablet([name], [TSDataType[ty]], n)
                tab.set_table_name(dev)
                for i, v in enumerate(vals):
                    tab.add_timestamp(i, t0 + i)
                    tab.add_value_by_index(0, i, python_value(ty, v))
                w.write_tablet(tab)
                rec = record.setdefault((dev, name), {"table": None, "device": dev, "tags": [], "column": name, "type": ty, "encoding": enc, "times": [], "values": []})
                rec["times"].extend(range(t0, t0 + n))
                rec["values"].extend(written_bits(ty, v) for v in vals)
        t0 += 2000
        w.flush()
    w.close()
    series.extend(record.values())
    return series


def table_file(path, rnd):
    """Tables whose FIELD columns take one writer configuration of encodings each."""
    series = []
    tables = []
    for ti in range(rnd.randint(1, 3)):
        cfg = {
            "page_writer_max_point_num_": rnd.choice([19, 50, 128]),
            "float_encoding_type_": TSEncoding[rnd.choice(SUPPORTED["FLOAT"])],
            "double_encoding_type_": TSEncoding[rnd.choice(SUPPORTED["DOUBLE"])],
            "int32_encoding_type_": TSEncoding[rnd.choice(SUPPORTED["INT32"])],
            "int64_encoding_type_": TSEncoding[rnd.choice(SUPPORTED["INT64"])],
        }
        tables.append((f"t{ti}", cfg))
    cols = [("f", "FLOAT"), ("d", "DOUBLE"), ("i", "INT32"), ("l", "INT64")]

    def schema(name):
        tag = [ColumnSchema("dev", TSDataType.STRING, ColumnCategory.TAG)]
        return TableSchema(name, tag + [ColumnSchema(c, TSDataType[ty], ColumnCategory.FIELD) for c, ty in cols])

    w = TsFileWriter(path)
    for name, cfg in tables:
        # The configuration in force when a table is registered fixes its columns' encodings.
        configure(cfg)
        w.register_table(schema(name))
    for name, cfg in tables:
        enc_of = {ty: cfg[f"{ty.lower()}_encoding_type_"].name for _, ty in cols}
        for dev in [f"dev{k}" for k in range(rnd.randint(1, 3))]:
            n = rnd.choice([1, 3, rnd.randint(10, 300), rnd.randint(300, 900)])
            vals = {c: series_values(rnd, ty, enc_of[ty], n) for c, ty in cols}
            tab = Tablet(["dev"] + [c for c, _ in cols], [TSDataType.STRING] + [TSDataType[ty] for _, ty in cols], n)
            tab.set_table_name(name)
            for i in range(n):
                tab.add_timestamp(i, i * 10)
                tab.add_value_by_index(0, i, dev)
                for k, (c, ty) in enumerate(cols):
                    tab.add_value_by_index(k + 1, i, python_value(ty, vals[c][i]))
            w.write_table(tab)
            w.flush()
            for c, ty in cols:
                series.append(
                    {
                        "table": name,
                        "device": dev,
                        "tags": [dev],
                        "column": c,
                        "type": ty,
                        "encoding": enc_of[ty],
                        "times": [i * 10 for i in range(n)],
                        "values": [written_bits(ty, v) for v in vals[c]],
                    }
                )
    w.close()
    return series


def write_seed(out, seed):
    rnd = random.Random(seed)
    files = []
    for model, make in (("tree", tree_file), ("table", table_file)):
        path = os.path.join(out, f"seed_{seed}_{model}.tsfile")
        if os.path.exists(path):
            os.remove(path)
        files.append({"file": os.path.basename(path), "model": model, "series": make(path, rnd)})
    with open(os.path.join(out, f"seed_{seed}.json"), "w") as f:
        json.dump({"seed": seed, "files": files}, f)


def main():
    out, seeds = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    if len(seeds) == 1:
        write_seed(out, int(seeds[0]))
        return
    # One process per seed: the C++ core keeps state across files of one process (the
    # same seed writes other bytes after another seed), two at a time.
    running = []
    for seed in seeds:
        running.append(subprocess.Popen([sys.executable, __file__, out, seed]))
        if len(running) == 2:
            wait(running.pop(0))
    for p in running:
        wait(p)


def wait(p):
    if p.wait() != 0:
        sys.exit(f"{p.args}: exit status {p.returncode}")


if __name__ == "__main__":
    main()
