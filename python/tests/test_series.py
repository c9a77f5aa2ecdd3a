"""Series access for machine learning (`list_series`, `read_series`, `windows`) against
plain `read_tsfile` reads of the same files: counts, slices by time and by position,
windows, edge cases."""

from __future__ import annotations

import pickle
from pathlib import Path

import datafusion_tsfile as tsf
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import ROOT, canonical

SAMPLE = str(ROOT / "data" / "sample.tsfile")
TREE = str(ROOT / "tests" / "data" / "corpus" / "files" / "tree_chunk_groups.tsfile")
TAGS = ["region", "site", "device"]
FIELDS = ["temperature", "humidity", "pressure", "energy_wh", "online", "status", "day", "last_calibration"]


def device_id(region: str, site: str, device: str) -> str:
    return f"weather.{region}.{site}.{device}"


@pytest.fixture(scope="module")
def full() -> pa.Table:
    """The whole sample, TAGs as strings, sorted by device and time."""
    return canonical(tsf.read_tsfile(SAMPLE))


@pytest.fixture(scope="module")
def by_device(full: pa.Table) -> dict[str, pa.Table]:
    out = {}
    keys = [full.column(t).to_pylist() for t in TAGS]
    ids = [device_id(*k) for k in zip(*keys)]
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[start]:
            out[ids[start]] = full.slice(start, i - start)
            start = i
    return out


def points(t: pa.Table, field: str) -> pa.Table:
    """The points of one series: rows where the field is not null."""
    return t.filter(pc.is_valid(t.column(field)))


def raw_times(t: pa.Table) -> np.ndarray:
    return t.column("time").cast(pa.int64()).to_numpy()


# ----------------------------------------------------------------- list_series


def test_list_series_counts_and_bounds_match_a_full_read(by_device: dict[str, pa.Table]) -> None:
    ls = tsf.list_series(SAMPLE)
    assert ls.column_names == ["table", "region", "site", "tag_device", "device", "field", "type", "start", "end", "count"]
    assert ls.num_rows == 300 * len(FIELDS)
    assert len(by_device) == 300
    rows = ls.to_pylist()
    assert sum(r["count"] for r in rows if r["field"] == "temperature") <= 1_006_239
    for r in rows:
        assert r["table"] == "weather"
        assert r["device"] == device_id(r["region"], r["site"], r["tag_device"])
        p = points(by_device[r["device"]], r["field"])
        assert r["count"] == p.num_rows, r
        if p.num_rows:
            t = raw_times(p)
            assert (r["start"], r["end"]) == (t.min(), t.max()), r
    types = {r["field"]: r["type"] for r in rows}
    assert types["temperature"] == "DOUBLE" and types["online"] == "BOOLEAN" and types["day"] == "DATE"
    # A series with nulls counts its values only.
    assert any(r["count"] < by_device[r["device"]].num_rows for r in rows if r["field"] == "humidity")


def test_list_series_tree_model() -> None:
    ls = tsf.list_series(TREE)
    assert ls.column_names == ["table", "device", "field", "type", "start", "end", "count"]
    full = tsf.read_tsfile(TREE)
    devices = set(full.column("device").cast(pa.string()).to_pylist())
    assert set(ls.column("device").to_pylist()) == devices
    for r in ls.to_pylist():
        rows = full.filter(pc.equal(full.column("device").cast(pa.string()), r["device"]))
        p = points(rows, r["field"])
        assert r["count"] == p.num_rows, r
        t = raw_times(p)
        assert (r["start"], r["end"]) == (t.min(), t.max()), r


# ----------------------------------------------------------------- read_series


def first_device(by_device: dict[str, pa.Table], field: str = "humidity") -> str:
    """A device whose `field` has nulls."""
    for d, t in by_device.items():
        if t.column(field).null_count:
            return d
    raise AssertionError("no device with nulls")


def test_read_series_whole_and_dtypes(by_device: dict[str, pa.Table]) -> None:
    dev = first_device(by_device)
    ref = by_device[dev]
    for field, kind in [("temperature", "f"), ("humidity", "f"), ("pressure", "i"), ("energy_wh", "i"),
                        ("online", "b"), ("status", "O"), ("day", "M"), ("last_calibration", "M")]:
        times, values = tsf.read_series(SAMPLE, dev, field)
        p = points(ref, field)
        assert times.dtype == np.int64
        assert np.array_equal(times, raw_times(p)), field
        assert values.dtype.kind == kind, (field, values.dtype)
        assert len(values) == p.num_rows
        if kind in "fib":
            assert np.array_equal(values, p.column(field).to_numpy()), field
        else:
            assert list(values) == list(p.column(field).to_numpy(zero_copy_only=False)), field
    # Nulls are not points: none comes back.
    _, hum = tsf.read_series(SAMPLE, dev, "humidity")
    assert len(hum) == points(ref, "humidity").num_rows < ref.num_rows
    assert not np.isnan(hum).any()


