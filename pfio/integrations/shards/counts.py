"""How many samples each shard holds, for datasets given a list of shards.

:func:`shard_counts` takes them from the ``pfio-index.json`` of the shards' directory (one
GET; see :mod:`pfio.integrations.shards.index`), else from the ``<shard URL>.count.json``
sidecars (``{"samples": N, "bytes": size}``) earlier versions of
:class:`~pfio.integrations.shards.ShardWriter` wrote (in parallel threads: one small read
each), and counts, with one streaming pass, the shards that have neither (logging that it
does, since that reads the whole shard).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from ...api import open_url
from .index import INDEX_NAME, base_of, read_index
from .reader import count_samples

logger = logging.getLogger(__name__)

SIDECAR_SUFFIX = ".count.json"


class ShardCount(NamedTuple):
    """A shard's sample count and, when a sidecar says it, its size in bytes."""

    samples: int
    bytes: int | None = None


def sidecar_url(shard: str) -> str:
    """The URL of the count sidecar of ``shard``."""
    return shard + SIDECAR_SUFFIX


def write_sidecar(shard: str, samples: int, size: int) -> None:
    """Publish the count sidecar of ``shard``."""
    with open_url(sidecar_url(shard), "w", encoding="utf-8") as f:
        json.dump({"samples": samples, "bytes": size}, f)


def read_sidecar(shard: str) -> ShardCount | None:
    """The count the sidecar of ``shard`` records, None when there is none.

    Raises:
        ValueError: a sidecar that is not ``{"samples": int, ...}``.
    """
    url = sidecar_url(shard)
    try:
        with open_url(url, "r", encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{url}: not a shard count sidecar ({exc})") from None
    samples = record.get("samples") if isinstance(record, dict) else None
    if not isinstance(samples, int) or samples < 0:
        raise ValueError(f"{url}: not a shard count sidecar (no sample count)")
    size = record.get("bytes")
    return ShardCount(samples, size if isinstance(size, int) else None)


def shard_counts(shards: Sequence[str], given: Mapping[str, int] | Sequence[int] | None = None,
                 threads: int = 16) -> dict[str, ShardCount]:
    """The sample count of each shard: from ``given`` (a mapping URL -> count, or counts in
    the order of ``shards``), else its sidecar, else one streaming pass over the shard."""
    if given is not None:
        if isinstance(given, Mapping):
            missing = [s for s in shards if s not in given]
            if missing:
                raise ValueError(f"no sample count given for {missing[:3]}")
            return {s: ShardCount(int(given[s])) for s in shards}
        if len(given) != len(shards):
            raise ValueError(f"{len(given)} sample counts for {len(shards)} shards")
        return {s: ShardCount(int(n)) for s, n in zip(shards, given, strict=True)}
    unique = list(dict.fromkeys(shards))
    indexed = _index_counts(unique)
    with ThreadPoolExecutor(max(1, min(threads, len(unique)))) as pool:
        rest = [s for s in unique if s not in indexed]
        found: dict[str, ShardCount | None] = {**indexed, **dict(
            zip(rest, pool.map(read_sidecar, rest), strict=True))}
        uncounted = [s for s, c in found.items() if c is None]
        if uncounted:
            logger.warning("%d shard(s) are in no %s and have no %s sidecar (ShardWriter "
                           "writes an index, build_index makes one); counting their samples "
                           "with a pass over each, e.g. %s", len(uncounted), INDEX_NAME,
                           SIDECAR_SUFFIX, uncounted[0])
            for shard, n in zip(uncounted, pool.map(count_samples, uncounted), strict=True):
                found[shard] = ShardCount(n)
    return {shard: count for shard, count in found.items() if count is not None}  # (all)


def _index_counts(shards: Sequence[str]) -> dict[str, ShardCount]:
    """The counts the index of the shards' directories records (one GET per directory)."""
    found: dict[str, ShardCount] = {}
    for base in dict.fromkeys(base_of(s) for s in shards):
        try:
            index = read_index(base + INDEX_NAME)
        except FileNotFoundError:
            continue
        found.update({e.url: ShardCount(e.samples, e.size) for e in index.shards})
    wanted = set(shards)
    return {url: count for url, count in found.items() if url in wanted}
