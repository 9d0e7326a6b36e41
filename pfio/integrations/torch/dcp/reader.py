"""``PfioReader``: a DCP ``StorageReader`` that reads a checkpoint in few large requests.

DCP's file-system reader reads each item (a tensor or a pickled object) of a file with a
seek and a read, in the order the plan lists them; over S3 that restarts the reader's
read-ahead at every item. ``PfioReader`` plans instead:

* the items of each file are sorted by offset and adjacent ones (gaps up to ``max_gap``
  bytes) are grouped into reads of up to ``read_size`` bytes (an item bigger than that is
  one read of its own, fetched in ``read_size`` pieces in parallel);
* each read is one positional read (one ranged GET on S3; when a file is one read from
  byte 0, the GET that opens it is that read), and ``max_workers`` threads fetch them in
  (file, offset) order, each received straight into its place in one buffer of
  ``max_inflight`` bytes (or the largest read) used as a ring: reads are decoded in the
  order they were planned, so each frees its place for the next (the buffer's pages are
  touched once per load, not once per read);
* the items are decoded and handed to the planner in the calling thread, as their reads
  arrive; a tensor is copied once, from that buffer into the state dict's tensor (see
  :mod:`pfio.integrations.torch.dcp.items`).

A partial load (a state dict with some of the checkpoint's keys) plans only the items it
asks for, so it reads only their byte ranges (and gaps up to ``max_gap`` between them).
"""

from __future__ import annotations

import io
import mmap
import os
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.distributed._shard._utils import narrow_tensor_by_index
from torch.distributed.checkpoint.filesystem import FileSystemReader, _StorageInfo
from torch.distributed.checkpoint.planner import LoadItemType, LoadPlan, LoadPlanner, ReadItem

from ....fs.positional import PositionalReader
from .items import Items, copy_into
from .storage import PfioFileSystem


@dataclass
class Read:
    """One positional read of a file: ``[start, end)`` and the items inside it."""

    path: str
    start: int
    end: int
    items: list[tuple[ReadItem, _StorageInfo]] = field(default_factory=list)


def plan_reads(items: list[tuple[str, ReadItem, _StorageInfo]], read_size: int,
               max_gap: int) -> list[Read]:
    """The reads that fetch ``items`` (``(file, item, where)``), in (file, offset) order."""
    reads: list[Read] = []
    ordered = sorted(items, key=lambda x: (x[0], x[2].offset, x[2].length))
    for path, item, info in ordered:
        start, end = info.offset, info.offset + info.length
        last = reads[-1] if reads else None
        if last is not None and last.path == path and start - last.end <= max_gap and \
                max(end, last.end) - last.start <= read_size:
            last.end = max(last.end, end)
        else:
            last = Read(path, start, end)
            reads.append(last)
        last.items.append((item, info))
    return reads


class PfioReader(FileSystemReader):
    """A DCP ``StorageReader`` reading from a pfio URL; see the module documentation.

    Args:
        path: the checkpoint's URL.
        read_size: the largest read (bytes; 8 MiB).
        max_gap: bytes between two items still read through rather than skipped (8 KiB).
        max_workers: reads in flight at once (8).
        max_inflight: bytes fetched and not yet decoded, at most: the size of the load's
            buffer (the larger of this, 64 MiB, and the largest read; no more than the
            load reads).
        storage_options: options of the file system (``from_url(path, **options)``).
    """

    #: the checkpoint's file system and its path in it (DCP's base class declares
    #: a plain ``FileSystemBase`` and a path that may be a ``PathLike``)
    fs: PfioFileSystem  # type: ignore[assignment]  # DCP uses only FileSystemBase's methods
    path: str

    def __init__(self, path: str, *, read_size: int = 8 << 20, max_gap: int = 8 << 10,
                 max_workers: int = 8, max_inflight: int = 64 << 20,
                 storage_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        if read_size < 1 or max_gap < 0 or max_workers < 1 or max_inflight < 1:
            raise ValueError("read_size, max_workers and max_inflight must be positive and "
                             "max_gap at least 0")
        self.fs = PfioFileSystem(storage_options)
        self.path = self.fs.init_path(path)
        self.read_size = read_size
        self.max_gap = max_gap
        self.max_workers = max_workers
        self.max_inflight = max_inflight

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike[str]) -> bool:
        return PfioFileSystem.validate_checkpoint_id(checkpoint_id)

    def read_data(self, plan: LoadPlan, planner: LoadPlanner) -> torch.futures.Future[None]:
        items = []
        for item in plan.items:
            info: _StorageInfo = self.storage_data[item.storage_index]
            items.append((info.relative_path, item, info))
        reads = plan_reads(items, self.read_size, self.max_gap)
        with ExitStack() as stack, ThreadPoolExecutor(self.max_workers,
                                                      "pfio-dcp-read") as pool:
            files = _Files(self, reads, stack)
            decoder = Items()
            for read, data in _fetch(reads, files, pool, self.read_size, self.max_inflight):
                for item, info in read.items:
                    at = info.offset - read.start
                    self._load_item(planner, decoder, item, info,
                                    data[at:at + info.length])
        done: torch.futures.Future[None] = torch.futures.Future()
        done.set_result(None)
        return done

    def _load_item(self, planner: LoadPlanner, decoder: Items, item: ReadItem,
                   info: _StorageInfo, data: memoryview) -> None:
        if info.transform_descriptors:
            stream = self.transforms.transform_load_stream(
                item, info.transform_descriptors, io.BytesIO(data))
            data = memoryview(stream.read(-1))
        if item.type == LoadItemType.BYTE_IO:
            planner.load_bytes(item, io.BytesIO(data))
            return
        tensor = narrow_tensor_by_index(decoder.tensor(data), item.storage_offsets,
                                        item.lengths)
        target = planner.resolve_tensor(item).detach()
        if target.size() != tensor.size():
            raise ValueError(f"{item.storage_index} in {self.path}: the checkpoint holds "
                             f"size {tuple(tensor.size())}, the state dict wants "
                             f"{tuple(target.size())}")
        copy_into(target, tensor)
        planner.commit_tensor(item, target)


