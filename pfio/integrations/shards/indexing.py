"""Building a ``pfio-index.json`` (see :mod:`.index`) for tar shards someone else wrote:
one streaming pass over each shard (one GET on S3), shards in parallel threads."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ...api import from_url, open_url
from ...containers.tar_sources import GZIP_MAGIC
from ...fs.file_types import as_binary_io
from ...fs.positional import PositionalReader
from .braces import expand_urls
from .index import (
    INDEX_NAME,
    SHARD_SUFFIXES,
    ShardEntry,
    base_of,
    is_shard_list,
    relative_name,
    write_index,
)
from .reader import ZIP_SUFFIXES, Prefixed, group_members, stream_members

logger = logging.getLogger(__name__)


def scan_shard(url: str, base: str) -> ShardEntry:
    """The index entry of the tar shard at ``url`` (one pass over it), named relative to
    ``base``.

    Raises:
        ValueError: a zip shard (an index describes tar shards), or a shard whose samples
            do not read back (see :func:`~pfio.integrations.shards.iter_samples`).
        ArchiveError: a truncated or corrupt shard.
    """
    if url.lower().endswith(ZIP_SUFFIXES):
        raise ValueError(f"{url}: an index describes tar shards, not zip archives")
    name = relative_name(url, base)
    offsets: list[int] = []
    lengths: list[int] = []
    with open_url(url, "rb", sequential=True) as f:
        head = f.read(2)
        compressed = head == GZIP_MAGIC
        members = stream_members(as_binary_io(Prefixed(head, f)), url)
        for position, end, _ in group_members(members, url):
            offsets.append(position)
            lengths.append(end - position)
        size = PositionalReader(f).size()
        etag = getattr(f, "etag", None)
    return ShardEntry(name, url, size, etag if isinstance(etag, str) else None, offsets,
                      lengths, compressed)


def list_shards(prefix: str) -> list[str]:
    """The shard URLs in the directory ``prefix`` (one listing), sorted by name."""
    fs = from_url(prefix)
    names = sorted(str(n) for n in fs.list("", recursive=True)
                   if str(n).lower().endswith(SHARD_SUFFIXES))
    fs.close()
    return [prefix.rstrip("/") + "/" + n for n in names]


def build_index(shards: str | Sequence[str], index_url: str | None = None,
                threads: int = 16) -> str:
    """Write a ``pfio-index.json`` for ``shards`` and return its URL.

    Args:
        shards: shard URLs, a brace pattern (``"s3://b/train-{0000..0011}.tar"``), or the
            directory or prefix holding them (listed once; every ``.tar``, ``.tar.gz`` and
            ``.tgz`` under it).
        index_url: where to write it; default ``pfio-index.json`` in the shards' common
            directory. Every shard must be under the index's directory.
        threads: shards read at once.

    Raises:
        ValueError: no shards, a shard outside the index's directory, a zip shard.
        FileNotFoundError: a shard that does not exist.
    """
    urls = expand_urls(shards) if is_shard_list(shards) else list_shards(str(shards))
    if not urls:
        raise ValueError(f"no shards in {shards!r}")
    if index_url is None:
        common = os.path.commonprefix([base_of(u) for u in urls])
        index_url = base_of(common) + INDEX_NAME
    base = base_of(index_url)
    for url in urls:
        relative_name(url, base)  # fails before any shard is read
    with ThreadPoolExecutor(max(1, min(threads, len(urls)))) as pool:
        entries = list(pool.map(lambda url: scan_shard(url, base), urls))
    logger.info("indexed %d shards, %d samples: %s", len(entries),
                sum(e.samples for e in entries), index_url)
    return write_index(index_url, entries)
