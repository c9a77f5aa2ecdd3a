"""IoTDB's SQL habits from Python: integers compared with the time column are epoch values
in its unit, and a tree-model file whose devices fall under several path prefixes reads as
one table aligned by device."""

from __future__ import annotations

import pytest

import datafusion_tsfile as tsf

from conftest import ROOT

SAMPLE = ROOT / "data" / "sample.tsfile"
LO, HI = 1_704_100_000_000, 1_704_150_000_000


@pytest.mark.parametrize(
    "integer,timestamp",
    [
        (f"time > {LO}", f"time > to_timestamp_millis({LO})"),
        (f"time BETWEEN {LO} AND {HI}", f"time BETWEEN to_timestamp_millis({LO}) AND to_timestamp_millis({HI})"),
        ("time IN (1704067200432, 1704292139991)", "time IN (to_timestamp_millis(1704067200432), to_timestamp_millis(1704292139991))"),
        (f"{HI} >= time", f"to_timestamp_millis({HI}) >= time"),
    ],
)
def test_integer_times_are_epoch_milliseconds(integer: str, timestamp: str) -> None:
    query = "SELECT count(*) AS n, sum(energy_wh) AS e FROM '{}' WHERE {}"
    got = tsf.sql(query.format(SAMPLE, integer)).to_pylist()
    want = tsf.sql(query.format(SAMPLE, timestamp)).to_pylist()
    assert got == want
    assert got[0]["n"] > 0


def test_tree_file_with_several_prefixes_reads_as_one_table() -> None:
    path = ROOT / "tests/data/corpus/files/tree_chunk_groups.tsfile"
    table = tsf.read_tsfile(str(path))
    assert {"time", "device"} <= set(table.column_names)
    devices = set(table["device"].cast("string").to_pylist())
    assert len(devices) >= 3
    counts = tsf.sql(f"SELECT device, count(*) AS n FROM '{path}' GROUP BY device ORDER BY device").to_pylist()
    assert sum(r["n"] for r in counts) == table.num_rows
    # Each prefix alone (its devices as `metadata` lists them) gives those devices' rows.
    meta = tsf.metadata(str(path)).to_pylist()
    by_device = {r["device"]: r["n"] for r in counts}
    prefixes = {r["table"] for r in meta}
    assert len(prefixes) >= 2
    for prefix in prefixes:
        mine = {r["device"] for r in meta if r["table"] == prefix}
        one = tsf.read_tsfile(str(path), table=prefix)
        assert set(one["device"].cast("string").to_pylist()) == mine, prefix
        assert one.num_rows == sum(by_device[d] for d in mine), prefix
