"""Writing webdataset-layout tar shards on any pfio URL.

:class:`TarShardWriter` writes one shard; :class:`ShardWriter` writes a numbered series of them
(``"s3://b/train-%06d.tar"``), starting a new shard when one reaches ``maxcount`` samples or
would pass ``maxsize`` bytes.

Each sample ``{"__key__": "a/b", "jpg": ..., "cls": 3}`` becomes the members ``a/b.cls`` and
``a/b.jpg`` (extensions in sorted order, as webdataset's ``TarWriter`` writes them), values
encoded by :func:`~pfio.integrations.shards.encode.encode_field`. Fields whose names start with
``_`` (``__key__``, ``__url__``) are not written. Shards are written by pfio's one tar writer
(:mod:`pfio.containers.tar_stream`) with fixed headers (mtime 0, uid/gid 0, no user or group
names, mode 0444, pax format only where a name needs it), so the same samples give the same
bytes. A name ending in ``.tar.gz`` or ``.tgz`` writes a gzip-compressed shard
(with a fixed gzip header too).

A shard is published when it is closed (pfio's writers are all-or-nothing): an exception
inside ``with ShardWriter(...)`` publishes nothing of the shard being written; the shards
closed before it stay. When :class:`ShardWriter` closes, it publishes the dataset's
``pfio-index.json`` (see :mod:`pfio.integrations.shards.index`) in the directory of its
shards: every shard's name, size, sample count and each sample's span, so that readers start
with one GET. (Earlier versions wrote a ``.count.json`` sidecar beside each shard; readers
still take them, and ``sidecar=True`` still writes them.)
"""

from __future__ import annotations

import logging
from typing import IO, Any

from ...api import open_url
from ...containers.tar_sources import GZIP_SUFFIXES
from ...containers.tar_stream import TarStream, member_blocks
from .counts import write_sidecar
from .encode import encode_field
from .index import INDEX_NAME, ShardEntry, base_of, relative_name, write_index
from .reader import split_name

logger = logging.getLogger(__name__)

#: the mode and mtime of every member (fixed: the same samples give the same bytes)
MEMBER_MODE = 0o444
MEMBER_MTIME = 0
#: the gzip level of a compressed shard
COMPRESSLEVEL = 6


