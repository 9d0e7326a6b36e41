"""``torch.distributed.checkpoint`` (DCP) storage over any pfio URL.

    import torch.distributed.checkpoint as dcp
    from pfio.integrations.dcp import PfioWriter, PfioReader

    dcp.save(state_dict, storage_writer=PfioWriter("s3://bucket/run1/step-100"))
    dcp.load(state_dict, storage_reader=PfioReader("s3://bucket/run1/step-100"))

Each rank writes its own files; the metadata file is written last (atomically, as every pfio
write), so a checkpoint without metadata is an incomplete one. On object stores pass
``sync_files=False``: there is nothing to fsync and DCP would fall back to a global ``os.sync``.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Generator
from typing import Any

from torch.distributed.checkpoint.filesystem import (
    FileSystemBase,
    FileSystemReader,
    FileSystemWriter,
)

from .._uri import parse_uri
from ..api import from_url, open_url


class PfioFileSystem(FileSystemBase):
    """DCP's file-system interface over pfio URLs."""

    @contextlib.contextmanager
    def create_stream(self, path: str | os.PathLike, mode: str) -> Generator[Any, None, None]:
        with open_url(str(path), mode) as stream:
            yield stream

    def concat_path(self, path: str | os.PathLike, suffix: str) -> str:
        return posixpath.join(str(path), suffix)

    def rename(self, path: str | os.PathLike, new_path: str | os.PathLike) -> None:
        parent, name = posixpath.split(str(path))
        with from_url(parent) as fs:
            fs.rename(name, posixpath.relpath(str(new_path), parent))

    def init_path(self, path: str | os.PathLike, **kwargs: Any) -> str:
        return str(path).rstrip("/")

    def mkdir(self, path: str | os.PathLike) -> None:
        parent, name = posixpath.split(str(path).rstrip("/"))
        with from_url(parent) as fs:
            fs.makedirs(name, exist_ok=True)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        try:
            parse_uri(os.fspath(checkpoint_id))
        except (TypeError, ValueError):
            return False
        return True

    def exists(self, path: str | os.PathLike) -> bool:
        parent, name = posixpath.split(str(path))
        with from_url(parent) as fs:
            return fs.exists(name)

    def rm_file(self, path: str | os.PathLike) -> None:
        parent, name = posixpath.split(str(path))
        with from_url(parent) as fs:
            fs.remove(name)


class PfioWriter(FileSystemWriter):
    """A DCP ``StorageWriter`` writing to a pfio URL (arguments as ``FileSystemWriter``)."""

    def __init__(self, path: str, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.fs = PfioFileSystem()
        self.path = self.fs.init_path(path)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        return PfioFileSystem.validate_checkpoint_id(checkpoint_id)


class PfioReader(FileSystemReader):
    """A DCP ``StorageReader`` reading from a pfio URL."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.fs = PfioFileSystem()
        self.path = self.fs.init_path(path)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        return PfioFileSystem.validate_checkpoint_id(checkpoint_id)
