"""read_tsfile / read_tsfile_batches on the bundled sample: every row, projections, time
bounds of every accepted kind (inclusive start, exclusive end), devices by identifier or
TAG tuple, file order, and the hand-over to pandas and polars."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import datafusion_tsfile as tsf
from conftest import canonical

ROWS = 1_006_239
COLUMNS = [
    "time", "region", "site", "device", "temperature", "humidity", "pressure",
    "energy_wh", "online", "status", "day", "last_calibration",
]
DEVICE = ("north", "north-site-0", "ws-north-0-0")
DEVICE_ID = "weather.north.north-site-0.ws-north-0-0"


@pytest.fixture(scope="module")
def full(sample: str) -> pa.Table:
    return tsf.read_tsfile(sample)


def test_full_read(full: pa.Table) -> None:
    assert full.num_rows == ROWS
    assert full.column_names == COLUMNS
    assert full.schema.field("time").type == pa.timestamp("ms")
    assert full.schema.field("temperature").metadata == {b"tsfile.category": b"FIELD", b"tsfile.type": b"DOUBLE"}
    # The per-region figures README shows for the same file (computed by `tsfile sql`).
    # (TAG columns are dictionaries that differ from batch to batch: pyarrow groups strings.)
    by_region = full.set_column(1, "region", full["region"].cast(pa.string()))
    regions = by_region.group_by("region").aggregate([("time", "count"), ("temperature", "mean")])
    got = {r["region"]: (r["time_count"], round(r["temperature_mean"], 2)) for r in regions.to_pylist()}
    assert got == {
        "central": (202155, 10.30),
        "east": (200231, 8.17),
        "north": (200680, 9.92),
        "south": (200092, 11.76),
        "west": (203081, 9.81),
    }


def test_rows_come_device_by_device(full: pa.Table) -> None:
    # One device after another, each in time order: (device, time) never goes back.
    ids = pc.binary_join_element_wise(
        full["region"].cast(pa.string()), full["site"].cast(pa.string()), full["device"].cast(pa.string()), "."
    )
    changes = pc.sum(pc.not_equal(ids[1:], ids[:-1])).as_py()
    assert changes == 299  # 300 devices, each one contiguous run
    same = pc.equal(ids[1:], ids[:-1])
    ascending = pc.greater(full["time"][1:], full["time"][:-1])
    assert pc.all(pc.or_(pc.invert(same), ascending)).as_py()


def test_projection_keeps_the_order_asked(sample: str, full: pa.Table) -> None:
    cols = ["temperature", "device", "time", "region", "site"]
    t = tsf.read_tsfile(sample, columns=cols)
    assert t.column_names == cols
    assert t.num_rows == ROWS
    assert canonical(t).equals(canonical(full.select(cols)))


def test_device_by_id_and_by_tags(sample: str, full: pa.Table) -> None:
    mask = pc.and_(
        pc.equal(full["region"].cast(pa.string()), DEVICE[0]),
        pc.equal(full["device"].cast(pa.string()), DEVICE[2]),
    )
    expected = full.filter(mask)
    assert 0 < expected.num_rows < ROWS
    by_id = tsf.read_tsfile(sample, devices=[DEVICE_ID])
    by_tags = tsf.read_tsfile(sample, devices=[DEVICE])
    by_bare_id = tsf.read_tsfile(sample, devices=[".".join(DEVICE)])
    for got in (by_id, by_tags, by_bare_id):
        assert got.num_rows == expected.num_rows
        assert got["time"].equals(expected["time"])
        assert got["temperature"].equals(expected["temperature"])
    two = tsf.read_tsfile(sample, devices=[DEVICE_ID, ("west", "west-site-0", "ws-west-0-0")])
    assert two.num_rows > expected.num_rows
    absent = tsf.read_tsfile(sample, devices=[("nowhere", "x", "y")])
    assert absent.num_rows == 0
    assert absent.column_names == COLUMNS


def test_many_devices(sample: str, full: pa.Table) -> None:
    # 250 of the 300 devices (a balanced OR of TAG tuples: was a chain, quadratic to plan).
    tags = [tuple(str(v) for v in r.values()) for r in full.select(["region", "site", "device"]).to_pylist()]
    picked = sorted(set(tags))[:250]
    got = tsf.read_tsfile(sample, devices=picked, columns=["region", "site", "device"])
    names = set(picked)
    want = sum(1 for t in tags if t in names)
    assert 0 < got.num_rows == want < full.num_rows


def test_devices_of_a_one_tag_table(tmp_path: Path) -> None:
    # One TAG column: an IN list, and None selects the device whose TAG is null.
    data = pa.table(
        {
            "time": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
            "dev": pa.array(["a", "b", None, "a", "c", None]),
            "v": pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        }
    )
    path = str(tmp_path / "one_tag.tsfile")
    tsf.write_tsfile(data, path, table="t", tags=["dev"])
    got = tsf.read_tsfile(path, devices=[("a",), (None,), "t.c"], columns=["time", "v"]).sort_by("time")
    assert got.column("v").to_pylist() == [1.0, 3.0, 4.0, 5.0, 6.0]
    only_null = tsf.read_tsfile(path, devices=[(None,)], columns=["v"])
    assert sorted(only_null.column("v").to_pylist()) == [3.0, 6.0]


def test_device_errors(sample: str) -> None:
    with pytest.raises(tsf.InvalidArgumentError, match="TAG values"):
        tsf.read_tsfile(sample, devices=[("north", "ws-north-0-0")])
    with pytest.raises(tsf.InvalidArgumentError, match="empty"):
        tsf.read_tsfile(sample, devices=[])


def _at(full: pa.Table, i: int) -> pa.TimestampScalar:
    return full["time"][i]


def test_time_bounds_are_start_inclusive_end_exclusive(sample: str, full: pa.Table) -> None:
    times = full["time"].cast(pa.int64())
    lo, hi = 1704153600405, 1704160800830  # arbitrary millisecond instants
    expected = pc.sum(pc.and_(pc.greater_equal(times, lo), pc.less(times, hi))).as_py()
    got = tsf.read_tsfile(sample, columns=["time"], start=lo, end=hi)
    assert got.num_rows == expected
    # A bound equal to an existing row's time: that row is in for start, out for end.
    t0 = times[12345].as_py()
    n_at = pc.sum(pc.equal(times, t0)).as_py()
    assert n_at >= 1
    start_at = tsf.read_tsfile(sample, columns=["time"], start=t0).num_rows
    end_at = tsf.read_tsfile(sample, columns=["time"], end=t0).num_rows
    assert start_at + end_at == ROWS
    assert start_at == pc.sum(pc.greater_equal(times, t0)).as_py()


def test_time_bounds_of_every_kind_agree(sample: str) -> None:
    ms = 1704153600000  # 2024-01-02T00:00:00Z
    want = tsf.read_tsfile(sample, columns=["time"], start=ms, end=ms + 3_600_000).num_rows
    assert want > 0
    kinds = [
        (dt.datetime(2024, 1, 2), dt.datetime(2024, 1, 2, 1)),
        (dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc), dt.datetime(2024, 1, 2, 1, tzinfo=dt.timezone.utc)),
        (dt.datetime(2024, 1, 2, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))), "2024-01-02T01:00:00+00:00"),
        ("2024-01-02", "2024-01-02T01:00"),
        (np.datetime64("2024-01-02T00:00:00"), np.datetime64("2024-01-02T01:00:00.000000000")),
        (pd.Timestamp("2024-01-02"), pd.Timestamp("2024-01-02 01:00")),
    ]
    for start, end in kinds:
        assert tsf.read_tsfile(sample, columns=["time"], start=start, end=end).num_rows == want, (start, end)
    assert tsf.read_tsfile(sample, columns=["time"], start=dt.date(2024, 1, 2), end=ms + 3_600_000).num_rows == want


def test_sub_millisecond_bounds_round_up(sample: str, full: pa.Table) -> None:
    times = full["time"].cast(pa.int64())
    t0 = times[777].as_py()
    # 1 ns before t0 keeps t0 in for start; 1 ns after t0 keeps it in for end.
    before = pd.Timestamp(t0, unit="ms") - pd.Timedelta(1, "ns")
    after = pd.Timestamp(t0, unit="ms") + pd.Timedelta(1, "ns")
    assert tsf.read_tsfile(sample, columns=["time"], start=before).num_rows == pc.sum(pc.greater_equal(times, t0)).as_py()
    assert tsf.read_tsfile(sample, columns=["time"], end=after).num_rows == pc.sum(pc.less_equal(times, t0)).as_py()


def test_bad_time_bounds(sample: str) -> None:
    with pytest.raises(tsf.InvalidArgumentError):
        tsf.read_tsfile(sample, start="yesterday")
    with pytest.raises(tsf.InvalidArgumentError):
        tsf.read_tsfile(sample, start=True)
    with pytest.raises(tsf.InvalidArgumentError):
        tsf.read_tsfile(sample, end=1.5)
    with pytest.raises(tsf.InvalidArgumentError, match="integers"):
        tsf.read_tsfile(sample, start="2024-01-02", time_unit="raw")


def test_raw_and_microsecond_time_units(sample: str, full: pa.Table) -> None:
    raw = tsf.read_tsfile(sample, columns=["time"], time_unit="raw", end=1704153600000)
    assert raw.schema.field("time").type == pa.int64()
    assert raw.num_rows == pc.sum(pc.less(full["time"].cast(pa.int64()), 1704153600000)).as_py()
    # time_unit says what the stored numbers are: read as microseconds, the same values
    # fall in January 1970, and an int bound is still compared with the stored value.
    us = tsf.read_tsfile(sample, columns=["time"], time_unit="us", start=1704153600000)
    assert us.schema.field("time").type == pa.timestamp("us")
    assert us.num_rows == ROWS - raw.num_rows
    assert us["time"][0].as_py().year == 1970
    assert tsf.read_tsfile(sample, columns=["time"], time_unit="us", start="2024-01-02").num_rows == 0


def test_batches_equal_the_table(sample: str, full: pa.Table) -> None:
    reader = tsf.read_tsfile_batches(sample)
    assert reader.schema.names == COLUMNS
    batches = list(reader)
    assert sum(b.num_rows for b in batches) == ROWS
    assert canonical(pa.Table.from_batches(batches)).equals(canonical(full))
    assert reader.read_next_batch() is None  # exhausted


def test_c_stream_consumers(sample: str, full: pa.Table) -> None:
    sel = dict(columns=["time", "device", "temperature"], devices=[DEVICE])
    expected = tsf.read_tsfile(sample, **sel)
    assert pa.table(tsf.read_tsfile_batches(sample, **sel)).equals(expected)
    assert tsf.read_tsfile_batches(sample, **sel).to_reader().read_all().equals(expected)
    frame = pl.DataFrame(tsf.read_tsfile_batches(sample, **sel))
    assert frame.height == expected.num_rows
    assert frame["temperature"].to_list() == expected["temperature"].to_pylist()
    pdf = tsf.read_tsfile_batches(sample, **sel).read_pandas()
    assert len(pdf) == expected.num_rows
    assert pdf["temperature"].tolist() == expected["temperature"].to_pylist()
    reader = tsf.read_tsfile_batches(sample, **sel)
    pa.table(reader)
    with pytest.raises(ValueError, match="consumed"):
        pa.table(reader)


def test_unknown_column_and_option(sample: str) -> None:
    with pytest.raises(tsf.InvalidArgumentError, match="no column 'nope'"):
        tsf.read_tsfile(sample, columns=["time", "nope"])
    with pytest.raises(tsf.InvalidArgumentError, match="unknown TsFile option"):
        tsf.read_tsfile(sample, colour="blue")
    with pytest.raises(tsf.InvalidArgumentError):
        tsf.read_tsfile(sample, table="nope")


def test_several_paths_directories_and_globs(sample: str, full: pa.Table, tmp_path) -> None:
    import shutil

    for name in ("a.tsfile", "b.tsfile"):
        shutil.copy(sample, tmp_path / name)
    (tmp_path / "notes.txt").write_text("not a TsFile")
    a, b = str(tmp_path / "a.tsfile"), str(tmp_path / "b.tsfile")
    for paths in ([a, b], str(tmp_path), str(tmp_path / "*.tsfile")):
        got = tsf.read_tsfile(paths, columns=["time", "temperature"])
        assert got.num_rows == 2 * ROWS, paths
        # file after file, each the same rows as the single file
        for part in (got.slice(0, ROWS), got.slice(ROWS)):
            assert pc.sum(part["temperature"]).as_py() == pytest.approx(pc.sum(full["temperature"]).as_py(), rel=1e-12)
            assert pc.min(part["time"]).as_py() == pc.min(full["time"]).as_py()


def test_encrypted_files(data_dir) -> None:
    enc = data_dir / "encrypted"
    plain = tsf.read_tsfile(str(enc / "plain.tsfile"))
    assert plain.num_rows == 5
    level1 = tsf.read_tsfile(str(enc / "aes128_level1.tsfile"))
    assert canonical(level1).equals(canonical(plain))
    level2 = tsf.read_tsfile(str(enc / "aes128_level2.tsfile"), master_key="tsfile-rs-master")
    assert level2.to_pylist() == plain.to_pylist()
    plain = plain.set_column(0, "time", plain["time"].cast(pa.int64()))
    rows = sorted((r["dev"], r["time"], r["v"], r["x"]) for r in plain.to_pylist())
    assert rows == [("d1", 1, 10, 0.5), ("d1", 2, 20, 1.5), ("d1", 3, 30, 2.5), ("d2", 1, 100, -1.0), ("d2", 2, 200, -2.0)]
