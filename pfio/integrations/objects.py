"""Datasets of objects: every file under a prefix of any pfio URL, read whole or as a file
(framework-free; :mod:`pfio.integrations.torch.objects` wraps it for PyTorch).

* :func:`list_prefix` lists a prefix (``s3://b/train/``, ``hdfs://ns/d``, ``/data``,
  ``mem://x/d``, ``s3://b/train.zip``, ``s3://b/train.zip/images``) recursively into an
  :class:`ObjectList`, names sorted; :func:`list_objects` takes URLs one by one.
* :class:`ObjectReader` gives the object at an index as a :class:`PfioObject` (a read-only,
  seekable binary file with ``url``, ``key``, ``bucket`` and ``size``), either opened when
  first read (:meth:`ObjectReader.object`) or read whole already (:meth:`ObjectReader.fetch`,
  and :meth:`ObjectReader.fetch_many`, which fetches several concurrently).
* :func:`reader_plan` says which objects a distributed rank and one of its loader workers
  read in an epoch.

On S3 reading an object whole costs one GET and no HEAD (sizes come from the listing).
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

import numpy as np

from .._uri import netloc_host, parse_uri
from ..api import from_url
from ..fs.file_types import read_into
from .dataset_io import DEFAULT_WINDOW, ProcessFilesystems, checked_index, fetch_ahead
from .image_items import NameTable


class ObjectList:
    """The objects of a dataset: names under a few root URLs, and their sizes (-1 unknown),
    kept compactly so that millions of them pickle small."""

    def __init__(self, roots: Sequence[str], names: Sequence[str],
                 root_of: Sequence[int] | None = None,
                 sizes: Sequence[int] | None = None) -> None:
        self.roots = [root.rstrip("/") or root for root in roots]
        self._names = NameTable(names)
        count = len(self._names)
        self._root_of = np.zeros(count, np.int32) if root_of is None else \
            np.asarray(root_of, np.int32)
        self._sizes = np.full(count, -1, np.int64) if sizes is None else \
            np.asarray(sizes, np.int64)
        if len(self._root_of) != count or len(self._sizes) != count:
            raise ValueError("names, root_of and sizes differ in length")

    def __len__(self) -> int:
        return len(self._names)

    def root(self, index: int) -> int:
        """Which of :attr:`roots` object ``index`` is under."""
        return int(self._root_of[index])

    def name(self, index: int) -> str:
        """The name of object ``index`` under its root."""
        return self._names[index]

    def size(self, index: int) -> int:
        """The size of object ``index`` from the listing, -1 when unknown."""
        return int(self._sizes[index])

    def url(self, index: int) -> str:
        """The URL of object ``index``."""
        root = self.roots[self.root(index)]
        return f"{root}/{self.name(index)}" if root != "/" else f"/{self.name(index)}"


def list_prefix(url: str, **fs_options: Any) -> ObjectList:
    """The files under ``url``, recursively, sorted by name.

    ``url`` names a directory, an S3 prefix, a zip/tar container or a directory in one. As
    on S3, a URL that names no directory and does not end with ``/`` is a prefix of names:
    ``s3://b/train/img_`` lists ``train/img_0.jpg``, ``train/img_dir/x.jpg``... (its parent
    directory is listed and filtered).

    Args:
        url: where to list.
        fs_options: options of :func:`pfio.from_url` (``endpoint=...``, ``region=...``).

    Raises:
        FileNotFoundError: nothing is at ``url`` (the message names it).
        ValueError: ``url`` holds no files (an empty directory; on S3, where a prefix with
            nothing under it is not told apart from a missing one, any empty prefix).
    """
    root = url.rstrip("/") or url
    try:
        names, sizes = _list_files(root, fs_options)
        missing = False
    except (FileNotFoundError, NotADirectoryError):
        names, sizes, missing = [], [], True
    parent, stem = parse_uri(root).split()
    if not names and stem and not url.endswith("/"):
        try:  # a prefix of names, as on S3
            names, sizes = _list_files(str(parent), fs_options, prefix=stem)
            root = str(parent)
        except (FileNotFoundError, NotADirectoryError):
            pass
    if not names and missing:
        raise FileNotFoundError(errno.ENOENT, "no such directory or prefix", url)
    if not names:
        raise ValueError(f"no objects found under {url}")
    return ObjectList([root], names, sizes=sizes)


def _list_files(url: str, fs_options: dict[str, Any],
                prefix: str = "") -> tuple[list[str], list[int]]:
    with from_url(url, **fs_options) as fs:
        found = sorted((st.filename, st.size) for st in fs.list(recursive=True, detail=True)
                       if not st.isdir() and st.filename.startswith(prefix))
    return [name for name, _ in found], [size for _, size in found]


def list_objects(urls: str | Iterable[str]) -> ObjectList:
    """The objects at ``urls`` (one URL or many), in the order given; nothing is listed or
    checked (a missing object raises when it is read). A relative local path is made
    absolute.

    Raises:
        ValueError: no URLs, or a URL naming the root of a filesystem.
    """
    urls = [urls] if isinstance(urls, str) else list(urls)
    if not urls:
        raise ValueError("no object URLs given")
    roots: dict[str, int] = {}
    names, root_of = [], []
    for url in urls:
        uri = parse_uri(url)
        if uri.scheme == "file":
            root, name = "/", os.path.abspath(uri.path).lstrip("/")
        else:
            root, name = f"{uri.scheme}://{uri.netloc}", uri.path.strip("/")
        if not name:
            raise ValueError(f"{url!r} names the root of a filesystem, not an object")
        names.append(name)
        root_of.append(roots.setdefault(root, len(roots)))
    return ObjectList(list(roots), names, root_of)


class PfioObject(io.BufferedIOBase):
    """One object of a dataset: a read-only, seekable binary file, and where it is.

    What a dataset's ``transform`` receives (as s3torchconnector's transforms receive an
    ``S3Reader``): ``read(size=-1)``, ``readinto``, ``seek``, ``tell`` and :attr:`size` work
    as on any binary file, so ``PIL.Image.open(obj)``, ``torch.load(obj)`` or
    ``obj.read()`` take it. An object fetched ahead holds its bytes; otherwise the file is
    opened on the first read (on S3: one GET, which reads a whole object of up to 1 MiB, and
    goes on reading a larger one). A pickled object carries its bytes.

    Attributes:
        url: the object's URL.
        key: the object's path after the bucket or host: the S3 key for ``s3://`` (as
            s3torchconnector's ``key``; for a member of a zip on S3, ``train.zip/img/1.jpg``),
            the file path for local files, the path in the store for ``mem://``.
        bucket: the URL's bucket (host) for ``s3://`` and other schemes, ``""`` for local
            files.
        name: the object's name relative to the dataset's prefix (or root).
    """

    def __init__(self, url: str, name: str, *, data: bytes | None = None,
                 opener: Callable[[], IO[bytes]] | None = None, size: int = -1) -> None:
        super().__init__()
        if (data is None) == (opener is None):
            raise ValueError("give a PfioObject either data or an opener")
        uri = parse_uri(url)
        self.url = url
        self.name = name
        self.bucket = netloc_host(uri.netloc)
        self.key = uri.path if uri.scheme == "file" else uri.path.lstrip("/")
        self._opener = opener
        self._file: IO[bytes] | None = io.BytesIO(data) if data is not None else None
        self._size = len(data) if data is not None else size

    def __repr__(self) -> str:
        return f"PfioObject({self.url!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _restore, (self.url, self.name, self.getvalue(), self.tell())

    def _f(self) -> IO[bytes]:
        if self.closed:
            raise ValueError(f"I/O operation on a closed object: {self.url}")
        if self._file is None:
            assert self._opener is not None
            self._file = self._opener()
        return self._file

    @property
    def size(self) -> int:
        """The object's size in bytes (from the listing or the bytes held: no request)."""
        if self._size < 0:
            f = self._f()
            position = f.tell()
            self._size = f.seek(0, io.SEEK_END)
            f.seek(position)
        return self._size

    def getvalue(self) -> bytes:
        """The whole object (the position is left alone)."""
        f = self._f()
        if isinstance(f, io.BytesIO):
            return f.getvalue()
        position = f.tell()
        f.seek(0)
        try:
            return f.read()
        finally:
            f.seek(position)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        return self._f().read(-1 if size is None else size)

    def read1(self, size: int = -1) -> bytes:
        return self.read(size)

    def readinto(self, buffer: Any) -> int:
        return read_into(self._f(), buffer) or 0  # (a buffered file never answers None)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._f().seek(offset, whence)

    def tell(self) -> int:
        return self._f().tell()

    def close(self) -> None:
        """Close the file (a fetched object drops its bytes)."""
        if self._file is not None:
            self._file.close()
        super().close()


