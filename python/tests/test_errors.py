"""Bad input raises a `TsFileError` subclass (and the built-in exception it stands for),
never crashes the interpreter: missing paths, encrypted files without their key, bad
arguments, errors in the middle of a stream. (Every hand-made corrupt file is read in
test_corpus.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

import datafusion_tsfile as tsf
from datafusion_tsfile import errors

def test_hierarchy() -> None:
    assert issubclass(errors.TsFileNotFoundError, FileNotFoundError)
    assert issubclass(errors.CorruptFileError, ValueError)
    assert issubclass(errors.EncryptionError, PermissionError)
    assert issubclass(errors.UnsupportedError, NotImplementedError)
    assert issubclass(errors.InvalidArgumentError, ValueError)
    for cls in (errors.TsFileNotFoundError, errors.CorruptFileError, errors.EncryptionError,
                errors.UnsupportedError, errors.InvalidArgumentError):
        assert issubclass(cls, tsf.TsFileError)


def test_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        tsf.read_tsfile(str(tmp_path / "absent.tsfile"))
    with pytest.raises(tsf.TsFileNotFoundError):
        tsf.read_tsfile(str(tmp_path / "*.tsfile"))  # a glob matching nothing
    with pytest.raises(tsf.TsFileNotFoundError):
        tsf.read_tsfile(str(tmp_path))  # a directory without TsFiles
    with pytest.raises(tsf.TsFileNotFoundError):
        tsf.TsFileTable(str(tmp_path / "absent.tsfile"))
    with pytest.raises(tsf.TsFileNotFoundError):
        tsf.metadata(str(tmp_path / "absent.tsfile"))
    with pytest.raises(tsf.InvalidArgumentError):
        tsf.read_tsfile([])


def test_wrong_or_missing_key(data_dir: Path) -> None:
    path = str(data_dir / "encrypted" / "aes128_level2.tsfile")
    with pytest.raises(tsf.EncryptionError):
        tsf.read_tsfile(path)
    with pytest.raises(tsf.TsFileError):
        tsf.read_tsfile(path, master_key="0123456789abcdef")
    with pytest.raises(tsf.InvalidArgumentError):
        tsf.read_tsfile(path, master_key="short")


def test_stream_errors_are_tsfile_errors(data_dir: Path) -> None:
    path = str(data_dir / "corrupt" / "decompressed_size_mismatch.tsfile")
    with pytest.raises(tsf.CorruptFileError, match="LZ4"):
        for _ in tsf.read_tsfile_batches(path):
            pass
