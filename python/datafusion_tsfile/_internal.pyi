"""Type stubs of the compiled module (python/src); use the wrappers in datafusion_tsfile."""

from typing import Any, Callable, Sequence

__version__: str

TimeArg = int | tuple[str, int]
DeviceArg = str | list[str | None]

class ExportedBatch:
    """One record batch, exported once through the Arrow C data interface."""

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...

class BatchStream:
    """Record batches of a read, consumed once."""

    def __arrow_c_schema__(self) -> object: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def next_batch(self) -> ExportedBatch | None: ...

class TsFileTable:
    """A TsFile table for datafusion-python (`__datafusion_table_provider__`)."""

    def __init__(
        self, paths: Sequence[str], options: dict[str, Any] | None = None, storage_options: dict[str, str] | None = None
    ) -> None: ...
    @property
    def paths(self) -> list[str]: ...
    @property
    def options(self) -> list[tuple[str, str]]: ...
    def __arrow_c_schema__(self) -> object: ...
    def __datafusion_table_provider__(self, session: Any) -> object: ...

class TsFileTableFactory:
    """The `STORED AS TSFILE` factory (`__datafusion_table_provider_factory__`)."""

    def __init__(self, storage_options: dict[str, str] | None = None) -> None: ...
    def __datafusion_table_provider_factory__(self, session: Any) -> object: ...

def read(
    paths: Sequence[str],
    options: dict[str, Any] | None = None,
    columns: Sequence[str] | None = None,
    start: TimeArg | None = None,
    end: TimeArg | None = None,
    devices: Sequence[DeviceArg] | None = None,
    streaming: bool = False,
    storage_options: dict[str, str] | None = None,
) -> BatchStream: ...
def metadata(
    paths: Sequence[str], storage_options: dict[str, str] | None = None, columns: Sequence[str] | None = None
) -> BatchStream: ...
def sql(
    query: str,
    tables: Sequence[tuple[str, TsFileTable | Sequence[str] | Any]] | None = None,
    storage_options: dict[str, str] | None = None,
) -> BatchStream: ...
def write_tsfile(data: Any, path: str, options: Sequence[tuple[str, str]] | None = None) -> int: ...
def export_parquet(
    paths: Sequence[str],
    out: str,
    options: dict[str, Any] | None = None,
    compression: str = "snappy",
    row_group_rows: int = 1048576,
    progress: Callable[[int, int | None, int], None] | None = None,
    storage_options: dict[str, str] | None = None,
) -> int: ...