def _restore(url: str, name: str, data: bytes, position: int) -> PfioObject:
    obj = PfioObject(url, name, data=data)
    obj.seek(position)
    return obj


class ObjectReader:
    """The objects of an :class:`ObjectList`, read through filesystems opened lazily in each
    process (it pickles small, to DataLoader workers made by fork, spawn or forkserver).

    Args:
        objects: what to read.
        fs_options: options of :func:`pfio.from_url` for the objects' filesystems.
    """

    def __init__(self, objects: ObjectList, fs_options: dict[str, Any] | None = None) -> None:
        self.objects = objects
        self._filesystems = ProcessFilesystems(objects.roots, fs_options)

    def __len__(self) -> int:
        return len(self.objects)

    def checked(self, index: int) -> int:
        """``index`` counted from the start (a negative one counts from the end).

        Raises:
            IndexError: out of range.
        """
        return checked_index(index, len(self.objects), "objects")

    def object(self, index: int) -> PfioObject:
        """Object ``index``, its file opened on the first read (nothing is sent before)."""
        index = self.checked(index)
        objects = self.objects
        root, name = objects.root(index), objects.name(index)
        return PfioObject(objects.url(index), name, size=objects.size(index),
                          opener=lambda: self._filesystems.open(root, name))

    def fetch(self, index: int) -> PfioObject:
        """Object ``index`` read whole (on S3: one GET, no HEAD).

        Raises:
            FileNotFoundError: it is missing (the message names its URL).
        """
        index = self.checked(index)
        objects = self.objects
        data = self._filesystems.read(objects.root(index), objects.name(index))
        return PfioObject(objects.url(index), objects.name(index), data=data)

    def fetch_many(self, indices: Iterable[int],
                   window: int = DEFAULT_WINDOW) -> Iterator[PfioObject]:
        """:meth:`fetch` of each of ``indices``, in order, up to ``window`` fetched
        concurrently ahead of the one being consumed (``window`` <= 1: one at a time, when
        wanted). Indices are checked as they come; an error is raised at its object's turn.
        """
        return fetch_ahead(self.fetch, indices, window)


