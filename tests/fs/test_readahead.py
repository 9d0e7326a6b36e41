"""The read-ahead policy (``pfio.fs.readahead``): each strategy over a recording fetch."""

from __future__ import annotations

import errno
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from pfio.fs.readahead import (
    STRATEGIES,
    Background,
    Blocks,
    ReadAhead,
    Sequential,
    make,
)

DATA = bytes(range(256)) * 4096  # 1 MiB
KIB = 1 << 10


class Source:
    """``DATA`` (or ``data``) behind a fetch that records its calls and may fail."""

    def __init__(self, data: bytes = DATA, *, cap: bool = True) -> None:
        self.data = data
        self.cap = cap
        self.calls: list[tuple[int, int]] = []
        self.fail_at: int | None = None  # a fetch starting here raises
        self.short = 0  # bytes a fetch leaves out

    def fetch(self, start: int, stop: int) -> bytes:
        self.calls.append((start, stop))
        if self.fail_at == start:
            raise OSError(errno.ECONNRESET, "connection reset", "src")
        return self.data[start:stop - self.short]

    def fetch_into(self, start: int, stop: int, view: memoryview) -> int:
        data = self.fetch(start, stop)
        view[:len(data)] = data
        return len(data)

    def sizes(self) -> list[int]:
        return [stop - start for start, stop in self.calls]


def read(policy: ReadAhead, pos: int, size: int) -> bytes:
    return policy.read(pos, size)


# -- make and the names -------------------------------------------------------------------

def test_every_strategy_is_made_by_its_name():
    assert sorted(STRATEGIES) == ["background", "blocks", "none", "sequential"]
    src = Source()
    assert type(make("sequential", src.fetch, len(DATA), first=KIB)) is Sequential
    assert type(make("none", src.fetch, len(DATA))) is ReadAhead


def test_an_unknown_strategy_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="'ahead'.*background, blocks, none"):
        make("ahead", Source().fetch, 10)


def test_a_window_that_is_not_positive_is_refused_naming_the_file():
    with pytest.raises(ValueError, match="s3://b/k.*positive, not 0"):
        make("sequential", Source().fetch, 10, first=0, name="s3://b/k")


# -- none -----------------------------------------------------------------------------------

def test_none_fetches_exactly_each_read():
    src = Source()
    policy = make("none", src.fetch, len(DATA))
    assert read(policy, 10, 100) == DATA[10:110]
    assert read(policy, 110, 50) == DATA[110:160]
    assert src.calls == [(10, 110), (110, 160)]


def test_none_uses_fetch_into_when_given():
    src = Source()
    calls: list[int] = []

    def fetch_into(start: int, stop: int, view: memoryview) -> int:
        calls.append(start)
        return src.fetch_into(start, stop, view)

    policy = ReadAhead(src.fetch, len(DATA), fetch_into=fetch_into)
    buf = bytearray(100)
    assert policy.readinto(5, memoryview(buf)) == 100 and bytes(buf) == DATA[5:105]
    assert calls == [5]


# -- sequential -----------------------------------------------------------------------------

def test_sequential_window_doubles_while_reads_go_on():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB, limit=32 * KIB)
    out = b"".join(read(policy, pos, 1000) for pos in range(0, 200_000, 1000))
    assert out == DATA[:200_000]
    sizes = src.sizes()
    assert sizes[:5] == [4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 32 * KIB]
    assert max(sizes) == 32 * KIB


def test_sequential_window_restarts_after_a_seek():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB, limit=32 * KIB)
    for pos in range(0, 40_000, 1000):
        read(policy, pos, 1000)
    src.calls.clear()
    assert read(policy, 500_000, 100) == DATA[500_000:500_100]  # a seek
    assert read(policy, 500_100, 8000) == DATA[500_100:508_100]
    assert src.calls[0] == (500_000, 500_000 + 4 * KIB)
    assert src.sizes()[1] == 8 * KIB  # growing again from the start


