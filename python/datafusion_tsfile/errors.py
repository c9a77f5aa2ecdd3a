"""Exceptions raised by datafusion_tsfile.

Every error of the package is a :class:`TsFileError`; the subclasses also derive from
the built-in exception one would catch anyway (a missing file is a ``FileNotFoundError``).
"""

from __future__ import annotations


class TsFileError(Exception):
    """Base class of every error raised by datafusion_tsfile."""


class TsFileNotFoundError(TsFileError, FileNotFoundError):
    """A file, directory or glob that names nothing."""


class CorruptFileError(TsFileError, ValueError):
    """The bytes of a file violate the TsFile format (truncated, corrupt, undecompressable)."""


class EncryptionError(TsFileError, PermissionError):
    """An encrypted file without a usable key, or a page that does not decrypt with it."""


class UnsupportedError(TsFileError, NotImplementedError):
    """A valid construct this reader does not implement."""


class InvalidArgumentError(TsFileError, ValueError):
    """A bad argument: an unknown option, table or column, a time bound of the wrong kind."""


__all__ = [
    "TsFileError",
    "TsFileNotFoundError",
    "CorruptFileError",
    "EncryptionError",
    "UnsupportedError",
    "InvalidArgumentError",
]
