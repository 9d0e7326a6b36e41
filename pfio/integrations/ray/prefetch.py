"""Read-ahead of Parquet column chunks for pyarrow's serialized reads of a Python file.

pyarrow reads a Python file (``pyarrow.PythonFile``) one call at a time, under a lock, so
the ranges its scanner asks for at once (the column chunks of several row groups) are
fetched one after the other. Knowing the file's footer, :class:`ChunkPrefetcher` learns
from the reads which columns pyarrow wants and fetches their other chunks in background
threads, so that they are in memory (or on their way) when pyarrow asks for them. Reads it
did not foresee are passed on as they are; every byte still comes from a positional read of
the file (one ranged GET on S3, checked as every pfio read is).

This is not a strategy of pfio's read-ahead policy (:mod:`pfio.fs.readahead`), which
decides from where reads fall (a window that grows while reads go on and restarts after a
seek, or aligned blocks) and holds one run of bytes: pyarrow's reads jump between row
groups, so each would be a seek to it. What to fetch here comes from the file's footer
and from which columns pyarrow has read, as many disjoint column chunks held at once, each
dropped once pyarrow has read all of it, on a pool shared by the process's files.
"""

from __future__ import annotations

import bisect
import functools
import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ...fs.positional import PositionalReader

#: bytes fetched ahead and not yet read, at most, per open file
AHEAD_BYTES = 64 << 20
#: the largest single read ahead
MAX_READ = 16 << 20
#: threads of the per-process pool that fetches ahead
THREADS = 8
#: column chunks at most this many bytes apart are fetched in one read (pyarrow's default)
HOLE = 8192

logger = logging.getLogger(__name__)

