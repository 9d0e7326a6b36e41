"""The on-disk format of the index caches, shared with PFIO 2.x, and the file-backed cache
that :class:`~pfio.cache.FileCache` and :class:`~pfio.cache.MultiprocessFileCache` build on.

Format (one file): ``length`` index entries of 16 bytes each, ``(offset: uint64,
length: int64)`` little-endian, an empty slot being ``(0, -1)``; the data of the slots is
appended after the index in the order it was put. ``preserve(name)`` makes the file
``<dir>/<name>`` (a hard link), which PFIO 2.x's ``preload(name)`` reads, and the other
way round.

Entries never change once written, and a ``put`` writes the data before the index entry,
so a ``get`` reads without any lock: it reads the entry and the data from a shared memory
map of the file (see :class:`CacheFileView`). An entry read while another process writes it may
be torn (half old, half new); such an entry points into the index or has a negative
length, and is taken for an empty slot.
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import pickle
import struct
import tempfile
import threading
import time
import warnings
import weakref
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from ..fs.local import sync_directory
from ..trace import hook
from .base import Cache, check_index, check_length, default_cache_dir, report
from .local_disk import check_local_disk

logger = logging.getLogger(__name__)

#: one index entry: data offset and data length (-1 for an empty slot)
ENTRY = struct.Struct("<Qq")
EMPTY_ENTRY = ENTRY.pack(0, -1)

#: errors that mean "the disk takes no more data": the put fails with a warning
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})

#: the least growth of a cache file (bytes) for which a reader maps it again
_REMAP_STEP = 16 << 20

_fork_generation = [0]


def _after_fork() -> None:
    _fork_generation[0] += 1


os.register_at_fork(after_in_child=_after_fork)


def create_cache_file(directory: str, length: int) -> str:
    """Create a cache file of ``length`` empty entries in ``directory``; return its path."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, path = tempfile.mkstemp(dir=directory, prefix="pfio-cache-")
    try:
        chunk = EMPTY_ENTRY * min(length, 65536)
        written = 0
        total = length * ENTRY.size
        while written < total:
            written += os.pwrite(fd, chunk[:total - written], written)
    except BaseException:
        os.unlink(path)
        raise
    finally:
        os.close(fd)
    return path