def test_read_series_by_time_and_position(by_device: dict[str, pa.Table]) -> None:
    dev = first_device(by_device)
    p = points(by_device[dev], "humidity")
    t = raw_times(p)
    v = p.column("humidity").to_numpy()
    a, b = int(t[100]), int(t[900])
    times, values = tsf.read_series(SAMPLE, dev, "humidity", start=a, end=b)
    assert np.array_equal(times, t[100:900]) and np.array_equal(values, v[100:900])
    # Between two points: start and end need not be timestamps.
    times, _ = tsf.read_series(SAMPLE, dev, "humidity", start=a + 1, end=b + 1)
    assert np.array_equal(times, t[101:901])
    times, values = tsf.read_series(SAMPLE, dev, "humidity", offset=250, limit=400)
    assert np.array_equal(times, t[250:650]) and np.array_equal(values, v[250:650])
    times, _ = tsf.read_series(SAMPLE, dev, "humidity", offset=len(t) - 3)
    assert np.array_equal(times, t[-3:])
    times, _ = tsf.read_series(SAMPLE, dev, "humidity", limit=7)
    assert np.array_equal(times, t[:7])
    # Position within a time range.
    times, values = tsf.read_series(SAMPLE, dev, "humidity", start=a, end=b, offset=10, limit=5)
    assert np.array_equal(times, t[110:115]) and np.array_equal(values, v[110:115])
    # datetime bounds, as read_tsfile takes them.
    ts = p.column("time")
    times, _ = tsf.read_series(SAMPLE, dev, "humidity", start=ts[100].as_py(), end=ts[900].as_py())
    assert np.array_equal(times, t[100:900])
    # A device as a tuple of TAG values.
    region, site, device = dev.split(".")[1:]
    times, _ = tsf.read_series(SAMPLE, (region, site, device), "humidity", offset=5, limit=3)
    assert np.array_equal(times, t[5:8])


def test_read_series_edges(by_device: dict[str, pa.Table]) -> None:
    dev = first_device(by_device)
    p = points(by_device[dev], "temperature")
    t = raw_times(p)
    v = p.column("temperature").to_numpy()
    # Empty time range, and one before the data.
    for start, end in [(int(t[5]), int(t[5])), (0, 1), (int(t[-1]) + 1, None)]:
        times, values = tsf.read_series(SAMPLE, dev, "temperature", start=start, end=end)
        assert times.dtype == np.int64 and values.dtype == np.float64 and len(times) == len(values) == 0
    # One value.
    times, values = tsf.read_series(SAMPLE, dev, "temperature", start=int(t[5]), end=int(t[5]) + 1)
    assert list(times) == [t[5]] and list(values) == [v[5]]
    times, values = tsf.read_series(SAMPLE, dev, "temperature", offset=len(t) - 1)
    assert list(times) == [t[-1]] and list(values) == [v[-1]]
    # Offset past the end, limit 0: empty.
    for kw in [{"offset": len(t)}, {"offset": len(t) + 10, "limit": 5}, {"limit": 0}]:
        times, values = tsf.read_series(SAMPLE, dev, "pressure", **kw)
        assert len(times) == len(values) == 0 and values.dtype == np.int64, kw
    # Bad arguments.
    with pytest.raises(tsf.InvalidArgumentError, match="no device 'weather.nowhere'"):
        tsf.read_series(SAMPLE, "weather.nowhere", "temperature")
    with pytest.raises(tsf.InvalidArgumentError, match="no FIELD column 'nope'.*temperature"):
        tsf.read_series(SAMPLE, dev, "nope")
    with pytest.raises(tsf.InvalidArgumentError, match="no FIELD column 'region'"):
        tsf.read_series(SAMPLE, dev, "region")
    with pytest.raises(tsf.InvalidArgumentError, match="offset"):
        tsf.read_series(SAMPLE, dev, "temperature", offset=-1)
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        tsf.read_series(SAMPLE, ("x", "y", "z"), "temperature")


