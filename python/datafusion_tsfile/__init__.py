"""Apache TsFile files as pyarrow tables and batches, and as DataFusion tables.

>>> import datafusion_tsfile as tsf
>>> table = tsf.read_tsfile("data/sample.tsfile", columns=["time", "temperature"])  # doctest: +SKIP

* :func:`read_tsfile`: a table (files, a directory or a glob) as a ``pyarrow.Table``;
* :func:`read_tsfile_batches`: the same as a stream of ``pyarrow.RecordBatch``
  (:class:`TsFileBatchReader`, which also speaks the Arrow C stream interface);
* :class:`TsFileTable` / :class:`TsFileTableFactory`: for ``SessionContext.register_table``
  and ``CREATE EXTERNAL TABLE … STORED AS TSFILE`` in datafusion-python 55;
* :func:`sql`: a query on the package's own engine, aggregates answered from statistics;
* :func:`metadata`: one row per device and column, with statistics;
* :func:`export_parquet`: a table into one Parquet file, with progress;
* :func:`write_tsfile`: Arrow data (pyarrow, pandas, polars) into a TsFile; :func:`sql`
  also runs ``COPY (…) TO 'x.tsfile' STORED AS TSFILE`` over Arrow tables it is given.

Reading options (``table``, ``time_unit``, ``master_key``, ``pruning``, …) are keyword
arguments; they are the options of ``CREATE EXTERNAL TABLE … OPTIONS`` in the Rust crate.

Paths may be ``s3://``, ``gs://`` and ``http(s)://`` URLs (a file, a prefix or a glob):
every reading function and :class:`TsFileTable` take ``storage_options``, a dict of
``object_store`` configuration keys as polars and delta-rs users write them
(``aws_access_key_id``, ``aws_secret_access_key``, ``aws_region``, ``aws_endpoint``,
``aws_allow_http``, ``google_service_account``, …), with the environment variables
(``AWS_*``, ``GOOGLE_*``) as the fallback. Option values never appear in errors or reprs.

>>> read_tsfile("s3://fleet/2024/*.tsfile", storage_options={"aws_region": "eu-west-1"})  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Union

import pyarrow as pa

from . import _internal
from .errors import (
    CorruptFileError,
    EncryptionError,
    InvalidArgumentError,
    TsFileError,
    TsFileNotFoundError,
    UnsupportedError,
)

__version__: str = _internal.__version__

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Sequence[PathLike]]
TimeBound = Union[int, _dt.datetime, _dt.date, str, Any]
Device = Union[str, Sequence[Union[str, None]]]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _paths(path: Paths) -> list[str]:
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    paths = [os.fspath(p) for p in path]
    if not paths:
        raise InvalidArgumentError("no path given")
    return paths


StorageOptions = Mapping[str, Any]


def _storage(storage_options: StorageOptions | None) -> dict[str, str] | None:
    """Storage options as strings (``True`` → ``"true"``); keys as given."""
    if storage_options is None:
        return None
    if not isinstance(storage_options, Mapping):
        raise InvalidArgumentError("storage_options: expected a dict of object_store configuration keys")
    out: dict[str, str] = {}
    for key, value in storage_options.items():
        if not isinstance(key, str):
            raise InvalidArgumentError("storage_options: keys must be strings")
        out[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _options(table: str | None, options: dict[str, Any]) -> dict[str, Any]:
    if table is not None:
        options = {**options, "table": table}
    return options


def _time_bound(value: TimeBound | None, name: str) -> int | tuple[str, int] | None:
    """A time bound for the extension: an int stays a raw value of the time column;
    datetimes, dates, ISO strings, numpy.datetime64 and pandas.Timestamp become
    ("ns", nanoseconds since the epoch), naive ones read as UTC."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{name}: expected a time, got a bool")
    if isinstance(value, int):
        return value
    nanos = getattr(value, "value", None)  # pandas.Timestamp keeps nanoseconds
    if type(value).__name__ == "Timestamp" and isinstance(nanos, int):
        return ("ns", nanos)
    if type(value).__name__ == "datetime64":  # numpy scalar
        return ("ns", int(value.astype("datetime64[ns]").astype("int64")))
    if isinstance(value, str):
        try:
            value = _dt.datetime.fromisoformat(value)
        except ValueError as e:
            raise InvalidArgumentError(f"{name}: {e}") from None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return ("ns", (value - _EPOCH) // _dt.timedelta(microseconds=1) * 1000)
    if isinstance(value, _dt.date):
        return _time_bound(_dt.datetime(value.year, value.month, value.day), name)
    raise InvalidArgumentError(
        f"{name}: expected an int, datetime, date, ISO string, numpy.datetime64 or "
        f"pandas.Timestamp, got {type(value).__name__}"
    )


def _devices(devices: Iterable[Device] | None) -> list[Any] | None:
    if devices is None:
        return None
    if isinstance(devices, str):
        devices = [devices]
    return [d if isinstance(d, str) else list(d) for d in devices]


class TsFileBatchReader:
    """The batches of a read, one at a time and once.

    Iterate it for ``pyarrow.RecordBatch`` objects, or hand it to any library that takes
    an Arrow C stream (``pyarrow.table(reader)``, ``polars.DataFrame(reader)``). Errors
    while reading are raised as :class:`TsFileError` when iterating; through the C stream
    they surface as the consumer's own error type.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.schema: pa.Schema = pa.schema(stream)

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self

    def __next__(self) -> pa.RecordBatch:
        batch = self.read_next_batch()
        if batch is None:
            raise StopIteration
        return batch

    def read_next_batch(self) -> pa.RecordBatch | None:
        """The next batch, or ``None`` at the end."""
        exported = self._stream.next_batch()
        return None if exported is None else pa.record_batch(exported)

    def read_all(self) -> pa.Table:
        """The remaining batches as one table."""
        return pa.Table.from_batches(list(self), schema=self.schema)

    def read_pandas(self, **kwargs: Any) -> Any:
        """The remaining batches as a ``pandas.DataFrame`` (``to_pandas`` keywords)."""
        return self.read_all().to_pandas(**kwargs)

    def to_reader(self) -> pa.RecordBatchReader:
        """The remaining batches as a ``pyarrow.RecordBatchReader``."""
        return pa.RecordBatchReader.from_stream(self)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self._stream.__arrow_c_stream__(requested_schema)

    def __enter__(self) -> TsFileBatchReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading: pending work is cancelled and its memory released."""
        self._stream = None


def _read(
    path: Paths,
    table: str | None,
    columns: Sequence[str] | None,
    start: TimeBound | None,
    end: TimeBound | None,
    devices: Iterable[Device] | None,
    options: dict[str, Any],
    streaming: bool,
    storage_options: StorageOptions | None,
) -> Any:
    return _internal.read(
        _paths(path),
        _options(table, options),
        list(columns) if columns is not None else None,
        _time_bound(start, "start"),
        _time_bound(end, "end"),
        _devices(devices),
        streaming,
        _storage(storage_options),
    )


def read_tsfile(
    path: Paths,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    start: TimeBound | None = None,
    end: TimeBound | None = None,
    devices: Iterable[Device] | None = None,
    storage_options: StorageOptions | None = None,
    **options: Any,
) -> pa.Table:
    """Read a TsFile table into a ``pyarrow.Table``.

    Args:
        path: a file, a directory (its ``*.tsfile`` files), a glob, or a list of them;
            local, or ``s3://``, ``gs://``, ``http(s)://`` URLs.
        table: the TsFile table to read (needed when the files hold several).
        columns: the columns to return, in this order (default: all).
        start: keep rows with ``time >= start``: an int (the time column's raw value,
            milliseconds by default), a ``datetime``/``date`` (naive = UTC), an ISO
            string, a ``numpy.datetime64`` or a ``pandas.Timestamp``.
        end: keep rows with ``time < end`` (same kinds as ``start``).
        devices: keep these devices only: identifiers as ``metadata()`` prints them
            (``"weather.north.ws-1"``) or tuples of TAG values in column order.
        storage_options: object store settings for URL paths (``object_store`` keys such
            as ``aws_endpoint``; the environment fills in the rest).
        **options: reading options, e.g. ``time_unit="us"`` or
            ``master_key="<32 hex digits>"`` for encrypted files.

    Only the devices, chunks and pages that can hold matching rows are read. Rows come
    device by device (each device's rows together, in time order), files in the order
    given.
    """
    return pa.table(_read(path, table, columns, start, end, devices, options, False, storage_options))


def read_tsfile_batches(
    path: Paths,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    start: TimeBound | None = None,
    end: TimeBound | None = None,
    devices: Iterable[Device] | None = None,
    storage_options: StorageOptions | None = None,
    **options: Any,
) -> TsFileBatchReader:
    """Like :func:`read_tsfile`, as a stream of record batches: memory stays bounded by
    a few batches per partition, however large the files."""
    return TsFileBatchReader(_read(path, table, columns, start, end, devices, options, True, storage_options))


def metadata(path: Paths, storage_options: StorageOptions | None = None, columns: Sequence[str] | None = None) -> pa.Table:
    """One row per device and column of each file: type, encoding, compression, chunk
    and point counts, time range and value statistics (``tsfile_metadata`` in SQL).
    URL paths are read with ``storage_options`` (as for :func:`read_tsfile`). ``columns``
    picks columns (all by default); leaving out ``encoding`` and ``compression`` reads the
    footer and index alone, not every chunk header."""
    return pa.table(_internal.metadata(_paths(path), _storage(storage_options), None if columns is None else list(columns)))


class _TextProgress:
    """A one-line progress report on stderr, for terminals without tqdm."""

    def __init__(self) -> None:
        self._shown = False

    def __call__(self, rows: int, total: int | None, nbytes: int) -> None:
        of = f"/{total:,}" if total else ""
        sys.stderr.write(f"\rexported {rows:,}{of} rows, {nbytes / 1e6:,.1f} MB")
        sys.stderr.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            sys.stderr.write("\n")


class _TqdmProgress:
    def __init__(self, tqdm: Any) -> None:
        self._bar = tqdm(unit="rows", unit_scale=True, desc="export")

    def __call__(self, rows: int, total: int | None, nbytes: int) -> None:
        if total is not None and self._bar.total != total:
            self._bar.total = total
        self._bar.update(rows - self._bar.n)
        self._bar.set_postfix_str(f"{nbytes / 1e6:,.1f} MB")

    def close(self) -> None:
        self._bar.close()


def export_parquet(
    src: Paths,
    dst: PathLike,
    table: str | None = None,
    compression: str = "snappy",
    row_group_rows: int = 1 << 20,
    progress: bool | Callable[[int, int | None, int], None] | None = None,
    storage_options: StorageOptions | None = None,
    **options: Any,
) -> int:
    """Write a TsFile table into one Parquet file; returns the number of rows written.

    The rows stream into the Parquet writer (one row group in memory); the output is
    written to ``<dst>.partial`` and renamed when complete.

    Args:
        src: files, a directory or a glob (as for :func:`read_tsfile`).
        dst: the Parquet file to write.
        table: the TsFile table (needed when the files hold several).
        compression: ``snappy``, ``zstd``, ``zstd(LEVEL)``, ``gzip``, ``gzip(LEVEL)``,
            ``lz4_raw`` or ``none``.
        row_group_rows: rows per Parquet row group.
        progress: ``True`` for a progress bar (tqdm when installed, else a line on
            stderr), or a callable ``progress(rows, total_rows, bytes)`` called up to ten
            times a second and once at the end; an exception it raises stops the export.
        storage_options: object store settings for URL sources (as for :func:`read_tsfile`).
        **options: reading options, as for :func:`read_tsfile`.
    """
    reporter: Any = None
    if progress is True:
        try:
            from tqdm import tqdm  # type: ignore[import-not-found]

            reporter = _TqdmProgress(tqdm)
        except ImportError:
            reporter = _TextProgress()
    elif callable(progress):
        reporter = progress
    elif progress not in (None, False):
        raise InvalidArgumentError("progress: expected True, False, None or a callable")
    try:
        return _internal.export_parquet(
            _paths(src),
            os.fspath(dst),
            _options(table, options),
            compression,
            row_group_rows,
            reporter,
            _storage(storage_options),
        )
    finally:
        close = getattr(reporter, "close", None)
        if reporter is not progress and close is not None:
            close()


def sql(
    query: str,
    tables: Mapping[str, TsFileTable | Paths | Any] | None = None,
    storage_options: StorageOptions | None = None,
) -> pa.Table:
    """Run one SQL statement on this package's own engine (the ``tsfile sql`` one) and
    return the result as a ``pyarrow.Table``.

    >>> sql("SELECT device, max(temperature) AS hi FROM 'data/sample.tsfile' GROUP BY device")  # doctest: +SKIP

    Args:
        query: the statement. A quoted ``.tsfile`` location (a file, directory or glob)
            is a table: ``FROM 'dir/*.tsfile'``; ``tsfile_metadata('path')`` is the
            metadata table function.
        tables: more tables by name: ``TsFileTable`` objects (with their options),
            paths opened with the default options, or Arrow data (pyarrow, pandas,
            polars; held in memory) — e.g. the source of
            ``COPY (SELECT * FROM src) TO 'x.tsfile' STORED AS TSFILE OPTIONS ('tsfile.tags' 'device')``.
        storage_options: object store settings for URL locations, quoted in the query
            (``FROM 's3://bucket/dir/*.tsfile'``) or given in ``tables``; a
            ``TsFileTable`` keeps the options it was opened with.

    Unlike a datafusion-python ``SessionContext``, which plans aggregates itself, this
    engine answers counts, minima and maxima, first and last values and time-bucket
    aggregates from chunk and page statistics where they suffice, reading only the
    pages they do not cover.
    """
    registered = []
    for name, table in (tables or {}).items():
        if isinstance(table, TsFileTable):
            registered.append((name, table._inner))
        elif isinstance(table, (str, os.PathLike)) or (isinstance(table, Sequence) and not hasattr(table, "__arrow_c_stream__")):
            registered.append((name, _paths(table)))
        else:
            registered.append((name, _arrow_data(table)))
    return pa.table(_internal.sql(query, registered, _storage(storage_options)))


def _arrow_data(data: Any) -> Any:
    """Arrow data with ``__arrow_c_stream__``: pandas frames become pyarrow tables (index
    dropped), polars frames without the interface go through ``to_arrow()``."""
    if hasattr(data, "__arrow_c_stream__"):
        return data
    if type(data).__module__.startswith("pandas"):
        return pa.Table.from_pandas(data, preserve_index=False)
    if hasattr(data, "to_arrow"):
        return data.to_arrow()
    raise InvalidArgumentError(
        f"expected a pyarrow Table or RecordBatchReader, a pandas or polars DataFrame, got {type(data).__name__}"
    )


def write_tsfile(
    data: Any,
    path: PathLike,
    table: str | None = None,
    tags: str | Sequence[str] | None = None,
    time_column: str | None = None,
    **options: Any,
) -> int:
    """Write Arrow data as a table-model TsFile; returns the number of rows written.

    >>> write_tsfile(pa_table, "weather.tsfile", tags=["region", "device"])  # doctest: +SKIP

    Args:
        data: a ``pyarrow.Table``, ``RecordBatchReader`` or ``RecordBatch``, a pandas or
            polars ``DataFrame``, or anything with ``__arrow_c_stream__`` (streamed: a
            reader is consumed batch by batch).
        path: the TsFile to write; it appears only when complete (replaced if it exists).
        table: the table name (default: the file stem).
        tags: the TAG columns (device identifiers), a list or a comma-separated string
            (default: columns marked TAG in their Arrow metadata, else dictionary-encoded
            string columns, else none).
        time_column: the time column (default ``time``): a timestamp in any unit (stored
            as is) or int64, without nulls.
        **options: write options as in ``COPY … OPTIONS``: ``memory_limit`` (``"64m"``),
            ``compression`` (``"LZ4"``), ``encoding.<column>``, ``compression.<column>``,
            ``page_max_points``, ``page_max_bytes``.

    Bad input (an unsupported type, a duplicate (device, time), a null time) raises
    :class:`TsFileError` and leaves no file.
    """
    pairs: list[tuple[str, str]] = []
    if table is not None:
        pairs.append(("table", table))
    if tags is not None:
        pairs.append(("tags", tags if isinstance(tags, str) else ",".join(tags)))
    if time_column is not None:
        pairs.append(("time_column", time_column))
    for key, value in options.items():
        pairs.append((key, str(value).lower() if isinstance(value, bool) else str(value)))
    return _internal.write_tsfile(_arrow_data(data), os.fspath(path), pairs)


class TsFileTable:
    """A TsFile table (files, a directory or a glob) for datafusion-python.

    >>> from datafusion import SessionContext  # doctest: +SKIP
    >>> ctx = SessionContext()  # doctest: +SKIP
    >>> ctx.register_table("weather", TsFileTable("data/sample.tsfile"))  # doctest: +SKIP
    >>> ctx.sql("SELECT device, max(temperature) FROM weather GROUP BY device")  # doctest: +SKIP

    Filters on time, TAG and FIELD columns are pushed into the scan, which skips
    devices, chunks and pages by their statistics. The files are opened (footers read,
    schema inferred) when the table is made.
    """

    def __init__(
        self,
        path: Paths,
        table: str | None = None,
        storage_options: StorageOptions | None = None,
        **options: Any,
    ) -> None:
        self._inner = _internal.TsFileTable(_paths(path), _options(table, options), _storage(storage_options))

    @property
    def schema(self) -> pa.Schema:
        """The table's Arrow schema."""
        return pa.schema(self._inner)

    @property
    def paths(self) -> list[str]:
        """The paths the table was made from."""
        return self._inner.paths

    def __datafusion_table_provider__(self, session: Any) -> object:
        return self._inner.__datafusion_table_provider__(session)

    def __arrow_c_schema__(self) -> object:
        return self._inner.__arrow_c_schema__()

    def __repr__(self) -> str:
        return f"TsFileTable({self.paths!r})"


class TsFileTableFactory:
    """``CREATE EXTERNAL TABLE … STORED AS TSFILE`` for a datafusion-python session:
    ``ctx.register_table_factory("TSFILE", TsFileTableFactory())``. Options of the
    statement (``OPTIONS ('table' 'weather')``) are the reading options; a URL
    ``LOCATION`` (``s3://``, ``gs://``, ``http(s)://``) is read with ``storage_options``
    (as for :func:`read_tsfile`), whatever stores the session has."""

    def __init__(self, storage_options: StorageOptions | None = None) -> None:
        self._inner = _internal.TsFileTableFactory(_storage(storage_options))

    def __datafusion_table_provider_factory__(self, session: Any) -> object:
        return self._inner.__datafusion_table_provider_factory__(session)


from .series import list_series, read_series, windows  # noqa: E402  (uses the names above)

__all__ = [
    "read_tsfile",
    "read_tsfile_batches",
    "metadata",
    "export_parquet",
    "sql",
    "write_tsfile",
    "TsFileTable",
    "TsFileTableFactory",
    "TsFileBatchReader",
    "TsFileError",
    "TsFileNotFoundError",
    "CorruptFileError",
    "EncryptionError",
    "UnsupportedError",
    "InvalidArgumentError",
    "list_series",
    "read_series",
    "windows",
    "__version__",
]


def __dir__() -> list[str]:
    """The public names only (``dir(datafusion_tsfile)``), not the module's imports."""
    return sorted(__all__)
