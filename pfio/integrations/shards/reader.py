"""Reading one shard front to back: its members, then its samples.

* A tar shard (``.tar``; gzip-compressed when it starts with the gzip magic bytes, as
  ``.tar.gz``/``.tgz`` shards do) is opened with :func:`pfio.open_url` and read with large
  sequential reads: on S3 that is one GET for the whole object, read to its end.
* A zip shard (``.zip``) is opened as pfio's :class:`~pfio.containers.zip.Zip` container and
  its members are read in archive order (one ranged read each on S3).

Samples are grouped as webdataset groups them (see :func:`split_name`): consecutive members
with the same key form one sample ``{"__key__": key, "__url__": url, ext: bytes, ...}``.

Every sample comes with its *position*: where to start reading the shard again to get that
sample next (the offset of its first header in the uncompressed tar stream, or the index of
its first member in a zip). :func:`iter_samples` starts at such a position, so a reader that
resumes within a shard skips what it already read (seeking in an uncompressed tar).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import IO, Any

from ...api import from_url, open_url
from ...containers.tar_format import Member, iter_tar
from ...containers.tar_sources import DECODE_ERRORS, GZIP_MAGIC, decode_error, gunzipped
from ...containers.zip import Zip
from ...errors import ArchiveError
from ...fs.file_types import as_binary_io, read_into
from ...fs.skipping import drop, skip

logger = logging.getLogger(__name__)

#: the names of shards read as zip archives (any other is read as a tar stream)
ZIP_SUFFIXES = (".zip",)
#: bytes the opening read of a shard resumed inside asks for (to tell gzip from tar)
RESUME_OPENING = 512

Sample = dict[str, Any]


def split_name(name: str) -> tuple[str, str] | None:
    """``(key, extension)`` of a member name, as webdataset splits it: the key is the path up
    to the first ``.`` of the base name (directories included), the extension the rest,
    lower-cased: ``"a/b.seg.PNG"`` is ``("a/b", "seg.png")``.

    None for names that are not part of a sample: no ``.`` in the base name, a base name
    starting with ``.`` (hidden files; webdataset makes the odd key ``"dir/"`` of a
    ``dir/.name`` inside a directory, pfio skips them everywhere), and metadata whose first
    path component is ``__name__`` (webdataset skips those too).
    """
    slash = name.rfind("/")
    dot = name.find(".", slash + 1)
    if dot <= slash + 1:
        return None
    if name.startswith("__"):
        top = name.split("/", 1)[0]
        if len(top) >= 4 and top.endswith("__"):
            return None
    return name[:dot], name[dot + 1:].lower()


def iter_members(url: str, start: int = 0) -> Iterator[Member]:
    """The regular members of the shard at ``url`` in archive order, from ``start`` (a
    position given by an earlier :class:`Member`; 0 is the start).

    Raises:
        ArchiveError: a truncated or corrupt shard (the message names ``url``).
        FileNotFoundError: no shard at ``url``.
    """
    if url.lower().endswith(ZIP_SUFFIXES):
        yield from _zip_members(url, start)
        return
    # a shard is read once from start to end: one GET (on S3) streams it whatever its speed;
    # resuming inside it, the opening request reads only its first bytes (a ranged GET,
    # rather than a plain GET of the whole object dropped at the seek)
    options: dict[str, Any] = {"first_fetch": RESUME_OPENING} if start else {"sequential": True}
    with open_url(url, "rb", **options) as f:
        head = f.read(2) if start else b""
        if start and head != GZIP_MAGIC:
            f.seek(start)  # an uncompressed tar: go straight to the position
            yield from iter_tar(f, url, start)
            return
        yield from stream_members(as_binary_io(Prefixed(head, f)) if head else f, url, start)


def stream_members(source: IO[bytes], url: str, start: int = 0) -> Iterator[Member]:
    """The regular members of the tar stream ``source`` (gzip-compressed when it starts
    with the gzip magic bytes) read from its first byte, from position ``start`` of the
    uncompressed stream on; ``url`` names it in errors."""
    first = source.read(2)
    stream = as_binary_io(Prefixed(first, source))
    if first != GZIP_MAGIC:
        if start:
            _skip(stream, start, url)
        yield from iter_tar(stream, url, start)
        return
    with gunzipped(stream, url) as unzipped:
        try:
            if start:
                _skip(unzipped, start, url)
            yield from iter_tar(unzipped, url, start)
            drop(unzipped)  # the gzip trailer (CRC-32, length) is checked
        except DECODE_ERRORS as exc:
            raise decode_error(url, exc) from exc


def _skip(f: IO[bytes], start: int, url: str) -> None:
    moved = skip(f, start)
    if moved < start:
        raise ArchiveError(f"{url}: truncated archive: it ends at position {moved}, before "
                           f"the position {start} to resume from")


class Prefixed(io.RawIOBase):
    """``head`` (bytes already read), then the rest of ``f``: a read-only stream."""

    def __init__(self, head: bytes, f: IO[bytes]) -> None:
        super().__init__()
        self._head = head
        self._f = f

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        head = self._head
        if not head:
            return self._f.read(n)
        if n < 0:
            self._head = b""
            return head + self._f.read()
        self._head = head[n:]
        if len(head) >= n:
            return head[:n]
        return head + self._f.read(n - len(head))

    def readinto(self, b: Any) -> int | None:
        view = memoryview(b).cast("B")
        if not self._head:
            return read_into(self._f, view)
        data = self.read(len(view))
        view[:len(data)] = data
        return len(data)


def _zip_members(url: str, start: int) -> Iterator[Member]:
    with from_url(url) as archive:
        if not isinstance(archive, Zip):
            raise ArchiveError(f"{url}: opened as {type(archive).__name__}, not as a zip")
        names = archive.stored_members()
        for i in range(start, len(names)):
            with archive.open(names[i], "rb") as f:
                yield Member(names[i], f.read(), i)


def iter_samples(url: str, start: int = 0) -> Iterator[tuple[int, Sample]]:
    """``(position, sample)`` of each sample of the shard at ``url`` from position
    ``start``, grouped as :func:`split_name` says; a sample is yielded once its last member
    is read (the last one once the end of the shard is checked).

    Raises:
        ValueError: a key has two members with the same extension (as in webdataset).
        ArchiveError: a truncated or corrupt shard.
    """
    for position, _, sample in group_members(iter_members(url, start), url):
        yield position, sample


def group_members(members: Iterator[Member], url: str) -> Iterator[tuple[int, int, Sample]]:
    """``(position, end, sample)``: ``members`` grouped into samples as
    :func:`iter_samples` groups them, with the span each takes in the tar stream (from its
    first header to the end of its last member's data; ``end`` is 0 where unknown)."""
    sample: Sample | None = None
    position = end = 0
    for member in members:
        parts = split_name(member.name)
        if parts is None:
            continue
        key, ext = parts
        if sample is None or key != sample["__key__"]:
            if sample is not None:
                yield position, end, sample
            sample = {"__key__": key, "__url__": url}
            position = member.position
        elif ext in sample:
            raise ValueError(f"{url}: duplicate extension {ext!r} in sample {key!r} "
                             f"(member {member.name!r})")
        sample[ext] = member.data
        end = member.end
    if sample is not None:
        yield position, end, sample


def count_samples(url: str) -> int:
    """The number of samples in the shard at ``url`` (one streaming pass over it)."""
    return sum(1 for _ in iter_samples(url))