def reader_plan(count: int, *, epoch: int = 0, seed: int = 0, shuffle: bool = False,
                rank: int = 0, world_size: int = 1, worker: int = 0, num_workers: int = 1,
                even: bool = True) -> np.ndarray:
    """The indices (of ``count`` objects) one reader reads in ``epoch``, in order.

    The epoch's order (``range(count)``, or a permutation drawn from ``seed + epoch`` with
    ``shuffle``) is dealt out round-robin to the ``world_size`` ranks, then each rank's share
    round-robin to its ``num_workers`` loader workers. With ``even``, the order is first
    padded by repeating it from the start (as ``torch.utils.data.DistributedSampler`` does),
    so that every rank reads the same number of objects (``ceil(count / world_size)``);
    without it every object is read exactly once in all.

    Raises:
        ValueError: ``rank`` or ``worker`` out of range.
    """
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, {world_size})")
    if not 0 <= worker < num_workers:
        raise ValueError(f"worker {worker} is not in [0, {num_workers})")
    order = np.arange(count, dtype=np.int64)
    if shuffle:
        order = np.random.default_rng(seed + epoch).permutation(count)
    if even and count and count % world_size:
        padded = -(-count // world_size) * world_size
        order = np.resize(order, padded)  # repeats the order from its start
    return order[rank::world_size][worker::num_workers]


__all__ = ["ObjectList", "ObjectReader", "PfioObject", "list_objects", "list_prefix",
           "reader_plan"]