def test_sequential_read_elsewhere_fetches_what_it_asks_for():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB, limit=32 * KIB)
    assert read(policy, 300_000, 100_000) == DATA[300_000:400_000]
    assert src.calls == [(300_000, 400_000)]


def test_sequential_seek_back_into_the_held_bytes_fetches_nothing():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB)
    read(policy, 1000, 10)
    calls = len(src.calls)
    assert read(policy, 1000, 100) == DATA[1000:1100]
    assert len(src.calls) == calls


def test_slack_reads_on_across_a_short_skip():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB, limit=64 * KIB, slack=True)
    read(policy, 0, 10)
    read(policy, 4 * KIB + 100, 10)  # a skip of 100 bytes past the first fetch
    assert src.sizes() == [4 * KIB, 8 * KIB]
    strict = Source()
    policy = Sequential(strict.fetch, len(DATA), first=4 * KIB, limit=64 * KIB)
    read(policy, 0, 10)
    read(policy, 4 * KIB + 100, 10)
    assert strict.sizes() == [4 * KIB, 4 * KIB]  # a seek: the window restarts


def test_whole_reads_fetch_a_large_read_at_once():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB, limit=16 * KIB,
                        whole_reads=True)
    read(policy, 0, 10)
    assert read(policy, 10, 500_000) == DATA[10:500_010]
    assert src.calls == [(0, 4 * KIB), (4 * KIB, 500_010)]


def test_sequential_stops_at_the_end_of_a_known_size():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB)
    assert read(policy, len(DATA) - 10, 100) == DATA[-10:]
    assert read(policy, len(DATA), 100) == b""
    assert read(policy, len(DATA) + 5, 100) == b""
    assert src.calls == [(len(DATA) - 10, len(DATA) - 10 + 4 * KIB)]


def test_sequential_finds_the_end_of_an_unknown_size():
    src = Source(DATA[:10_000])
    policy = Sequential(src.fetch, None, first=4 * KIB)
    got = bytearray()
    while chunk := read(policy, len(got), 3000):
        got += chunk
    assert bytes(got) == DATA[:10_000]
    assert read(policy, 10_000, 3000) == b""


def test_zero_length_reads_fetch_nothing():
    src = Source()
    for policy in (Sequential(src.fetch, len(DATA)), ReadAhead(src.fetch, len(DATA)),
                   Background(src.fetch, len(DATA), executor=lambda: pool)):
        assert read(policy, 100, 0) == b""
        assert policy.readinto(100, memoryview(bytearray())) == 0
    assert src.calls == []


def test_an_empty_file_reads_empty():
    src = Source(b"")
    for name in ("none", "sequential"):
        assert read(make(name, src.fetch, 0), 0, 10) == b""
    assert src.calls == []


def test_a_fetch_that_raises_raises_and_holds_nothing():
    src = Source()
    src.fail_at = 0
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB)
    with pytest.raises(OSError, match="connection reset"):
        read(policy, 0, 10)
    assert policy.held(0, 1) is None
    src.fail_at = None
    assert read(policy, 0, 10) == DATA[:10]  # tried again on the next read


def test_a_short_fetch_before_the_end_raises_naming_the_file():
    src = Source()
    src.short = 1
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB, name="s3://b/k")
    with pytest.raises(OSError, match="asked for 4096 bytes at 0, got 4095") as info:
        read(policy, 0, 10)
    assert info.value.errno == errno.EIO and info.value.filename == "s3://b/k"


def test_a_long_fetch_raises():
    policy = ReadAhead(lambda start, stop: b"x" * (stop - start + 1), 100)
    with pytest.raises(OSError, match="asked for 10 bytes"):
        policy.read(0, 10)


def test_a_fetch_of_nothing_before_the_end_raises():
    policy = Sequential(lambda start, stop: b"", 100, first=10)
    with pytest.raises(OSError):
        policy.read(0, 10)


