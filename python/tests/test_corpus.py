"""Conformance of the Python API on every vendored TsFile with known contents.

Mirrors the Rust conformance tests (``tests/integration/conformance.rs``, ``sql.rs``,
``sql_tree.rs``, ``java.rs``, ``v3.rs`` and ``corrupt.rs``) through ``read_tsfile``:

* ``tests/data/corpus``: every table of every table-model file and every device of every
  tree-model file is read and compared cell by cell with its ``expected/<name>/*.jsonl``
  file: row counts, every value (floats by their IEEE-754 bits, so NaN payloads, ``-0.0``
  and subnormals count), nulls, blobs, dates, TAG values, and the ``tsfile.category`` /
  ``tsfile.type`` field metadata. ATTRIBUTE columns must read back all null. Tree devices
  are read from the table named after their first DeviceID segment with
  ``devices=[(path,)]`` (the Rust SQL test's ``WHERE device = ...``); measurements the
  device does not have must be null. ``reader_hints`` of the manifest become options.
* ``tests/data/java``: the Java-written files against their ``.expected.json``.
* ``tests/data/v3``: the version-3 fixture's complete contents as the Java tests state them.
* ``tests/data/corrupt``: each hostile file must fail with the exception class of the error
  kind ``corrupt.rs`` asserts, and the message must name the file and the defect.

Times are compared as raw integers (``time_unit="raw"``). Rows are compared in the order
the Rust SQL tests impose: by the TAG values (null first, then by UTF-8 bytes), then time.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pytest

import datafusion_tsfile as tsf

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
CORPUS = DATA / "corpus"
JAVA = DATA / "java"
V3_FIXTURE = DATA / "v3" / "v3TsFile.tsfile"
CORRUPT = DATA / "corrupt"

CORPUS_MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text(encoding="utf-8"))
CORPUS_ENTRIES = CORPUS_MANIFEST["files"]
JAVA_MANIFEST = json.loads((JAVA / "MANIFEST.json").read_text(encoding="utf-8"))
JAVA_ENTRIES = JAVA_MANIFEST["files"]

Row = list[Any]
Converter = Callable[[pa.Array], list[Any]]


# ---------------------------------------------------------------------------------------
# Value normalisation: an Arrow column as the values of an expected file's JSON.
# ---------------------------------------------------------------------------------------


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Days since 1970-01-01 -> (year, month, day), proleptic Gregorian, any year."""
    z = days + 719_468
    era = (z if z >= 0 else z - 146_096) // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def float_bits(arr: pa.Array) -> list[int | None]:
    """The IEEE-754 bit patterns of a float32/float64 array (null stays None); read through
    an integer view so NaN payloads survive."""
    unsigned = pa.uint32() if pa.types.is_float32(arr.type) else pa.uint64()
    return arr.view(unsigned).to_pylist()


def date_days(arr: pa.Array) -> list[int | None]:
    """A date32 array as days since the epoch (no datetime.date range limit)."""
    return arr.cast(pa.int32()).to_pylist()


