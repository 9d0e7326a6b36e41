"""Which version of a file a cache entry holds, and whether its source is still that version.

A version is a small dict, ``{"size", "mtime", "etag"}``, recorded in the entry's metadata:

* :func:`opened_version`: told by a file just opened for reading, at no cost, where it can
  tell it: an S3 file knows the size and ETag of the object from the GET that opened it
  (so filling an entry costs that one GET, no HEAD);
* :func:`signature`: from a :class:`~pfio.fs.stat.FileStat` (a stat of the source), which is
  also what :func:`same_version` compares an entry with when it is validated.

ETags are compared without the quotes HTTP puts around them.
"""

from __future__ import annotations

from typing import IO, Any

from ..fs.stat import FileStat


def _unquoted(etag: Any) -> str | None:
    return etag.strip('"') or None if isinstance(etag, str) else None


def signature(st: FileStat) -> dict[str, Any]:
    """What identifies a version of a file: size, modification time and ETag (if any)."""
    return {"size": st.size, "mtime": st.last_modified,
            "etag": _unquoted(getattr(st, "etag", None))}


def opened_version(f: IO[bytes]) -> dict[str, Any] | None:
    """The version of the bytes the open file ``f`` reads, when ``f`` tells it (an ETag and
    a size, as an S3 file has them from its opening GET); None when it does not, and a stat
    of the source must say."""
    etag = _unquoted(_etag_of(f))
    size = getattr(f, "size", None)
    if etag is None or not isinstance(size, int):
        return None
    return {"size": size, "mtime": None, "etag": etag}


def _etag_of(f: IO[bytes]) -> Any:
    """The ETag an open file read its bytes at: its ``etag`` attribute, or that of the
    reader behind it (S3's file faces keep it on their ``reader``)."""
    etag = getattr(f, "etag", None)
    if etag is None:
        etag = getattr(getattr(f, "reader", None), "etag", None)
    return etag


def same_version(meta: dict[str, Any], st: FileStat) -> bool:
    """True when ``st`` describes the version recorded in ``meta`` (ETags compared when
    both have one, else size and modification time)."""
    now = signature(st)
    recorded = _unquoted(meta.get("etag"))
    if recorded and now["etag"]:
        return bool(recorded == now["etag"] and meta.get("size") == now["size"])
    return bool(meta.get("size") == now["size"] and meta.get("mtime") == now["mtime"])
