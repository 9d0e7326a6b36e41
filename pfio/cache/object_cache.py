"""``ObjectCache``: local copies of remote files, shared by processes.

Layout under the cache directory (mode 0700)::

    <dir>/<kk>/<key>.obj    a whole file            <key>.meta   what it was fetched from
    <dir>/<kk>/<key>.blk    a block file (sparse)   .locks       the download locks
    <dir>/<kk>/<key>.*.part a download in progress

``key`` is the SHA-256 of the source's identity (URL, endpoint, bucket, store, archive):
see :mod:`pfio.cache.identity`. A download opens the source once (on S3: one GET, whose
answer tells the version recorded in ``.meta``: no HEAD) and goes to a ``.part`` file,
renamed into place when complete, so a reader never sees a partial file, and one left by a
killed process is never served (it is removed by the next scan of the directory). The
metadata is an extended attribute of the entry file where the filesystem keeps them, and the
``.meta`` file otherwise; download locks are bytes of the shard's ``.locks`` file on Linux,
``<key>.lock`` files elsewhere (see :mod:`pfio.cache.entry_files` and
:mod:`pfio.cache.key_locks`), so that a miss creates one file. A whole
copy is not synced to disk before it is published: it records its CRC-32 and the boot of
the machine that wrote it, and is checked against the CRC once in a later boot (see
:mod:`pfio.cache.entry_files`); block files are synced. Concurrent first readers, in any
process or thread, wait on the key's download lock for one download (one GET, counted
once against the byte limit). Users of an entry hold a shared ``flock`` on it, which
eviction respects (see :mod:`pfio.cache.eviction`).

Validation (``validate=``): a hit under ``"never"`` sends no request; under ``"ttl"`` (the
default cache of the patches, :func:`default_object_cache`) none until ``ttl`` seconds have
passed since the entry was fetched or last checked, then one stat (on S3 a HEAD) of the
source; under ``"open"`` one stat on every open. A source found changed is fetched again;
within the ``ttl`` a changed source is not noticed.

The directory is private (see :mod:`pfio.cache.private_dir`): one that another user owns or
may write to is refused, and files in it are opened without following symlinks.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, Literal

from ..fs.local import sync_directory
from ..fs.resolver import locate
from ..trace import hook
from .base import default_cache_dir
from .entry_files import (
    BOOT_ID,
    copy_into,
    intact,
    pin,
    read_meta,
    read_meta_xattr,
    write_meta,
    write_meta_xattr,
    xattrs_work,
)
from .eviction import ENTRY_SUFFIXES, evict, scan
from .key_locks import key_lock
from .private_dir import NOFOLLOW, make_private_dir
from .source import Source
from .versions import same_version

logger = logging.getLogger(__name__)

Policy = Literal["never", "open", "ttl"]
_POLICIES = ("never", "open", "ttl")

#: additions between two scans of the directory when a byte limit is set
_SCAN_EVERY = 64
#: entries of each per-process memo before it is cleared
_MEMO_LIMIT = 65536
#: seconds: a hit refreshes an entry's modification time (its LRU rank) at most this often
_RECENCY_RESOLUTION = 10.0
#: seconds between two sweeps of leftovers by a process of a cache without a byte limit
_SWEEP_EVERY = 600.0


#: what fills an entry: ``fill(source, fd)`` writes it into ``fd`` and returns extra metadata
Fill = Callable[[Source, int], dict[str, Any]]


class ObjectCache:
    """A cache of whole files (and block files, see :class:`pfio.cache.CachedFS`) in a local
    directory shared by processes and kept across runs.

    Args:
        dir: the cache directory; default ``$XDG_CACHE_HOME/pfio/objects``.
        max_bytes: evict least recently used entries beyond this many bytes (entries in
            use are kept); None for no limit.
        validate: when to compare a cached file with its source (ETag, else size and
            modification time): ``"never"``, on every ``"open"``, or once ``ttl`` seconds
            have passed since the last check (``"ttl"``). A changed source is fetched again.
        ttl: seconds between checks under ``validate="ttl"``.
        sync: sync each whole copy to disk before it is published (two ``fsync`` calls);
            with False it is published at once and checked against its CRC-32 once in a
            later boot of the machine (see :mod:`pfio.cache.entry_files`), which costs
            nothing while the machine runs and a fetch again of what a power cut lost.
            Either way a reader never gets a partial or damaged copy.

    Raises:
        PermissionError: ``dir`` belongs to another user or others may write to it.

    Example::

        cache = ObjectCache(max_bytes=50 << 30)
        with cache.path("s3://bucket/model.onnx") as local_path:
            session = onnxruntime.InferenceSession(local_path)
    """

    def __init__(self, dir: str | None = None, max_bytes: int | None = None,
                 validate: Policy = "open", ttl: float = 60.0, sync: bool = True) -> None:
        if validate not in _POLICIES:
            raise ValueError(f"validate must be one of {_POLICIES}, not {validate!r}")
        if max_bytes is not None and max_bytes < 0:
            raise ValueError("max_bytes must be >= 0 or None")
        self.dir = os.path.abspath(dir if dir is not None
                                   else os.path.join(default_cache_dir(), "objects"))
        self.max_bytes = max_bytes
        self.validate = validate
        self.ttl = ttl
        self.sync = sync
        make_private_dir(self.dir)
        #: metadata on the entry files (True) or in ``.meta`` files next to them
        self.meta_in_xattrs = xattrs_work(self.dir)
        self._usage: int | None = None
        self._additions = 0
        self._swept = 0.0
        self._reset_memos()

    def _reset_memos(self) -> None:
        """What this process remembers to make a hit cheap: identities by URL, shard
        directories made, and metadata by file version."""
        self._identities: dict[tuple[str, str], str] = {}
        self._shards: set[str] = set()
        self._metas: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for memo in ("_identities", "_shards", "_metas"):
            del state[memo]
        state.update(_usage=None, _additions=0, _swept=0.0)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_memos()

    def __repr__(self) -> str:
        return f"ObjectCache(dir={self.dir!r}, max_bytes={self.max_bytes}, " \
               f"validate={self.validate!r}, sync={self.sync})"

    # -- by URL --------------------------------------------------------------------------

    def source(self, url: str, **options: Any) -> Source:
        """The :class:`Source` of a pfio URL (``options`` as for :func:`pfio.from_url`);
        an archive on the way is the resolver's shared one (see :mod:`pfio.fs.resolver`)."""
        fs, name = locate(url, **options)
        if not name:
            raise IsADirectoryError(f"{url!r} names a directory, not a file")
        if len(self._identities) > _MEMO_LIMIT:
            self._identities.clear()
        url_marker = (url, repr(sorted(options.items())))
        identity = self._identities.get(url_marker)
        source = Source(fs, name, identity)
        self._identities[url_marker] = source.identity
        return source

    @contextlib.contextmanager
    def path(self, url: str, **options: Any) -> Iterator[str]:
        """A local path holding the bytes of ``url``, kept from eviction during the block.

        Raises:
            FileNotFoundError: the source does not exist.
        """
        with self.open_source(self.source(url, **options)) as f:
            yield f.name

    def open(self, url: str, **options: Any) -> IO[bytes]:
        """The cached copy of ``url`` opened for reading (kept from eviction while open)."""
        return self.open_source(self.source(url, **options))

    def get_path(self, url: str, **options: Any) -> str:
        """A local path holding the bytes of ``url``. Unlike :meth:`path` the file is not
        kept from eviction once this returns: prefer :meth:`path` under a byte limit."""
        with self.path(url, **options) as local:
            return local

    def invalidate(self, url: str, **options: Any) -> None:
        """Forget the cached copy of ``url`` (a user of it keeps reading its copy)."""
        self.invalidate_source(self.source(url, **options))

    # -- by source -----------------------------------------------------------------------

    def open_source(self, source: Source) -> IO[bytes]:
        """The cached whole copy of ``source``, fetched if needed, opened for reading."""
        start = time.perf_counter() if hook.ENABLED else 0.0
        fd, hit = self.acquire(source, ".obj", self.download, os.O_RDONLY)
        return self.open_entry(source, fd, hit, start)

    def open_cached(self, source: Source) -> IO[bytes] | None:
        """Like :meth:`open_source`, but None instead of fetching when there is no valid
        whole copy."""
        start = time.perf_counter() if hook.ENABLED else 0.0
        fd = self.lookup(source, ".obj")
        return None if fd is None else self.open_entry(source, fd, True, start)

    def open_entry(self, source: Source, fd: int, hit: bool,
                   start: float = 0.0) -> IO[bytes]:
        """The whole copy of ``source`` pinned as ``fd`` (by :meth:`acquire_first`) as a file
        object that owns ``fd``; ``start`` (a ``perf_counter`` time) records the cache's
        answer in the tracer."""
        try:
            f = open(self.entry_path(source, ".obj"), "rb", opener=lambda *_: fd)
        except BaseException:
            os.close(fd)
            raise
        if start:
            hook.record_cache("object", hit, os.fstat(fd).st_size,
                              time.perf_counter() - start, source.identity)
        return f

    def invalidate_source(self, source: Source) -> None:
        """Forget what is cached of ``source`` (whole copy and blocks)."""
        prefix = self._prefix(source.key)
        with key_lock(prefix):
            for suffix in (*ENTRY_SUFFIXES, ".meta"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(prefix + suffix)

    def acquire(self, source: Source, suffix: str, fill: Fill, flags: int) -> tuple[int, bool]:
        """A descriptor (opened with ``flags``, holding a shared ``flock``) on the valid entry
        ``<key><suffix>`` of ``source``, and whether it was there already. A missing or stale
        entry is made by ``fill(source, fd)`` in a ``.part`` file, which returns extra
        metadata, then published. Used by whole files and by block files."""
        fd = self.lookup(source, suffix, flags)
        if fd is not None:
            return fd, True
        _, fd, hit = self.acquire_first(source, [(suffix, flags)],
                                        lambda _: (suffix, fill, flags))
        return fd, hit

    def acquire_first(self, source: Source, accept: Sequence[tuple[str, int]],
                      choose: Callable[[Source], tuple[str, Fill, int]]
                      ) -> tuple[str, int, bool]:
        """Under the download lock of ``source``: the first valid entry of the kinds
        ``accept`` lists (``(suffix, flags)``), else the entry ``choose(source)`` names as
        ``(suffix, fill, flags)``, made and published (``choose`` may open the source, once,
        to decide: see :meth:`Source.open`). Returns the entry's suffix, a descriptor as
        :meth:`acquire` gives it, and whether it was there already. Processes missing the
        same source at once wait for one download."""
        prefix = self._prefix(source.key)
        with key_lock(prefix):
            for suffix, flags in accept:
                fd = self._valid_entry(source, prefix, suffix, flags)
                if fd is not None:
                    return suffix, fd, True
            suffix, fill, flags = choose(source)
            published = self._publish(source, prefix, suffix, fill)
            fd = pin(prefix + suffix, flags)  # eviction needs the lock held here: it is there
        assert fd is not None
        self.note_added(published)
        return suffix, fd, False

    def lookup(self, source: Source, suffix: str, flags: int = os.O_RDONLY) -> int | None:
        """Like :meth:`acquire` but never fetches: None when there is no valid entry."""
        return self._valid_entry(source, self._prefix(source.key), suffix, flags)

    def has_entry(self, source: Source, suffix: str) -> bool:
        """True when an entry file ``<key><suffix>`` of ``source`` exists (valid or not)."""
        return os.path.exists(self.entry_path(source, suffix))

    def entry_meta(self, source: Source, suffix: str = ".obj") -> dict[str, Any] | None:
        """The metadata of the entry ``<key><suffix>`` of ``source`` (what it was fetched
        from, its version, size, CRC-32, ...), or None when there is no such entry."""
        fd = pin(self.entry_path(source, suffix))
        if fd is None:
            return None
        try:
            return self._entry_meta(self._prefix(source.key), fd)
        finally:
            os.close(fd)

    def entry_path(self, source: Source, suffix: str) -> str:
        """The path of the entry file ``<key><suffix>`` of ``source``."""
        return self._prefix(source.key) + suffix

    # -- entries -------------------------------------------------------------------------

    def _prefix(self, key: str) -> str:
        shard = os.path.join(self.dir, key[:2])
        if shard not in self._shards:
            os.makedirs(shard, mode=0o700, exist_ok=True)
            self._shards.add(shard)
        return os.path.join(shard, key)

    def _valid_entry(self, source: Source, prefix: str, suffix: str,
                     flags: int) -> int | None:
        fd = pin(prefix + suffix, flags)
        if fd is None:
            return None
        meta = self._entry_meta(prefix, fd)
        st = os.fstat(fd)
        if meta is None or meta.get("identity") != source.identity or \
                meta.get("kind") != suffix or (
                suffix == ".obj" and (st.st_size != meta.get("bytes") or
                                      not intact(fd, meta, self._meta_saver(prefix, fd)))) or (
                not self._fresh(source, prefix, fd, meta)):
            os.close(fd)
            return None
        if time.time() - st.st_mtime > _RECENCY_RESOLUTION:
            os.utime(fd)  # least recently used goes first
        return fd

    def _entry_meta(self, prefix: str, fd: int) -> dict[str, Any] | None:
        """The metadata of the entry file open as ``fd``."""
        if self.meta_in_xattrs:
            return read_meta_xattr(fd)
        return self._read_meta(prefix + ".meta")

    def _meta_saver(self, prefix: str, fd: int) -> Callable[[dict[str, Any]], None]:
        """What records new metadata of the published entry file open as ``fd``."""
        if self.meta_in_xattrs:
            return lambda meta: write_meta_xattr(fd, meta)
        return lambda meta: write_meta(prefix + ".meta", meta)

    def _read_meta(self, path: str) -> dict[str, Any] | None:
        """:func:`read_meta`, remembered while the file is the same version (metadata is
        replaced by rename, so a new version is a new inode)."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        version = (st.st_ino, st.st_mtime_ns, st.st_size)
        remembered = self._metas.get(path)
        if remembered is not None and remembered[0] == version:
            return remembered[1]
        meta = read_meta(path)
        if meta is not None:
            if len(self._metas) > _MEMO_LIMIT:
                self._metas.clear()
            self._metas[path] = (version, meta)
        return meta

    def _fresh(self, source: Source, prefix: str, fd: int, meta: dict[str, Any]) -> bool:
        if self.validate == "never":
            return True
        if self.validate == "ttl" and time.time() - meta.get("checked", 0) < self.ttl:
            return True
        try:
            current = source.stat()
        except FileNotFoundError:
            return False
        if not same_version(meta, current):
            logger.info("%s changed at the source; fetching it again", source.identity)
            return False
        if self.validate == "ttl":
            self._meta_saver(prefix, fd)({**meta, "checked": time.time()})
        return True

    def _publish(self, source: Source, prefix: str, suffix: str, fill: Fill) -> int:
        """Fill a ``.part`` file, rename it to ``<key><suffix>`` and write the metadata:
        the version the fill read (see :meth:`Source.version`). Whole copies are not synced
        to disk where the boot is known (see :mod:`pfio.cache.entry_files`)."""
        part = f"{prefix}.{os.getpid()}.{secrets.token_hex(4)}.part"
        fd = os.open(part, os.O_RDWR | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
        synced = self.sync or suffix != ".obj" or BOOT_ID is None
        try:
            extra = fill(source, fd)
            nbytes = os.fstat(fd).st_size
            meta = {"identity": source.identity, "kind": suffix, **source.version(),
                    "bytes": nbytes, "checked": time.time(), **extra}
            if not synced:
                meta["boot"] = BOOT_ID
            if self.meta_in_xattrs:
                write_meta_xattr(fd, meta)  # published with the bytes by the rename
            if synced:
                os.fsync(fd)
            for other in ENTRY_SUFFIXES:  # one kind of entry per key: the metadata is shared
                if other != suffix:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(prefix + other)
            os.rename(part, prefix + suffix)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part)
            raise
        finally:
            os.close(fd)
        if not self.meta_in_xattrs:
            write_meta(prefix + ".meta", meta)
        if synced:
            sync_directory(os.path.dirname(prefix))
        return nbytes

    def download(self, source: Source, fd: int) -> dict[str, Any]:
        """The ``fill`` of a whole copy (see :meth:`acquire`): the source's bytes, from its
        one opening (:meth:`Source.take`), and their CRC-32."""
        with source.take() as src:
            return {"crc32": copy_into(src, fd)}

    # -- size ----------------------------------------------------------------------------

    def note_added(self, nbytes: int) -> None:
        """Count ``nbytes`` more on disk (a download, blocks written into a block file) and
        evict when the limit may be passed. Every :data:`_SCAN_EVERY` additions the
        directory is scanned, which also counts what other processes added and sweeps what
        killed processes left; without a limit, a scan every :data:`_SWEEP_EVERY` seconds
        sweeps."""
        if self.max_bytes is None:
            now = time.monotonic()
            if not self._swept or now - self._swept > _SWEEP_EVERY:
                self._swept = now
                scan(self.dir)  # sweeps what killed processes left
            return
        self._additions += 1
        if self._usage is not None:
            self._usage += nbytes
        if self._usage is None or self._usage > self.max_bytes \
                or self._additions % _SCAN_EVERY == 0:
            self._usage = evict(self.dir, self.max_bytes)

    def usage(self) -> int:
        """Bytes used by the entries on disk now (all processes)."""
        return scan(self.dir)[0]

    def evict(self, max_bytes: int | None = None) -> int:
        """Evict down to ``max_bytes`` (default: the cache's limit; 0 empties it) except
        entries in use; return the bytes used afterwards."""
        limit = self.max_bytes if max_bytes is None else max_bytes
        return scan(self.dir)[0] if limit is None else evict(self.dir, limit)


_default: ObjectCache | None = None


def default_object_cache() -> ObjectCache:
    """The process's shared :class:`ObjectCache`, used by the patches: the default directory,
    no byte limit, sources checked at most once a minute (``validate="ttl"``), so that a
    hit costs no request, and whole copies published without ``fsync`` (``sync=False``),
    so that a miss costs its one GET and little more. Replace it with
    :func:`set_default_object_cache`."""
    global _default
    if _default is None:
        _default = ObjectCache(validate="ttl", sync=False)
    return _default


def set_default_object_cache(cache: ObjectCache | None) -> None:
    """Make ``cache`` the one :func:`default_object_cache` returns (None: back to the
    default). DataLoader workers started by fork inherit it; others create the default."""
    global _default
    _default = cache


__all__ = ["ObjectCache", "Source", "default_object_cache", "pin", "read_meta",
           "set_default_object_cache", "write_meta"]
