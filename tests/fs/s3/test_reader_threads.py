"""Another thread's ``read_at`` of buffered bytes and ``close`` never wait behind one
thread's network IO: the server (:mod:`..hostile`) holds a GET of one thread until the test
lets it go, and the other thread must be done before that."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pfio.fs.s3 import S3

from ..hostile import HostileServer, Peer, answer

SIZE = 2 << 20
BODY = bytes(range(256)) * (SIZE // 256)


pytestmark = pytest.mark.usefixtures("scripted_server_env")


class Holding:
    """Serves ranges of BODY; a range that does not start at 0 waits for ``release``."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.held = threading.Event()
        self.server = HostileServer(self._script)

    def _script(self, peer: Peer) -> None:
        while True:
            head = peer.request()
            if not head:
                return
            first, last = map(int, re.search(rb"range: bytes=(\d+)-(\d+)", head,
                                              re.IGNORECASE).groups())
            last = min(last, SIZE - 1)
            if first:
                self.held.set()
                self.release.wait(10)
            body = BODY[first:last + 1]
            if not peer.send(answer("206 Partial Content", f"Content-Length: {len(body)}",
                                    f"Content-Range: bytes {first}-{last}/{SIZE}",
                                    'ETag: "e1"', body=body)):
                return


@pytest.fixture
def holding() -> Iterator[Holding]:
    server = Holding()
    yield server
    server.release.set()
    server.server.close()


def held_read(f: Any, outcome: list[Any]) -> threading.Thread:
    """A thread reading at 1 MiB (a GET the server holds)."""
    def read() -> None:
        try:
            f.seek(1 << 20)
            outcome.append(f.read(10))
        except ValueError as exc:
            outcome.append(exc)
    thread = threading.Thread(target=read)
    thread.start()
    return thread


def reader(holding: Holding) -> Any:
    fs = S3("b", endpoint=holding.server.endpoint, engine="http")
    return fs.open("k", "rb", first_fetch=64 << 10)  # bytes 0-65535 buffered


@pytest.mark.timeout(30)
def test_read_at_of_buffered_bytes_does_not_wait_for_another_read(holding) -> None:
    f = reader(holding)
    outcome: list[Any] = []
    thread = held_read(f, outcome)
    assert holding.held.wait(10)
    got: list[bytes] = []
    other = threading.Thread(target=lambda: got.append(f.read_at(100, 10)))
    other.start()
    other.join(5)
    done_while_held = not other.is_alive()
    holding.release.set()
    thread.join(10)
    other.join(10)
    assert done_while_held and got == [BODY[100:110]]
    assert outcome == [BODY[1 << 20:(1 << 20) + 10]]


@pytest.mark.timeout(30)
def test_close_does_not_wait_for_another_read(holding) -> None:
    f = reader(holding)
    outcome: list[Any] = []
    thread = held_read(f, outcome)
    assert holding.held.wait(10)
    closer = threading.Thread(target=f.close)
    closer.start()
    closer.join(5)
    done_while_held = not closer.is_alive()
    holding.release.set()
    thread.join(10)
    assert done_while_held and f.closed
    assert len(outcome) == 1 and isinstance(outcome[0], ValueError)