def test_read_series_tree_model() -> None:
    full = tsf.read_tsfile(TREE)
    names = full.column("device").cast(pa.string())
    for r in tsf.list_series(TREE).to_pylist():
        rows = full.filter(pc.equal(names, r["device"]))
        p = points(rows, r["field"])
        times, values = tsf.read_series(TREE, r["device"], r["field"])
        assert np.array_equal(times, raw_times(p)), r
        assert len(values) == r["count"]
        if r["count"] > 10:
            times, values = tsf.read_series(TREE, r["device"], r["field"], offset=3, limit=4)
            assert np.array_equal(times, raw_times(p)[3:7]), r
            expect = p.column(r["field"]).to_numpy(zero_copy_only=False)[3:7]
            if values.dtype.kind == "f":  # a stored NaN is a value, not a null
                assert np.array_equal(values, expect, equal_nan=True), r
            else:
                assert list(values) == list(expect), r


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory: pytest.TempPathFactory, by_device: dict[str, pa.Table]) -> Path:
    """Three devices of the sample in three files cut by time (as time partitions)."""
    out = tmp_path_factory.mktemp("series-split")
    devs = sorted(by_device)[:3]
    rows = pa.concat_tables([by_device[d] for d in devs])
    t = raw_times(rows)
    cuts = np.quantile(t, [1 / 3, 2 / 3]).astype(np.int64)
    parts = [t < cuts[0], (t >= cuts[0]) & (t < cuts[1]), t >= cuts[1]]
    for k, mask in enumerate(parts):
        tsf.write_tsfile(rows.filter(pa.array(mask)), out / f"part-{k}.tsfile", table="weather", tags=TAGS)
    return out


