"""TsFileTable and TsFileTableFactory in datafusion-python 55: SQL answers equal to those
of the `tsfile` CLI (the same engine with every TsFile rule) on the same file, filter
pushdown visible in the plan, and `CREATE EXTERNAL TABLE … STORED AS TSFILE`."""

from __future__ import annotations

import json
import math
import subprocess

import pyarrow as pa
import pytest
from datafusion import SessionContext

import datafusion_tsfile as tsf

QUERIES = [
    # per-region totals
    "SELECT region, count(*) AS n, CAST(max(time) AS BIGINT) AS ts, round(avg(temperature), 3) AS a "
    "FROM t GROUP BY region ORDER BY region",
    # threshold on a FIELD
    "SELECT device, count(*) AS n FROM t WHERE temperature > 25 GROUP BY device ORDER BY device",
    # latest time and its value per device
    "SELECT device, CAST(max(time) AS BIGINT) AS last, last_value(temperature ORDER BY time) AS v "
    "FROM t GROUP BY device ORDER BY device",
    # daily buckets
    "SELECT CAST(date_bin(INTERVAL '1 day', time) AS BIGINT) AS day, count(*) AS n, "
    "min(pressure) AS lo, max(pressure) AS hi, sum(energy_wh) AS e FROM t GROUP BY 1 ORDER BY 1",
    # TAG and time range
    "SELECT count(*) AS n, min(humidity) AS h, max(status) AS s FROM t "
    "WHERE region = 'east' AND time >= '2024-01-02' AND time < '2024-01-02T12:00:00'",
    # a device's rows, in order, with every type
    "SELECT CAST(time AS BIGINT) AS ts, temperature, humidity, pressure, energy_wh, online, status, "
    "CAST(day AS VARCHAR) AS day, CAST(last_calibration AS BIGINT) AS cal FROM t "
    "WHERE device = 'ws-north-0-0' AND site = 'north-site-0' ORDER BY ts LIMIT 50",
    # nothing matches
    "SELECT count(*) AS n FROM t WHERE temperature > 1000",
]