def common_values(arr: pa.Array) -> list[Any]:
    """Values written the same way in both expected formats: booleans, integers, strings
    (TAG dictionaries decoded), blobs as lower-case hex."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        return arr.to_pylist()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return arr.to_pylist()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return [None if v is None else v.hex() for v in arr.to_pylist()]
    raise AssertionError(f"unexpected Arrow type {t} (times and TIMESTAMPs should be raw Int64)")


def corpus_values(arr: pa.Array) -> list[Any]:
    """The corpus JSONL convention: FLOAT "f32:<8 hex>", DOUBLE "f64:<16 hex>", DATE YYYYMMDD."""
    t = arr.type
    if pa.types.is_float32(t):
        return [None if b is None else f"f32:{b:08x}" for b in float_bits(arr)]
    if pa.types.is_float64(t):
        return [None if b is None else f"f64:{b:016x}" for b in float_bits(arr)]
    if pa.types.is_date32(t):
        out: list[Any] = []
        for d in date_days(arr):
            if d is None:
                out.append(None)
            else:
                y, m, day = civil_from_days(d)
                out.append(y * 10_000 + m * 100 + day)
        return out
    return common_values(arr)


def java_values(arr: pa.Array) -> list[Any]:
    """The Java expected.json convention: FLOAT "0x<8 hex>", DOUBLE "0x<16 hex>", DATE "yyyy-mm-dd"."""
    t = arr.type
    if pa.types.is_float32(t):
        return [None if b is None else f"0x{b:08x}" for b in float_bits(arr)]
    if pa.types.is_float64(t):
        return [None if b is None else f"0x{b:016x}" for b in float_bits(arr)]
    if pa.types.is_date32(t):
        return [None if d is None else "{:04d}-{:02d}-{:02d}".format(*civil_from_days(d)) for d in date_days(arr)]
    return common_values(arr)


def rows_of(table: pa.Table, convert: Converter) -> list[Row]:
    """Every row of `table`, each cell converted by `convert`."""
    columns = [convert(table.column(i).combine_chunks()) for i in range(table.num_columns)]
    return [list(row) for row in zip(*columns)] if columns else []


def column_of(table: pa.Table, name: str, convert: Converter) -> list[Any]:
    return convert(table.column(name).combine_chunks())


# ---------------------------------------------------------------------------------------
# Comparison.
# ---------------------------------------------------------------------------------------


def same(got: Any, want: Any) -> bool:
    """Cells equal, type included (so True never equals 1); ints compare exactly."""
    return type(got) is type(want) and got == want


def tag_time_key(tag_positions: list[int]) -> Callable[[Row], tuple]:
    """Sort key of a row [time, ...]: its TAG values (null first, strings by code point,
    which is UTF-8 byte order), then time."""

    def key(row: Row) -> tuple:
        tags = tuple((0, "") if row[i] is None else (1, row[i]) for i in tag_positions)
        return tags, row[0]

    return key


def assert_rows_equal(what: str, names: list[str], got: list[Row], want: list[Row]) -> None:
    """Every row and every cell equal; the message counts mismatches per column."""
    assert len(got) == len(want), f"{what}: {len(got)} rows, expected {len(want)}"
    problems = []
    for c, name in enumerate(names):
        bad = [(r, g[c], w[c]) for r, (g, w) in enumerate(zip(got, want)) if not same(g[c], w[c])]
        if bad:
            r, g, w = bad[0]
            problems.append(
                f"{what}/{name}: {len(bad)} of {len(want)} cells differ; "
                f"first: row {r} (time {want[r][0]}): got {g!r}, want {w!r}"
            )
    assert not problems, "\n".join(problems)


def assert_field_metadata(what: str, field: pa.Field, category: str, ts_type: str | None) -> None:
    """The field carries `tsfile.category` (and, unless None, `tsfile.type`)."""
    meta = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    assert meta.get("tsfile.category") == category, f"{what}/{field.name}: metadata {meta}, want category {category}"
    if ts_type is not None:
        assert meta.get("tsfile.type") == ts_type, f"{what}/{field.name}: metadata {meta}, want type {ts_type}"


def read_jsonl(path: Path) -> tuple[dict[str, Any], list[Row]]:
    """An expected file of the corpus: the header object and the rows."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    header = json.loads(lines[0])
    return header, [json.loads(line) for line in lines[1:]]


# ---------------------------------------------------------------------------------------
# tests/data/corpus
# ---------------------------------------------------------------------------------------


def corpus_options(entry: dict[str, Any]) -> dict[str, str]:
    """Raw times, plus what the manifest's reader hints say (tree_time_plain's time encoding)."""
    options = {"time_unit": "raw"}
    hint = (entry.get("reader_hints") or {}).get("nonaligned_time_encoding")
    if hint is not None:
        options["nonaligned_time_encoding"] = hint
    return options


