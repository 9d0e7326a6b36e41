"""``CachedFS``: any filesystem, read through an :class:`~pfio.cache.ObjectCache`.

Small files are cached whole (the cached copy is opened as a plain local file); larger ones
in blocks of a sparse local file, fetched as they are read (see :mod:`pfio.cache.blocks`).
A miss opens the source once, and that opening decides which (on S3: one GET, which tells
the size and the ETag the entry records; no HEAD), fills the whole copy or serves the first
blocks. So a zip archive on S3 opened through a ``CachedFS`` reads its central directory
and its members from local disk from the second epoch on, with no request to S3 at all
(with ``validate="never"`` or ``"ttl"``; ``"open"`` asks the source for a stat on each
open).
Everything else (listing, stat, writes, removal) goes to the wrapped filesystem; writes,
removals and renames forget what is cached of the paths they touch (a write when it is opened
and again when it is published, so that a copy cached by a reader meanwhile goes too).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import IO, Any

from ..fs.base import FS
from ..fs.file_types import as_binary_io
from ..fs.modes import Mode
from ..fs.stat import FileStat
from ..fs.writers import sink_of
from ..trace import hook
from .blocks import BlockFile, block_file_filler
from .object_cache import Fill, ObjectCache, Source


def make_object_cache(cache: ObjectCache | str | os.PathLike[str] | bool) -> ObjectCache:
    """The object cache a ``cache=`` option names: an :class:`ObjectCache`, a directory for
    one, or True for the default one (``$XDG_CACHE_HOME/pfio/objects``)."""
    if isinstance(cache, ObjectCache):
        return cache
    if cache is True:
        from .object_cache import default_object_cache

        return default_object_cache()
    if isinstance(cache, (str, os.PathLike)):
        return ObjectCache(os.fspath(cache))
    raise TypeError(f"cache must be True, a directory or an ObjectCache, not {cache!r}")


class CachedFS(FS):
    """Reads ``fs`` through ``cache``.

    Args:
        fs: the filesystem to read through the cache.
        cache: an :class:`ObjectCache`, a directory for one, or True for the default.
        whole_file_limit: files up to this size (bytes) are cached whole; larger ones in
            blocks.
        block_size: the block size of block-cached files.
    """

    def __init__(self, fs: FS, cache: ObjectCache | str | bool = True, *,
                 whole_file_limit: int = 16 << 20, block_size: int = 1 << 20) -> None:
        super().__init__()
        if block_size <= 0:
            raise ValueError("block_size must be positive")
        self.fs = fs
        self.cache = make_object_cache(cache)
        self.whole_file_limit = whole_file_limit
        self.block_size = block_size
        self.scheme = fs.scheme
        # directories and listings are the wrapped filesystem's
        self.implicit_directories = fs.implicit_directories
        self.list_implied_directories = fs.list_implied_directories

    def __repr__(self) -> str:
        return f"CachedFS({self.fs!r}, {self.cache!r})"

    # -- reading -------------------------------------------------------------------------

    def _open(self, path: str, mode: Mode, buffering: int, encoding: str | None,
              errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        """Writes go to the wrapped filesystem (with its options); reads come from the cache.
        A miss opens the source once: from its tail when the caller asks for a tail-first
        opening (S3's negative ``first_fetch``, as zip and Parquet readers do), else from
        the start; other read options do not apply."""
        if mode.writing:
            self._forget(path)
            text_or_binary = mode.binary_mode if mode.binary else mode.binary_mode[:-1]
            f = self.fs.open(path, text_or_binary, buffering, encoding, errors, newline,
                             **kwargs)
            sink = sink_of(f)
            if sink is not None:  # None: written in place, as local appends
                sink.when_published(lambda: self._forget(path))
            return f
        return super()._open(path, mode, buffering, encoding, errors, newline, **kwargs)

    def _open_binary(self, path: str, mode: Mode, buffering: int, encoding: str | None,
                     errors: str | None, newline: str | None, **kwargs: Any) -> IO[Any]:
        first_fetch = kwargs.get("first_fetch")
        # a tail-first reader (zip, Parquet) opens with its tail; any other opening reads
        # from the start, as a whole copy needs (on S3: a plain GET of the whole object)
        tail = first_fetch is not None and int(first_fetch) < 0
        source = Source(self.fs, path, open_options={"first_fetch": first_fetch} if tail else None)
        start = time.perf_counter() if hook.ENABLED else 0.0
        local = self.cache.open_cached(source)
        if local is not None:
            return local
        if self.cache.has_entry(source, ".blk"):
            return as_binary_io(BlockFile(self.cache, source, self.block_size))
        try:
            suffix, fd, hit = self.cache.acquire_first(
                source, [(".obj", os.O_RDONLY), (".blk", os.O_RDWR)], self._kind)
            if suffix == ".obj":
                return self.cache.open_entry(source, fd, hit, start)
            return as_binary_io(BlockFile(self.cache, source, self.block_size, acquired=(fd, hit)))
        except BaseException:
            source.close()
            raise

    def _kind(self, source: Source) -> tuple[str, Fill, int]:
        """How a missing entry is made: the source is opened (once) to learn its size."""
        source.open()
        if source.size() > self.whole_file_limit:
            return ".blk", block_file_filler(self.block_size), os.O_RDWR
        return ".obj", self.cache.download, os.O_RDONLY

    # -- delegated -----------------------------------------------------------------------

    def list(self, path: str = "", recursive: bool = False,
             detail: bool = False) -> Iterator[Any]:
        """See :meth:`FS.list` (not cached)."""
        return self.fs.list(path, recursive, detail)

    def stat(self, path: str) -> FileStat:
        """See :meth:`FS.stat` (not cached)."""
        return self.fs.stat(path)

    def isdir(self, path: str) -> bool:
        """See :meth:`FS.isdir`."""
        return self.fs.isdir(path)

    def exists(self, path: str) -> bool:
        """See :meth:`FS.exists`."""
        return self.fs.exists(path)

    def mkdir(self, path: str, mode: int = 0o777) -> None:
        """See :meth:`FS.mkdir`."""
        self.fs.mkdir(path, mode)

    def makedirs(self, path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        """See :meth:`FS.makedirs`."""
        self.fs.makedirs(path, mode, exist_ok)

    def remove(self, path: str, recursive: bool = False) -> None:
        """Remove ``path`` from the wrapped filesystem and forget its cached copy."""
        self.fs.remove(path, recursive)
        self._forget(path)

    def rename(self, src: str, dst: str) -> None:
        """Rename on the wrapped filesystem and forget what is cached of both paths."""
        self.fs.rename(src, dst)
        self._forget(src)
        self._forget(dst)

    def _forget(self, path: str) -> None:
        self.cache.invalidate_source(Source(self.fs, path))

    def subfs(self, path: str) -> CachedFS:
        """The same cache over ``fs.subfs(path)`` (a view: nothing is copied)."""
        sub = self._view()
        sub.fs = self.fs.subfs(path)
        return sub

    def identity(self, path: str) -> str:
        """The wrapped filesystem's identity of ``path``: a cache changes no bytes."""
        return self.fs.identity(path)

    def _root(self) -> str:
        return self.fs._root()

    def _confined(self, path: str) -> str:
        return self.fs._confined(path)

    def _describe(self, path: str) -> str:
        return self.fs._describe(path)

    def close(self) -> None:
        """Close the wrapped filesystem."""
        self.fs.close()
