"""Reading from object stores: every entry point on `s3://` (moto's S3 API) and `http://`
(a Range-aware static server) URLs with `storage_options`, the environment as the
fallback, answers equal to those of the local file, credentials never shown, and a clear
error for schemes without a store.

The servers are `tools/test-servers/serve.py`, started here on 127.0.0.1 with this venv's
Python (python/ci.sh installs their requirements)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datafusion import SessionContext

import datafusion_tsfile as tsf

from conftest import ROOT, canonical

SECRET = "S3CRET-do-not-show-9f2c"


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    """The S3 and HTTP endpoints; bucket `iot` holds `py/sample.tsfile` and
    `py/copy/sample-{1,2}.tsfile` (two copies of the sample)."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tools/test-servers/serve.py"), "--http-root", str(ROOT / "data"), "--bucket", "iot"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        urls = json.loads(proc.stdout.readline())
        import boto3  # moto's dependency

        s3 = boto3.client(
            "s3",
            endpoint_url=urls["s3"],
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )
        body = (ROOT / "data/sample.tsfile").read_bytes()
        for key in ("py/sample.tsfile", "py/copy/sample-1.tsfile", "py/copy/sample-2.tsfile"):
            s3.put_object(Bucket="iot", Key=key, Body=body)
        yield urls
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=30)


def s3_options(servers: dict[str, str], secret: str = "test") -> dict[str, Any]:
    return {
        "aws_access_key_id": "test",
        "aws_secret_access_key": secret,
        "aws_region": "us-east-1",
        "aws_endpoint": servers["s3"],
        "aws_allow_http": True,
    }


COLUMNS = ["time", "region", "site", "device", "temperature", "status"]
DEVICES = ["weather.north.north-site-0.ws-north-0-0", "weather.east.east-site-1.ws-east-1-2"]


def local(**kwargs: Any) -> pa.Table:
    return canonical(tsf.read_tsfile(str(ROOT / "data/sample.tsfile"), **kwargs))


def test_read_tsfile_from_s3_and_http(servers: dict[str, str]) -> None:
    want = local(columns=COLUMNS, devices=DEVICES)
    assert want.num_rows > 1000
    s3 = tsf.read_tsfile("s3://iot/py/sample.tsfile", columns=COLUMNS, devices=DEVICES, storage_options=s3_options(servers))
    assert canonical(s3).equals(want)
    http = tsf.read_tsfile(f"{servers['http']}/sample.tsfile", columns=COLUMNS, devices=DEVICES)
    assert canonical(http).equals(want)
    # The whole file, with a time range: row counts and a sum agree.
    whole = tsf.read_tsfile("s3://iot/py/sample.tsfile", storage_options=s3_options(servers))
    assert whole.num_rows == 1_006_239
    start, end = "2024-01-02", "2024-01-03"
    ranged = tsf.read_tsfile(
        f"{servers['http']}/sample.tsfile", columns=["time", "energy_wh"], start=start, end=end
    )
    want = local(columns=["time", "energy_wh"], start=start, end=end)
    assert ranged.num_rows == want.num_rows > 0
    assert pa.compute.sum(ranged["energy_wh"]).as_py() == pa.compute.sum(want["energy_wh"]).as_py()


def test_globs_prefixes_and_batches(servers: dict[str, str]) -> None:
    opts = s3_options(servers)
    want = local(columns=COLUMNS, devices=DEVICES)
    for location in ("s3://iot/py/copy/*.tsfile", "s3://iot/py/copy/"):
        got = tsf.read_tsfile(location, columns=COLUMNS, devices=DEVICES, storage_options=opts)
        assert got.num_rows == 2 * want.num_rows, location
        assert canonical(got).equals(canonical(pa.concat_tables([want, want])))
    with tsf.read_tsfile_batches(f"{servers['http']}/sample.tsfile", columns=COLUMNS, devices=DEVICES) as reader:
        got = reader.read_all()
    assert canonical(got).equals(want)


def test_metadata_sql_and_export(servers: dict[str, str], tmp_path: Path) -> None:
    opts = s3_options(servers)
    meta = tsf.metadata("s3://iot/py/sample.tsfile", storage_options=opts)
    want = tsf.metadata(str(ROOT / "data/sample.tsfile"))
    assert meta.num_rows == want.num_rows > 0
    same = [c for c in want.column_names if c not in ("file", "path")]
    assert meta.select(same).equals(want.select(same))

    query = "SELECT count(*) AS n, max(temperature) AS hi FROM '{}' WHERE region = 'east'"
    got = tsf.sql(query.format("s3://iot/py/sample.tsfile"), storage_options=opts).to_pylist()
    assert got == tsf.sql(query.format(ROOT / "data/sample.tsfile")).to_pylist()
    assert got[0]["n"] > 0
    # A table given by URL, and an opened TsFileTable with its own options.
    table = tsf.TsFileTable("s3://iot/py/sample.tsfile", storage_options=opts)
    got2 = tsf.sql("SELECT count(*) AS n, max(temperature) AS hi FROM w WHERE region = 'east'", {"w": table})
    assert got2.to_pylist() == got

    out = tmp_path / "sample.parquet"
    rows = tsf.export_parquet(f"{servers['http']}/sample.tsfile", out)
    assert rows == 1_006_239
    assert pq.read_metadata(out).num_rows == rows