def check_corpus_table(path: Path, entry: dict[str, Any], exp: dict[str, Any]) -> int:
    """One table of a table-model file; returns the rows compared."""
    table = exp["table"]
    what = f"{entry['name']}/{table}"
    header, want = read_jsonl(CORPUS / exp["path"])
    assert header["kind"] == "table" and header["table"] == table, what
    assert header["row_count"] == exp["rows"] == len(want), f"{what}: expected file is inconsistent"
    columns = header["columns"]
    names = [c["name"] for c in columns]
    attributes = list(header["attribute_columns"])

    got = tsf.read_tsfile(path, table=table, columns=names + attributes, **corpus_options(entry))
    assert got.column_names == names + attributes, what
    for c, field in zip(columns, got.schema):
        # The time column is INT64 whatever its declared type (TIMESTAMP for a custom one).
        assert_field_metadata(what, field, c["category"], "INT64" if c["category"] == "TIME" else c["type"])
    for name in attributes:
        # ATTRIBUTE values are not stored by the writer: they read back null.
        assert_field_metadata(what, got.schema.field(name), "ATTRIBUTE", None)
        assert got.column(name).null_count == got.num_rows, f"{what}/{name}: attribute values are not null"

    rows = rows_of(got.select(names), corpus_values)
    tags = [i for i, c in enumerate(columns) if c["category"] == "TAG"]
    rows.sort(key=tag_time_key(tags))
    assert_rows_equal(what, names, rows, want)
    return len(rows)


def check_corpus_tree_key(path: Path, entry: dict[str, Any], key: str, exps: list[dict[str, Any]]) -> int:
    """The tree-model table `key` (first DeviceID segment) and each of its devices; returns
    the rows compared."""
    options = corpus_options(entry)
    what = f"{entry['name']}/{key}"
    expected = {exp["device"]: read_jsonl(CORPUS / exp["path"]) for exp in exps}

    # The whole table: exactly the expected devices and rows, and a column per measurement.
    whole = tsf.read_tsfile(path, table=key, **options)
    schema = whole.schema
    assert schema.names[:2] == ["time", "device"], f"{what}: columns {schema.names}"
    assert_field_metadata(what, schema.field("time"), "TIME", "INT64")
    assert_field_metadata(what, schema.field("device"), "TAG", "STRING")
    devices = column_of(whole, "device", common_values)
    assert sorted(set(devices)) == sorted(expected), f"{what}: devices"
    assert whole.num_rows == sum(len(rows) for _, rows in expected.values()), f"{what}: row count"
    measurements = sorted({c["name"] for header, _ in expected.values() for c in header["columns"][1:]})
    assert sorted(schema.names[2:]) == measurements, f"{what}: measurement columns"

    compared = 0
    for exp in exps:
        device = exp["device"]
        header, want = expected[device]
        dwhat = f"{entry['name']}/{device}"
        assert header["kind"] == "device" and header["device"] == device, dwhat
        assert header["segments"] == exp["segments"], dwhat
        assert header["row_count"] == exp["rows"] == len(want), f"{dwhat}: expected file is inconsistent"
        names = [c["name"] for c in header["columns"]]
        assert names[0] == "time", dwhat

        got = tsf.read_tsfile(path, table=key, devices=[(device,)], **options)
        assert got.schema.names == schema.names, f"{dwhat}: columns differ from the whole table's"
        assert column_of(got, "device", common_values) == [device] * got.num_rows, f"{dwhat}: device column"
        for c in header["columns"][1:]:
            assert_field_metadata(dwhat, got.schema.field(c["name"]), "FIELD", c["type"])
        for other in sorted(set(schema.names[2:]) - set(names)):
            # A measurement of another device: the device has no such series.
            assert got.column(other).null_count == got.num_rows, f"{dwhat}: '{other}' is not null"

        rows = rows_of(got.select(names), corpus_values)
        rows.sort(key=tag_time_key([]))
        assert_rows_equal(dwhat, names, rows, want)
        compared += len(rows)
    return compared


@pytest.mark.parametrize("entry", CORPUS_ENTRIES, ids=[Path(e["file"]).name for e in CORPUS_ENTRIES])
def test_corpus_file(entry: dict[str, Any]) -> None:
    path = CORPUS / entry["file"]
    expected = entry["expected"]
    if not expected:
        # The empty file (a writer opened and closed): it opens, holds no device and no
        # table, so there is nothing to read.
        assert entry["tables"] == [] and entry["device_count"] == 0
        assert tsf.metadata(path).num_rows == 0
        with pytest.raises(tsf.InvalidArgumentError, match="no table"):
            tsf.read_tsfile(path, time_unit="raw")
        return

    compared = 0
    if entry["model"] == "table":
        for exp in expected:
            compared += check_corpus_table(path, entry, exp)
    else:
        assert entry["model"] == "tree"
        by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for exp in expected:
            by_key[exp["segments"][0]].append(exp)
        for key, exps in sorted(by_key.items()):
            compared += check_corpus_tree_key(path, entry, key, exps)
    assert compared == sum(exp["rows"] for exp in expected)


