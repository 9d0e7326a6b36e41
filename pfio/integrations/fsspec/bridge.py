"""``PfioFileSystem``: fsspec's view of pfio (protocol ``pfio``).

A path is ``SCHEME/netloc/path`` (``pfio://`` optional): ``pfio://s3/bucket/key`` is
``s3://bucket/key``, ``pfio://mem/store/x`` is ``mem://store/x`` and ``pfio://file/abs/x`` is
``/abs/x``. A path through a container (``pfio://s3/b/train.zip/img/1.jpg``) reads the member.

Every call goes to the pfio filesystem at the top of the path's bucket, store or root
directory (one per scheme and netloc, kept by the instance), so directories are created,
listed and removed at every level whatever exists yet.

On stores that keep no directories (S3) a directory made through the bridge (or through
the ``os`` patches) is one for the rest of the process (see :mod:`pfio.fs.made_directories`),
and a file opened to append is rewritten
whole (see :mod:`.appends`), so code written for local disk (Lightning's loggers) runs as it
does there.
"""

from __future__ import annotations

import errno
import io
import posixpath
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import IO, Any

from fsspec.spec import AbstractFileSystem

from ..._uri import parse_uri, split_container_path
from ...api import from_url
from ...digests import sha256_hex
from ...fs import made_directories
from ...fs.base import FS
from ...fs.globbing import has_magic
from ...fs.positional import PositionalReader
from ...fs.stat import FileStat, with_implied_directories
from ...trace.redact import redact
from . import appends, tensorboard

#: keyword arguments of fsspec's ``open`` that pfio's ``FS.open`` takes as they are
_OPEN_KWARGS = ("encoding", "errors", "newline", "compresslevel")


def pfio_url(path: str) -> str:
    """The pfio URL of an fsspec ``pfio://scheme/netloc/path`` path."""
    rest = path[len("pfio://"):] if path.startswith("pfio://") else path.lstrip("/")
    scheme, _, remainder = rest.partition("/")
    if not scheme:
        raise ValueError(f"{redact(path)!r}: expected pfio://SCHEME/..., e.g. "
                         "pfio://s3/bucket/key")
    if scheme == "file":
        return "/" + remainder
    return f"{scheme}://{remainder}"