class CacheFileView:
    """One process's handles on a cache file: a descriptor, a shared read-only memory map of
    the file (index and data, as long as the file was when mapped) and a lock for the
    writing threads of this process.

    A hit is a slice of the map (no system call); data appended after the map was made is
    read with ``pread`` until the file has grown enough to be mapped again. The map is one
    attribute, replaced whole, so threads never see a half-updated view.
    """

    __slots__ = ("fd", "map", "generation", "lock")

    def __init__(self, path: str, length: int, writable: bool) -> None:
        self.fd = os.open(path, os.O_RDWR if writable else os.O_RDONLY)
        try:
            size = os.fstat(self.fd).st_size
            if size < length * ENTRY.size:
                raise ValueError(f"{path} is not a cache of {length} entries: it is too short")
            self.map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
        except BaseException:
            os.close(self.fd)
            raise
        self.generation = _fork_generation[0]
        self.lock = threading.Lock()

    def read_beyond_map(self, offset: int, size: int) -> bytes:
        """Read data that lies past the current map, mapping the file again first when it
        has grown by a quarter (at least :data:`_REMAP_STEP` bytes)."""
        mapped = len(self.map)
        file_size = os.fstat(self.fd).st_size
        if file_size >= offset + size and file_size - mapped >= max(mapped // 4, _REMAP_STEP):
            # the old map is released when the last reader drops it
            self.map = mmap.mmap(self.fd, file_size, mmap.MAP_SHARED, mmap.PROT_READ)
            return self.map[offset:offset + size]
        return os.pread(self.fd, size, offset)

    def close(self) -> None:
        self.map.close()
        os.close(self.fd)


def _unlink_in(pid: int, path: str) -> None:
    """Remove ``path`` if this is process ``pid`` (a forked child leaves it to its parent)."""
    if os.getpid() == pid:
        _unlink_quietly(path)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class IndexFileCache(Cache):
    """A cache in one local file of the shared format (see the module documentation).

    Subclasses choose how writers exclude each other (:meth:`_write_lock`). The process
    that creates the object owns the temporary cache file: it alone may ``preserve`` it,
    and its ``close`` (or garbage collection) removes it. Copies made by pickling (for
    worker processes) share the file.
    """

    _trace_name = "file"

    #: refuses a directory on NFS (``ValueError``); see :mod:`pfio.cache.local_disk`
    _check_local = staticmethod(check_local_disk)

    def __init__(self, length: int, do_pickle: bool = False, dir: str | None = None,
                 cache_size_limit: int | None = None, verbose: bool = False,
                 trace: bool = False) -> None:
        check_length(length)
        if cache_size_limit is not None and not (
                isinstance(cache_size_limit, (int, float)) and cache_size_limit >= 0):
            raise ValueError("cache_size_limit has to be either None, zero (both indicate "
                             f"unlimited) or larger than 0. {cache_size_limit} is specified.")
        self.length = length
        self.do_pickle = do_pickle
        self.dir = dir if dir is not None else default_cache_dir()
        self._check_local(self.dir)
        self.cache_size_limit = cache_size_limit
        self.verbose = verbose
        self.trace = trace
        self.closed = False
        self._frozen = False
        self._index_size = length * ENTRY.size
        self._path = create_cache_file(self.dir, length)
        self._temp: str | None = self._path
        self._owner = True
        self._creator_pid = os.getpid()
        self._finalizer = weakref.finalize(self, _unlink_in, self._creator_pid, self._path)
        self._view_: CacheFileView | None = None
        self._thread_lock = threading.Lock()
        if verbose:
            logger.info("created cache file %s", self._path)

    # -- state -------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.length

    @property
    def frozen(self) -> bool:
        """True once the cache takes no more data (preserved, preloaded or full)."""
        return self._frozen

    @property
    def path(self) -> str:
        """The cache file this object reads."""
        return self._path

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_view_=None, _thread_lock=None, _finalizer=None, _owner=False)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._thread_lock = threading.Lock()

    def _view(self) -> CacheFileView:
        view = self._view_
        if view is None or view.generation != _fork_generation[0]:
            with self._thread_lock:
                view = self._view_
                if view is None or view.generation != _fork_generation[0]:
                    view = self._view_ = CacheFileView(self._path, self.length, not self._frozen)
        return view

    # -- reading -----------------------------------------------------------------------

    def get(self, i: int) -> Any:
        """The data of slot ``i`` (unpickled with ``do_pickle``), or None when it is empty
        or the cache is closed.

        Raises:
            IndexError: ``i`` is out of range.
        """
        if self.closed:
            return None
        if not 0 <= i < self.length:
            check_index(i, self.length)
        start = time.perf_counter() if hook.ENABLED else 0.0
        view = self._view()
        mapped = view.map
        offset, size = ENTRY.unpack_from(mapped, i * ENTRY.size)
        if size < 0 or offset < self._index_size:
            data = None
        elif offset + size <= len(mapped):
            data = mapped[offset:offset + size]
        else:
            data = view.read_beyond_map(offset, size)
        if start:
            report(self._trace_name, data is not None, len(data) if data else 0, start)
        if self.do_pickle and data:
            return pickle.loads(data)
        return data

    # -- writing -----------------------------------------------------------------------

    def _write_lock(self, view: CacheFileView) -> AbstractContextManager[Any]:
        """The lock that writers of this cache file hold while they append."""
        return nullcontext()

    def put(self, i: int, data: Any) -> bool:
        """Store ``data`` (pickled with ``do_pickle``) in slot ``i`` unless it is filled.

        Returns False when the slot is filled, the cache is frozen or closed, the size limit
        is reached (the cache freezes) or the disk is full (with a ``RuntimeWarning``).

        Raises:
            IndexError: ``i`` is out of range.
        """
        if self._frozen or self.closed:
            return False
        if self.do_pickle:
            data = pickle.dumps(data)
        check_index(i, self.length)
        view = self._view()
        with self._write_lock(view):
            try:
                return self._append(view, i, data)
            except OSError as exc:
                if exc.errno not in _FULL_ERRNOS:
                    raise
                warnings.warn(f"cache {self._path}: {exc.strerror}; data not cached",
                              RuntimeWarning, stacklevel=2)
                return False

    def _append(self, view: CacheFileView, i: int, data: bytes) -> bool:
        """Append ``data`` and point slot ``i`` at it (under the write lock); a failed
        write is cut off the file again."""
        _, size = ENTRY.unpack(os.pread(view.fd, ENTRY.size, i * ENTRY.size))
        if size >= 0:
            return False
        end = os.fstat(view.fd).st_size
        if self.cache_size_limit and self.cache_size_limit < end + len(data):
            self._frozen = True
            return False
        try:
            _pwrite_all(view.fd, data, end)
            os.pwrite(view.fd, ENTRY.pack(end, len(data)), i * ENTRY.size)
        except OSError:
            _truncate_quietly(view.fd, end)
            raise
        return True

    # -- preserve and preload ----------------------------------------------------------

    @property
    def _is_owner(self) -> bool:
        """True in the object that created the cache file, in its process (not in a pickled
        copy, nor in a forked child)."""
        return self._owner and self._creator_pid == os.getpid()

    def _check_owner(self, operation: str) -> None:
        if not self._is_owner:
            raise RuntimeError(f"Cannot {operation} a cache in a worker process: only the "
                               "process that created it can")

    def preserve(self, name: str, overwrite: bool = False) -> bool:
        """Keep the cache as the file ``<dir>/<name>`` (flushed to disk) and freeze it.

        Returns False (and does nothing) when that file exists and ``overwrite`` is false.
        PFIO 2.x's ``preload(name)`` reads the file, and so does :meth:`preload`. Preserve
        once the workers are done filling: their copies are not told that it froze.

        Raises:
            RuntimeError: called on a copy in another process (a worker); only the
                process that created the cache may preserve it.
            ValueError: the cache is closed.
        """
        self._check_owner("preserve")
        if self.closed:
            raise ValueError("cannot preserve a closed cache")
        target = os.path.join(self.dir, name)
        if os.path.exists(target) and not overwrite:
            logger.info("cache %s already exists; not preserved", target)
            return False
        view = self._view()
        with self._write_lock(view):
            os.fsync(view.fd)
            link = f"{target}.{os.getpid()}.pfio-tmp"
            _unlink_quietly(link)
            os.link(self._path, link)
            os.replace(link, target)
            sync_directory(self.dir)
            self._frozen = True
            self._path = target
        return True

    def preload(self, name: str) -> bool:
        """Read the cache file ``<dir>/<name>`` (made by ``preserve`` here or in PFIO 2.x)
        from now on; the cache is frozen. False when the cache is already frozen or there is
        no such file.

        Raises:
            ValueError: the file is shorter than an index of ``len(self)`` entries.
        """
        if self._frozen:
            logger.info("cache already frozen; %s not preloaded", name)
            return False
        source = os.path.join(self.dir, name)
        if not os.path.exists(source):
            logger.info("no cache %s to preload", source)
            return False
        view = CacheFileView(source, self.length, writable=False)
        with self._thread_lock:
            old, self._view_ = self._view_, view
            self._path = source
            self._frozen = True
        if old is not None:
            old.close()
        self._remove_temp()
        return True

    # -- lifetime ----------------------------------------------------------------------

    def _remove_temp(self) -> None:
        if self._is_owner and self._temp is not None:
            self._finalizer.detach()
            _unlink_quietly(self._temp)
            self._temp = None

    def close(self) -> None:
        """Close this process's handles; in the creating process, remove the temporary file
        (a preserved file stays)."""
        with self._thread_lock:
            view, self._view_ = self._view_, None
            self.closed = True
        if view is not None and view.generation == _fork_generation[0]:
            view.close()
        self._remove_temp()


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def _truncate_quietly(fd: int, size: int) -> None:
    try:
        os.ftruncate(fd, size)
    except OSError:
        logger.warning("could not truncate a cache file after a failed write", exc_info=True)
