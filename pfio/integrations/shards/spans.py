"""Reading chosen samples of indexed shards: runs of consecutive samples of one shard with
one ranged read each, never a request per sample.

A reader's samples (global numbers, in the order it yields them) are taken a *window* at a
time (``window`` samples, or fewer when they reach ``window_bytes``). The samples of a
window are grouped by shard and sorted; neighbours closer than ``merge_gap`` bytes are read
together (the bytes between them, other readers' samples, are read and dropped), up to
``max_span`` bytes per read. Each span is one positional read (one ranged GET on S3) of an
open shard, parsed as tar members and grouped into samples, which are then yielded in the
window's order. On S3 the request that opens a shard serves the first span read from it
where that costs little (see :func:`opening_fetch`), else it reads 512 bytes. The spans of
the next window are read in the background while a window is yielded. A gzip-compressed
shard cannot be read at an offset: it is streamed from its start to the last sample the
window needs in it.

Every span is checked against the index: a sample that is not where the index says (the
shard was rewritten since it was indexed) raises ``ValueError``, as does a shard whose ETag
differs from the one recorded.
"""

from __future__ import annotations

import bisect
import io
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

from ...api import open_url
from ...containers.tar_format import iter_tar
from ...errors import ArchiveError
from ...fs.positional import PositionalReader
from ...fs.s3.reader import PLAIN_OPENING
from .index import Index, ShardEntry
from .reader import RESUME_OPENING, Sample, group_members, iter_samples

logger = logging.getLogger(__name__)

#: bytes between two wanted samples of a shard below which they are read with one request
MERGE_GAP = 256 << 10
#: bytes one read asks for at most
MAX_SPAN = 64 << 20
#: bytes of samples a window holds at most
WINDOW_BYTES = 128 << 20
#: shards a reader keeps open
OPEN_SHARDS = 8
#: reads in flight at once
READ_THREADS = 4

#: bytes of a shard read and dropped that an opening request may take to serve a span too
OPENING_SLACK = 64 << 10

#: ``opener(entry, first_fetch) -> binary file``: how a reader opens a shard (default:
#: :func:`open_shard`); ``first_fetch`` is what the opening request may read on S3
Opener = Callable[[ShardEntry, int], IO[bytes]]
Span = tuple[int, list[int]]  # (shard number, sorted sample indices in it)


def open_shard(entry: ShardEntry, first_fetch: int = RESUME_OPENING) -> IO[bytes]:
    """The shard opened for positional reads; on S3 the opening request reads the first
    ``first_fetch`` bytes (the last ``-first_fetch`` when negative)."""
    return open_url(entry.url, "rb", first_fetch=first_fetch)


def opening_fetch(entry: ShardEntry, start: int, end: int) -> int:
    """What the request opening ``entry`` reads so that it also serves the span
    ``[start, end)`` where that costs little: the shard's tail from ``start`` when the span
    reaches near its end (a suffix range), its head up to ``end`` when the span starts it and
    the opening reads that much anyway or nearly the whole shard; else a small opening."""
    if entry.size - end <= OPENING_SLACK:
        return -(entry.size - start)
    if start == 0 and end <= PLAIN_OPENING:
        return max(end, RESUME_OPENING)
    return RESUME_OPENING


