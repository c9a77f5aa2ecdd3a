"""Series access for machine learning: a catalog of series, random access to one series,
and fixed-length windows for a PyTorch ``DataLoader``.

>>> import datafusion_tsfile as tsf
>>> tsf.list_series("data/sample.tsfile")  # doctest: +SKIP
>>> times, values = tsf.read_series("data/sample.tsfile", "weather.north.north-site-0.ws-north-0-0",
...                                 "temperature", offset=100, limit=50)  # doctest: +SKIP
>>> ds = tsf.windows("data/sample.tsfile", length=256, fields=["temperature", "humidity"])  # doctest: +SKIP
>>> ds[0].shape  # doctest: +SKIP
(256, 2)

* :func:`list_series`: one row per device and FIELD column, from the files' metadata only;
* :func:`read_series`: one series by time range and/or by position, as NumPy arrays; only
  the devices, chunks and pages that can hold the requested points are read;
* :func:`windows`: a map-style dataset of fixed-length windows over each device's rows
  (:class:`SeriesWindows`), read lazily and cached block by block.

A *series* is one FIELD column of one device; its *points* are the rows of that device
where the column is not null, in time order. A device's *rows* are its timestamps (every
row of a table-model device; for a tree-model device, every timestamp of any of its
measurements). Times are the raw ``int64`` values of the time column, in the table's time
unit (milliseconds unless the file or the ``time_unit`` option says otherwise).

NumPy is needed by these functions (it is imported when they are first called).
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Union

import pyarrow as pa

from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover - hints only
    import numpy as np

    from . import Paths, StorageOptions, TimeBound

__all__ = ["list_series", "read_series", "windows", "SeriesWindows"]

DeviceKey = Union[str, Sequence[Union[str, None]]]


def _pkg() -> Any:
    """The package module (looked up late: the package imports this module)."""
    return sys.modules[__package__ or "datafusion_tsfile"]


def _arrow(stream: Any) -> pa.Table:
    """A stream of the extension as a table (``pa.table`` would import pandas to check
    whether it is a DataFrame: a quarter of a second at the first call)."""
    return pa.RecordBatchReader.from_stream(stream).read_all()


# The metadata columns the catalog uses: without encoding and compression, no chunk header
# is read (the footer and index alone).
_CATALOG_COLUMNS = ["file", "table", "device", "measurement", "category", "data_type", "aligned", "point_count", "start_time", "end_time"]


def _metadata(paths: Paths, storage_options: StorageOptions | None) -> pa.Table:
    """The catalog's columns of ``metadata()``, without the pandas import."""
    tsf = _pkg()
    return _arrow(tsf._internal.metadata(tsf._paths(paths), tsf._storage(storage_options), _CATALOG_COLUMNS))


def _read_tsfile(
    paths: Paths,
    columns: Sequence[str] | None = None,
    start: Any = None,
    end: Any = None,
    devices: Sequence[Any] | None = None,
    storage_options: StorageOptions | None = None,
    **options: Any,
) -> pa.Table:
    """``read_tsfile()`` without the pandas import."""
    tsf = _pkg()
    return _arrow(tsf._read(paths, None, columns, start, end, devices, options, False, storage_options))


def _pc() -> Any:
    """``pyarrow.compute``, imported when first used (it takes a while to import)."""
    import pyarrow.compute

    return pyarrow.compute


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy comes with pandas/torch anyway
        raise ImportError("datafusion_tsfile series access needs numpy: pip install numpy") from e
    return numpy


# --------------------------------------------------------------------------- catalog


class _Device:
    """One device over all the files: identity, rows, files and (built when first asked
    for) its FIELD series."""

    __slots__ = ("table", "device", "tree", "tags", "rows", "files", "_cat", "_idx", "_fields", "_parts")

    def __init__(self, cat: _Catalog, idx: int, table: str, device: str) -> None:
        self.table = table
        self.device = device  # the identifier as metadata() prints it
        self.tree = False
        # TAG values (table model; None until resolved), or (path,) for a tree-model device
        self.tags: tuple[Any, ...] | None = None
        # rows over all files; None when metadata cannot tell (tree, several series)
        self.rows: int | None = None
        self.files: list[str] = []  # the files holding the device
        self._cat = cat
        self._idx = idx
        self._fields: dict[str, list[Any]] | None = None
        self._parts: dict[str, list[tuple[int, int, int, str]]] | None = None

    @property
    def fields(self) -> dict[str, list[Any]]:
        """field -> ``[data_type, points, start, end]`` over the files."""
        if self._fields is None:
            self._cat._field_info(self)
        return self._fields  # type: ignore[return-value]

    @property
    def parts(self) -> dict[str, list[tuple[int, int, int, str]]]:
        """field -> ``[(start, end, points, file)]``, one per file (positional pruning)."""
        if self._parts is None:
            self._cat._field_info(self)
        return self._parts  # type: ignore[return-value]


