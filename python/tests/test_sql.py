"""datafusion_tsfile.sql: the package's own engine. Its answers equal the `tsfile` CLI's and a
datafusion-python session's (which reads every page) on the same file, aggregates are
answered from statistics (visible in the plan), and registered tables keep their options."""

from __future__ import annotations

import pyarrow as pa
import pytest
from datafusion import SessionContext

import datafusion_tsfile as tsf
from test_datafusion import cli_rows, same

# Time-series questions the statistics rule answers.
QUERIES = [
    # latest value and time per device
    "SELECT device, CAST(max(time) AS BIGINT) AS last, last_value(temperature ORDER BY time) AS v, "
    "first_value(pressure ORDER BY time) AS p0 FROM t GROUP BY device ORDER BY device",
    # extremes and counts per region over a time range
    "SELECT region, count(*) AS n, count(humidity) AS nh, min(temperature) AS lo, max(temperature) AS hi, "
    "sum(energy_wh) AS e FROM t WHERE time >= '2024-01-02' AND time < '2024-01-03T06:00:00' "
    "GROUP BY region ORDER BY region",
    # hourly buckets of one site
    "SELECT CAST(date_bin(INTERVAL '1 hour', time) AS BIGINT) AS h, count(*) AS n, max(pressure) AS hi, "
    "min(status) AS s FROM t WHERE site = 'north-site-0' GROUP BY 1 ORDER BY 1",
    # the whole table
    "SELECT count(*) AS n, CAST(min(time) AS BIGINT) AS t0, CAST(max(time) AS BIGINT) AS t1, "
    "max(online) AS o FROM t",
]


def rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


def assert_same_rows(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want) and len(got) > 0
    for g, w in zip(got, want):
        assert list(g) == list(w)
        for k in g:
            # The CLI's JSON leaves out nulls; every other value must be equal.
            assert same(g[k], w.get(k)), (k, g, w)


@pytest.mark.parametrize("query", QUERIES, ids=[f"q{i}" for i in range(len(QUERIES))])
def test_equals_cli_and_datafusion_python(sample: str, tsfile_bin: str, query: str) -> None:
    got = rows(tsf.sql(query, {"t": sample}))
    assert_same_rows(got, cli_rows(tsfile_bin, sample, query))
    # The unoptimized path: a datafusion-python session decodes every page it needs.
    ctx = SessionContext()
    ctx.register_table("t", tsf.TsFileTable(sample))
    assert_same_rows(got, ctx.sql(query).to_arrow_table().to_pylist())


def test_aggregates_come_from_statistics(sample: str) -> None:
    plan = tsf.sql(f"EXPLAIN SELECT device, max(temperature) FROM '{sample}' GROUP BY device")
    text = "\n".join(str(x) for x in plan.column("plan").to_pylist())
    assert "StatisticsAggregateExec" in text, text
    # Off for a table: DataFusion's own aggregation over the scan, the same answer.
    off = tsf.TsFileTable(sample, statistics_aggregates=False)
    query = "SELECT device, max(temperature) AS m FROM t GROUP BY device ORDER BY device"
    text = "\n".join(str(x) for x in tsf.sql(f"EXPLAIN {query}", {"t": off}).column("plan").to_pylist())
    assert "StatisticsAggregateExec" not in text and "AggregateExec" in text, text
    assert tsf.sql(query, {"t": off}).to_pylist() == tsf.sql(query, {"t": sample}).to_pylist()


def test_location_in_query(sample: str) -> None:
    got = tsf.sql(f"SELECT count(*) AS n FROM '{sample}' WHERE region = 'west'")
    assert got.to_pylist() == [{"n": 203081}]


def test_registered_table_keeps_its_options(data_dir) -> None:
    path = str(data_dir / "encrypted" / "aes128_level2.tsfile")
    table = tsf.TsFileTable(path, master_key="tsfile-rs-master")
    got = tsf.sql("SELECT dev, sum(v) AS v, max(v) AS m FROM e GROUP BY dev ORDER BY dev", {"e": table})
    assert got.to_pylist() == [{"dev": "d1", "v": 60, "m": 30}, {"dev": "d2", "v": 300, "m": 200}]
    # Without the key the values cannot be read; the index's statistics are plain (as the
    # writer stores them), so an aggregate they answer needs no key, as in the CLI.
    with pytest.raises(tsf.EncryptionError, match="master_key"):
        tsf.sql("SELECT v FROM e", {"e": path})
    assert tsf.sql("SELECT sum(v) AS s FROM e", {"e": path}).to_pylist() == [{"s": 360}]


def test_metadata_function_and_empty_result(sample: str) -> None:
    meta = tsf.sql(f"SELECT count(DISTINCT device) AS d FROM tsfile_metadata('{sample}')")
    assert meta.to_pylist() == [{"d": 300}]
    none = tsf.sql(f"SELECT time, temperature FROM '{sample}' WHERE temperature > 1000")
    assert none.num_rows == 0 and none.schema.names == ["time", "temperature"]


def test_errors(sample: str, tmp_path) -> None:
    with pytest.raises(tsf.InvalidArgumentError):
        tsf.sql("SELEC 1")
    with pytest.raises(tsf.InvalidArgumentError, match="nope"):
        tsf.sql(f"SELECT nope FROM '{sample}'")
    with pytest.raises(tsf.TsFileNotFoundError):
        tsf.sql("SELECT * FROM t", {"t": str(tmp_path / "missing.tsfile")})
    bad = tmp_path / "bad.tsfile"
    bad.write_bytes(b"TsFile\x04" + b"\x00" * 64)
    with pytest.raises(tsf.CorruptFileError):
        tsf.sql(f"SELECT count(*) FROM '{bad}'")
