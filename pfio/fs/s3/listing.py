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

from .errors import ServerError

#: bytes of a page fed to the parser at once
_PIECE = 1 << 16
#: the code of the error raised for a listing answer that is not a ListBucketResult
UNREADABLE_LISTING = "UnreadableListing"


def listing_query(Prefix: str = "", Delimiter: str | None = None,  # noqa: N803
                  MaxKeys: int | None = None, ContinuationToken: str | None = None) -> str:
    """The query of a ListObjectsV2 request with botocore's arguments, keys URL-encoded in
    the answer (``encoding-type=url``, as botocore asks: XML cannot carry every key)."""
    fields = [("list-type", "2"), ("encoding-type", "url"), ("prefix", Prefix)]
    if Delimiter:
        fields.append(("delimiter", Delimiter))
    if MaxKeys:
        fields.append(("max-keys", str(MaxKeys)))
    if ContinuationToken:
        fields.append(("continuation-token", ContinuationToken))
    return "&".join(f"{name}={quote(value, safe='-_.~')}" for name, value in fields)


def parse_listing(body: bytes | bytearray | memoryview) -> dict[str, Any]:
    """A ListObjectsV2 answer as botocore's ``list_objects_v2`` returns it: ``Contents``
    (``Key``, ``Size``, ``ETag``, ``LastModified`` when the entry has one), ``CommonPrefixes``
    (``Prefix``), ``IsTruncated``, ``NextContinuationToken``, ``KeyCount``; keys decoded.

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
        return page.result()
    except (ElementTree.ParseError, ValueError) as exc:
        raise ServerError(500, UNREADABLE_LISTING, f"a listing answer that does not parse "
                          f"({exc}): {bytes(view[:120])!r}", {}) from None


class _Page:
    """What :func:`parse_listing` has read of a page so far."""

    def __init__(self) -> None:
        self.root: ElementTree.Element | None = None
        self.depth = 0
        self.fields: dict[str, str] = {}
        self.contents: list[dict[str, Any]] = []
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

    def result(self) -> dict[str, Any]:
        if self.root is None:
            raise ValueError("no element")
        fields = self.fields
        decode = unquote_plus if fields.get("EncodingType") == "url" else None
        if decode is not None:
            for entry in self.contents:
                entry["Key"] = decode(entry["Key"])
        page: dict[str, Any] = {
            "IsTruncated": fields.get("IsTruncated") == "true",
            "KeyCount": int(fields.get("KeyCount") or 0),
            "Contents": self.contents,
            "CommonPrefixes": [{"Prefix": decode(p) if decode else p} for p in self.prefixes],
        }
        if fields.get("NextContinuationToken"):
            page["NextContinuationToken"] = fields["NextContinuationToken"]
        return page


def _entry(element: ElementTree.Element) -> dict[str, Any]:
    """A ``<Contents>`` entry: ``Key``, ``Size``, ``ETag`` and ``LastModified`` if any."""
    values = {_local(child.tag): child.text or "" for child in element}
    entry: dict[str, Any] = {"Key": values.get("Key", ""), "Size": int(values.get("Size") or 0),
                             "ETag": values.get("ETag", "")}
    if values.get("LastModified"):
        entry["LastModified"] = _iso_time(values["LastModified"])
    return entry


def _child(element: ElementTree.Element, name: str) -> str | None:
    return next((child.text or "" for child in element if _local(child.tag) == name), None)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _iso_time(text: str) -> datetime.datetime:
    """An S3 time (``2026-11-24T05:06:07.000Z``) as an aware ``datetime``."""
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def checked_pages(fetch: Callable[[dict[str, Any]], dict[str, Any]], prefix: str, url: str,
                  kwargs: dict[str, Any], one: bool = False) -> Iterator[dict[str, Any]]:
    """The pages of the listing of ``prefix`` (``fetch(kwargs)`` gets one; ``url`` names it
    in errors), each checked (see the module documentation); only the first with ``one``.

    Raises:
        OSError: a key or common prefix outside ``prefix``, a truncated page without a
            continuation token, or a token the listing had already given (EIO).
    """
    seen: set[str] = set()
    while True:
        page = fetch(kwargs)
        _check_names(page, prefix, url)
        yield page
        if one or not page.get("IsTruncated"):
            return
        token = page.get("NextContinuationToken")
        if not token:
            raise OSError(errno.EIO, "the server answered a truncated listing page without "
                          "a continuation token: the rest of the listing cannot be read",
                          url)
        if token in seen:
            raise OSError(errno.EIO, f"the server gave the continuation token {token!r} a "
                          "second time: the listing would never end", url)
        seen.add(token)
        kwargs = {**kwargs, "ContinuationToken": token}


def _check_names(page: dict[str, Any], prefix: str, url: str) -> None:
    """Refuse a page that names a key or a common prefix outside ``prefix``."""
    for entry in page.get("Contents", ()):
        if not entry["Key"].startswith(prefix):
            raise OSError(errno.EIO, f"the listing of {prefix!r} named the key "
                          f"{entry['Key']!r}, outside it: the server ignored the prefix "
                          "asked for; nothing was done with the listing", url)
    for common in page.get("CommonPrefixes", ()):
        if not common["Prefix"].startswith(prefix):
            raise OSError(errno.EIO, f"the listing of {prefix!r} named the common prefix "
                          f"{common['Prefix']!r}, outside it: the server ignored the prefix "
                          "asked for; nothing was done with the listing", url)