def test_held_bytes_serve_other_threads_without_fetching():
    src = Source()
    policy = Sequential(src.fetch, len(DATA), first=4 * KIB)
    policy.hold(1000, DATA[1000:3000])
    assert policy.held(1500, 100) == DATA[1500:1600]
    assert policy.held(2900, 200) is None  # not all held
    buf = bytearray(10)
    assert policy.held_into(2000, memoryview(buf)) and bytes(buf) == DATA[2000:2010]
    assert src.calls == []


def test_closed_policy_holds_nothing():
    policy = Sequential(Source().fetch, len(DATA))
    policy.hold(0, DATA[:100])
    policy.close()
    assert policy.held(0, 10) is None
    policy.hold(0, DATA[:100])
    assert policy.held(0, 10) is None


# -- background -----------------------------------------------------------------------------

pool = ThreadPoolExecutor(4)


def background(src: Source, **options) -> Background:
    options = {"first": 4 * KIB, "limit": 64 * KIB, "depth": 2, **options}
    return Background(src.fetch, len(src.data), fetch_into=src.fetch_into,
                      executor=lambda: pool, **options)


def test_background_fetches_blocks_ahead_once_the_window_is_a_block():
    src = Source()
    policy = background(src)
    got = bytearray()
    while len(got) < 300_000:
        got += read(policy, len(got), 1000)
        if len(got) <= 60 * KIB:  # (still growing: nothing ahead)
            assert policy.in_flight() == []
    assert bytes(got) == DATA[:300_000]
    for future in policy.in_flight():
        future.result()
    sizes = src.sizes()
    assert sizes[:5] == [4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 64 * KIB]
    assert all(size == 64 * KIB for size in sizes[4:])
    assert len(policy.in_flight()) == 2
    starts = [start for start, _ in src.calls]
    assert len(starts) == len(set(starts))  # no block fetched twice


def test_background_seek_drops_what_is_in_flight():
    src = Source()
    policy = background(src)
    got = bytearray()
    while not policy.in_flight():
        got += read(policy, len(got), 10_000)
    in_flight = policy.in_flight()
    assert read(policy, 900_000, 100) == DATA[900_000:900_100]
    assert policy.in_flight() == []
    assert all(f.cancelled() or f.done() for f in in_flight)


def test_background_large_read_comes_in_concurrent_blocks():
    src = Source()
    policy = background(src)
    buf = bytearray(300_000)
    assert policy.readinto(1000, memoryview(buf)) == 300_000
    assert bytes(buf) == DATA[1000:301_000]
    assert sorted(src.calls) == [(1000 + i, min(1000 + i + 64 * KIB, 301_000))
                                 for i in range(0, 300_000, 64 * KIB)]


def test_background_failed_block_is_raised_by_the_read_that_wants_it():
    src = Source()
    src.fail_at = 4 * KIB + 8 * KIB + 16 * KIB + 32 * KIB + 64 * KIB  # the first block ahead
    policy = background(src)
    got = bytearray()
    with pytest.raises(OSError, match="connection reset"):
        while len(got) < 400_000:
            got += read(policy, len(got), 1024)
    assert len(got) == src.fail_at  # every byte before it was served
    src.fail_at = None
    assert read(policy, len(got), 10_000) == DATA[len(got):len(got) + 10_000]


def test_background_failed_concurrent_block_writes_nothing_after_raising():
    src = Source()
    src.fail_at = 1000 + 64 * KIB
    policy = background(src)
    buf = bytearray(300_000)
    with pytest.raises(OSError, match="connection reset"):
        policy.readinto(1000, memoryview(buf))
    snapshot = bytes(buf)
    pool.submit(lambda: None).result()  # (the pool is idle: nothing writes later)
    assert bytes(buf) == snapshot