class _Catalog:
    """Devices and series of a set of files, from ``metadata()`` (aggregated with NumPy:
    files may hold millions of series); each table-model table's schema (for the TAG
    names) is read when first needed, each device's FIELD statistics when first asked."""

    def __init__(self, paths: Paths, storage_options: StorageOptions | None, options: dict[str, Any]) -> None:
        np = _numpy()
        self.paths = paths
        self.storage_options = storage_options
        self.options = dict(options)
        meta = _metadata(paths, storage_options)
        self._meta = meta
        self._columns_py: dict[str, list[Any]] | None = None
        dev_codes, dev_names = _codes(meta.column("device"))
        file_codes, file_names = _codes(meta.column("file"))
        cat_codes, cat_names = _codes(meta.column("category"))
        table_codes, table_names = _codes(meta.column("table"))
        counts = _fixed(meta.column("point_count"), pa.int64(), "int64")
        aligned = _fixed(meta.column("aligned"), pa.uint8(), "uint8")
        n_dev = len(dev_names)
        # Reads name the files of a device only (not every file of a directory) when the
        # metadata's file names are paths that can be read again.
        paths_of = [_file_path(f) for f in file_names]
        self.by_file = all(p is not None for p in paths_of)
        first = np.full(n_dev, len(dev_codes), dtype=np.int64)
        np.minimum.at(first, dev_codes, np.arange(len(dev_codes)))
        dev_table = table_codes[first] if n_dev else np.empty(0, dtype=np.int64)
        tree_tables = {table_names[c] for c in np.unique(table_codes[aligned == 0]).tolist()}
        code = {name: i for i, name in enumerate(cat_names)}
        is_time = cat_codes == code.get("TIME", -1)
        is_field = cat_codes == code.get("FIELD", -1)
        time_rows = np.bincount(dev_codes[is_time], weights=counts[is_time], minlength=n_dev)
        has_time = np.bincount(dev_codes[is_time], minlength=n_dev) > 0
        n_fields = np.bincount(dev_codes[is_field], minlength=n_dev)
        # FIELD rows by device (for the lazy statistics) and the files of each device.
        field_rows = np.flatnonzero(is_field)
        order = np.argsort(dev_codes[field_rows], kind="stable")
        self._field_rows = field_rows[order]
        self._field_start = np.concatenate([[0], np.cumsum(n_fields)]).astype(np.int64)
        pairs = np.unique(dev_codes * max(len(file_names), 1) + file_codes)
        pair_dev = pairs // max(len(file_names), 1)
        pair_file = pairs % max(len(file_names), 1)
        file_start = np.searchsorted(pair_dev, np.arange(n_dev + 1))
        self._measurements = meta.column("measurement")
        self.devices: list[_Device] = []
        tables_py = [table_names[c] for c in dev_table.tolist()]
        rows_py = time_rows.astype(np.int64).tolist()
        has_time_py = has_time.tolist()
        n_fields_py = n_fields.tolist()
        pair_file_py = pair_file.tolist()
        file_start_py = file_start.tolist()
        for i, (name, table) in enumerate(zip(dev_names, tables_py)):
            d = _Device(self, i, table, name)
            d.files = [paths_of[f] or file_names[f] for f in pair_file_py[file_start_py[i] : file_start_py[i + 1]]]
            # Tree-model keys are IoTDB paths (`root.x`); non-aligned series are tree-model.
            d.tree = table in tree_tables or table == "root" or table.startswith("root.")
            if d.tree:
                d.tags = (name,)
                if has_time_py[i]:
                    d.rows = rows_py[i]
                elif n_fields_py[i] == 1:
                    d.rows = next(iter(d.fields.values()))[1]
            else:
                d.rows = rows_py[i]
            self.devices.append(d)
        self.by_name: dict[str, int] = {name: i for i, name in enumerate(dev_names)}
        self._dev_codes = dev_codes
        self._file_paths = [p or f for p, f in zip(paths_of, file_names)]
        self._file_codes = file_codes
        self._tags: dict[str, tuple[list[str], str]] = {}
        self._resolved: set[str] = set()

    def _field_info(self, d: _Device) -> None:
        """Build one device's FIELD statistics from its metadata rows."""
        if self._columns_py is None:
            names = ["measurement", "data_type", "point_count", "start_time", "end_time"]
            self._columns_py = {n: self._meta.column(n).to_pylist() for n in names}
        c = self._columns_py
        fields: dict[str, list[Any]] = {}
        parts: dict[str, list[tuple[int, int, int, str]]] = {}
        rows = self._field_rows[self._field_start[d._idx] : self._field_start[d._idx + 1]].tolist()
        file_codes = self._file_codes
        for r in rows:
            m, dtype, count, start, end = c["measurement"][r], c["data_type"][r], c["point_count"][r], c["start_time"][r], c["end_time"][r]
            f = fields.get(m)
            if f is None:
                fields[m] = [dtype, count, start, end]
            else:
                f[1] += count
                f[2] = min(f[2], start)
                f[3] = max(f[3], end)
            parts.setdefault(m, []).append((start, end, count, self._file_paths[int(file_codes[r])]))
        d._fields = fields
        d._parts = parts

    def field_types(self, idxs: Sequence[int]) -> dict[str, set[str]]:
        """The FIELD columns of the devices ``idxs`` and their types."""
        np = _numpy()
        wanted = np.zeros(len(self.devices), dtype=bool)
        wanted[np.asarray(list(idxs), dtype=np.int64)] = True
        rows = self._field_rows[wanted[self._dev_codes[self._field_rows]]]
        picked = self._meta.select(["measurement", "data_type"]).take(pa.array(rows))
        out: dict[str, set[str]] = {}
        for m, t in zip(picked.column(0).to_pylist(), picked.column(1).to_pylist()):
            out.setdefault(m, set()).add(t)
        return out

    def has_field(self, name: str) -> Any:
        """A boolean per device: does it hold the FIELD column ``name``."""
        np = _numpy()
        mask = _fixed(_pc().equal(self._measurements, name).combine_chunks().fill_null(False), pa.uint8(), "uint8")
        rows = self._field_rows[mask[self._field_rows].astype(bool)]
        out = np.zeros(len(self.devices), dtype=bool)
        out[self._dev_codes[rows]] = True
        return out

    def _columns(self, table: str) -> tuple[list[str], str]:
        """The TAG columns of a table (none for a tree-model table: its `device` column
        holds the path) and its time column, from the schema (read once, from one file
        holding the table: the files of a table share its TAG columns)."""
        info = self._tags.get(table)
        if info is None:
            first = next(d for d in self.devices if d.table == table)
            if first.tree:
                info = ([], "time")
            else:
                schema = self.schema(table, first.files[:1] if self.by_file else None)
                category = {f.name: (f.metadata or {}).get(b"tsfile.category") for f in schema}
                times = [n for n, c in category.items() if c == b"TIME"]
                info = ([n for n, c in category.items() if c == b"TAG"], times[0] if times else "time")
            self._tags[table] = info
        return info

    def tag_names(self, table: str) -> list[str]:
        """The TAG columns of a table (none for a tree-model table)."""
        return self._columns(table)[0]

    def resolve_tags(self, tables: Iterable[str] | None = None) -> None:
        """Fill in the TAG values of the table-model devices (of ``tables``)."""
        wanted = set(tables) if tables is not None else {d.table for d in self.devices}
        ambiguous: dict[str, list[int]] = {}
        for i, d in enumerate(self.devices):
            if d.table not in wanted or d.table in self._resolved or d.tree or d.tags is not None:
                continue
            tags = _split_tags(d.table, d.device, len(self.tag_names(d.table)))
            if tags is None:
                ambiguous.setdefault(d.table, []).append(i)
            else:
                d.tags = tags
        for table, idxs in ambiguous.items():
            self._resolve_tags(table, idxs)
        self._resolved |= wanted

    def tags_of(self, idx: int) -> tuple[Any, ...]:
        """The TAG values of a device (its path for a tree-model one)."""
        d = self.devices[idx]
        if d.tags is None:
            d.tags = _split_tags(d.table, d.device, len(self.tag_names(d.table)))
            if d.tags is None:  # a value holding '.': resolve the table's devices
                self.resolve_tags([d.table])
        return d.tags  # type: ignore[return-value]

    def read_options(self, table: str) -> dict[str, Any]:
        """Reading options for a read of ``table``."""
        return {**self.options, "table": table}

    def schema(self, table: str, files: list[str] | None = None) -> pa.Schema:
        """The Arrow schema of one table over the files (or over ``files``)."""
        tsf = _pkg()
        paths = files or self.paths
        return tsf.TsFileTable(paths, storage_options=self.storage_options, **self.read_options(table)).schema

    def _resolve_tags(self, table: str, idxs: list[int]) -> None:
        """TAG values of devices whose identifier does not split unambiguously (a value
        holding '.'): read the distinct TAG tuples of the table and match them."""
        names = self.tag_names(table)
        t = _read_tsfile(self.paths, columns=names, storage_options=self.storage_options, **self.read_options(table))
        distinct = t.group_by(names).aggregate([]).to_pydict()
        by_name = {self.devices[i].device: i for i in idxs}
        for values in zip(*(distinct[n] for n in names)):
            i = _find_device(by_name, table, values)
            if i is not None:
                self.devices[i].tags = tuple(values)
        for i in idxs:
            d = self.devices[i]
            if d.tags is None:
                d.tags = (d.device,)

    def lookup(self, device: DeviceKey) -> int:
        """The index of a device given as its identifier or a tuple of TAG values."""
        if isinstance(device, str):
            idx = self.by_name.get(device)
            if idx is not None:
                return idx
        elif isinstance(device, Sequence):
            key = tuple(device)
            self.resolve_tags()
            matches = [i for i, d in enumerate(self.devices) if d.tags == key]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                raise InvalidArgumentError(
                    f"device {key!r} is in several tables ({', '.join(sorted(self.devices[i].table for i in matches))}); "
                    "give its identifier as metadata() prints it"
                )
        else:
            raise InvalidArgumentError(f"device: expected a string or a tuple of TAG values, got {type(device).__name__}")
        hint = ", ".join(repr(d.device) for d in self.devices[:3])
        more = f", … ({len(self.devices)} devices)" if len(self.devices) > 3 else ""
        raise InvalidArgumentError(f"no device {device!r} in the files; devices are e.g. {hint}{more} (see list_series())")

    def field(self, idx: int, name: str) -> list[Any]:
        """The FIELD statistics ``[type, points, start, end]`` of one device's series."""
        d = self.devices[idx]
        f = d.fields.get(name)
        if f is None:
            raise InvalidArgumentError(
                f"device {d.device!r} has no FIELD column {name!r}; its fields are {', '.join(sorted(d.fields)) or 'none'}"
            )
        return f

    def files(self, idxs: Iterable[int]) -> Any:
        """The paths to read for some devices: their files, or all the paths given."""
        if not self.by_file:
            return self.paths
        out: list[str] = []
        for i in idxs:
            for f in self.devices[i].files:
                if f not in out:
                    out.append(f)
        return out or self.paths

    def read(
        self,
        idxs: Sequence[int],
        columns: Sequence[str],
        files: list[str] | None = None,
        whole: bool = False,
        **kwargs: Any,
    ) -> pa.Table:
        """``read_tsfile`` of some devices (all of one table), in their files only (or,
        ``whole``, of the whole table in those files); the time column is called ``time``
        in ``columns`` and in the result."""
        table = self.devices[idxs[0]].table
        tags, time_name = self._columns(table)
        tree = self.devices[idxs[0]].tree
        # Devices as TAG values (or paths): identifiers would not tell a null TAG from a
        # "null" string, nor a '.' inside a value from a separator. A table without TAG
        # columns has one device and takes no device filter.
        devices = [self.tags_of(i) for i in idxs] if (tree or tags) and not whole else None
        renamed = [time_name if c == "time" else c for c in columns]
        t = _read_tsfile(
            files or self.files(idxs),
            columns=renamed,
            devices=devices,
            storage_options=self.storage_options,
            **kwargs,
            **self.read_options(table),
        )
        if time_name != "time":
            t = t.rename_columns(list(columns))
        return t


