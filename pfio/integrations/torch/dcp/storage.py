"""``PfioFileSystem``: DCP's file-system interface over pfio URLs, and the data-file names
of a checkpoint."""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Generator, Iterator
from typing import Any

from torch.distributed.checkpoint.filesystem import FileSystemBase

from ...._uri import parse_uri
from ....api import from_url, open_url
from ..save_stream import SaveStream

#: what DCP's data files end with
DATA_SUFFIX = ".distcp"


def is_data_file(relative_path: str) -> bool:
    """Whether ``relative_path`` (inside a checkpoint) names a DCP data file
    (``[prefix/]__<rank>_..._<n>.distcp``)."""
    name = posixpath.basename(relative_path)
    return name.startswith("__") and name.endswith(DATA_SUFFIX)


class PfioFileSystem(FileSystemBase):
    """DCP's file-system interface over pfio URLs (every write is atomic: a file appears
    whole when its stream closes, and not at all when writing it raised).

    Args:
        options: options of the file systems (``from_url(url, **options)``: an S3
            endpoint, ``mpu_chunksize``, a ``retry`` policy, ...).
    """

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.options = dict(options or {})

    @contextlib.contextmanager
    def _open(self, path: str, mode: str, **kwargs: Any) -> Generator[Any, None, None]:
        if not self.options:
            with open_url(path, mode, **kwargs) as stream:
                yield stream
            return
        parent, name = posixpath.split(path)
        with from_url(parent, **self.options) as fs, fs.open(name, mode, **kwargs) as stream:
            yield stream

    @contextlib.contextmanager
    def create_stream(self, path: str | os.PathLike[str], mode: str) -> Generator[Any, None, None]:
        """``path`` opened in ``mode``; a write's error is raised in place of torch's (see
        :mod:`pfio.integrations.torch.save_stream`)."""
        with self._open(str(path), mode) as f:
            if "w" not in mode:
                yield f
                return
            stream = SaveStream(f, str(path))
            try:
                yield stream
            except Exception as exc:
                stream.reraise(exc)
                raise

    @contextlib.contextmanager
    def create_stream_hinted(self, path: str, first_fetch: int) -> Generator[Any, None, None]:
        """A binary reader of ``path`` whose opening request (on S3) fetches its first
        ``first_fetch`` bytes."""
        with self._open(path, "rb", first_fetch=first_fetch) as stream:
            yield stream

    def concat_path(self, path: str | os.PathLike[str], suffix: str) -> str:
        return posixpath.join(str(path), suffix)

    def rename(self, path: str | os.PathLike[str], new_path: str | os.PathLike[str]) -> None:
        parent, name = posixpath.split(str(path))
        with from_url(parent, **self.options) as fs:
            fs.rename(name, posixpath.relpath(str(new_path), parent))

    def init_path(self, path: str | os.PathLike[str], **kwargs: Any) -> str:
        return str(path).rstrip("/")

    def mkdir(self, path: str | os.PathLike[str]) -> None:
        parent, name = posixpath.split(str(path).rstrip("/"))
        with from_url(parent, **self.options) as fs:
            fs.makedirs(name, exist_ok=True)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike[str]) -> bool:
        try:
            parse_uri(os.fspath(checkpoint_id))
        except (TypeError, ValueError):
            return False
        return True

    def exists(self, path: str | os.PathLike[str]) -> bool:
        parent, name = posixpath.split(str(path))
        with from_url(parent, **self.options) as fs:
            return fs.exists(name)

    def rm_file(self, path: str | os.PathLike[str]) -> None:
        parent, name = posixpath.split(str(path))
        with from_url(parent, **self.options) as fs:
            fs.remove(name)

    def data_files(self, path: str | os.PathLike[str]) -> Iterator[str]:
        """The data files under the checkpoint ``path``, relative to it (none when it
        does not exist)."""
        try:
            with from_url(str(path), **self.options) as fs:
                names = list(fs.list(recursive=True))
        except FileNotFoundError:
            return
        yield from (name for name in names if is_data_file(name))