class SpanReader:
    """Samples of ``index`` by global number, read in spans (see the module docstring).

    ``window`` samples are held in memory at most (twice that while the next window is
    read ahead). ``opener`` opens a shard (e.g. from a local cache); ``keep_open`` shards
    not being read stay open (0 for cached copies, which an open file keeps from eviction).
    """

    def __init__(self, index: Index, window: int = 4096, window_bytes: int = WINDOW_BYTES,
                 merge_gap: int = MERGE_GAP, max_span: int = MAX_SPAN,
                 opener: Opener = open_shard, threads: int = READ_THREADS,
                 keep_open: int = OPEN_SHARDS) -> None:
        self.index = index
        self.window = max(1, window)
        self.window_bytes = window_bytes
        self.merge_gap = merge_gap
        self.max_span = max_span
        self.opener = opener
        self.threads = threads
        self.keep_open = keep_open
        #: open shards: file, positional reader, reads in flight
        self._open: OrderedDict[int, list[Any]] = OrderedDict()
        self._lock = threading.Lock()
        #: spans read so far (requests, one each, on S3)
        self.reads = 0

    def windows(self, ids: Sequence[int]) -> Iterator[Sequence[int]]:
        """``ids`` cut into windows."""
        index, first, size = self.index, 0, 0
        for i, g in enumerate(ids):
            shard, j = index.locate(g)
            size += index.shards[shard].lengths[j]
            if i + 1 - first >= self.window or size >= self.window_bytes:
                yield ids[first:i + 1]
                first, size = i + 1, 0
        if first < len(ids):
            yield ids[first:]

    def spans(self, window: Sequence[int]) -> list[Span]:
        """The reads that fetch ``window``."""
        by_shard: dict[int, set[int]] = {}
        for g in window:
            shard, j = self.index.locate(g)
            by_shard.setdefault(shard, set()).add(j)
        out: list[Span] = []
        for shard in sorted(by_shard):
            entry = self.index.shards[shard]
            wanted = sorted(by_shard[shard])
            if entry.compressed:
                out.append((shard, wanted))
                continue
            run = [wanted[0]]
            for j in wanted[1:]:
                start = entry.offsets[run[0]]
                gap = entry.offsets[j] - (entry.offsets[run[-1]] + entry.lengths[run[-1]])
                if gap <= self.merge_gap and \
                        entry.offsets[j] + entry.lengths[j] - start <= self.max_span:
                    run.append(j)
                else:
                    out.append((shard, run))
                    run = [j]
            out.append((shard, run))
        return out

    def read(self, ids: Sequence[int]) -> Iterator[tuple[int, Sample]]:
        """``(global number, sample)`` for each of ``ids``, in their order."""
        windows = self.windows(ids)
        with ThreadPoolExecutor(max(1, self.threads)) as pool:
            pending = self._submit(pool, next(windows, None))
            while pending is not None:
                window, futures = pending
                got: dict[tuple[int, int], Sample] = {}
                for future in futures:
                    got.update(future.result())
                pending = self._submit(pool, next(windows, None))
                for g in window:
                    shard, j = self.index.locate(g)
                    yield g, dict(got[shard, j])
        self.close()

    def _submit(self, pool: ThreadPoolExecutor, window: Sequence[int] | None
                ) -> tuple[Sequence[int], list[Future[dict[tuple[int, int], Sample]]]] | None:
        if window is None:
            return None
        return window, [pool.submit(self.read_span, span) for span in self.spans(window)]

    def read_span(self, span: Span) -> dict[tuple[int, int], Sample]:
        """The samples of one span, by ``(shard, index in shard)``."""
        shard, wanted = span
        entry = self.index.shards[shard]
        self.reads += 1
        if entry.compressed:
            return self._streamed(shard, entry, wanted)
        first, last = wanted[0], wanted[-1]
        start = entry.offsets[first]
        size = entry.offsets[last] + entry.lengths[last] - start
        reader = self._acquire(shard, entry, opening_fetch(entry, start, start + size))
        try:
            data = reader.read_at(start, size)
        finally:
            self._release(shard)
        if len(data) < size:
            raise ValueError(f"{entry.url}: the shard ends at {start + len(data)}, before the "
                             f"samples the index has up to {start + size}: the shard changed "
                             "since it was indexed")
        members = iter_tar(io.BytesIO(data), entry.url, start, stop=start + size)
        keep = set(wanted)
        out = {}
        try:
            for position, _, sample in group_members(members, entry.url):
                j = bisect.bisect_left(entry.offsets, position)
                if j >= entry.samples or entry.offsets[j] != position:
                    raise ValueError(f"{entry.url}: a sample at offset {position} where the "
                                     "index has none: the shard changed since it was indexed")
                if j in keep:
                    out[shard, j] = sample
        except ArchiveError as exc:
            raise ValueError(f"{entry.url}: no samples where the index says (the shard "
                             f"changed since it was indexed, or is damaged): {exc}") from exc
        missing = keep.difference(j for _, j in out)
        if missing:
            raise ValueError(f"{entry.url}: samples {sorted(missing)[:3]} are not where the "
                             "index says: the shard changed since it was indexed")
        return out

    def _streamed(self, shard: int, entry: ShardEntry, wanted: list[int]
                  ) -> dict[tuple[int, int], Sample]:
        keep = {entry.offsets[j]: j for j in wanted}
        out = {}
        for position, sample in iter_samples(entry.url, entry.offsets[wanted[0]]):
            j = keep.pop(position, None)
            if j is not None:
                out[shard, j] = sample
            if not keep:
                break
        if keep:
            raise ValueError(f"{entry.url}: samples {sorted(keep.values())[:3]} are not "
                             "where the index says: the shard changed since it was indexed")
        return out

    def _acquire(self, shard: int, entry: ShardEntry, first_fetch: int) -> PositionalReader:
        """The open shard (opened now, reading ``first_fetch``, if need be), marked in
        use."""
        with self._lock:
            found = self._open.get(shard)
            if found is not None:
                self._open.move_to_end(shard)
                found[2] += 1
                shared: PositionalReader = found[1]
                return shared
        f = self.opener(entry, first_fetch)
        etag = getattr(f, "etag", None)
        if entry.etag and isinstance(etag, str) and etag.strip('"') != entry.etag.strip('"'):
            f.close()
            raise ValueError(f"{entry.url}: its ETag is {etag}, the index records "
                             f"{entry.etag}: the shard changed since it was indexed")
        with self._lock:
            found = self._open.get(shard)
            if found is not None:  # another thread opened it meanwhile
                f.close()
                found[2] += 1
                shared = found[1]
                return shared
            reader = PositionalReader(f)
            self._open[shard] = [f, reader, 1]
            return reader

    def _release(self, shard: int) -> None:
        with self._lock:
            self._open[shard][2] -= 1
            idle = [k for k, v in self._open.items() if not v[2]]
            for k in idle[:max(0, len(self._open) - self.keep_open)]:
                self._open.pop(k)[0].close()

    def close(self) -> None:
        """Close the shards held open."""
        with self._lock:
            while self._open:
                self._open.popitem()[1][0].close()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_open"] = OrderedDict()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