def cli_rows(tsfile_bin: str, path: str, sql: str) -> list[dict]:
    out = subprocess.run(
        [tsfile_bin, "sql", "-q", "--format", "json", "-c",
         f"CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION '{path}'", sql],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    return json.loads(out) if out else []


def same(a: object, b: object) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
    return a == b


@pytest.fixture(scope="module")
def ctx(sample: str) -> SessionContext:
    ctx = SessionContext()
    ctx.register_table("t", tsf.TsFileTable(sample))
    return ctx


@pytest.mark.parametrize("sql", QUERIES, ids=[f"q{i}" for i in range(len(QUERIES))])
def test_sql_equals_cli(ctx: SessionContext, sample: str, tsfile_bin: str, sql: str) -> None:
    want = cli_rows(tsfile_bin, sample, sql)
    got = ctx.sql(sql).to_arrow_table().to_pylist()
    assert len(got) == len(want) and len(got) > 0
    for g, w in zip(got, want):
        assert list(g) == list(w)
        # The CLI's JSON leaves out nulls; every other value must be equal.
        for k in g:
            assert same(g[k], w.get(k)), (k, g, w)


def test_filters_reach_the_scan(ctx: SessionContext) -> None:
    plan = ctx.sql("EXPLAIN SELECT count(*) FROM t WHERE region = 'east' AND temperature > 25").to_arrow_table()
    text = "\n".join(str(x) for x in plan.column(1).to_pylist())
    # Both filters are handed to the provider (which prunes devices, chunks and pages with
    # them), and the scan is the library's, across the FFI boundary.
    assert "partial_filters=[t.region = Dictionary(Int32, Utf8(\"east\")), t.temperature > Float64(25)]" in text, text
    assert "FFI_ExecutionPlan: DataSourceExec" in text, text


def test_filters_prune_in_the_scan(ctx: SessionContext, sample: str) -> None:
    # datafusion-python optimizes its plan around the foreign scan, not inside it: the
    # provider pushes the filters into its own scan, which decodes one device of 300.
    query = "SELECT count(*) AS n, max(temperature) AS t FROM t WHERE device = 'ws-north-0-0' AND site = 'north-site-0'"
    plan = ctx.sql(f"EXPLAIN ANALYZE {query}").to_arrow_table()
    text = "\n".join(str(x) for x in plan.column(1).to_pylist())
    assert "devices_pruned=299," in text and "devices_total=300," in text, text
    assert ctx.sql(query).to_pylist() == tsf.sql(query, {"t": sample}).to_pylist()


def test_table_schema_and_repr(sample: str) -> None:
    table = tsf.TsFileTable(sample)
    assert table.schema.names[:4] == ["time", "region", "site", "device"]
    assert table.paths == [sample]
    assert "sample.tsfile" in repr(table)
    assert pa.schema(table) == table.schema


def test_table_options(data_dir) -> None:
    path = str(data_dir / "encrypted" / "aes128_level2.tsfile")
    ctx = SessionContext()
    ctx.register_table("e", tsf.TsFileTable(path, master_key="tsfile-rs-master"))
    rows = ctx.sql("SELECT dev, sum(v) AS v FROM e GROUP BY dev ORDER BY dev").to_pylist()
    assert rows == [{"dev": "d1", "v": 60}, {"dev": "d2", "v": 300}]
    # Without the key the table opens (the footer is plain) and the query fails with the
    # library's message, raised by datafusion-python.
    ctx.register_table("nokey", tsf.TsFileTable(path))
    with pytest.raises(Exception, match="master_key"):
        ctx.sql("SELECT sum(v) FROM nokey").collect()


def test_create_external_table(sample: str, tsfile_bin: str) -> None:
    ctx = SessionContext()
    ctx.register_table_factory("TSFILE", tsf.TsFileTableFactory())
    ctx.sql(f"CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION '{sample}'").collect()
    sql = QUERIES[0].replace("FROM t", "FROM w")
    got = ctx.sql(sql).to_pylist()
    want = cli_rows(tsfile_bin, sample, QUERIES[0])
    assert [list(r.values()) for r in got] == [list(r.values()) for r in want]
    ctx.sql(
        f"CREATE EXTERNAL TABLE w2 STORED AS TSFILE LOCATION '{sample}' OPTIONS ('time_unit' 'raw')"
    ).collect()
    assert ctx.table("w2").schema().field("time").type == pa.int64()


def test_one_table_in_two_sessions(sample: str) -> None:
    table = tsf.TsFileTable(sample)
    counts = []
    for _ in range(2):
        ctx = SessionContext()
        ctx.register_table("t", table)
        counts.append(ctx.sql("SELECT count(*) AS n FROM t WHERE region = 'west'").to_pylist()[0]["n"])
    assert counts == [203081, 203081]


def test_iotdb_data_directory(sample: str, tmp_path) -> None:
    """`layout = iotdb` through the factory: the sample written twice (in order, then again
    out of order) reads once; entry points that read plain files refuse the option."""
    import shutil

    for space, name in [("sequence", "1700000000000-1-0-0.tsfile"), ("unsequence", "1700000000001-2-0-0.tsfile")]:
        part = tmp_path / space / "root.weather" / "1" / "0"
        part.mkdir(parents=True)
        shutil.copyfile(sample, part / name)
    ctx = SessionContext()
    ctx.register_table_factory("TSFILE", tsf.TsFileTableFactory())
    ctx.sql(
        f"CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION '{tmp_path}' OPTIONS ('tsfile.layout' 'iotdb')"
    ).collect()
    got = ctx.sql("SELECT count(*) AS n, count(DISTINCT device) AS d FROM w").to_pylist()
    assert got == [{"n": 1006239, "d": 300}]
    with pytest.raises(Exception, match="this entry point reads plain files"):
        tsf.read_tsfile(str(tmp_path), layout="iotdb")
