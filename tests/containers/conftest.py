"""Fixtures of the container tests: zip archives written with :mod:`zipfile`, and a
filesystem that counts the reads of its files."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS
from pfio.fs.writers import MemoryReader

DATE = (2021, 6, 15, 12, 30, 44)


def zip_bytes(members: dict[str, bytes | None], compression: int = zipfile.ZIP_STORED,
              **kwargs) -> bytes:
    """A zip archive in memory; a ``None`` value makes a directory entry."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression, **kwargs) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = compression
            info.external_attr = (0o40755 if data is None else 0o100640) << 16
            zf.writestr(info, b"" if data is None else data)
    return out.getvalue()


@pytest.fixture(name="zip_bytes")
def zip_bytes_fixture() -> Callable[..., bytes]:
    """:func:`zip_bytes`."""
    return zip_bytes


@pytest.fixture
def make_zip(tmp_path: Path) -> Callable[..., Path]:
    """``make_zip(members, name="a.zip", **zip_bytes_options)``: write an archive under
    ``tmp_path`` and return its path."""

    def make(members: dict[str, bytes | None], name: str = "a.zip", **kwargs) -> Path:
        path = tmp_path / name
        path.write_bytes(zip_bytes(members, **kwargs))
        return path

    return make


@pytest.fixture
def local(tmp_path: Path) -> Local:
    return Local(tmp_path)


class CountingReader(MemoryReader):
    """A file with ``read_at``/``read_tail`` (as S3 readers have) that counts its reads."""

    def __init__(self, data: bytes, counter: dict[str, int]) -> None:
        super().__init__(data)
        self._data = data
        self.counter = counter

    def read_at(self, offset: int, size: int) -> bytes:
        self.counter["reads"] += 1
        chunk = self._data[offset:offset + size]
        self.counter["bytes"] += len(chunk)
        return chunk

    def read_tail(self, size: int) -> tuple[int, bytes]:
        start = max(0, len(self._data) - size)
        return start, self.read_at(start, size)


class CountingFS(MemoryFS):
    """mem:// whose files opened for reading count every ``read_at`` in ``counter``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.counter = {"reads": 0, "bytes": 0}

    def _open_binary(self, path, mode, *args, **kwargs):
        f = super()._open_binary(path, mode, *args, **kwargs)
        if mode.kind != "r":
            return f
        return CountingReader(f.read(), self.counter)


@pytest.fixture
def counting_fs(request) -> CountingFS:
    return CountingFS(f"zip-count-{request.node.name}")