_pool_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def _executor() -> ThreadPoolExecutor:
    """This process's pool (a forked child makes its own)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(THREADS, "pfio-ray-prefetch"))
        return _pool[1]


def footer(tail: bytes) -> pq.FileMetaData | None:
    """The Parquet footer in ``tail`` (the last bytes of a file), or None: not Parquet, or
    a footer longer than ``tail``."""
    if len(tail) < 12 or tail[-4:] != b"PAR1":
        return None
    if int.from_bytes(tail[-8:-4], "little") + 8 > len(tail):
        return None
    try:
        return pq.read_metadata(pa.BufferReader(tail))
    except (OSError, ValueError, pa.ArrowException):
        return None


class ChunkPrefetcher(PositionalReader):
    """Positional reads of ``f``, a Parquet file whose footer is ``metadata``, with column
    chunks fetched ahead.

    The columns pyarrow reads are learnt from its reads (a column whose whole chunk in some
    row group a read covers); the chunks of those columns not read yet are fetched in file
    order, near ones together (:func:`_coalesce`), up to :data:`AHEAD_BYTES` held or under
    way. A read that the fetched pieces cover is served from them; any other is passed on.
    """

    def __init__(self, f: Any, metadata: pq.FileMetaData) -> None:
        super().__init__(f)
        self._read_direct = functools.partial(PositionalReader.read_at, self)
        self._ahead_lock = threading.Lock()
        chunks = []
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                column = group.column(c)
                start = column.data_page_offset
                if column.dictionary_page_offset is not None:
                    start = min(start, column.dictionary_page_offset)
                chunks.append((start, start + column.total_compressed_size, c))
        #: (start, stop, column) of every column chunk, in file order
        self._chunks = sorted(chunks)
        self._starts = [start for start, _, _ in self._chunks]
        self._columns: set[int] = set()
        self._taken = [False] * len(self._chunks)  # read, or fetched ahead
        #: (start, stop) -> the read ahead, and the bytes of it not yet served
        self._ahead: dict[tuple[int, int], tuple[Future[bytes], int]] = {}

    def read_at(self, offset: int, size: int) -> bytes:
        """The ``size`` bytes at ``offset`` (fewer at the end of the file)."""
        data = self._from_ahead(offset, size)
        if data is None:
            data = self._read_direct(offset, size)
        self._plan(offset, offset + len(data))
        return data

    def close(self) -> None:
        """Forget the reads ahead (those under way finish in the background)."""
        with self._ahead_lock:
            for future, _ in self._ahead.values():
                future.cancel()
            self._ahead.clear()

    def _from_ahead(self, offset: int, size: int) -> bytes | None:
        """``[offset, offset + size)`` from the reads ahead, when they cover it."""
        stop = offset + size
        with self._ahead_lock:
            pieces = sorted(span for span in self._ahead if span[0] < stop and offset < span[1])
            at = offset
            for start, end in pieces:
                if start > at:
                    return None
                at = max(at, end)
            if not pieces or at < stop:
                return None
            futures = [(span, self._ahead[span][0]) for span in pieces]
        parts = []
        for (start, end), future in futures:
            try:
                data = future.result()
            except Exception:  # noqa: BLE001 - read again by the caller, errors surface there
                logger.debug("%s: a read ahead failed", self.file, exc_info=True)
                with self._ahead_lock:
                    self._ahead.pop((start, end), None)
                return None
            parts.append(data[max(offset, start) - start:min(stop, end) - start])
        with self._ahead_lock:
            for start, end in pieces:
                entry = self._ahead.get((start, end))
                if entry is not None:
                    left = entry[1] - (min(stop, end) - max(offset, start))
                    if left <= 0:
                        del self._ahead[(start, end)]
                    else:
                        self._ahead[(start, end)] = (entry[0], left)
        return b"".join(parts)

    def _plan(self, start: int, stop: int) -> None:
        """After a read of ``[start, stop)``: learn the columns it covers, then fetch the
        chunks of the known columns not read yet, up to :data:`AHEAD_BYTES`."""
        with self._ahead_lock:
            first = max(0, bisect.bisect_right(self._starts, start) - 1)
            for i in range(first, len(self._chunks)):
                chunk_start, chunk_stop, column = self._chunks[i]
                if chunk_start >= stop:
                    break
                if start <= chunk_start and chunk_stop <= stop:
                    self._columns.add(column)
                    self._taken[i] = True
            if not self._columns:
                return
            held = sum(end - begin for begin, end in self._ahead)
            wanted = [i for i, (_, _, column) in enumerate(self._chunks)
                      if not self._taken[i] and column in self._columns]
            for group in _coalesce(wanted, self._chunks):
                span = (self._chunks[group[0]][0], max(self._chunks[i][1] for i in group))
                if held + span[1] - span[0] > AHEAD_BYTES and held:
                    break
                for i in group:
                    self._taken[i] = True
                held += span[1] - span[0]
                future = _executor().submit(self._read_direct, span[0], span[1] - span[0])
                self._ahead[span] = (future, span[1] - span[0])


def _coalesce(indices: list[int], chunks: list[tuple[int, int, int]]) -> list[list[int]]:
    """The chunks ``indices`` (ascending) in groups read together: chunks at most
    :data:`HOLE` bytes apart (as pyarrow merges the ranges it reads), up to
    :data:`MAX_READ` bytes a group."""
    groups: list[list[int]] = []
    for i in indices:
        if groups:
            last = groups[-1]
            begin, end = chunks[last[0]][0], chunks[last[-1]][1]
            if chunks[i][0] - end <= HOLE and chunks[i][1] - begin <= MAX_READ:
                last.append(i)
                continue
        groups.append([i])
    return groups


def positional_reader(f: Any, tail_size: int) -> PositionalReader:
    """Positional reads of the open file ``f``: a :class:`ChunkPrefetcher` when its last
    ``tail_size`` bytes (on S3, buffered by the opening GET) hold a Parquet footer of more
    than one row group, else a plain :class:`~pfio.fs.positional.PositionalReader`."""
    reader = PositionalReader(f)
    metadata = footer(reader.read_tail(tail_size)[1]) if reader.size() >= 12 else None
    if metadata is None or metadata.num_row_groups < 2:
        return reader
    return ChunkPrefetcher(f, metadata)