def test_several_files_by_position(split_dir: Path, by_device: dict[str, pa.Table]) -> None:
    ls = tsf.list_series(split_dir)
    assert ls.num_rows == 3 * len(FIELDS)
    for r in ls.to_pylist():
        if r["field"] not in ("humidity", "energy_wh"):
            continue
        p = points(by_device[r["device"]], r["field"])
        assert r["count"] == p.num_rows
        t = raw_times(p)
        n = len(t)
        for off, lim in [(0, None), (5, 10), (n // 3 - 2, 5), (n // 2, n), (n - 1, 1), (n, 3), (2 * n // 3 + 1, None)]:
            times, _ = tsf.read_series(split_dir, r["device"], r["field"], offset=off, limit=lim)
            stop = None if lim is None else off + lim
            assert np.array_equal(times, t[off:stop]), (r["device"], off, lim)


# ----------------------------------------------------------------- windows


def window_ref(ref: pa.Table, fields: list[str], pos: int, length: int) -> np.ndarray:
    part = ref.slice(pos, length)
    cols = []
    for f in fields:
        c = part.column(f)
        if pa.types.is_boolean(c.type):
            c = c.cast(pa.int8())
        cols.append(c.cast(pa.float64()).to_numpy())
    return np.stack(cols, axis=1)


def test_windows_match_slices_of_a_full_read(by_device: dict[str, pa.Table]) -> None:
    fields = ["temperature", "humidity", "online", "energy_wh"]
    ds = tsf.windows(SAMPLE, length=200, stride=150, fields=fields)
    assert ds.devices == sorted(by_device)
    expect = [(by_device[d].num_rows - 200) // 150 + 1 if by_device[d].num_rows >= 200 else 0 for d in ds.devices]
    assert len(ds) == sum(expect)
    assert list(ds.window_counts().values()) == expect
    rng = np.random.default_rng(3)
    picks = [0, 1, len(ds) - 1, -1] + [int(i) for i in rng.integers(0, len(ds), 40)]
    for i in picks:
        dev, pos = ds.locate(i)
        ref = by_device[dev]
        w = ds[i]
        assert w.shape == (200, 4) and w.dtype == np.float64
        assert np.array_equal(w, window_ref(ref, fields, pos, 200), equal_nan=True), (i, dev, pos)
        assert np.array_equal(ds.times(i), raw_times(ref)[pos : pos + 200])
    # The last window of the last device.
    dev, pos = ds.locate(len(ds) - 1)
    assert dev == ds.devices[-1] and pos == (expect[-1] - 1) * 150
    # Nulls are NaN.
    assert any(np.isnan(ds[i][:, 1]).any() for i in range(len(ds)))
    with pytest.raises(IndexError):
        ds[len(ds)]


def test_windows_at_the_very_end_and_across_blocks(by_device: dict[str, pa.Table]) -> None:
    dev = sorted(by_device)[7]
    ref = by_device[dev]
    n = ref.num_rows
    # stride 1: the last window ends at the device's last row; small blocks make windows
    # span two blocks, read by time range through the device's time column.
    ds = tsf.windows(SAMPLE, length=300, stride=1, fields=["humidity", "pressure"], devices=[dev],
                     block_rows=1000, return_times=True, dtype="float32")
    assert len(ds) == n - 300 + 1
    for i in [0, 699, 700, 701, 999, 1000, len(ds) - 1]:
        times, w = ds[i]
        assert w.dtype == np.float32 and w.shape == (300, 2)
        assert np.array_equal(times, raw_times(ref)[i : i + 300])
        assert np.array_equal(w, window_ref(ref, ["humidity", "pressure"], i, 300).astype(np.float32), equal_nan=True)
    assert ds.locate(len(ds) - 1) == (dev, n - 300)
    # A window longer than every device: none.
    assert len(tsf.windows(SAMPLE, length=n + 1, fields=["humidity"], devices=[dev])) == 0


def test_windows_pickle_and_bad_arguments(by_device: dict[str, pa.Table]) -> None:
    ds = tsf.windows(SAMPLE, length=64, fields=["temperature"], devices=sorted(by_device)[:2])
    first = ds[5]
    clone = pickle.loads(pickle.dumps(ds))
    assert clone.cache_info()["blocks"] == 0
    assert np.array_equal(clone[5], first)
    with pytest.raises(tsf.InvalidArgumentError, match="status.*STRING"):
        tsf.windows(SAMPLE, length=10, fields=["status"])
    with pytest.raises(tsf.InvalidArgumentError, match="no device has a FIELD column 'nope'"):
        tsf.windows(SAMPLE, length=10, fields=["nope"])
    with pytest.raises(tsf.InvalidArgumentError, match="no device"):
        tsf.windows(SAMPLE, length=10, devices=["weather.x.y.z"])
    with pytest.raises(tsf.InvalidArgumentError, match="length"):
        tsf.windows(SAMPLE, length=0)


def test_windows_several_files(split_dir: Path, by_device: dict[str, pa.Table]) -> None:
    ds = tsf.windows(split_dir, length=500, stride=250, fields=["humidity", "energy_wh"])
    for i in range(len(ds)):
        dev, pos = ds.locate(i)
        assert np.array_equal(ds[i], window_ref(by_device[dev], ["humidity", "energy_wh"], pos, 500), equal_nan=True)


def test_windows_tree_model() -> None:
    full = tsf.read_tsfile(TREE)
    names = full.column("device").cast(pa.string())
    ds = tsf.windows(TREE, length=20, stride=7, fields=["temp"], block_rows=30)  # blocks by time range
    assert set(ds.devices) == {"root.plant.line1.press", "root.plant.line2.press"}
    for i in range(len(ds)):
        dev, pos = ds.locate(i)
        rows = full.filter(pc.equal(names, dev))
        assert np.array_equal(ds[i], window_ref(rows, ["temp"], pos, 20), equal_nan=True), (i, dev, pos)
    counts = ds.window_counts()
    for dev, c in counts.items():
        rows = int(pc.sum(pc.equal(names, dev)).as_py())
        assert c == (rows - 20) // 7 + 1


def test_windows_small_cache_and_device_groups(monkeypatch: pytest.MonkeyPatch, by_device: dict[str, pa.Table]) -> None:
    """A cache smaller than the table (blocks evicted) and device groups read in parts."""
    from datafusion_tsfile import series

    monkeypatch.setattr(series, "_MAX_DEVICES", 4)
    fields = ["temperature", "humidity", "pressure", "online"]
    cache = 8_000_000  # the four fields of the sample take 40 MB
    ds = tsf.windows(SAMPLE, length=100, stride=97, fields=fields, cache_bytes=cache, dtype="float32")
    rng = np.random.default_rng(11)
    for i in [int(i) for i in rng.permutation(len(ds))[:80]]:
        dev, pos = ds.locate(i)
        expect = window_ref(by_device[dev], fields, pos, 100).astype(np.float32)
        assert np.array_equal(ds[i], expect, equal_nan=True), (i, dev, pos)
    info = ds.cache_info()
    assert info["bytes"] <= cache and info["reads"] > 3
