"""Where a DCP checkpoint's data files go inside its directory: key prefixes that spread a
checkpoint's objects, so that S3 can partition them (S3 serves about 3,500 PUT/s and
5,500 GET/s per partition of the key space).

A strategy maps the ``n``-th data file of a rank to a sub-directory of the checkpoint; the
file's path, prefix included, is recorded in the checkpoint's metadata, so a reader needs no
option to find it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ....digests import sha256_hex


class PrefixStrategy(Protocol):
    """Chooses the sub-directory of a data file."""

    def prefix(self, rank: int, index: int, name: str) -> str:
        """The sub-directory (no slashes at either end; ``""`` for none) of the
        ``index``-th data file of ``rank``, called ``name``."""


class RoundRobinPrefixes:
    """The data files take ``prefixes`` in turn (rank ``r``'s ``n``-th file the
    ``(r + n) % len(prefixes)``-th)."""

    def __init__(self, prefixes: Sequence[str]) -> None:
        cleaned = [str(p).strip("/") for p in prefixes]
        if not cleaned or any(not p or ".." in p.split("/") for p in cleaned):
            raise ValueError(f"round-robin prefixes must be non-empty relative names: "
                             f"{list(prefixes)!r}")
        self.prefixes = cleaned

    def prefix(self, rank: int, index: int, name: str) -> str:
        return self.prefixes[(rank + index) % len(self.prefixes)]

    def __repr__(self) -> str:
        return f"RoundRobinPrefixes({self.prefixes!r})"


class HashedPrefixes:
    """A data file goes under the first ``digits`` hex digits of the SHA-256 of its name
    (16**digits prefixes, spread evenly)."""

    def __init__(self, digits: int = 2) -> None:
        if not 1 <= digits <= 8:
            raise ValueError(f"digits must be between 1 and 8, not {digits}")
        self.digits = digits

    def prefix(self, rank: int, index: int, name: str) -> str:
        return sha256_hex(name.encode())[:self.digits]

    def __repr__(self) -> str:
        return f"HashedPrefixes({self.digits})"


def strategy(spec: PrefixStrategy | str | None) -> PrefixStrategy | None:
    """A strategy from ``spec``: a strategy object, ``"hashed"`` (2 hex digits),
    ``"round-robin"`` (the 16 prefixes ``0`` ... ``f``), or None (no prefixes).

    Raises:
        ValueError: an unknown name.
    """
    if spec is None or not isinstance(spec, str):
        return spec
    if spec == "hashed":
        return HashedPrefixes()
    if spec == "round-robin":
        return RoundRobinPrefixes([f"{i:x}" for i in range(16)])
    raise ValueError(f"unknown prefix strategy {spec!r}: 'round-robin', 'hashed', or an "
                     "object with a prefix(rank, index, name) method")