def test_corpus_manifest_lists_every_file() -> None:
    """No TsFile of the corpus escapes the parametrized test above."""
    on_disk = sorted(p.name for p in (CORPUS / "files").glob("*.tsfile"))
    listed = sorted(Path(e["file"]).name for e in CORPUS_ENTRIES)
    assert on_disk == listed
    assert len(listed) == 37


# ---------------------------------------------------------------------------------------
# tests/data/java
# ---------------------------------------------------------------------------------------


def java_expected(entry: dict[str, Any]) -> dict[str, Any]:
    return json.loads((JAVA / entry["expected_json"]).read_text(encoding="utf-8"))


def check_java_table(path: Path, entry: dict[str, Any], t: dict[str, Any]) -> None:
    table = t["table"]
    what = f"{Path(entry['file']).stem}/{table}"
    columns = t["columns"]
    names = [c["name"] for c in columns]
    want = [list(r) for r in t["rows"]]
    assert len(want) == t["row_count"] == entry["row_counts"][table], f"{what}: expected file is inconsistent"

    schema = tsf.TsFileTable(path, table=table, time_unit="raw").schema
    time = schema.field(0).name
    got = tsf.read_tsfile(path, table=table, columns=[time, *names], time_unit="raw")
    assert_field_metadata(what, got.schema.field(0), "TIME", "INT64")
    for c in columns:
        assert_field_metadata(what, got.schema.field(c["name"]), c["category"], c["type"])

    # Rows of both sides sorted by TAG values then time (expected rows are grouped by device).
    key = tag_time_key([i + 1 for i, c in enumerate(columns) if c["category"] == "TAG"])
    rows = sorted(rows_of(got, java_values), key=key)
    assert_rows_equal(what, [time, *names], rows, sorted(want, key=key))


def check_java_device(path: Path, entry: dict[str, Any], d: dict[str, Any]) -> None:
    device = d["device"]
    what = f"{Path(entry['file']).stem}/{device}"
    key = d["java_device_id_table_name"]
    assert ".".join(d["java_device_id_segments"]) == device, what
    assert d["java_device_id_segments"][0] == key, what
    names = [c["name"] for c in d["columns"]]
    want = [list(r) for r in d["rows"]]
    assert len(want) == d["row_count"], f"{what}: expected file is inconsistent"

    got = tsf.read_tsfile(path, table=key, devices=[(device,)], columns=["time", "device", *names], time_unit="raw")
    assert column_of(got, "device", common_values) == [device] * got.num_rows, f"{what}: device column"
    for c in d["columns"]:
        assert_field_metadata(what, got.schema.field(c["name"]), "FIELD", c["type"])
    order = tag_time_key([])
    rows = sorted(rows_of(got.drop_columns(["device"]), java_values), key=order)
    assert_rows_equal(what, ["time", *names], rows, sorted(want, key=order))


@pytest.mark.parametrize("entry", JAVA_ENTRIES, ids=[e["file"] for e in JAVA_ENTRIES])
def test_java_file(entry: dict[str, Any]) -> None:
    path = JAVA / entry["file"]
    expected = java_expected(entry)
    assert expected["file"] == entry["file"] and expected["model"] == entry["model"]
    if entry["model"] == "table":
        tables = expected["tables"]
        assert sorted(t["table"] for t in tables) == sorted(entry["row_counts"])
        for t in tables:
            check_java_table(path, entry, t)
    else:
        devices = expected["devices"]
        assert devices
        for d in devices:
            check_java_device(path, entry, d)


def test_java_manifest_lists_every_file() -> None:
    on_disk = sorted(p.name for p in JAVA.glob("*.tsfile"))
    assert on_disk == sorted(e["file"] for e in JAVA_ENTRIES)
    assert len(on_disk) == 5


# ---------------------------------------------------------------------------------------
# tests/data/v3
# ---------------------------------------------------------------------------------------