def sample_members(sample: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The ``(member name, bytes)`` of ``sample``, in the order they are written.

    Raises:
        ValueError: no ``__key__``, a key or extension that would not read back as this
            sample (a ``.`` in the key's base name, an empty extension or one with ``/``),
            or a value no encoder takes.
    """
    key = sample.get("__key__")
    if not isinstance(key, str) or not key:
        raise ValueError(f"a sample needs a non-empty str '__key__', got {key!r}")
    members = []
    for ext in sorted(sample):
        if ext.startswith("_"):
            continue
        name = f"{key}.{ext}"
        if not ext or "/" in ext or split_name(name) != (key, ext.lower()):
            raise ValueError(f"sample {key!r}: field {ext!r} would be read back as "
                             f"{split_name(name)!r}: keys must not have a '.' in their base "
                             "name, extensions must be non-empty without '/'")
        members.append((name, encode_field(ext, sample[ext])))
    if not members:
        raise ValueError(f"sample {key!r} has no fields to write")
    return members


def tar_bytes(members: list[tuple[str, bytes]]) -> list[bytes]:
    """The tar blocks (headers, data, padding) of ``members``."""
    return [block for name, data in members
            for block in member_blocks(name, data, MEMBER_MODE, MEMBER_MTIME)]


class TarShardWriter:
    """One shard at ``url``, written sample by sample and published by :meth:`close`.

    Args:
        url: any pfio URL; ``.tar.gz``/``.tgz`` names write a gzip-compressed shard.
        compress: force gzip compression on (True) or off (False); default: by the name.
        sidecar: also write a count sidecar (``<url>.count.json``) after publishing, for
            readers of earlier pfio versions.

    ``count`` is the number of samples written, ``size`` the bytes of tar written (before
    compression), ``offsets`` and ``lengths`` the span of each sample in the tar stream.
    """

    def __init__(self, url: str, compress: bool | None = None, sidecar: bool = False) -> None:
        self.url = url
        self.sidecar = sidecar
        self.count = 0
        self.size = 0
        self.offsets: list[int] = []
        self.lengths: list[int] = []
        #: the bytes of the published shard (None until it is published)
        self.published_size: int | None = None
        self.closed = False
        self.compressed = compress if compress is not None else \
            url.lower().endswith(GZIP_SUFFIXES)
        self._file: IO[bytes] = open_url(url, "wb")
        self._tar = TarStream(self._file, COMPRESSLEVEL if self.compressed else None)

    def write(self, sample: dict[str, Any]) -> int:
        """Append ``sample`` (see the module docstring); return the tar bytes it took."""
        return self.write_blocks(tar_bytes(sample_members(sample)))

    def write_blocks(self, blocks: list[bytes]) -> int:
        """Append one sample already turned into tar blocks (see :func:`tar_bytes`)."""
        if self.closed:
            raise ValueError(f"shard {self.url} is closed")
        size = self._tar.write_blocks(blocks)
        self.offsets.append(self.size)
        self.lengths.append(size)
        self.count += 1
        self.size += size
        return size

    def close(self) -> None:
        """Finish the shard (end-of-archive blocks) and publish it, then its sidecar."""
        if self.closed:
            return
        self.closed = True
        try:
            tar_size = self._tar.finish()
        except BaseException:
            self._abort_file()
            raise
        written = self._file.tell() if self.compressed else tar_size
        self._file.close()
        self.published_size = written
        if self.sidecar:
            write_sidecar(self.url, self.count, tar_size)

    def entry(self, base: str) -> ShardEntry:
        """The index entry of the published shard, named relative to ``base``."""
        if self.published_size is None:
            raise ValueError(f"shard {self.url} is not published")
        return ShardEntry(relative_name(self.url, base), self.url, self.published_size,
                          None, self.offsets, self.lengths, self.compressed)

    def abort(self) -> None:
        """Publish nothing of this shard."""
        if self.closed:
            return
        self.closed = True
        self._abort_file()

    def _abort_file(self) -> None:
        self._tar.abandon()
        abort = getattr(self._file, "abort", None)
        if abort is not None:
            abort()
        else:
            logger.warning("%s: the writer cannot be aborted; it may be published", self.url)
        try:
            self._file.close()
        except Exception:  # a writer that fails as it is discarded has nothing to publish
            logger.debug("closing the aborted writer of %s failed", self.url, exc_info=True)

    def __enter__(self) -> TarShardWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()


class ShardWriter:
    """Samples written to numbered shards: ``pattern % n`` for n = ``start_shard``, ...

    Args:
        pattern: a pfio URL with one ``%`` integer field: ``"s3://b/train-%06d.tar"``.
        maxcount: samples per shard at most.
        maxsize: bytes of tar per shard at most (a sample larger than that alone gets a
            shard of its own).
        start_shard: the first shard number.
        compress, sidecar: as for :class:`TarShardWriter`.
        index: publish ``pfio-index.json`` in the shards' directory on :meth:`close`
            (True), at the URL given (a str), or not (False: e.g. several writers filling
            one directory, then one :func:`~pfio.integrations.shards.build_index`). It
            describes the shards of this writer only.

    ``shards`` lists the URLs of the shards published so far, in order; ``index_url`` the
    index published (None before :meth:`close`). Use it as a context manager, or call
    :meth:`close`.
    """

    def __init__(self, pattern: str, maxcount: int = 100000, maxsize: float = 3e9,
                 start_shard: int = 0, compress: bool | None = None,
                 sidecar: bool = False, index: bool | str = True) -> None:
        try:
            first, second = pattern % start_shard, pattern % (start_shard + 1)
        except (TypeError, ValueError):
            first = second = ""
        if not first or first == second:
            raise ValueError(f"shard pattern {pattern!r} needs one integer field such as %06d")
        if maxcount < 1 or maxsize <= 0:
            raise ValueError("maxcount and maxsize must be positive")
        self.pattern = pattern
        self.maxcount = maxcount
        self.maxsize = maxsize
        self.compress = compress
        self.sidecar = sidecar
        self.shards: list[str] = []
        self.total = 0
        if index is True:
            index = base_of(pattern[:pattern.index("%")]) + INDEX_NAME
        self._index: str | None = index or None
        if self._index is not None:
            relative_name(first, base_of(self._index))  # a shard outside it fails here
        self.index_url: str | None = None
        self._entries: list[ShardEntry] = []
        self._next = start_shard
        self._current: TarShardWriter | None = None
        self._closed = False

    def write(self, sample: dict[str, Any]) -> None:
        """Append ``sample`` to the current shard, starting a new shard first when the
        current one is full."""
        if self._closed:
            raise ValueError("the ShardWriter is closed")
        blocks = tar_bytes(sample_members(sample))
        size = sum(len(b) for b in blocks)
        current = self._current
        if current is not None and (current.count >= self.maxcount or
                                    current.size + size > self.maxsize):
            self._finish()
            current = None
        if current is None:
            current = self._current = TarShardWriter(self.pattern % self._next, self.compress,
                                                     self.sidecar)
            self._next += 1
        current.write_blocks(blocks)
        self.total += 1

    def _finish(self) -> None:
        current, self._current = self._current, None
        if current is not None:
            current.close()
            self.shards.append(current.url)
            if self._index is not None:
                self._entries.append(current.entry(base_of(self._index)))
            logger.info("published shard %s: %d samples, %d bytes", current.url,
                        current.count, current.size)

    def close(self) -> None:
        """Publish the shard being written, then the index."""
        if not self._closed:
            self._closed = True
            self._finish()
            if self._index is not None:
                self.index_url = write_index(self._index, self._entries)

    def abort(self) -> None:
        """Publish nothing of the shard being written (those before it stay)."""
        self._closed = True
        current, self._current = self._current, None
        if current is not None:
            current.abort()

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()