def test_background_reads_on_without_read_ahead_once_the_pool_is_shut_down():
    src = Source()
    closed = ThreadPoolExecutor(1)
    closed.shutdown()
    policy = Background(src.fetch, len(DATA), fetch_into=src.fetch_into,
                        executor=lambda: closed, first=4 * KIB, limit=64 * KIB)
    got = bytearray()
    while len(got) < len(DATA):
        got += read(policy, len(got), 50_000)
    assert bytes(got) == DATA and policy.in_flight() == []
    buf = bytearray(200_000)
    assert policy.readinto(0, memoryview(buf)) == 200_000 and bytes(buf) == DATA[:200_000]


def test_background_reads_exactly_to_the_end():
    src = Source(DATA[:200_001])
    policy = background(src)
    got = bytearray()
    while chunk := read(policy, len(got), 7777):
        got += chunk
    assert bytes(got) == src.data


def test_background_inherited_by_a_fork_forgets_what_is_in_flight():
    src = Source()
    policy = background(src)
    got = bytearray()
    while not policy.in_flight():
        got += read(policy, len(got), 10_000)
    policy.forget_inherited(keep_buffer=False)
    assert policy.in_flight() == [] and policy.held(len(got) - 1, 1) is None
    assert read(policy, len(got), 100) == DATA[len(got):len(got) + 100]


# -- blocks ---------------------------------------------------------------------------------

class Store:
    """Blocks kept in memory, with their presence."""

    def __init__(self, size: int, block: int) -> None:
        self.data = bytearray(size)
        self.block = block
        self.kept = bytearray(-(-size // block))

    def present(self, first: int, count: int) -> bytes:
        return bytes(self.kept[first:first + count])

    def put(self, block: int, data: memoryview) -> None:
        at = block * self.block
        self.data[at:at + len(data)] = data
        count = -(-len(data) // self.block)
        self.kept[block:block + count] = b"\x01" * count

    def get(self, offset: int, size: int) -> bytes:
        return bytes(self.data[offset:offset + size])


def test_blocks_rounds_reads_out_to_blocks_and_fetches_runs_of_missing_ones():
    src = Source()
    store = Store(len(DATA), 4 * KIB)
    policy = Blocks(src.fetch, len(DATA), store=store, block_size=4 * KIB)
    assert read(policy, 5000, 100) == DATA[5000:5100]
    assert src.calls == [(4 * KIB, 8 * KIB)]
    assert read(policy, 1000, 20_000) == DATA[1000:21_000]  # blocks 0 and 2-5 missing
    assert src.calls[1:] == [(0, 4 * KIB), (8 * KIB, 24 * KIB)]
    assert read(policy, 0, 24 * KIB) == DATA[:24 * KIB]
    assert len(src.calls) == 3


def test_blocks_last_block_ends_the_file():
    src = Source(DATA[:10_000])
    store = Store(10_000, 4 * KIB)
    policy = Blocks(src.fetch, 10_000, store=store, block_size=4 * KIB)
    assert read(policy, 9000, 5000) == DATA[9000:10_000]
    assert src.calls == [(8 * KIB, 10_000)]
    assert read(policy, 10_000, 5) == b""


def test_blocks_failed_fetch_keeps_nothing():
    src = Source()
    src.fail_at = 4 * KIB
    store = Store(len(DATA), 4 * KIB)
    policy = Blocks(src.fetch, len(DATA), store=store, block_size=4 * KIB)
    with pytest.raises(OSError):
        read(policy, 5000, 10)
    assert store.present(0, 4) == b"\x00" * 4


def test_blocks_two_threads_missing_one_block_fetch_it_once():
    gate = threading.Barrier(2)
    src = Source()
    store = Store(len(DATA), 4 * KIB)
    policy = Blocks(src.fetch, len(DATA), store=store, block_size=4 * KIB)
    results: list[bytes] = []

    def reader() -> None:
        gate.wait()
        results.append(read(policy, 100, 10))

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [DATA[100:110]] * 2 and src.calls == [(0, 4 * KIB)]
