"""``pfio-index.json``: one small file that describes a whole dataset of tar shards.

It lives in the directory (or S3 prefix) of the shards, so that a reader needs one GET to
know every shard and every sample, with no LIST and no HEAD::

    {"format": "pfio-index", "version": 1,
     "shards": [{"name": "train-000000.tar", "size": 1054720, "etag": "9b2c...",
                 "samples": 1000, "compressed": false,
                 "offsets": [0, 1536, ...], "lengths": [1536, 1024, ...]}, ...]}

``name`` is relative to the index's directory; ``size`` is the shard's size in bytes and
``etag`` its ETag where known (null otherwise); ``offsets[i]`` and ``lengths[i]`` are the
span sample ``i`` takes in the (uncompressed) tar stream: from its first header to the end
of its last member's data and padding, so a run of consecutive samples is one ranged read.

:class:`~pfio.integrations.shards.ShardWriter` writes it when it closes;
:func:`~pfio.integrations.shards.build_index` builds one for shards written by anything
else. The *identity* of an index (a hash of its content) ties a resume state to the data
it was saved on.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...api import open_url

#: the file name of a dataset's index
INDEX_NAME = "pfio-index.json"
FORMAT = "pfio-index"
VERSION = 1
#: shard names taken as archives (anything else given to a dataset is an index location)
SHARD_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")


@dataclass(frozen=True)
class ShardEntry:
    """One shard of an index: its URL, ``name`` (relative to the index), ``size``, ``etag``
    (or None), whether it is gzip-compressed, and each sample's span."""

    name: str
    url: str
    size: int
    etag: str | None
    offsets: Sequence[int]
    lengths: Sequence[int]
    compressed: bool = False

    @property
    def samples(self) -> int:
        """The number of samples in the shard."""
        return len(self.offsets)

    def to_json(self) -> dict[str, Any]:
        """The entry as the index file stores it."""
        return {"name": self.name, "size": self.size, "etag": self.etag,
                "samples": self.samples, "compressed": self.compressed,
                "offsets": list(self.offsets), "lengths": list(self.lengths)}


@dataclass
class Index:
    """A dataset's shards and samples, as read from its ``pfio-index.json`` at ``url``.

    Samples are numbered globally in shard order: shard ``s``'s sample ``j`` is
    ``starts[s] + j``.
    """

    url: str
    shards: list[ShardEntry]
    identity: str = ""
    starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.starts = []
        total = 0
        for entry in self.shards:
            self.starts.append(total)
            total += entry.samples
        self.total = total
        if not self.identity:
            self.identity = identity_of(self.shards)

    def __len__(self) -> int:
        return self.total

    def locate(self, sample: int) -> tuple[int, int]:
        """``(shard, index in shard)`` of global sample number ``sample``."""
        if not 0 <= sample < self.total:
            raise IndexError(f"sample {sample} is not in [0, {self.total})")
        shard = bisect.bisect_right(self.starts, sample) - 1
        return shard, sample - self.starts[shard]

    def counts(self) -> list[int]:
        """Samples per shard, in shard order."""
        return [entry.samples for entry in self.shards]


def identity_of(shards: Sequence[ShardEntry]) -> str:
    """A short hash of what the entries say (names, sizes, ETags, spans)."""
    digest = hashlib.sha256()
    for entry in shards:
        digest.update(json.dumps(entry.to_json(), sort_keys=True).encode())
    return digest.hexdigest()[:24]


def base_of(index_url: str) -> str:
    """The directory of ``index_url``, with its trailing ``/`` ('' for a bare name)."""
    return index_url[:index_url.rfind("/") + 1]


def index_location(url: str) -> str:
    """The index URL that ``url`` (the index itself, or the directory or prefix holding
    it) names."""
    if url.endswith(".json"):
        return url
    return url.rstrip("/") + "/" + INDEX_NAME


def is_shard_list(shards: str | Sequence[str]) -> bool:
    """True when ``shards`` names shards (a list, a brace pattern, a shard URL) rather
    than an index or the directory holding one."""
    if not isinstance(shards, str):
        return True
    return "{" in shards or shards.lower().endswith(SHARD_SUFFIXES)


def relative_name(url: str, base: str) -> str:
    """``url`` relative to the directory ``base`` (from :func:`base_of`).

    Raises:
        ValueError: ``url`` is not under ``base``.
    """
    if not url.startswith(base) or len(url) == len(base):
        raise ValueError(f"shard {url} is not under the index's directory {base!r}")
    return url[len(base):]


def write_index(index_url: str, shards: Sequence[ShardEntry]) -> str:
    """Publish ``shards`` as the index at ``index_url`` (atomically); return its URL."""
    record = {"format": FORMAT, "version": VERSION,
              "shards": [entry.to_json() for entry in shards]}
    with open_url(index_url, "w", encoding="utf-8") as f:
        json.dump(record, f, separators=(",", ":"))
    return index_url


def read_index(url: str) -> Index:
    """The index at ``url`` (the index, or the directory or prefix holding it): one GET.

    Raises:
        FileNotFoundError: there is no index there.
        ValueError: the file is not a pfio index, or its entries do not add up.
    """
    index_url = index_location(url)
    try:
        with open_url(index_url, "rb") as f:
            record = json.loads(f.read())
    except FileNotFoundError:
        raise FileNotFoundError(f"no {INDEX_NAME} at {index_url} (ShardWriter writes one; "
                                "build_index makes one for other shards)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{index_url}: not a pfio index ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError(f"{index_url}: not a pfio index (no \"format\": \"{FORMAT}\")")
    if record.get("version") != VERSION:
        raise ValueError(f"{index_url}: index version {record.get('version')!r} is not "
                         f"supported (this pfio reads version {VERSION})")
    base = base_of(index_url)
    shards = [_entry(item, base, index_url) for item in record.get("shards") or []]
    return Index(index_url, shards)


def _entry(item: Any, base: str, index_url: str) -> ShardEntry:
    try:
        name, size = str(item["name"]), int(item["size"])
        offsets, lengths = list(map(int, item["offsets"])), list(map(int, item["lengths"]))
        samples = int(item["samples"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{index_url}: malformed shard entry {str(item)[:80]} "
                         f"({exc!r})") from None
    if len(offsets) != samples or len(lengths) != samples:
        raise ValueError(f"{index_url}: shard {name} records {samples} samples but "
                         f"{len(offsets)} offsets and {len(lengths)} lengths")
    if name.startswith("/") or ".." in name.split("/"):
        raise PermissionError(f"{index_url}: shard name {name!r} climbs out of "
                              f"the index's directory {base!r}")
    etag = item.get("etag")
    return ShardEntry(name, base + name, size, str(etag) if etag else None, offsets, lengths,
                      bool(item.get("compressed", False)))
