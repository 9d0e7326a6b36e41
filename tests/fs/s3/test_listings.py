"""Listings pfio acts on are checked (:mod:`pfio.fs.s3.listing`): keys and common prefixes
outside the prefix asked for, a truncated page without a continuation token, a token given
twice, and an answer that is not a listing are refused with an ``OSError`` before anything
is deleted; pages are parsed with memory bounded by the page; entries and heads without
``Last-Modified`` are read; multipart uploads are listed page by page by their markers.
The answers come from a scripted server (:mod:`..hostile`)."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import pfio
from pfio.fs.s3 import S3
from pfio.fs.s3.listing import parse_listing
from pfio.fs.s3.uploads import list_uploads

from ..hostile import HostileServer, Peer, answer

NS = "http://s3.amazonaws.com/doc/2006-03-01/"


pytestmark = pytest.mark.usefixtures("scripted_server_env")


def listing(keys: list[str] = (), prefixes: list[str] = (), truncated: bool = False,
            token: str | None = None, modified: bool = True) -> bytes:
    """A ListObjectsV2 answer naming ``keys`` and common ``prefixes``."""
    stamp = "<LastModified>2026-11-24T05:06:07.000Z</LastModified>" if modified else ""
    contents = "".join(f"<Contents><Key>{k}</Key>{stamp}<ETag>&quot;e&quot;</ETag>"
                       f"<Size>1</Size></Contents>" for k in keys)
    commons = "".join(f"<CommonPrefixes><Prefix>{p}</Prefix></CommonPrefixes>"
                      for p in prefixes)
    tail = f"<NextContinuationToken>{token}</NextContinuationToken>" if token else ""
    body = (f'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="{NS}">'
            f"<Name>b</Name><KeyCount>{len(keys)}</KeyCount>"
            f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"
            f"{contents}{commons}{tail}</ListBucketResult>").encode()
    return xml(body)


def xml(body: bytes, status: str = "200 OK") -> bytes:
    return answer(status, f"Content-Length: {len(body)}", "Content-Type: application/xml",
                  body=body)


NOT_FOUND = answer("404 Not Found", "Content-Length: 0")


class Scripted:
    """A scripted S3 server: ``route(method, target)`` gives each answer; ``requests``
    lists the ``(method, target)`` of every request."""

    def __init__(self, route: Callable[[str, str], bytes]) -> None:
        self.route = route
        self.requests: list[tuple[str, str]] = []
        self.server = HostileServer(self._script)

    def _script(self, peer: Peer) -> None:
        while True:
            head = peer.request()
            if not head:
                return
            method, target = head.decode("latin-1").split(" ")[:2]
            self.requests.append((method, target))
            if not peer.send(self.route(method, target)):
                return

    def deletes(self) -> list[tuple[str, str]]:
        return [(m, t) for m, t in self.requests if m == "DELETE" or t.endswith("?delete")]


@pytest.fixture
def scripted() -> Iterator[Callable[[Callable[[str, str], bytes]], Scripted]]:
    made: list[Scripted] = []

    def make(route: Callable[[str, str], bytes]) -> Scripted:
        made.append(Scripted(route))
        return made[-1]

    yield make
    for server in made:
        server.server.close()


def filesystem(server: Scripted, **options: Any) -> S3:
    return S3("b", endpoint=server.server.endpoint, engine="http", max_attempts=2,
              **options)


def lists(route: Callable[[str], bytes]) -> Callable[[str, str], bytes]:
    """A route answering listings with ``route(target)`` and HEADs with 404."""
    def answer_(method: str, target: str) -> bytes:
        if method == "HEAD":
            return NOT_FOUND
        if "list-type=2" in target:
            return route(target)
        return xml(b"<Error><Code>NotImplemented</Code></Error>", "501 Not Implemented")
    return answer_


def test_a_listing_that_ignores_the_prefix_deletes_nothing(scripted) -> None:
    server = scripted(lists(lambda _: listing(["tmp/a", "keep/b"])))
    with pytest.raises(OSError, match="'keep/b', outside it") as info:
        filesystem(server).remove("tmp", recursive=True)
    assert type(info.value) is OSError and "s3://b/tmp/" in str(info.value)
    assert server.deletes() == []


def test_a_common_prefix_outside_the_listed_one_is_refused(scripted) -> None:
    server = scripted(lists(lambda _: listing(prefixes=["d/x/", "other/"])))
    with pytest.raises(OSError, match="common prefix 'other/'"):
        list(filesystem(server).list("d"))


def test_a_truncated_page_without_a_token_fails_the_listing(scripted) -> None:
    server = scripted(lists(lambda _: listing(["d/a"], truncated=True)))
    with pytest.raises(OSError, match="without a continuation token"):
        list(filesystem(server).list("d", recursive=True))


def test_sync_with_delete_deletes_nothing_after_a_broken_listing(
        scripted, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = scripted(lists(lambda _: listing(["src/a"], truncated=True)))
    monkeypatch.setenv("S3_ENDPOINT", server.server.endpoint)
    monkeypatch.setenv("PFIO_S3_ENGINE", "http")
    target = tmp_path / "dst"
    target.mkdir()
    (target / "b").write_bytes(b"the source still has it")
    with pytest.raises(OSError, match="continuation token"):
        pfio.sync("s3://b/src/", str(target), delete=True)
    assert (target / "b").read_bytes() == b"the source still has it"


def test_a_token_given_twice_ends_the_listing(scripted) -> None:
    server = scripted(lists(lambda _: listing(["d/a"], truncated=True, token="again")))
    with pytest.raises(OSError, match="'again' a second time"):
        list(filesystem(server).list("d", recursive=True))
    assert len(server.requests) == 2


def test_an_answer_that_is_not_a_listing_is_an_oserror(scripted) -> None:
    server = scripted(lists(lambda _: xml(b"<ListBucketResult><Contents><Key>d/a")))
    with pytest.raises(OSError, match="UnreadableListing") as info:
        list(filesystem(server).list("d"))
    assert type(info.value) is OSError
    assert len(server.requests) == 2  # retried, as a 5xx


def test_entries_and_heads_without_last_modified_are_read(scripted) -> None:
    def route(method: str, target: str) -> bytes:
        if method == "HEAD":
            return answer("200 OK", "Content-Length: 5", 'ETag: "e"')
        return listing(["d/a"], modified=False)

    fs = filesystem(scripted(route))
    [entry] = fs.list("d", detail=True)
    assert entry.filename == "a" and entry.last_modified is None
    stat = fs.stat("d/a")
    assert stat.size == 5 and stat.last_modified is None


def test_a_head_with_an_unreadable_last_modified_is_read(scripted) -> None:
    server = scripted(lambda *_: answer("200 OK", "Content-Length: 5", 'ETag: "e"',
                                        "Last-Modified: yesterday"))
    assert filesystem(server).stat("a").last_modified is None


def test_a_page_is_parsed_with_memory_bounded_by_the_page() -> None:
    keys = [f"data/{i:08d}/{os.urandom(8).hex()}" for i in range(10_000)]
    body = listing(keys).partition(b"\r\n\r\n")[2]
    tracemalloc.start()
    try:
        page = parse_listing(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(page.entries) == len(keys) and page.entries[-1].key == keys[-1]
    assert peak < 4 * len(body), (peak, len(body))


# -- multipart uploads (pfio.fs.s3.uploads) -----------------------------------------------

def uploads_page(keys: list[str], truncated: bool = False, next_key: str = "",
                 next_id: str = "") -> bytes:
    """A ListMultipartUploads answer naming an upload of each of ``keys``."""
    uploads = "".join(f"<Upload><Key>{k}</Key><UploadId>id-{k}</UploadId>"
                      f"<Initiated>2026-11-24T05:06:07.000Z</Initiated></Upload>"
                      for k in keys)
    markers = (f"<NextKeyMarker>{next_key}</NextKeyMarker>"
               f"<NextUploadIdMarker>{next_id}</NextUploadIdMarker>") if truncated else ""
    body = (f'<?xml version="1.0" encoding="UTF-8"?>'
            f'<ListMultipartUploadsResult xmlns="{NS}"><Bucket>b</Bucket>'
            f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>{markers}"
            f"{uploads}</ListMultipartUploadsResult>").encode()
    return xml(body)


def test_every_page_of_uploads_is_listed_by_its_markers(scripted) -> None:
    def route(method: str, target: str) -> bytes:
        query = parse_qs(urlsplit(target).query, keep_blank_values=True)
        if query.get("key-marker") == ["run/b"] and query.get("upload-id-marker") == ["id-b"]:
            return uploads_page(["run/c"])
        return uploads_page(["run/a", "run/b"], truncated=True, next_key="run/b",
                            next_id="id-b")

    server = scripted(route)
    found = list_uploads(filesystem(server), "run/")
    assert [u.key for u in found] == ["run/a", "run/b", "run/c"]
    assert len(server.requests) == 2


def test_a_truncated_page_without_a_new_marker_is_an_oserror(scripted) -> None:
    server = scripted(lambda method, target: uploads_page(["run/a"], truncated=True,
                                                          next_key="", next_id=""))
    with pytest.raises(OSError, match="truncated without a new marker"):
        list_uploads(filesystem(server), "run/")
    assert len(server.requests) == 1
