"""The files of a Parquet dataset: finding them, and holding them open for a pass."""

from __future__ import annotations

import os
import posixpath
import threading
from typing import IO, Any

from ...api import from_url, open_url
from ...fs.base import FS
from ...fs.positional import PositionalReader


class Opener:
    """Opens the files of a dataset for reading: directly, or through an object cache.

    Args:
        root: the dataset's URL (a directory, or one ``.parquet`` file).
        cache: None, or what :func:`pfio.from_url`'s ``cache=`` option takes (True for the
            default object cache, a directory, or a :class:`pfio.cache.ObjectCache`): files
            are then read from a local copy made on first use (see
            :class:`pfio.cache.CachedFS`), shared by processes and kept across runs.
    """

    def __init__(self, root: str, cache: Any = None) -> None:
        self.root = posixpath.dirname(root) if root.endswith(".parquet") else root
        self.cache = cache
        self._lock = threading.Lock()
        self._fs: FS | None = None

    def __call__(self, url: str, **options: Any) -> IO[bytes]:
        """``url`` (a file under the root) opened for binary reading."""
        if self.cache is None or self.cache is False:
            return open_url(url, "rb", **options)
        with self._lock:
            if self._fs is None:
                self._fs = from_url(self.root, cache=self.cache)
        return self._fs.open(url[len(self.root) + 1:], "rb", **options)

    def __reduce__(self) -> tuple[Any, ...]:
        return Opener, (self.root, self.cache)  # the filesystem is made again where used


class OpenFiles:
    """The files of one pass over a dataset (``opened``: those open already), each opened on
    first use and shared by the reading threads through positional reads; all closed at the
    end of the pass."""

    def __init__(self, opened: dict[str, PositionalReader], opener: Opener) -> None:
        self._lock = threading.Lock()
        self._readers = opened
        self._open = opener

    def get(self, url: str) -> PositionalReader:
        with self._lock:
            reader = self._readers.get(url)
            if reader is None:
                reader = self._readers[url] = PositionalReader(self._open(url))
            return reader

    def __enter__(self) -> OpenFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            readers, self._readers = self._readers, {}
        for reader in readers.values():
            reader.file.close()


class SpareFiles:
    """Files opened to read their footers, kept for the first pass in this process (on S3,
    opening a file again costs a request), closed by that pass or by :meth:`close`."""

    def __init__(self, readers: dict[str, PositionalReader]) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._readers = readers

    def take(self) -> dict[str, PositionalReader]:
        """The files, now the caller's to close (none in a forked child: they are the
        parent's)."""
        with self._lock:
            readers, self._readers = self._readers, {}
        return readers if os.getpid() == self._pid else {}

    def close(self) -> None:
        """Close the files no pass took."""
        for reader in self.take().values():
            reader.file.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return SpareFiles, ({},)  # open files stay in the process that opened them


def parquet_files(url: str) -> list[str]:
    """The ``.parquet`` files of the dataset ``url`` (a file, or a directory searched
    recursively, hidden and ``_`` files skipped), sorted."""
    if url.endswith(".parquet"):
        return [url]
    with from_url(url) as fs:
        names = sorted(st.filename for st in fs.list(recursive=True, detail=True)
                       if not st.isdir() and st.filename.endswith(".parquet")
                       and not posixpath.basename(st.filename).startswith((".", "_")))
    if not names:
        raise FileNotFoundError(f"no .parquet files under {url}")
    return [posixpath.join(url, n) for n in names]
