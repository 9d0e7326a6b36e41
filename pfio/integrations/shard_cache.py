"""A bounded node-local cache of whole shards for indexed datasets
(``PfioWebDataset(..., cache_dir=..., cache_limit="20GB", predownload=N)``).

It is pfio's :class:`~pfio.cache.ObjectCache` (no second cache): every rank and DataLoader
worker of a node may share one ``cache_dir``; concurrent misses of one shard wait on its
download lock, so each shard is downloaded once per node (one GET on S3); a download goes
to a ``.part`` file renamed into place when complete, so a process killed mid-download
leaves nothing that reads as an entry; a shard being read holds a shared lock that
eviction respects. With a ``cache_limit``, downloads take turns on the node (a lock file in
``cache_dir``): under it, a reader evicts least recently used shards not in use down to
``cache_limit`` minus the shard's size (known from the index), then downloads, so the cache
never exceeds its limit; when the shards in use leave no room (or a shard is larger than the
limit), that shard is read without the cache. Hits take no turn.
Cached shards are trusted until evicted (``validate="never"``): the index pins the data.

``predownload=N``: a background thread of each reader downloads, in order, the shards its
next ``N`` samples need, keeping that far ahead of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from typing import IO

from ..cache.object_cache import ObjectCache
from ..cache.private_dir import NOFOLLOW
from .shards.index import Index, ShardEntry
from .shards.reader import RESUME_OPENING
from .shards.spans import Opener, open_shard

logger = logging.getLogger(__name__)

#: the cache counts the disk blocks its files take: sizes are rounded up to them
DISK_BLOCK = 4096

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def parse_size(size: int | str) -> int:
    """Bytes of ``size``: an int, or a str such as ``"20GB"``, ``"512MiB"``, ``"1e9"``.

    Raises:
        ValueError: a size that does not parse or is negative.
    """
    if isinstance(size, int):
        value = size
    else:
        found = re.fullmatch(r"\s*([0-9.eE+]+)\s*([A-Za-z]*)\s*", str(size))
        unit = found.group(2).lower() if found else None
        if found is None or unit not in _UNITS:
            raise ValueError(f"cache size {size!r} is not a size such as '20GB' or '512MiB'")
        try:
            value = int(float(found.group(1)) * _UNITS[unit])
        except ValueError:
            raise ValueError(f"cache size {size!r} is not a number of bytes") from None
    if value < 0:
        raise ValueError(f"cache size {size!r} is negative")
    return value


class ShardCache:
    """Whole shards of ``index`` in ``dir``, at most ``limit`` bytes (see the module doc)."""

    def __init__(self, dir: str, limit: int | None, index: Index,
                 predownload: int | None = None) -> None:
        self.cache = ObjectCache(dir, max_bytes=limit, validate="never", sync=False)
        self.limit = limit
        self.index = index
        self.predownload = predownload or 0
        self._turn = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        del state["_turn"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._turn = threading.Lock()

    @contextlib.contextmanager
    def _download_turn(self) -> Iterator[None]:
        """This process's and this node's turn to make room and download."""
        with self._turn:
            fd = os.open(os.path.join(self.cache.dir, ".shard-downloads.lock"),
                         os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def open(self, entry: ShardEntry, first_fetch: int = RESUME_OPENING) -> IO[bytes]:
        """The cached copy of ``entry`` (downloaded now if need be), kept from eviction
        while open; ``first_fetch`` serves a shard read without the cache."""
        if self.limit is not None and entry.size + DISK_BLOCK > self.limit:
            logger.warning("%s (%d bytes) is larger than the cache limit (%d bytes): read "
                           "without the cache", entry.url, entry.size, self.limit)
            return open_shard(entry, first_fetch)
        source = self.cache.source(entry.url)
        found = self.cache.open_cached(source)
        if found is not None:
            return found
        if self.limit is None:
            return self.cache.open_source(source)
        with self._download_turn():
            found = self.cache.open_cached(source)  # downloaded while this one waited
            if found is not None:
                return found
            size = -(-entry.size // DISK_BLOCK) * DISK_BLOCK  # the cache counts blocks
            used = self.cache.evict(max(0, self.limit - size))
            if used + size > self.limit:  # the shards in use fill it: no room
                logger.debug("cache %s is full of shards in use: %s read without it",
                             self.cache.dir, entry.url)
                return open_shard(entry, first_fetch)
            return self.cache.open_source(source)

    def ahead(self, ids: list[int], worker: int) -> Progress:
        """Download, in a background thread, the shards of ``ids`` in the order they are
        needed, at most ``predownload`` samples ahead of the reader, which reports where it
        stands through the :class:`Progress` returned."""
        progress = Progress()
        first: dict[int, int] = {}
        for k, g in enumerate(ids):
            first.setdefault(self.index.locate(g)[0], k)
        thread = threading.Thread(target=self._download, args=(first, progress), daemon=True,
                                  name=f"pfio-predownload-{worker}")
        thread.start()
        return progress

    def _download(self, first: dict[int, int], progress: Progress) -> None:
        for shard, needed_at in first.items():
            if not progress.wait_until(needed_at - self.predownload):
                return
            try:
                self.open(self.index.shards[shard]).close()
            except Exception:  # the reader meets the same error when it gets there
                logger.debug("predownloading %s failed", self.index.shards[shard].url,
                             exc_info=True)
                return


class Progress:
    """How many samples a reader has taken, for its predownload thread to keep pace."""

    def __init__(self) -> None:
        self.taken = 0
        self.done = False
        self._cond = threading.Condition()

    def advance(self) -> None:
        """One more sample taken."""
        with self._cond:
            self.taken += 1
            self._cond.notify_all()

    def finish(self) -> None:
        """The reader stopped: the thread stops too."""
        with self._cond:
            self.done = True
            self._cond.notify_all()

    def wait_until(self, taken: int) -> bool:
        """Block until ``taken`` samples were taken; False when the reader stopped."""
        with self._cond:
            self._cond.wait_for(lambda: self.done or self.taken >= taken)
            return not self.done


def open_cache(cache_dir: str | None, cache_limit: int | str | None,
               predownload: int | None, index: Index
               ) -> tuple[Opener, Callable[[list[int], int], Progress] | None]:
    """The shard opener (and predownloader) of a dataset: the cache's, or plain reads."""
    if cache_dir is None:
        if cache_limit is not None or predownload:
            raise ValueError("cache_limit and predownload need a cache_dir")
        return open_shard, None
    limit = None if cache_limit is None else parse_size(cache_limit)
    cache = ShardCache(cache_dir, limit, index, predownload)
    return cache.open, cache.ahead if predownload else None
