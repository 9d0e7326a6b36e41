"""Listings of S3 without IO: the query of a ListObjectsV2 request, its answer read
incrementally (:func:`parse_listing`), and the checks every page passes before pfio acts on
it (:func:`checked_pages`).

A page is parsed as it is read, each entry dropped from the XML tree once taken, so a page
costs about its own size in memory, not the tree's (a 60 MiB page built as a tree took
1.6 GB). Every page is checked: each key and common prefix must start with the prefix asked
for (a server that ignores ``prefix`` would otherwise have ``remove(d, recursive=True)``
delete keys outside ``d/``), a truncated page must name a continuation token, and no token
may come twice (a listing that would end early, or never). A page that fails is an
``OSError`` naming what the server answered: nothing acts on the listing.
"""

from __future__ import annotations

import datetime
import errno
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, unquote_plus

from .engine import Entry, ListPage
from .errors import server_error

#: bytes of a page fed to the parser at once
_PIECE = 1 << 16
#: the code of the error raised for a listing answer that is not a ListBucketResult
UNREADABLE_LISTING = "UnreadableListing"


def listing_query(prefix: str = "", delimiter: str | None = None,
                  max_keys: int | None = None, token: str | None = None) -> str:
    """The query of a ListObjectsV2 request (see :meth:`pfio.fs.s3.engine.Engine.
    list_objects_v2`), keys URL-encoded in the answer (``encoding-type=url``, as botocore
    asks: XML cannot carry every key)."""
    fields = [("list-type", "2"), ("encoding-type", "url"), ("prefix", prefix)]
    if delimiter:
        fields.append(("delimiter", delimiter))
    if max_keys:
        fields.append(("max-keys", str(max_keys)))
    if token:
        fields.append(("continuation-token", token))
    return "&".join(f"{name}={quote(value, safe='-_.~')}" for name, value in fields)


def parse_listing(body: bytes | bytearray | memoryview, status: int = 200) -> ListPage:
    """A ListObjectsV2 answer (of HTTP ``status``): its entries and common prefixes (keys
    decoded), whether it is truncated and its continuation token.

    Raises:
        ServerError: the answer is not a ListBucketResult, or does not parse (a 500 of
            code :data:`UNREADABLE_LISTING`: retried).
    """
    view = memoryview(body).cast("B")
    parser = ElementTree.XMLPullParser(events=("start", "end"))
    page = _Page()
    try:
        for start in range(0, len(view), _PIECE):
            parser.feed(bytes(view[start:start + _PIECE]))
            page.take(parser.read_events())
        parser.close()
        page.take(parser.read_events())
        return page.result(status)
    except (ElementTree.ParseError, ValueError) as exc:
        raise server_error(500, UNREADABLE_LISTING, f"a listing answer that does not parse "
                           f"({exc}): {bytes(view[:120])!r}", {}) from None


class _Page:
    """What :func:`parse_listing` has read of a page so far."""

    def __init__(self) -> None:
        self.root: ElementTree.Element | None = None
        self.depth = 0
        self.fields: dict[str, str] = {}
        #: (key, size, ETag, time) of each entry, its key as sent
        self.contents: list[tuple[str, int, str, str | None]] = []
        self.prefixes: list[str] = []

    def take(self, events: Any) -> None:
        for event, element in events:
            if event == "start":
                if self.root is None:
                    self.root = element
                    if _local(element.tag) != "ListBucketResult":
                        raise ValueError(f"a <{_local(element.tag)}> instead of a "
                                         "ListBucketResult")
                self.depth += 1
                continue
            self.depth -= 1
            if self.depth != 1:
                continue
            name = _local(element.tag)
            if name == "Contents":
                self.contents.append(_entry(element))
            elif name == "CommonPrefixes":
                self.prefixes.append(_child(element, "Prefix") or "")
            else:
                self.fields[name] = element.text or ""
            assert self.root is not None
            self.root.clear()  # the entries taken are dropped from the tree

    def result(self, status: int) -> ListPage:
        if self.root is None:
            raise ValueError("no element")
        fields = self.fields
        decode = unquote_plus if fields.get("EncodingType") == "url" else _same
        entries = tuple(Entry(key=decode(key), size=size, etag=etag,
                              last_modified=_iso_time(modified) if modified else None)
                        for key, size, etag, modified in self.contents)
        prefixes = tuple(decode(p) for p in self.prefixes)
        return ListPage(status=status, entries=entries, prefixes=prefixes,
                        truncated=fields.get("IsTruncated") == "true",
                        token=fields.get("NextContinuationToken") or None)


def _entry(element: ElementTree.Element) -> tuple[str, int, str, str | None]:
    """A ``<Contents>`` entry: its key, size, ETag and time if any."""
    values = {_local(child.tag): child.text or "" for child in element}
    return (values.get("Key", ""), int(values.get("Size") or 0), values.get("ETag", ""),
            values.get("LastModified") or None)


def _same(text: str) -> str:
    return text


def _child(element: ElementTree.Element, name: str) -> str | None:
    return next((child.text or "" for child in element if _local(child.tag) == name), None)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _iso_time(text: str) -> datetime.datetime:
    """An S3 time (``2026-11-24T05:06:07.000Z``) as an aware ``datetime``."""
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def checked_pages(fetch: Callable[[str | None], ListPage], prefix: str, url: str,
                  one: bool = False) -> Iterator[ListPage]:
    """The pages of the listing of ``prefix`` (``fetch(token)`` gets the one that starts at
    the continuation ``token``, None for the first; ``url`` names it in errors), each
    checked (see the module documentation); only the first with ``one``.

    Raises:
        OSError: a key or common prefix outside ``prefix``, a truncated page without a
            continuation token, or a token the listing had already given (EIO).
    """
    seen: set[str] = set()
    token: str | None = None
    while True:
        page = fetch(token)
        _check_names(page, prefix, url)
        yield page
        if one or not page.truncated:
            return
        token = page.token
        if not token:
            raise OSError(errno.EIO, "the server answered a truncated listing page without "
                          "a continuation token: the rest of the listing cannot be read",
                          url)
        if token in seen:
            raise OSError(errno.EIO, f"the server gave the continuation token {token!r} a "
                          "second time: the listing would never end", url)
        seen.add(token)


def _check_names(page: ListPage, prefix: str, url: str) -> None:
    """Refuse a page that names a key or a common prefix outside ``prefix``."""
    for entry in page.entries:
        if not entry.key.startswith(prefix):
            raise OSError(errno.EIO, f"the listing of {prefix!r} named the key "
                          f"{entry.key!r}, outside it: the server ignored the prefix "
                          "asked for; nothing was done with the listing", url)
    for common in page.prefixes:
        if not common.startswith(prefix):
            raise OSError(errno.EIO, f"the listing of {prefix!r} named the common prefix "
                          f"{common!r}, outside it: the server ignored the prefix "
                          "asked for; nothing was done with the listing", url)
