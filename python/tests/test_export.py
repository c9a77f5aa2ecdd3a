"""export_parquet: the Parquet file holds exactly the rows read_tsfile returns; progress is
reported (rows never go back, the last report is the total); a callback that raises stops
the export and leaves no file; codecs and metadata()."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import datafusion_tsfile as tsf
from conftest import canonical


def test_export_equals_read(sample: str, tmp_path: Path) -> None:
    out = tmp_path / "sample.parquet"
    reports: list[tuple[int, int | None, int]] = []
    rows = tsf.export_parquet(sample, out, progress=lambda r, t, b: reports.append((r, t, b)))
    assert rows == 1_006_239
    assert not (tmp_path / "sample.parquet.partial").exists()
    back = pq.read_table(out)
    assert back.num_rows == rows
    read = tsf.read_tsfile(sample)
    assert back.column_names == read.column_names
    back, read = canonical(back), canonical(read)
    for name in read.column_names:
        assert back[name].equals(read[name]), name
    # progress: at least the final report, monotone, ending at the total
    assert reports, "no progress reported"
    assert reports[-1][0] == rows and reports[-1][1] == rows
    assert all(a[0] <= b[0] and a[2] <= b[2] for a, b in zip(reports, reports[1:]))


def test_export_options_and_codecs(data_dir: Path, tmp_path: Path) -> None:
    src = str(data_dir / "encrypted" / "aes128_level2.tsfile")
    for codec in ("zstd", "zstd(9)", "gzip", "lz4_raw", "none"):
        out = tmp_path / f"e-{codec}.parquet"
        assert tsf.export_parquet(src, out, compression=codec, master_key="tsfile-rs-master") == 5
        assert pq.read_table(out).num_rows == 5
    with pytest.raises(tsf.InvalidArgumentError, match="compression"):
        tsf.export_parquet(src, tmp_path / "x.parquet", compression="bzip9", master_key="tsfile-rs-master")


def test_failing_callback_stops_and_cleans_up(sample: str, tmp_path: Path) -> None:
    out = tmp_path / "stopped.parquet"

    def stop(rows: int, total: int | None, nbytes: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tsf.export_parquet(sample, out, progress=stop)
    assert not out.exists()
    assert not (tmp_path / "stopped.parquet.partial").exists()


def test_text_progress(sample: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = tsf.export_parquet(sample, tmp_path / "p.parquet", progress=True)
    assert rows == 1_006_239
    err = capsys.readouterr().err
    assert "1,006,239" in err


def test_metadata(sample: str) -> None:
    meta = tsf.metadata(sample)
    assert meta.num_rows == 2700  # 300 devices x 9 columns (time and 8 fields)
    assert set(meta.column("table").to_pylist()) == {"weather"}
    rows = [r for r in meta.to_pylist() if r["device"] == "weather.north.north-site-0.ws-north-0-0"]
    assert {r["measurement"] for r in rows} >= {"time", "temperature", "status"}
    time_row = next(r for r in rows if r["measurement"] == "time")
    read = tsf.read_tsfile(sample, devices=[("north", "north-site-0", "ws-north-0-0")], columns=["time"])
    assert time_row["point_count"] == read.num_rows


def test_metadata_columns(sample: str) -> None:
    # A projection without encoding/compression skips the chunk headers; the columns it keeps
    # equal the full read's.
    cols = ["device", "measurement", "aligned", "point_count", "start_time", "end_time"]
    light = tsf.metadata(sample, columns=cols)
    assert light.column_names == cols
    assert light.to_pylist() == tsf.metadata(sample).select(cols).to_pylist()
    with pytest.raises(tsf.InvalidArgumentError, match="no metadata column 'nope'"):
        tsf.metadata(sample, columns=["device", "nope"])
