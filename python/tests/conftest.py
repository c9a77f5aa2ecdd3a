"""Shared fixtures: the repository's sample and test files, and the `tsfile` binary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SAMPLE = ROOT / "data" / "sample.tsfile"


@pytest.fixture(scope="session")
def sample() -> str:
    """data/sample.tsfile: table `weather`, 300 devices (region, site, device), 1,006,239 rows."""
    return str(SAMPLE)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data of the repository."""
    return DATA


@pytest.fixture(scope="session")
def tsfile_bin() -> str:
    """The `tsfile` CLI of this build (python/ci.sh sets TSFILE_BIN)."""
    path = os.environ.get("TSFILE_BIN") or shutil.which("tsfile")
    if not path or not Path(path).exists():
        pytest.fail("TSFILE_BIN is not set to the tsfile binary (python/ci.sh sets it)")
    return path


def canonical(table: pa.Table) -> pa.Table:
    """`table` with TAG columns as plain strings, sorted by its TAG columns and time: reads
    promise rows device by device (each in time order), not which device comes first."""
    keys = []
    for i, field in enumerate(table.schema):
        category = (field.metadata or {}).get(b"tsfile.category")
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.with_type(pa.string()), table.column(i).cast(pa.string()))
        if category == b"TAG" or (category is None and field.name in ("region", "site", "device")):
            keys.append((field.name, "ascending"))
    keys.append(("time", "ascending"))
    return table.sort_by(keys)