# fsspec ships no type information: its base class is Any to mypy
class PfioFileSystem(AbstractFileSystem):  # type: ignore[misc]
    """An fsspec filesystem over every pfio URL: pandas, pyarrow and Dask read through pfio.

    Args:
        auto_mkdir: create the missing parent directories of a file opened for writing (as
            fsspec's local filesystem does; object stores need none).
        options: backend options for the pfio filesystems this one opens, e.g.
            ``endpoint=`` for S3 (``storage_options`` in pandas and Dask).
    """

    protocol = "pfio"
    root_marker = ""

    def __init__(self, auto_mkdir: bool = False, **options: Any) -> None:
        super().__init__(auto_mkdir=auto_mkdir, **options)
        self.auto_mkdir = auto_mkdir
        self.options = options
        self._tops: dict[tuple[str, str], FS] = {}
        tensorboard.install()

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path)
        if path.startswith("pfio://"):
            path = path[len("pfio://"):]
        return path.rstrip("/")

    # -- from fsspec paths to pfio filesystems ---------------------------------------------

    @contextmanager
    def target(self, path: str) -> Iterator[tuple[FS, str]]:
        """The pfio filesystem holding ``path`` and the name of ``path`` on it: the top of
        the bucket/store/root, or the innermost container along the path (a context
        manager: a container opened for it is closed at the end of the block). For code
        that builds on this filesystem and wants pfio's own file objects."""
        uri = parse_uri(pfio_url(self._strip_protocol(path)))
        _, containers, inner = split_container_path(uri.path)
        if containers and inner:
            container = from_url(str(uri.with_path(uri.path[:-len(inner)].rstrip("/"))),
                                 **self.options)
            try:
                yield container, inner.strip("/")
            finally:
                container.close()
            return
        key = (uri.scheme, uri.netloc)
        top = self._tops.get(key)
        if top is None:
            top = self._tops[key] = from_url(str(uri.with_path("/")), **self.options)
        yield top, uri.path.strip("/")

    # -- inspecting -------------------------------------------------------------------------

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        """The entries of the directory ``path`` (``[path]`` itself when it is a file)."""
        path = self._strip_protocol(path)
        url = self._url(path)
        with self.target(path) as (fs, name):
            try:
                listing = list(fs.list(name, detail=True))
            except NotADirectoryError:
                entry = _entry(path, fs.stat(name))
                return [entry] if detail else [entry["name"]]
            except FileNotFoundError:
                if not made_directories.made(url):
                    raise
                listing = []
        entries = sorted((_entry(posixpath.join(path, st.filename.rstrip("/")), st)
                          for st in made_directories.listed(url, listing)),
                         key=lambda e: e["name"])
        return entries if detail else [e["name"] for e in entries]

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        """``name``, ``size``, ``type``, and ``mtime`` and ``ETag`` where the backend knows
        them."""
        path = self._strip_protocol(path)
        with self.target(path) as (fs, name):
            try:
                return _entry(path, fs.stat(name))
            except FileNotFoundError:
                if not made_directories.made(self._url(path)):
                    raise
                return _entry(path, FileStat.directory(path))

    def find(self, path: str, maxdepth: int | None = None, withdirs: bool = False,
             detail: bool = False, **kwargs: Any) -> Any:
        """As fsspec's ``find``, from one recursive listing (one paged listing on S3)."""
        if maxdepth is not None:
            return super().find(path, maxdepth, withdirs, detail, **kwargs)
        path = self._strip_protocol(path)
        found: dict[str, dict[str, Any]] = {}
        with self.target(path) as (fs, name):
            try:
                listing = fs.list(name, recursive=True, detail=True)
                for st in with_implied_directories(listing) if withdirs else listing:
                    if withdirs or not st.isdir():
                        full = posixpath.join(path, st.filename.rstrip("/"))
                        found[full] = _entry(full, st)
                if withdirs and path:
                    found[path] = _entry(path, FileStat.directory(path))
            except NotADirectoryError:
                found[path] = _entry(path, fs.stat(name))
            except FileNotFoundError:
                pass
        names = sorted(found)
        return {n: found[n] for n in names} if detail else names

    def exists(self, path: str, **kwargs: Any) -> bool:
        if made_directories.made(self._url(path)):
            return True
        with self.target(path) as (fs, name):
            return fs.exists(name)

    def isdir(self, path: str) -> bool:
        """True for a directory, and for one made through the bridge in this process on a
        store that keeps no directories (S3), until it is removed through the bridge."""
        if made_directories.made(self._url(path)):
            return True
        with self.target(path) as (fs, name):
            return fs.isdir(name)

    def modified(self, path: str) -> datetime:
        """The modification time of ``path`` (UTC).

        Raises:
            NotImplementedError: the backend does not know it (an S3 prefix), as fsspec's
                filesystems say so.
        """
        mtime = self.info(path).get("mtime")
        if mtime is None:
            raise NotImplementedError(f"no modification time for {redact(path)!r}")
        return datetime.fromtimestamp(mtime, tz=timezone.utc)

    def ukey(self, path: str) -> str:
        """A key that changes when the file does: its ETag where the backend has one (S3),
        else a hash of its size and modification time."""
        info = self.info(path)
        etag = info.get("ETag")
        if etag:
            return str(etag)
        token = f"{info['name']}|{info['size']}|{info.get('mtime')}"
        return sha256_hex(token.encode())

    def checksum(self, path: str) -> int:
        """:meth:`ukey` as an integer (what fsspec's caches compare)."""
        return int(sha256_hex(self.ukey(path).encode())[:16], 16)

    # -- files ------------------------------------------------------------------------------

    def open(self, path: str, mode: str = "rb", block_size: int | None = None,
             cache_options: dict[str, Any] | None = None, compression: str | None = None,
             **kwargs: Any) -> IO[Any]:
        """Open ``path`` with pfio: text and binary modes, and ``compression`` (``"infer"``
        or a codec name) through pfio's codecs (see :mod:`pfio.compression`). On a backend
        that cannot append (S3), ``"a"`` rewrites the file whole when it is closed (see
        :mod:`.appends`).

        Raises:
            IsADirectoryError: writing to a directory made through the bridge.
        """
        path = self._strip_protocol(path)
        options = {k: kwargs[k] for k in _OPEN_KWARGS if kwargs.get(k) is not None}
        if block_size and block_size > 1:
            options["buffering"] = block_size
        writing = any(c in mode for c in "wax")
        if writing and made_directories.made(self._url(path)):
            raise IsADirectoryError(errno.EISDIR, "is a directory", redact(path))
        if self.auto_mkdir and writing:
            self.makedirs(self._parent(path), exist_ok=True)
        with self.target(path) as (fs, name):
            try:
                return fs.open(name, mode, compression=compression, **options)
            except io.UnsupportedOperation:
                if "a" not in mode or "+" in mode:
                    raise
            return appends.open_rewriting(fs, name, redact(path), mode, compression, **options)

    def _open(self, path: str, mode: str = "rb", block_size: int | None = None,
              autocommit: bool = True, cache_options: dict[str, Any] | None = None,
              **kwargs: Any) -> IO[Any]:
        return self.open(path, mode, block_size, cache_options, **kwargs)

    def cat_file(self, path: str, start: int | None = None, end: int | None = None,
                 **kwargs: Any) -> bytes:
        """The bytes of ``path``, or of ``[start, end)`` with one ranged read (negative
        offsets count from the end)."""
        if start is None and end is None:
            with self.open(path, "rb") as f:
                whole: bytes = f.read()
                return whole
        start = start or 0
        tail = start < 0 and end is None
        # the opening request of an S3 reader reads the tail, or just probes the object
        with self.target(path) as (fs, name), \
                fs.open(name, "rb", first_fetch=start if tail else 1) as f:
            reader = PositionalReader(f)
            if tail:
                return reader.read_tail(-start)[1]
            if start < 0 or (end is not None and end < 0):
                size = f.seek(0, 2)
                start = max(0, size + start) if start < 0 else start
                end = size + end if end is not None and end < 0 else end
            stop = f.seek(0, 2) if end is None else end
            return reader.read_at(start, max(0, stop - start))

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite",
                  **kwargs: Any) -> None:
        """Store ``value`` at ``path``; ``mode="create"`` raises ``FileExistsError`` when
        ``path`` exists."""
        with self.open(path, "xb" if mode == "create" else "wb") as f:
            f.write(value)

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        """Copy the file ``path1`` to ``path2`` (a directory: create ``path2``)."""
        try:
            source = self.open(path1, "rb")
        except (IsADirectoryError, FileNotFoundError):
            if not self.isdir(path1):
                raise
            self.makedirs(path2, exist_ok=True)
            return
        with source, self.open(path2, "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)

    # -- changing ---------------------------------------------------------------------------

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        """Create the directory ``path``, and with ``create_parents`` every missing level
        above it (a no-op on object stores)."""
        with self.target(path) as (fs, name):
            if create_parents:
                fs.makedirs(name, exist_ok=True)
            else:
                fs.mkdir(name)
        made_directories.note(self._url(path), fs, parents=create_parents)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        """Create ``path`` and every missing level above it (see :meth:`isdir` for stores
        without directories)."""
        with self.target(path) as (fs, name):
            fs.makedirs(name, exist_ok=exist_ok)
        made_directories.note(self._url(path), fs, parents=True)

    def rmdir(self, path: str) -> None:
        """Remove the empty directory ``path``."""
        url = self._url(path)
        with self.target(path) as (fs, name):
            if fs.isdir(name):
                fs.remove(name)
            elif not made_directories.made(url):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", redact(path))
            elif made_directories.children(url):
                raise OSError(errno.ENOTEMPTY, "directory not empty", redact(path))
        made_directories.forget(url)

    def rm_file(self, path: str) -> None:
        with self.target(path) as (fs, name):
            fs.remove(name)

    def _rm(self, path: str) -> None:
        self.rm_file(path)

    def rm(self, path: str | list[str], recursive: bool = False,
           maxdepth: int | None = None) -> None:
        """Remove ``path`` (a name, a glob or a list); with ``recursive`` whole directories,
        each with one recursive remove of its backend (batched deletes on S3), so a removal
        never stops half way when a prefix empties."""
        if maxdepth is not None:
            super().rm(path, recursive, maxdepth)
            return
        removed: list[str] = []
        for p in sorted(self.expand_path(path)):
            if any(p.startswith(r + "/") for r in removed):
                continue  # went with its directory
            url = self._url(p)
            with self.target(p) as (fs, name):
                try:
                    fs.remove(name, recursive=recursive)
                except FileNotFoundError:
                    if not made_directories.made(url):  # an empty one made here: forgotten
                        raise
            made_directories.forget(url)
            removed.append(p)

    def mv(self, path1: Any, path2: Any, recursive: bool = False,
           maxdepth: int | None = None, **kwargs: Any) -> None:
        """Move ``path1`` to ``path2``: a rename on the backend (a server-side copy on S3)
        when both are on the same filesystem and ``path2`` does not exist yet, else a copy
        and a remove."""
        if isinstance(path1, str) and isinstance(path2, str) and not path2.endswith("/") \
                and not has_magic(path1) and maxdepth is None and self._same_top(path1, path2) \
                and not self.exists(path2) and (recursive or not self.isdir(path1)):
            if self.auto_mkdir:
                self.makedirs(self._parent(path2), exist_ok=True)
            with self.target(path1) as (fs, name1), self.target(path2) as (_, name2):
                try:
                    if not made_directories.made(self._url(path1)) or fs.exists(name1):
                        fs.rename(name1, name2)
                    made_directories.move(self._url(path1), self._url(path2))
                    return
                except IsADirectoryError:
                    pass  # S3 prefixes do not rename: copy and remove them
        super().mv(path1, path2, recursive=recursive, maxdepth=maxdepth, **kwargs)

    def _url(self, path: str) -> str:
        """The pfio URL of the fsspec path ``path``."""
        return pfio_url(self._strip_protocol(path))

    def _same_top(self, path1: str, path2: str) -> bool:
        uri1, uri2 = (parse_uri(self._url(p)) for p in (path1, path2))
        return (uri1.scheme, uri1.netloc) == (uri2.scheme, uri2.netloc) and not any(
            split_container_path(u.path)[1] for u in (uri1, uri2))


def _entry(name: str, st: FileStat) -> dict[str, Any]:
    """fsspec's info dict of ``st`` under ``name``."""
    entry: dict[str, Any] = {"name": name, "size": st.size,
                             "type": "directory" if st.isdir() else "file"}
    if st.last_modified is not None:
        entry["mtime"] = st.last_modified
    etag = getattr(st, "etag", None)
    if etag:
        entry["ETag"] = etag
    return entry
