"""Read-ahead: one policy over a ``fetch(start, stop)``, with named strategies chosen per use.

A :class:`ReadAhead` serves reads at positions of a file from the bytes it holds and, when
a read misses them, decides what to fetch: a strategy is that decision. The bytes come from
``fetch(start, stop)``, which returns exactly the bytes of ``[start, min(stop, size))``
(fewer only at the end of a file of unknown size), or raises; ``fetch_into(start, stop,
view)``, where the source has it, receives them into ``view`` instead (no copy). Every
fetch is checked: bytes missing before the known end raise ``OSError`` (``EIO``) naming
the file, so a read returns exactly the bytes asked for, after a seek, at the end, or
never. The object owns no position: its owner (a file object) passes the position to each
call, holds its own lock around the calls that fetch, and may call :meth:`ReadAhead.held`
and :meth:`ReadAhead.held_into` from any thread.

The strategies (:data:`STRATEGIES`, made by name with :func:`make`):

``none`` (:class:`ReadAhead`)
    each read fetches exactly its bytes, straight into the caller's buffer; nothing is held.
``sequential`` (:class:`Sequential`)
    a window of ``first`` bytes after a seek that doubles while reads go on from where the
    last fetch ended, up to ``limit``; a read elsewhere fetches what it asks for (at least
    ``first``). With ``slack`` a forward skip of less than a window still reads on (a scan
    of tar headers skipping small members' data); with ``whole_reads`` a miss fetches at
    least the rest of the read in one call (one request per large read).
``background`` (:class:`Background`)
    ``sequential``, and once a fetch is a whole ``limit`` (a block), the next ``depth``
    blocks are fetched in parallel on an executor; a read of two blocks or more that they
    do not serve is fetched as concurrent blocks straight into the caller's buffer.
``blocks`` (:class:`Blocks`)
    reads rounded out to whole aligned blocks, each run of missing blocks one fetch; the
    blocks are kept by a :class:`BlockStore` (a sparse file shared by processes).

Who uses which: S3's reader ``background`` (:mod:`pfio.fs.s3.reader`, which also reads on
from the body of its opening GET and hands those bytes to :meth:`ReadAhead.hold`); tar
members and the scan of tar headers ``sequential`` with ``slack`` and ``whole_reads``
(:class:`pfio.containers.tar_io.RangeReader`), zip members streamed ``sequential``
(:class:`pfio.containers.zip_member.MemberStream`); the block cache ``blocks``
(:class:`pfio.cache.blocks.BlockFile`).

Not served by it, because they decide differently: Ray's Parquet prefetch
(:mod:`pfio.integrations.ray.prefetch`: from the file's footer and the columns pyarrow
reads, not from where reads fall), the TensorFlow plugin's reader
(:mod:`pfio.integrations.tensorflow.plugin.files`: one block in flight over S3's reader,
which reads ahead itself, only while one file is read alone); HDFS files
(:mod:`pfio.fs.hdfs.files`) are an ``io.BufferedReader`` over positional reads, each
refill one request, nothing fetched before a read asks for it.
"""

from __future__ import annotations

from typing import Any

from .background import Background, Pool
from .blocks import Blocks, BlockStore
from .policy import Buffer, Fetch, FetchInto, ReadAhead, Sequential

__all__ = ["STRATEGIES", "Background", "BlockStore", "Blocks", "Buffer", "Fetch", "FetchInto",
           "Pool", "ReadAhead", "Sequential", "make"]

#: the strategies by name
STRATEGIES: dict[str, type[ReadAhead]] = {
    cls.strategy: cls for cls in (ReadAhead, Sequential, Background, Blocks)}


def make(strategy: str, fetch: Fetch, size: int | None, **options: Any) -> ReadAhead:
    """A :class:`ReadAhead` of the named strategy over ``fetch`` (``options``: its
    class's keyword arguments).

    Raises:
        ValueError: an unknown strategy (the message lists the known ones).
    """
    try:
        cls = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"unknown read-ahead strategy {strategy!r}; known: "
                         f"{', '.join(sorted(STRATEGIES))}") from None
    return cls(fetch, size, **options)