class _Files:
    """The files of a load, each opened once by the first thread that reads it (its opening
    request fetching its first read when the file is that one read from byte 0), for
    positional reads from any thread."""

    def __init__(self, reader: PfioReader, reads: list[Read], stack: ExitStack) -> None:
        self._reader = reader
        self._stack = stack
        self._stack_lock = threading.Lock()
        self._first: dict[str, Read] = {}
        self._count: dict[str, int] = {}
        for read in reads:
            self._first.setdefault(read.path, read)
            self._count[read.path] = self._count.get(read.path, 0) + 1
        self._locks = {path: threading.Lock() for path in self._first}
        self._open: dict[str, PositionalReader] = {}

    def get(self, path: str) -> PositionalReader:
        """The file ``path``, opened on first use."""
        found = self._open.get(path)
        if found is not None:
            return found
        with self._locks[path]:
            found = self._open.get(path)
            if found is None:
                first = self._first[path]
                # the opening GET reads the whole read when it is the file's only one (a
                # plain GET of the object), else a byte (a larger ranged opening would be
                # a plain GET whose connection is dropped past the read)
                hint = first.end if first.start == 0 and self._count[path] == 1 else 1
                url = self._reader.fs.concat_path(self._reader.path, path)
                opened = self._reader.fs.create_stream_hinted(url, hint)
                with self._stack_lock:
                    f = self._stack.enter_context(opened)
                found = self._open[path] = PositionalReader(f)
        return found


class _Ring:
    """Places for reads in one buffer of ``size`` bytes, taken and given back in the same
    order (anonymous memory, whose pages are touched when first written, and freed when
    the last view of it goes)."""

    def __init__(self, size: int) -> None:
        self._view = memoryview(mmap.mmap(-1, max(1, size)))
        self._live: deque[int] = deque()  # the places' starts, oldest first
        self._head = 0  # where the newest place ends

    def take(self, size: int) -> memoryview | None:
        """A place of ``size`` bytes after the live ones, or None when there is no room."""
        capacity = len(self._view)
        if not self._live:
            start = 0
        elif self._head > self._live[0]:  # live: [oldest, head); free: after it, before it
            start = self._head if capacity - self._head >= size else \
                0 if self._live[0] >= size else -1
        else:  # live: [oldest, end) and [0, head); free: [head, oldest)
            start = self._head if self._live[0] - self._head >= size else -1
        if start < 0 or start + size > capacity:
            return None
        self._live.append(start)
        self._head = start + size
        return self._view[start:start + size]

    def give_back(self) -> None:
        """Free the oldest place."""
        self._live.popleft()


def _fetch(reads: list[Read], files: _Files, pool: ThreadPoolExecutor, piece: int,
           budget: int) -> Iterator[tuple[Read, memoryview]]:
    """``(read, its bytes)`` for each of ``reads`` in order, fetched ahead on ``pool`` into
    a :class:`_Ring` of ``budget`` bytes (or the largest read, if more; no more than all
    the reads); each read's bytes are valid until the next one is asked for."""
    largest = max((r.end - r.start for r in reads), default=0)
    ring = _Ring(min(max(budget, largest), sum(r.end - r.start for r in reads)))
    pending: deque[tuple[Read, memoryview, list[Future[None]]]] = deque()
    queue = deque(reads)
    try:
        while queue or pending:
            while queue:
                read = queue[0]
                place = ring.take(read.end - read.start)
                if place is None:
                    break
                queue.popleft()
                pieces = [pool.submit(_read_exactly, files, read.path, at,
                                      place[at - read.start:min(read.end, at + piece)
                                            - read.start])
                          for at in range(read.start, read.end, piece)]
                pending.append((read, place, pieces))
            read, place, pieces = pending.popleft()
            for p in pieces:
                p.result()
            yield read, place
            ring.give_back()
    finally:
        for _, _, pieces in pending:  # (their places are not reused: wait for them anyway)
            for p in pieces:
                p.cancel()
            wait(pieces)


def _read_exactly(files: _Files, path: str, offset: int, into: memoryview) -> None:
    got = files.get(path).readinto_at(offset, into)
    if got != len(into):
        raise OSError(f"{path}: {len(into)} bytes wanted at offset {offset}, the file has "
                      f"{got} there (truncated data file?)")