def test_tsfile_table_in_datafusion_python(servers: dict[str, str]) -> None:
    """The host session knows no S3 store: the table's scan reads through its own."""
    ctx = SessionContext()
    ctx.register_table("remote", tsf.TsFileTable("s3://iot/py/sample.tsfile", storage_options=s3_options(servers)))
    ctx.register_table("here", tsf.TsFileTable(str(ROOT / "data/sample.tsfile")))
    query = (
        "SELECT device, count(*) AS n, sum(energy_wh) AS e, min(time) AS t0 FROM {} "
        "WHERE site = 'north-site-1' AND temperature > 20 GROUP BY device ORDER BY device"
    )
    got = ctx.sql(query.format("remote")).to_arrow_table()
    want = ctx.sql(query.format("here")).to_arrow_table()
    assert got.num_rows == want.num_rows > 0
    assert got.equals(want)
    http = tsf.TsFileTable(f"{servers['http']}/sample.tsfile")
    ctx.register_table("web", http)
    assert ctx.sql(query.format("web")).to_arrow_table().equals(want)
    # CREATE EXTERNAL TABLE over a URL, with the factory's storage options.
    ctx.register_table_factory("TSFILE", tsf.TsFileTableFactory(storage_options=s3_options(servers)))
    ctx.sql("CREATE EXTERNAL TABLE ddl STORED AS TSFILE LOCATION 's3://iot/py/sample.tsfile'")
    assert ctx.sql(query.format("ddl")).to_arrow_table().equals(want)


def test_environment_is_the_fallback(servers: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in s3_options(servers).items():
        monkeypatch.setenv(key.upper(), str(value).lower() if isinstance(value, bool) else str(value))
    got = tsf.read_tsfile("s3://iot/py/sample.tsfile", columns=COLUMNS, devices=DEVICES)
    assert canonical(got).equals(local(columns=COLUMNS, devices=DEVICES))


def test_credentials_never_shown(servers: dict[str, str]) -> None:
    # A server that does not answer: the error names the location, not the secret.
    dead = {**s3_options(servers, secret=SECRET), "aws_endpoint": "http://127.0.0.1:9", "timeout": "2s"}
    with pytest.raises(tsf.TsFileError) as e:
        tsf.read_tsfile("s3://iot/py/sample.tsfile", storage_options={**dead, "max_retries": "0"})
    assert SECRET not in str(e.value)
    # A bad value of a known key, and a misspelt key.
    with pytest.raises(tsf.TsFileError) as e:
        tsf.metadata("s3://iot/py/sample.tsfile", storage_options={"aws_allow_http": SECRET})
    assert SECRET not in str(e.value)
    with pytest.raises(tsf.InvalidArgumentError, match="aws_secret_acess_key") as e:
        tsf.read_tsfile("s3://iot/py/sample.tsfile", storage_options={"aws_secret_acess_key": SECRET})
    assert SECRET not in str(e.value)
    table = tsf.TsFileTable("s3://iot/py/sample.tsfile", storage_options=s3_options(servers, secret=SECRET))
    assert SECRET not in repr(table) and SECRET not in str(table._inner.options)


@pytest.mark.parametrize("url,scheme", [("az://box/a.tsfile", "az"), ("ftp://host/a.tsfile", "ftp")])
def test_schemes_without_a_store(url: str, scheme: str) -> None:
    for call in (tsf.read_tsfile, tsf.metadata, tsf.TsFileTable):
        with pytest.raises(tsf.UnsupportedError) as e:
            call(url)
        message = str(e.value)
        assert f"'{scheme}://'" in message and "\n" not in message, message
        assert "likely caused by a bug" not in message
    with pytest.raises(tsf.UnsupportedError, match=f"'{scheme}://'"):
        tsf.sql(f"SELECT count(*) FROM '{url}'")


def test_public_names_only() -> None:
    names = dir(tsf)
    for private in ("Any", "Callable", "os", "pa", "sys", "Union", "Iterable"):
        assert private not in names
    assert set(tsf.__all__) <= set(names)
    assert "read_tsfile" in names and "TsFileTable" in names
