"""A retried read earns a fresh budget of tries only for progress that matters (at least
``min_rate x read_timeout`` bytes a try), and a whole read has an overall deadline
proportional to its size. The servers are scripted (:mod:`..hostile`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from pfio.fs.s3 import S3
from pfio.fs.s3.get import get_range

from ..hostile import HostileServer, Peer, answer

SIZE = 4096


pytestmark = pytest.mark.usefixtures("scripted_server_env")


def sends_then_resets(each: int, tries: list[int]) -> Any:
    """A script that answers a range with its first ``each`` bytes, then resets."""
    def script(peer: Peer) -> None:
        asked = re.search(rb"range: bytes=(\d+)-", peer.request(), re.IGNORECASE)
        start = int(asked.group(1)) if asked else 0
        tries.append(start)
        peer.send(answer("206 Partial Content", f"Content-Length: {SIZE - start}",
                         f"Content-Range: bytes {start}-{SIZE - 1}/{SIZE}", 'ETag: "e1"',
                         body=b"x" * min(each, SIZE - start)))
        peer.reset()
    return script


@pytest.fixture
def server() -> Iterator[Any]:
    made: list[HostileServer] = []

    def make(script: Any) -> HostileServer:
        made.append(HostileServer(script))
        return made[-1]

    yield make
    for one in made:
        one.close()


def filesystem(server: HostileServer, **options: Any) -> S3:
    fs = S3("b", endpoint=server.endpoint, engine="http", max_attempts=3, read_timeout=0.5,
            min_rate=1000, **options)  # a try must bring 500 bytes to count
    fs._retry.base = 0.0
    return fs


@pytest.mark.timeout(60)
def test_a_byte_per_connection_uses_up_the_tries(server) -> None:
    tries: list[int] = []
    fs = filesystem(server(sends_then_resets(1, tries)))
    with pytest.raises(OSError) as info:
        get_range(fs.connection, "k", 0, SIZE)
    assert type(info.value) is OSError and "after 3 attempts" in str(info.value)
    assert tries == [0, 1, 2]


def test_tries_that_bring_enough_bytes_go_on(server) -> None:
    tries: list[int] = []
    fs = filesystem(server(sends_then_resets(600, tries)))
    got = get_range(fs.connection, "k", 0, SIZE)
    assert bytes(got.data) == b"x" * SIZE and len(tries) == 7


def test_a_read_has_an_overall_deadline_proportional_to_its_size(server) -> None:
    tries: list[int] = []
    fs = filesystem(server(sends_then_resets(600, tries)))
    now = [0.0]

    def clock() -> float:  # 40 s pass between two looks at the clock
        now[0] += 40.0
        return now[0]

    fs._retry.clock = clock
    fs._retry.deadline = fs._retry.throttle_deadline = 100.0  # (each try is given 100 s)
    with pytest.raises(OSError, match=r"reading 4096 bytes took longer than 104 s"):
        get_range(fs.connection, "k", 0, SIZE)
    assert len(tries) < 7