def test_v3_fixture() -> None:
    """v3TsFile.tsfile: devices d1 and d2 (tables of their own); d1 one row at 10000 with
    s1 = 5.0 (FLOAT) and s2 = 5 (INT32); d2's s1 chunk holds no point."""
    path = V3_FIXTURE
    md = tsf.metadata(path)
    assert set(md.column("version").to_pylist()) == {3}
    assert sorted(set(md.column("device").to_pylist())) == ["d1", "d2"]

    d1 = tsf.read_tsfile(path, table="d1", time_unit="raw")
    assert d1.column_names == ["time", "device", "s1", "s2"]
    assert_field_metadata("v3/d1", d1.schema.field("s1"), "FIELD", "FLOAT")
    assert_field_metadata("v3/d1", d1.schema.field("s2"), "FIELD", "INT32")
    assert_rows_equal("v3/d1", d1.column_names, rows_of(d1, corpus_values), [[10000, "d1", "f32:40a00000", 5]])

    d2 = tsf.read_tsfile(path, table="d2", time_unit="raw")
    assert d2.column_names == ["time", "device", "s1"]
    assert d2.num_rows == 0


# ---------------------------------------------------------------------------------------
# tests/data/corrupt: files that must fail
# ---------------------------------------------------------------------------------------

# file stem -> (exception class, fragment of the message), from the error kinds of
# tests/integration/corrupt.rs: Corrupt and Decompress -> CorruptFileError, Encrypted ->
# EncryptionError.
CORRUPT_CASES: dict[str, tuple[type[tsf.TsFileError], str]] = {
    "bad_magic": (tsf.CorruptFileError, "magic bytes 'TsFile' missing"),
    "wrong_version": (tsf.CorruptFileError, "device index root"),
    "metadata_length_out_of_range": (tsf.CorruptFileError, "does not fit"),
    "meta_offset_not_separator": (tsf.CorruptFileError, "not the 0x02 separator"),
    "index_offsets_not_monotonic": (tsf.CorruptFileError, "not monotonic"),
    "index_shared_nodes": (tsf.CorruptFileError, "shared or overlapping nodes"),
    "chunk_past_end": (tsf.CorruptFileError, "past the data section end"),
    "page_past_chunk": (tsf.CorruptFileError, "runs past the end of its chunk"),
    "decompressed_size_mismatch": (tsf.CorruptFileError, "LZ4"),
    "count_mismatch": (tsf.CorruptFileError, "statistics count"),
    "overlong_varint": (tsf.CorruptFileError, "longer than 5 bytes"),
    "negative_length": (tsf.CorruptFileError, "negative length -2"),
    "invalid_utf8_name": (tsf.CorruptFileError, "invalid UTF-8"),
    "decompression_bomb": (tsf.CorruptFileError, "xz stream declares 10485760 bytes, page declares 88"),
    "dictionary_index_out_of_range": (tsf.CorruptFileError, "out of range"),
    "encrypted_level2_tree": (tsf.EncryptionError, "encryptLevel 2"),
    "encrypted_header_table": (tsf.EncryptionError, "Page-AEAD"),
    "encrypted_header_tree": (tsf.EncryptionError, "Page-AEAD"),
    "encrypt_level_unknown": (tsf.CorruptFileError, "unknown level '3'"),
}


def read_everything(path: Path) -> int:
    """Open `path` and read every table (tree prefixes included) in full, as a user would;
    returns the rows read."""
    rows = 0
    for table in sorted(set(tsf.metadata(path).column("table").to_pylist())):
        rows += tsf.read_tsfile(path, table=table).num_rows
    return rows


@pytest.mark.parametrize("name", sorted(CORRUPT_CASES), ids=[f"{n}.tsfile" for n in sorted(CORRUPT_CASES)])
def test_corrupt_file_fails(name: str) -> None:
    cls, fragment = CORRUPT_CASES[name]
    with pytest.raises(tsf.TsFileError) as info:
        rows = read_everything(CORRUPT / f"{name}.tsfile")
        pytest.fail(f"{name}: read {rows} rows without an error")
    err = info.value
    assert type(err) is cls, f"{name}: {type(err).__name__}, expected {cls.__name__}: {err}"
    assert fragment in str(err), f"{name}: '{fragment}' not in: {err}"
    assert f"{name}.tsfile" in str(err), f"{name}: the message does not name the file: {err}"


def test_corrupt_cases_cover_every_file() -> None:
    assert sorted(p.stem for p in CORRUPT.glob("*.tsfile")) == sorted(CORRUPT_CASES)