def _codes(column: pa.ChunkedArray) -> tuple[Any, list[Any]]:
    """Dictionary codes (int64, in order of first appearance) and values of a column."""
    np = _numpy()
    if column.num_chunks == 0 or len(column) == 0:
        return np.empty(0, dtype=np.int64), []
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    encoded = _pc().dictionary_encode(array)
    return _fixed(encoded.indices, pa.int64(), "int64"), encoded.dictionary.to_pylist()


def _file_path(name: str) -> str | None:
    """A path to read a file again from its name in ``metadata()`` (a local path, or a
    URL), or None when it cannot be one."""
    if "://" in name:
        return name
    if os.path.isabs(name) and os.path.exists(name):
        return name
    rooted = os.sep + name  # some builds print local paths without their root
    return rooted if os.path.exists(rooted) else None


def _split_tags(table: str, device: str, n: int) -> tuple[str | None, ...] | None:
    """TAG values from a table-model identifier ``table.v1.v2`` (``null`` = a null value;
    trailing absent values are null), or None when the split is ambiguous."""
    if device == table:
        return (None,) * n
    if not device.startswith(table + "."):
        return None
    parts = device[len(table) + 1 :].split(".")
    if len(parts) > n:
        return None
    values = tuple(None if p == "null" else p for p in parts)
    return values + (None,) * (n - len(values))


def _device_name(table: str, values: Sequence[Any]) -> str:
    """A table-model device identifier as metadata() prints it."""
    return ".".join([table] + ["null" if v is None else str(v) for v in values])


def _find_device(by_name: dict[str, int], table: str, values: Sequence[Any]) -> int | None:
    """The entry of ``by_name`` for a device's TAG values (its identifier may leave out
    trailing null values)."""
    vals = list(values)
    while True:
        found = by_name.get(_device_name(table, vals))
        if found is not None or not vals or vals[-1] is not None:
            return found
        vals.pop()


