"""write_tsfile and COPY … STORED AS TSFILE from Python: what we write reads back bit for bit
through this package, and the official C++ reader (PyPI ``tsfile`` 2.5.0) returns the same
values.

Steered around in the C++ cross-check (known failures of that reader, see
tests/data/corpus/MANIFEST.json ``known_quirks``): a column without a value in some chunk
groups of a device ("absent-column-reader-failures": the files here are written in one
flush, so every column has a chunk in each device's only chunk group or no series at all),
BOOLEAN RLE and float RLE/RLBE/GORILLA_V1 (not written by us), and the pandas path
(``read_data_frame`` turns NaN into null): values are read through ``read_arrow_batch``.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_tsfile as tsf


def _table(n_devices: int = 12, points: int = 700) -> pa.Table:
    """Every writable type, nulls, NaN (with a payload), ±inf, -0.0, extremes, NUL bytes."""
    rows = n_devices * points
    dev = [f"dev-{i % n_devices:02d}" for i in range(rows)]
    region = [None if (i % n_devices) % 5 == 4 else ("north" if (i % n_devices) % 2 else "") for i in range(rows)]
    time = [1_700_000_000_000 + (i // n_devices) * 1000 + (i % 3) for i in range(rows)]
    nan_payload = struct.unpack(">d", bytes.fromhex("7ff800000000abcd"))[0]
    specials = [math.nan, nan_payload, math.inf, -math.inf, -0.0, 0.0, 5e-324, -1.7976931348623157e308]

    def f64(i: int) -> float | None:
        if i % 9 == 0:
            return None
        return specials[i % len(specials)] if i % 4 == 0 else i * 0.25 - 100

    return pa.table(
        {
            "time": pa.array(time, pa.timestamp("ms")),
            "device": pa.array(dev),
            "region": pa.array(region),
            "flag": pa.array([None if i % 7 == 0 else i % 3 == 0 for i in range(rows)], pa.bool_()),
            "i32": pa.array([None if i % 11 == 0 else [2**31 - 1, -(2**31), i][i % 3] for i in range(rows)], pa.int32()),
            "i64": pa.array([None if i % 13 == 0 else [2**63 - 1, -(2**63), i * 987654321][i % 3] for i in range(rows)], pa.int64()),
            "f32": pa.array([None if i % 5 == 0 else [math.inf, -0.0, i / 8][i % 3] for i in range(rows)], pa.float32()),
            "f64": pa.array([f64(i) for i in range(rows)], pa.float64()),
            "text": pa.array([None if i % 6 == 0 else ["", "a\x00b", "Zürich", f"t{i % 40}"][i % 4] for i in range(rows)]),
            "blob": pa.array([None if i % 8 == 0 else bytes([i % 256, 0, 255]) for i in range(rows)], pa.binary()),
            "day": pa.array([dt.date(1999, 12, 31) + dt.timedelta(days=i % 500) for i in range(rows)], pa.date32()),
            "stamp": pa.array([None if i % 10 == 0 else i * 1000 for i in range(rows)], pa.timestamp("ms")),
        }
    )


def _bits(col: pa.ChunkedArray) -> list:
    """Values with floats as bit patterns (NaN payloads and -0.0 included)."""
    if pa.types.is_floating(col.type):
        fmt = ">d" if pa.types.is_float64(col.type) else ">f"
        return [None if v is None else struct.pack(fmt, v) for v in col.to_pylist()]
    if pa.types.is_dictionary(col.type):
        col = col.cast(pa.string())
    if pa.types.is_timestamp(col.type):
        col = col.cast(pa.int64())
    return col.to_pylist()


def _sorted(t: pa.Table) -> pa.Table:
    keys = [c for c in ("device", "time") if c in t.column_names]
    if pa.types.is_dictionary(t.schema.field("device").type):
        t = t.set_column(t.column_names.index("device"), "device", t.column("device").cast(pa.string()))
    return t.sort_by([(k, "ascending") for k in keys])


def _assert_same(got: pa.Table, want: pa.Table, columns: list[str]) -> None:
    got, want = _sorted(got), _sorted(want)
    assert got.num_rows == want.num_rows
    for c in columns:
        assert _bits(got.column(c)) == _bits(want.column(c)), c


def test_write_tsfile_reads_back_bit_for_bit(tmp_path: Path) -> None:
    data = _table()
    path = tmp_path / "all.tsfile"
    # Pages of 100 points and flushes every ~64 KiB of rows: multi-page chunks, several
    # chunk groups per device.
    rows = tsf.write_tsfile(data, path, tags=["device", "region"], page_max_points=100, memory_limit="64k")
    assert rows == data.num_rows
    back = tsf.read_tsfile(path)
    assert back.column_names[:3] == ["time", "device", "region"]
    _assert_same(back, data, data.column_names)
    meta = tsf.metadata(path).to_pandas()
    assert meta["table"].unique().tolist() == ["all"]


@pytest.mark.parametrize("kind", ["reader", "batch", "pandas", "polars"])
def test_write_tsfile_takes_streams_and_frames(tmp_path: Path, kind: str) -> None:
    data = _table(3, 50).select(["time", "device", "i64", "text"])
    src: object = {
        "reader": pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=17)),
        "batch": data.combine_chunks().to_batches()[0],
        "pandas": data.to_pandas(),
        "polars": pytest.importorskip("polars").from_arrow(data) if kind == "polars" else None,
    }[kind]
    path = tmp_path / f"{kind}.tsfile"
    assert tsf.write_tsfile(src, path, table="t", tags="device") == data.num_rows
    back = tsf.read_tsfile(path, table="t")
    want = data
    if kind == "pandas":  # pandas keeps the values but makes nullable ints floats
        want = pa.Table.from_pandas(data.to_pandas(), preserve_index=False)
    _assert_same(back, want, ["time", "device", "text"])


def test_copy_through_sql(tmp_path: Path) -> None:
    data = _table(4, 100)
    out = tmp_path / "copied.tsfile"
    written = tsf.sql(
        f"COPY (SELECT * FROM src) TO '{out}' STORED AS TSFILE OPTIONS ('tsfile.tags' 'device,region')",
        tables={"src": data},
    )
    assert written.column(0).to_pylist() == [data.num_rows]
    _assert_same(tsf.read_tsfile(out), data, data.column_names)


def test_bad_input_raises_and_leaves_no_file(tmp_path: Path) -> None:
    dup = pa.table({"time": pa.array([1, 1], pa.int64()), "device": ["a", "a"], "v": [1.0, 2.0]})
    with pytest.raises(tsf.InvalidArgumentError, match="duplicate timestamp 1"):
        tsf.write_tsfile(dup, tmp_path / "dup.tsfile", tags="device")
    dec = pa.table({"time": pa.array([1], pa.int64()), "d": pa.array([1], pa.decimal128(5, 2))})
    with pytest.raises(tsf.UnsupportedError, match="Decimal128"):
        tsf.write_tsfile(dec, tmp_path / "dec.tsfile")
    with pytest.raises(tsf.InvalidArgumentError, match="time_column"):
        tsf.write_tsfile(dup, tmp_path / "t.tsfile", time_column="ts")
    with pytest.raises(tsf.InvalidArgumentError, match="expected a pyarrow Table"):
        tsf.write_tsfile(42, tmp_path / "x.tsfile")
    assert list(tmp_path.iterdir()) == []


def _official_read(path: Path, table: str, columns: list[str]) -> pa.Table:
    import tsfile  # the official package, installed by python/ci.sh

    reader = tsfile.TsFileReader(str(path))
    try:
        result = reader.query_table(table, columns, batch_size=65536)
        batches = []
        while True:
            t = result.read_arrow_batch()
            if t is None or t.num_rows == 0:
                break
            batches.append(t)
        result.close()
    finally:
        reader.close()
    return pa.concat_tables(batches)


def test_official_cpp_reader_returns_the_same_values(tmp_path: Path) -> None:
    import tsfile

    assert tsfile.__name__ == "tsfile"
    data = _table(10, 2500)
    path = tmp_path / "cross.tsfile"
    # One flush (every column has a chunk in each device's chunk group), pages of 1,000
    # points (multi-page chunks, all-null pages of sparse columns), the Java defaults
    # (TS_2DIFF, GORILLA, PLAIN, LZ4) and, for two columns, other encodings and codecs.
    tsf.write_tsfile(
        data,
        path,
        tags=["device", "region"],
        page_max_points=1000,
        **{"encoding.i64": "GORILLA", "compression.f64": "ZSTD", "encoding.i32": "PLAIN", "compression.text": "SNAPPY"},
    )
    fields = [c for c in data.column_names if c not in ("time", "device", "region")]
    got = _official_read(path, "cross", ["device", "region", *fields])
    # The C++ reader returns time as int64 and TIMESTAMP fields as timestamp[ns] of the raw
    # value: compare raw values.
    got = got.set_column(got.column_names.index("stamp"), "stamp", got.column("stamp").cast(pa.int64()))
    want = data.set_column(data.column_names.index("stamp"), "stamp", data.column("stamp").cast(pa.int64()))
    want = want.set_column(0, "time", want.column("time").cast(pa.int64()))
    _assert_same(got, want, ["time", "device", "region", *fields])