# --------------------------------------------------------------------------- list_series

_LIST_COLUMNS = ("table", "device", "field", "type", "start", "end", "count")


def list_series(
    paths: Paths,
    storage_options: StorageOptions | None = None,
    **options: Any,
) -> pa.Table:
    """One row per device and FIELD column over the files, from metadata alone.

    Args:
        paths: a file, a directory, a glob or a list of them; local or URLs.
        storage_options: object store settings for URL paths (as for ``read_tsfile``).
        **options: reading options (``master_key``, ``time_unit``, …), used to read the
            table schemas for the TAG names.

    Returns:
        A ``pyarrow.Table`` sorted by ``table``, device and field, with columns ``table``;
        one column per TAG of the table-model tables (their values; null for another
        table's devices; a TAG named like one of the other columns, e.g. ``device``, is
        ``tag_device``); ``device`` (the identifier as ``metadata()`` prints it: the
        path of a tree-model device); ``field``; ``type`` (the TsFile type, e.g.
        ``DOUBLE``); ``start`` and ``end`` (the first and last time of the series' points,
        raw values of the time column); ``count`` (its points: non-null values, summed over
        the files).

    Counts and bounds come from the series statistics: no page is read. A device written
    in several files counts its points in each (a timestamp repeated across files counts
    twice, as reading the files returns it twice).
    """
    cat = _Catalog(paths, storage_options, options)
    cat.resolve_tags()
    tag_names: list[str] = []
    for table in sorted({d.table for d in cat.devices}):
        for name in cat.tag_names(table):
            if name not in tag_names:
                tag_names.append(name)
    column = {t: f"tag_{t}" if t in _LIST_COLUMNS else t for t in tag_names}
    out: dict[str, list[Any]] = {k: [] for k in ["table", *column.values(), *_LIST_COLUMNS[1:]]}
    for d in sorted(cat.devices, key=lambda d: (d.table, d.device)):
        values = dict(zip(cat.tag_names(d.table), d.tags or ())) if not d.tree else {}
        for fname in sorted(d.fields):
            dtype, count, start, end = d.fields[fname]
            out["table"].append(d.table)
            for t in tag_names:
                out[column[t]].append(values.get(t))
            out["device"].append(d.device)
            out["field"].append(fname)
            out["type"].append(dtype)
            out["start"].append(start)
            out["end"].append(end)
            out["count"].append(count)
    schema = pa.schema(
        [pa.field("table", pa.string(), False)]
        + [pa.field(column[t], pa.string()) for t in tag_names]
        + [
            pa.field("device", pa.string(), False),
            pa.field("field", pa.string(), False),
            pa.field("type", pa.string(), False),
            pa.field("start", pa.int64(), False),
            pa.field("end", pa.int64(), False),
            pa.field("count", pa.int64(), False),
        ]
    )
    return pa.table(out, schema=schema)


# --------------------------------------------------------------------------- read_series


def _fixed(column: pa.ChunkedArray | pa.Array, arrow_type: pa.DataType, np_type: str) -> np.ndarray:
    """A column cast to a fixed-width Arrow type, as NumPy over its buffer (nulls must be
    filled before). Unlike ``to_numpy``, this does not import pandas."""
    np = _numpy()
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if column.type != arrow_type:
        column = column.cast(arrow_type)
    if len(column) == 0:
        return np.empty(0, dtype=np_type)
    data = column.buffers()[1]
    return np.frombuffer(data, dtype=np_type, count=column.offset + len(column))[column.offset :]


def _times(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """The raw int64 values of a time column (chunks copied once, into one array)."""
    np = _numpy()
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    if len(chunks) == 1:
        chunk = chunks[0]
        return _fixed(chunk.view(pa.int64()) if pa.types.is_timestamp(chunk.type) else chunk, pa.int64(), "int64")
    out = np.empty(sum(len(c) for c in chunks), dtype=np.int64)
    pos = 0
    for chunk in chunks:
        if len(chunk):
            if pa.types.is_timestamp(chunk.type):
                chunk = chunk.view(pa.int64())
            out[pos : pos + len(chunk)] = _fixed(chunk, pa.int64(), "int64")
            pos += len(chunk)
    return out


def _point_values(column: pa.ChunkedArray) -> np.ndarray:
    """Non-null values as NumPy: float64 (FLOAT, DOUBLE), int64 (INT32, INT64), bool,
    datetime64 (DATE, TIMESTAMP) or object (STRING, TEXT, BLOB)."""
    t = column.type
    if pa.types.is_floating(t):
        return _fixed(column, pa.float64(), "float64")
    if pa.types.is_integer(t):
        return _fixed(column, pa.int64(), "int64")
    if pa.types.is_boolean(t):
        return _fixed(column, pa.uint8(), "uint8").astype(bool)
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
    return column.to_numpy(zero_copy_only=False)


def _empty_values(dtype_name: str) -> np.ndarray:
    np = _numpy()
    kinds = {"FLOAT": np.float64, "DOUBLE": np.float64, "INT32": np.int64, "INT64": np.int64, "BOOLEAN": bool}
    if dtype_name in kinds:
        return np.empty(0, dtype=kinds[dtype_name])
    if dtype_name == "DATE":
        return np.empty(0, dtype="datetime64[D]")
    if dtype_name == "TIMESTAMP":
        return np.empty(0, dtype="datetime64[ms]")
    return np.empty(0, dtype=object)


_MAX_TIME = (1 << 63) - 1
# Devices per filtered read: the device filter is evaluated on every row read (a balanced
# OR of TAG tuples; 400 devices of a 1,000-device file take 0.17 s, the whole file 0.51 s),
# so longer lists are read in parts, or as the whole table when they cover most of it.
_MAX_DEVICES = 512


def _read_bounds(
    cat: _Catalog, idx: int, field: str, start: Any, end: Any, offset: int, limit: int | None
) -> tuple[Any, Any, int, list[tuple[int, int, int, str]] | None]:
    """Time bounds covering points ``[offset, offset + limit)`` of a series, from its
    per-file statistics, the offset left within them (-1: past the end) and the files
    holding them (None: all the device's files). When a time range is given, or the
    files' time ranges of the series overlap, the bounds stay."""
    if start is not None or end is not None or (offset == 0 and limit is None):
        return start, end, offset, None
    parts = sorted(p for p in cat.devices[idx].parts.get(field, []) if p[2] > 0)
    if any(b[0] <= a[1] for a, b in itertools.pairwise(parts)):
        return start, end, offset, None  # overlapping files: positions need the merged order
    skipped = 0
    chosen: list[tuple[int, int, int, str]] = []
    for part in parts:
        if not chosen and skipped + part[2] <= offset:
            skipped += part[2]
            continue
        chosen.append(part)
        if limit is not None and skipped + sum(p[2] for p in chosen) >= offset + limit:
            break
    if not chosen:
        return None, None, -1, None
    last = chosen[-1][1]
    return chosen[0][0], (last + 1 if last < _MAX_TIME else None), offset - skipped, chosen


def read_series(
    paths: Paths,
    device: DeviceKey,
    field: str,
    start: TimeBound | None = None,
    end: TimeBound | None = None,
    *,
    offset: int | None = None,
    limit: int | None = None,
    storage_options: StorageOptions | None = None,
    **options: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """One series (a FIELD column of one device) as NumPy arrays ``(times, values)``.

    Args:
        paths: a file, a directory, a glob or a list of them; local or URLs.
        device: the device's identifier as ``metadata()``/:func:`list_series` print it
            (``"weather.north.north-site-0.ws-north-0-0"``, a tree path
            ``"root.plant.line1.press"``), or a tuple of its TAG values.
        field: the FIELD column.
        start: keep points with ``time >= start`` (an int raw time value, a datetime, date,
            ISO string, ``numpy.datetime64`` or ``pandas.Timestamp``, as ``read_tsfile``).
        end: keep points with ``time < end``.
        offset: skip this many points (after the time filter), in time order.
        limit: return at most this many points.
        storage_options: object store settings for URL paths.
        **options: reading options, as for ``read_tsfile``.

    Returns:
        ``times``: ``int64`` raw values of the time column (the table's unit, milliseconds
        by default); ``values``: ``float64`` for FLOAT and DOUBLE, ``int64`` for INT32 and
        INT64, ``bool`` for BOOLEAN, ``datetime64`` for DATE and TIMESTAMP, ``object``
        (``str``/``bytes``) for STRING, TEXT and BLOB. Null values are not points of the
        series: they are left out, so ``values`` never holds a null.

    Only the device's chunks and pages that overlap the time range are read. By position
    alone (``offset``/``limit``), the per-file statistics narrow the time range to the
    files that hold those points (when the files' time ranges do not overlap); within a
    file the device's rows from there on are read. An ``offset`` past the end gives empty
    arrays; an unknown device or field raises ``InvalidArgumentError``.
    """
    np = _numpy()
    for name, v in (("offset", offset), ("limit", limit)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0):
            raise InvalidArgumentError(f"{name}: expected a non-negative int, got {v!r}")
    off = int(offset or 0)
    lim = None if limit is None else int(limit)
    cat = _Catalog(paths, storage_options, options)
    idx = cat.lookup(device)
    dtype_name = cat.field(idx, field)[0]
    empty = (np.empty(0, dtype=np.int64), _empty_values(dtype_name))
    if lim == 0:
        return empty
    lo, hi, local_off, chosen = _read_bounds(cat, idx, field, start, end, off, lim)
    if local_off < 0:
        return empty
    files = None
    if chosen is not None and cat.by_file:
        files = [f for f in cat.files([idx]) if any(p[3] == f for p in chosen)]
    table = cat.read([idx], ["time", field], files=files, start=lo, end=hi)
    table = table.filter(_pc().is_valid(table.column(field)))
    times = _times(table.column("time"))
    if len(times) > 1 and not bool(np.all(times[1:] >= times[:-1])):
        order = np.argsort(times, kind="stable")
        table = table.take(pa.array(order))
        times = times[order]
    stop = None if lim is None else local_off + lim
    if local_off or stop is not None:
        times = times[local_off:stop]
        table = table.slice(local_off, len(times))
    if table.num_rows == 0:
        return empty
    return np.ascontiguousarray(times), _point_values(table.column(field))


# --------------------------------------------------------------------------- windows


class _Block:
    """Rows of one device: times ``(n,)``, values ``(n, fields)``, from position ``first``."""

    __slots__ = ("times", "values", "first", "nbytes")

    def __init__(self, times: Any, values: Any, first: int, nbytes: int) -> None:
        self.times = times
        self.values = values
        self.first = first
        self.nbytes = nbytes


class SeriesWindows:
    """Fixed-length windows over the rows of each device, for a PyTorch ``DataLoader``
    (a map-style dataset: ``len(ds)`` and ``ds[i]``; no torch import).

    Made by :func:`windows`. Window ``i`` is ``length`` consecutive rows of one device,
    starting at a position that is a multiple of ``stride``; windows are numbered device by
    device (in the order of :attr:`devices`) and by start position, so the numbering only
    depends on the files' metadata. :meth:`locate` gives ``(device, position)`` of a window.

    ``ds[i]`` is a NumPy array ``(length, len(fields))`` of ``dtype`` (float64 by default):
    numbers as floats, booleans as 0/1, DATE as days and TIMESTAMP fields as raw values,
    nulls as NaN. With ``return_times=True`` it is a tuple ``(times, values)``, ``times``
    the ``int64`` raw time values of the rows.

    Reads are lazy and cached: a window's rows come from a block of its device (all its
    rows, or ``block_rows`` of them), kept in an LRU cache of ``cache_bytes``. A call to the
    reader costs milliseconds whatever it reads and a row only nanoseconds, so a miss also
    reads the next uncached devices in the same call: none on the first miss (the first
    window comes quickly), then four times more rows with every miss up to
    ``prefetch_rows``; when the whole table fits in half the cache the second miss reads
    all of it. A device with more rows than ``block_rows`` has its time column read once
    (8 bytes a row, kept) to map positions to time ranges; each of its blocks is then read
    by its time range, only the chunks and pages that overlap it. The object pickles
    without its cache (for ``DataLoader`` workers) and is safe to index from several
    threads (reads are serialised).
    """

    def __init__(
        self,
        paths: Paths,
        length: int,
        stride: int | None = None,
        fields: Sequence[str] | None = None,
        devices: Iterable[DeviceKey] | None = None,
        storage_options: StorageOptions | None = None,
        *,
        table: str | None = None,
        dtype: Any = "float64",
        return_times: bool = False,
        cache_bytes: int = 1 << 30,
        block_rows: int = 1 << 20,
        prefetch_rows: int = 1 << 22,
        options: dict[str, Any] | None = None,
    ) -> None:
        np = _numpy()
        for name, v in (("length", length), ("stride", stride), ("block_rows", block_rows)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0):
                raise InvalidArgumentError(f"{name}: expected a positive int, got {v!r}")
        self.length = int(length)
        self.stride = int(stride) if stride is not None else self.length
        self.dtype = np.dtype(dtype)
        if self.dtype.kind != "f":
            raise InvalidArgumentError(f"dtype: expected a floating type (nulls are NaN), got {self.dtype}")
        self.return_times = bool(return_times)
        self.cache_bytes = int(cache_bytes)
        self.block_rows = max(int(block_rows), self.length)
        self.prefetch_rows = int(prefetch_rows)
        self._paths = paths
        self._storage = storage_options
        self._options = dict(options or {})
        cat = _Catalog(paths, storage_options, self._options)
        self._cat = cat
        # The devices: given ones in the order given, else all (of `table`) sorted.
        if devices is not None:
            if isinstance(devices, str):
                devices = [devices]
            chosen = [cat.lookup(d) for d in devices]
        else:
            chosen = sorted(range(len(cat.devices)), key=lambda i: (cat.devices[i].table, cat.devices[i].device))
        if table is not None:
            chosen = [i for i in chosen if cat.devices[i].table == table]
        tables = {cat.devices[i].table for i in chosen}
        if fields is None:
            if len(tables) > 1:
                raise InvalidArgumentError(
                    f"the files hold several tables ({', '.join(sorted(tables))}); choose one with table= or fields="
                )
            fields = sorted(f for f, t in cat.field_types(chosen).items() if all(_window_type(x) for x in t))
        self.fields: list[str] = list(fields)
        # A prefetch never takes more than a quarter of the cache.
        self.prefetch_rows = min(self.prefetch_rows, self.cache_bytes // (8 * (len(self.fields) + 1)) // 4)
        if not self.fields:
            raise InvalidArgumentError("fields: no numeric or boolean FIELD column to window")
        all_types = cat.field_types(chosen)
        for f in self.fields:
            types = all_types.get(f)
            if not types:
                raise InvalidArgumentError(f"no device has a FIELD column {f!r}; see list_series()")
            bad = [t for t in types if not _window_type(t)]
            if bad:
                raise InvalidArgumentError(f"field {f!r} is {bad[0]}: windows take numeric, boolean, DATE and TIMESTAMP fields")
        # Devices holding at least one of the fields.
        self._has = {f: cat.has_field(f) for f in self.fields}
        held = np.zeros(len(cat.devices), dtype=bool)
        for mask in self._has.values():
            held |= mask
        chosen = [i for i in chosen if held[i]]
        unknown = [i for i in chosen if cat.devices[i].rows is None]
        if unknown:
            self._count_rows(unknown)
        self._dev: list[int] = chosen
        self.devices: list[str] = [cat.devices[i].device for i in chosen]
        self._rows = np.array([cat.devices[i].rows or 0 for i in chosen], dtype=np.int64)
        counts = np.where(self._rows >= self.length, (self._rows - self.length) // self.stride + 1, 0)
        self._counts = counts
        self._offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._lock = threading.RLock()
        self._cache: OrderedDict[tuple[int, int], _Block] = OrderedDict()
        self._cached_bytes = 0
        self._time_index: dict[int, Any] = {}
        self._prefetch_now = 0
        self._table_rows: dict[str, int] = {}
        self.stats = {"reads": 0, "rows_read": 0, "hits": 0, "misses": 0}

    # -- sizes and positions

    def __len__(self) -> int:
        return int(self._offsets[-1])

    def locate(self, i: int) -> tuple[str, int]:
        """``(device, start position)`` of window ``i`` (positions count the device's
        rows in time order from 0)."""
        k, pos = self._locate(i)
        return self.devices[k], pos

    def _locate(self, i: int) -> tuple[int, int]:
        np = _numpy()
        n = len(self)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"window index must be an int, got {type(i).__name__}")
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"window {i} out of range [0, {n})")
        k = int(np.searchsorted(self._offsets, i, side="right")) - 1
        return k, (i - int(self._offsets[k])) * self.stride

    def window_counts(self) -> dict[str, int]:
        """Windows per device (devices with fewer rows than ``length`` have none)."""
        return {d: int(c) for d, c in zip(self.devices, self._counts)}

    # -- access

    def __getitem__(self, i: int) -> Any:
        k, pos = self._locate(i)
        times, values = self._rows_of(k, pos, self.length)
        return (times, values) if self.return_times else values

    def times(self, i: int) -> np.ndarray:
        """The ``int64`` raw time values of window ``i``'s rows."""
        k, pos = self._locate(i)
        return self._rows_of(k, pos, self.length)[0]

    def _rows_of(self, k: int, pos: int, n: int) -> tuple[Any, Any]:
        np = _numpy()
        first = pos // self.block_rows
        last = (pos + n - 1) // self.block_rows
        parts = [self._block(k, b) for b in range(first, last + 1)]
        if len(parts) == 1:
            b = parts[0]
            lo = pos - b.first
            return b.times[lo : lo + n].copy(), b.values[lo : lo + n].copy()
        times = np.concatenate([p.times for p in parts])
        values = np.concatenate([p.values for p in parts])
        lo = pos - parts[0].first
        return times[lo : lo + n].copy(), values[lo : lo + n].copy()

    def _block(self, k: int, b: int) -> _Block:
        key = (k, b)
        with self._lock:
            block = self._cache.get(key)
            if block is not None:
                self._cache.move_to_end(key)
                self.stats["hits"] += 1
                return block
            self.stats["misses"] += 1
            if self._rows[k] <= self.block_rows:
                loaded = self._read_whole(k)
            else:
                loaded = {key: self._read_block(k, b)}
            for kk, blk in loaded.items():
                if kk in self._cache:
                    continue
                self._cache[kk] = blk
                self._cached_bytes += blk.nbytes
            self._cache.move_to_end(key)
            while self._cached_bytes > self.cache_bytes and len(self._cache) > 1:
                old_key, old = next(iter(self._cache.items()))
                if old_key == key:
                    self._cache.move_to_end(key)
                    continue
                del self._cache[old_key]
                self._cached_bytes -= old.nbytes
            return self._cache[key]

    def _read_whole(self, k: int) -> dict[tuple[int, int], _Block]:
        """Device ``k`` (small: one block) and, in the same reads, the next uncached small
        devices of its table (in window order, wrapping around), up to the prefetch."""
        cat = self._cat
        table = cat.devices[self._dev[k]].table
        group = [k]
        total = int(self._rows[k])
        # The prefetch grows with the misses: the first window comes quickly, then a pass
        # over the windows reads big runs of devices per call (a call costs milliseconds
        # whatever it reads). When the whole table fits in half the cache, the second
        # miss reads all of it.
        table_rows = self._table_rows.get(table)
        if table_rows is None:
            table_rows = self._table_rows[table] = sum(d.rows or 0 for d in cat.devices if d.table == table)
        budget = min(self.prefetch_rows, self._prefetch_now)
        if self._prefetch_now and table_rows * 8 * (len(self.fields) + 1) <= self.cache_bytes // 2:
            budget = table_rows
        self._prefetch_now = max(4 * self._prefetch_now, 4 * total)
        n = len(self._dev)
        for step in range(1, n):
            if total >= budget:
                break
            j = (k + step) % n  # the next devices in window order, then from the start
            rows = int(self._rows[j])
            if (
                rows > self.block_rows
                or self._counts[j] == 0
                or (j, 0) in self._cache
                or cat.devices[self._dev[j]].table != table
            ):
                continue
            if total + rows > budget:
                break
            group.append(j)
            total += rows
        if len(group) > _MAX_DEVICES and 2 * total >= table_rows:
            # Most of the table: read it whole rather than filter many devices.
            got = self._read(group, None, None, whole=True)
        else:
            got = []
            for i in range(0, len(group), _MAX_DEVICES):
                got += self._read(group[i : i + _MAX_DEVICES], None, None)
        return {(g, 0): self._to_block(r, 0) for g, r in zip(group, got)}

    def _read_block(self, k: int, b: int) -> _Block:
        """Block ``b`` of a large device: its time range from the device's time column."""
        np = _numpy()
        times = self._time_index.get(k)
        if times is None:
            times = self._device_times(k)
            self._time_index[k] = times
        lo = b * self.block_rows
        hi = min(lo + self.block_rows, len(times))
        got_times, got_values = self._read([k], int(times[lo]), int(times[hi - 1]) + 1)[0]
        # Rows with the block's first time that belong to the previous block (a
        # timestamp repeated across files) come first: skip them.
        skip = lo - int(np.searchsorted(times, times[lo], side="left"))
        stop = skip + hi - lo
        return self._to_block((got_times[skip:stop].copy(), got_values[skip:stop].copy()), lo)

    def _device_times(self, k: int) -> Any:
        np = _numpy()
        t = self._cat.read([self._dev[k]], ["time"])
        self.stats["reads"] += 1
        times = _times(t.column("time"))
        if len(times) > 1 and not bool(np.all(times[1:] >= times[:-1])):
            times = np.sort(times, kind="stable")
        return times

    def _read(self, group: list[int], start: int | None, end: int | None, whole: bool = False) -> list[tuple[Any, Any]]:
        """Rows of the devices ``group``: ``(times, values)`` per device, in time order
        (``whole``: read the whole table and keep those devices). The columns become
        NumPy once for the whole read, then are cut by device."""
        np = _numpy()
        cat = self._cat
        first = cat.devices[self._dev[group[0]]]
        split = len(group) > 1 or whole
        keys = (["device"] if first.tree else cat.tag_names(first.table)) if split else []
        devs = [self._dev[g] for g in group]
        columns = ["time"] + [f for f in self.fields if f not in keys and self._has[f][devs].any()]
        columns += [c for c in keys if c not in columns]
        t = cat.read([self._dev[g] for g in group], columns, start=start, end=end, whole=whole)
        self.stats["reads"] += 1
        self.stats["rows_read"] += t.num_rows
        n = t.num_rows
        times = _times(t.column("time")) if n else np.empty(0, dtype=np.int64)
        values = np.empty((n, len(self.fields)), dtype=self.dtype)
        for j, f in enumerate(self.fields):
            if f in t.column_names and n:
                _fill_floats(t.column(f), values[:, j])
            else:
                values[:, j] = np.nan
        if not split:
            return [_sorted(times, values)]
        pos = {cat.devices[self._dev[g]].device: i for i, g in enumerate(group)}
        pieces: list[list[tuple[int, int]]] = [[] for _ in group]
        for lo, hi, key in _runs(t, keys):
            i = pos.get(key[0]) if first.tree else _find_device(pos, first.table, key)
            if i is not None:
                pieces[i].append((lo, hi))
        out = []
        for ps in pieces:
            if len(ps) == 1:
                lo, hi = ps[0]
                if whole:  # views: the blocks of a whole-table read share its arrays
                    out.append(_sorted(times[lo:hi], values[lo:hi]))
                else:  # copies: a cached device does not hold the whole read
                    out.append(_sorted(times[lo:hi].copy(), values[lo:hi].copy()))
            else:
                idx = np.concatenate([np.arange(lo, hi) for lo, hi in ps]) if ps else np.empty(0, dtype=np.int64)
                out.append(_sorted(times[idx], values[idx]))
        return out

    def _to_block(self, rows: tuple[Any, Any], first: int) -> _Block:
        times, values = rows
        return _Block(times, values, first, times.nbytes + values.nbytes)

    def _count_rows(self, idxs: list[int]) -> None:
        """Rows of devices whose count the metadata cannot tell (tree-model devices with
        several non-aligned series): their time columns are read once."""
        cat = self._cat
        by_table: dict[str, list[int]] = {}
        for i in idxs:
            by_table.setdefault(cat.devices[i].table, []).append(i)
        for group in by_table.values():
            t = cat.read(group, ["device", "time"])
            t = t.set_column(0, "device", t.column("device").cast(pa.string()))
            counts = t.group_by("device", use_threads=False).aggregate([("time", "count")]).to_pydict()
            got = dict(zip((str(x) for x in counts["device"]), counts["time_count"]))
            for i in group:
                cat.devices[i].rows = int(got.get(cat.devices[i].device, 0))

    def cache_info(self) -> dict[str, int]:
        """Blocks and bytes held, and the read counters."""
        return {"blocks": len(self._cache), "bytes": self._cached_bytes, **self.stats}

    def clear_cache(self) -> None:
        """Drop the cached blocks and time columns."""
        with self._lock:
            self._cache.clear()
            self._cached_bytes = 0
            self._time_index.clear()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_cache"] = OrderedDict()
        state["_cached_bytes"] = 0
        state["_time_index"] = {}
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return (
            f"SeriesWindows({len(self)} windows of {self.length} rows, stride {self.stride}, "
            f"{len(self.devices)} devices, fields {self.fields})"
        )


def _window_type(type_name: str) -> bool:
    return type_name in ("BOOLEAN", "INT32", "INT64", "FLOAT", "DOUBLE", "DATE", "TIMESTAMP")


def _fill_floats(column: pa.ChunkedArray, out: Any) -> None:
    """Write a column into ``out`` (a NumPy column) as floats, nulls as NaN (booleans
    0/1, dates as days, timestamps as raw values); chunk by chunk, one copy."""
    pos = 0
    for chunk in column.chunks:
        size = len(chunk)
        if not size:
            continue
        t = chunk.type
        if pa.types.is_timestamp(t):
            chunk = chunk.view(pa.int64())
        elif pa.types.is_date32(t):
            chunk = chunk.view(pa.int32())
        elif pa.types.is_boolean(t):
            chunk = chunk.cast(pa.int8())
        if chunk.type != pa.float64():
            chunk = chunk.cast(pa.float64(), safe=False)  # int64 beyond 2**53 rounds
        if chunk.null_count:
            chunk = chunk.fill_null(float("nan"))
        out[pos : pos + size] = _fixed(chunk, pa.float64(), "float64")
        pos += size


def _sorted(times: Any, values: Any) -> tuple[Any, Any]:
    """Rows in time order (a device's rows from several files may come file by file)."""
    np = _numpy()
    if len(times) < 2 or bool(np.all(times[1:] >= times[:-1])):
        return times, values
    order = np.argsort(times, kind="stable")
    return times[order], values[order]


def _runs(t: pa.Table, keys: list[str]) -> list[tuple[int, int, tuple[Any, ...]]]:
    """Runs of equal key values: ``(start, stop, values)``. Batches hold one device each
    most of the time: a chunk whose dictionary has one value is compared as a whole."""
    n = t.num_rows
    if n == 0:
        return []
    bounds: set[int] = {0}
    columns = [t.column(name) for name in keys]
    for col in columns:
        bounds.update(_changes(col))
    starts = sorted(bounds)
    stops = starts[1:] + [n]
    finders = [_value_at(col) for col in columns]
    return [(lo, hi, tuple(f(lo) for f in finders)) for lo, hi in zip(starts, stops)]


def _changes(col: pa.ChunkedArray) -> list[int]:
    """Positions where a column's value differs from the previous row's."""
    np = _numpy()
    pc = _pc()
    out: list[int] = []
    pos = 0
    missing = object()
    prev: Any = missing
    for chunk in col.chunks:
        size = len(chunk)
        if size == 0:
            continue
        if pa.types.is_dictionary(chunk.type):
            if chunk.null_count == 0 and len(chunk.dictionary) == 1:
                value = chunk.dictionary[0].as_py()
                if prev is not missing and value != prev:
                    out.append(pos)
                prev = value
                pos += size
                continue
            chunk = chunk.dictionary_decode()
        first = chunk[0].as_py()
        if prev is not missing and first != prev:
            out.append(pos)
        if size > 1:
            a, b = chunk.slice(1), chunk.slice(0, size - 1)
            ne = pc.or_(pc.fill_null(pc.not_equal(a, b), False), pc.xor(pc.is_null(a), pc.is_null(b)))
            inside = np.flatnonzero(_fixed(ne, pa.uint8(), "uint8"))
            out.extend((inside + pos + 1).tolist())
        prev = chunk[size - 1].as_py()
        pos += size
    return out


def _value_at(col: pa.ChunkedArray) -> Any:
    """A function: row position → the column's value there."""
    import bisect

    offsets: list[int] = []
    chunks: list[Any] = []
    pos = 0
    for chunk in col.chunks:
        if len(chunk):
            offsets.append(pos)
            chunks.append(chunk)
            pos += len(chunk)

    def at(i: int) -> Any:
        k = bisect.bisect_right(offsets, i) - 1
        return chunks[k][i - offsets[k]].as_py()

    return at


def windows(
    paths: Paths,
    length: int,
    stride: int | None = None,
    fields: Sequence[str] | None = None,
    devices: Iterable[DeviceKey] | None = None,
    storage_options: StorageOptions | None = None,
    **options: Any,
) -> SeriesWindows:
    """Fixed-length windows over each device's rows, as a map-style dataset.

    >>> ds = windows("data/sample.tsfile", length=512, fields=["temperature", "humidity"])  # doctest: +SKIP
    >>> loader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True)  # doctest: +SKIP

    Args:
        paths: a file, a directory, a glob or a list of them; local or URLs.
        length: rows per window.
        stride: rows between the starts of consecutive windows of a device (default
            ``length``: windows do not overlap). A device with ``r`` rows has
            ``(r - length) // stride + 1`` windows (none when ``r < length``).
        fields: the FIELD columns, the window's columns in this order (default: every
            numeric, boolean, DATE and TIMESTAMP field of the table, sorted by name).
        devices: the devices (identifiers or TAG tuples), windows numbered in this order
            (default: every device holding one of the fields, sorted by identifier).
        storage_options: object store settings for URL paths.
        **options: reading options as for ``read_tsfile`` (``table``, ``master_key``, …),
            and the keywords of :class:`SeriesWindows`: ``dtype`` (``"float32"`` for
            training), ``return_times``, ``cache_bytes``, ``block_rows``, ``prefetch_rows``.

    Returns:
        A :class:`SeriesWindows`: ``len(ds)`` windows; ``ds[i]`` a NumPy array
        ``(length, len(fields))``, nulls as NaN.
    """
    own = {k: options.pop(k) for k in ("dtype", "return_times", "cache_bytes", "block_rows", "prefetch_rows") if k in options}
    table = options.pop("table", None)
    if table is not None:
        options["table"] = table
    return SeriesWindows(
        paths, length, stride, fields, devices, storage_options, table=table, options=options, **own
    )
