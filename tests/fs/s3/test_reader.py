"""Reading S3 objects: request counts, ranged reads, read-ahead, readinto, pickling."""

from __future__ import annotations

import io
import os
import pickle
from dataclasses import replace

import pytest

from pfio.fs.s3 import S3


@pytest.fixture
def fs(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket, buffering=256 << 10, readahead=2)


@pytest.fixture
def blob(fs: S3) -> bytes:
    data = os.urandom(1536 << 10)  # 1.5 MiB: beyond the first fetch, 6 blocks of 256 KiB
    with fs.open("blob", "wb") as f:
        f.write(data)
    return data


def gets(log: list) -> list:
    return [r for r in log if r[0] == "GET"]


def test_whole_small_object_is_one_request(fs: S3, s3_requests) -> None:
    with fs.open("small", "wb") as f:
        f.write(b"x" * 100_000)
    log = s3_requests(fs)
    with fs.open("small", "rb") as f:
        assert f.read() == b"x" * 100_000
    opening = None if fs.connection.engine().plain_gets else "bytes=0-1048575"
    assert log == [("GET", f"/{fs.bucket}/small", opening)]  # plain: no Range


def test_opening_a_large_object_reads_its_start_then_ranges(fs: S3, s3_requests) -> None:
    data = os.urandom(3 << 20)
    with fs.open("large", "wb") as f:
        f.write(data)
    log = s3_requests(fs)
    with fs.open("large", "rb", first_fetch=1 << 20) as f:
        assert f.read(1 << 20) == data[:1 << 20]  # the opening GET's first MiB
        assert len(log) == 1
        assert log[0][2] == (None if fs.connection.engine().plain_gets else "bytes=0-1048575")
        assert f.read() == data[1 << 20:]
    assert all(r[2].startswith("bytes=") for r in log[1:])


def test_a_small_first_fetch_is_a_ranged_opening(fs: S3, s3_requests) -> None:
    with fs.open("ranged", "wb") as f:
        f.write(b"x" * 100_000)
    log = s3_requests(fs)
    with fs.open("ranged", "rb", first_fetch=1000) as f:
        assert f.read(1000) == b"x" * 1000
    assert log == [("GET", f"/{fs.bucket}/ranged", "bytes=0-999")]


def test_empty_object_is_one_request(fs: S3, s3_requests) -> None:
    with fs.open("e", "wb"):
        pass
    log = s3_requests(fs)
    with fs.open("e", "rb") as f:
        assert f.read() == b"" and f.size == 0
    assert len(log) == 1


def test_read_zero_sends_nothing(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        f.seek(1 << 20)
        assert f.read(0) == b""
    assert log == []


def test_seek_inside_buffer_keeps_buffer(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        f.seek(5000)
        assert f.read(100) == blob[5000:5100]
        f.seek(10)
        assert f.read(10) == blob[10:20]
    assert log == []


def test_random_read_fetches_only_what_is_asked(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        f.seek(1_400_000)
        assert f.read(1000) == blob[1_400_000:1_401_000]
    start, stop = map(int, log[0][2][6:].split("-"))
    assert len(log) == 1 and start == 1_400_000 and stop - start < 128 << 10


def test_sequential_read_is_exact(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb") as f:
        chunks = list(iter(lambda: f.read(70_001), b""))
    assert b"".join(chunks) == blob


@pytest.fixture
def unstreamed(fs: S3) -> S3:
    """``fs``, its readers not reading on from their opening GETs: read-ahead serves
    sequential reads."""
    fs.read_options = replace(fs.read_options, stream=False)
    return fs


def test_sequential_read_prefetches_next_blocks(unstreamed: S3, blob: bytes,
                                                s3_requests) -> None:
    fs = unstreamed
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        f.seek(1 << 20)
        f.read(10)  # runs off the first buffer's end: the next block plus read-ahead
        ahead = list(f.reader._ahead.in_flight())
        assert len(ahead) == 1  # the last block, fetched in the background
        ahead[0].result()
    ranges = sorted(r[2] for r in gets(log))
    assert ranges == sorted([f"bytes={1048576 + i * 262144}-{1048576 + (i + 1) * 262144 - 1}"
                             for i in range(2)])


def test_readinto_fills_caller_buffer(fs: S3, blob: bytes) -> None:
    buf = bytearray(len(blob) + 10)
    with fs.open("blob", "rb") as f:
        n = f.readinto(buf)
    assert n == len(blob) and buf[:n] == blob


def test_large_readinto_fetches_blocks_concurrently_into_buffer(unstreamed: S3, blob: bytes,
                                                               s3_requests) -> None:
    fs = unstreamed
    with fs.open("blob", "rb") as f:
        f.seek(1 << 20)
        log = s3_requests(fs)
        view = memoryview(bytearray(512 << 10))
        assert f.readinto(view) == 512 << 10
    assert bytes(view) == blob[1 << 20:]
    assert len(gets(log)) == 2


def test_peek_does_not_move(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb") as f:
        f.seek(3)
        assert f.peek(4)[:4] == blob[3:7]
        assert f.tell() == 3


def test_read1_and_readline_work(fs: S3) -> None:
    with fs.open("lines", "wb") as f:
        f.write(b"one\ntwo\n")
    with fs.open("lines", "rb") as f:
        assert f.readline() == b"one\n"
        assert f.read1(100) == b"two\n"


def test_seek_whence_and_eof(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb") as f:
        assert f.seek(-10, io.SEEK_END) == len(blob) - 10
        assert f.read() == blob[-10:]
        assert f.read() == b""
        f.seek(-5, io.SEEK_CUR)
        assert f.read(100) == blob[-5:]
        with pytest.raises(OSError):
            f.seek(-1)


def test_read_at_is_one_request_and_keeps_position(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        f.seek(7)
        log = s3_requests(fs)
        assert f.read_at(1_200_000, 5000) == blob[1_200_000:1_205_000]
        assert f.tell() == 7 and f.read(3) == blob[7:10]
    assert log == [("GET", log[0][1], "bytes=1200000-1204999")]


def test_readinto_at_receives_into_the_buffer_with_one_request(fs: S3, blob: bytes,
                                                              s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        f.seek(7)
        log = s3_requests(fs)
        target = bytearray(5000)
        assert f.readinto_at(1_200_000, memoryview(target)[:4000]) == 4000
        assert bytes(target[:4000]) == blob[1_200_000:1_204_000] and \
            target[4000:] == bytes(1000)
        assert f.tell() == 7 and f.read(3) == blob[7:10]
    assert log == [("GET", log[0][1], "bytes=1200000-1203999")]


def test_readinto_at_from_the_buffer_sends_nothing(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:  # (the opening GET fetched the first bytes)
        log = s3_requests(fs)
        target = bytearray(100)
        assert f.readinto_at(10, target) == 100 and bytes(target) == blob[10:110]
    assert log == []


def test_readinto_at_the_end_is_short_and_refuses_a_negative_offset(fs: S3,
                                                                    blob: bytes) -> None:
    with fs.open("blob", "rb") as f:
        target = bytearray(10)
        assert f.readinto_at(len(blob) - 4, target) == 4 and target[:4] == blob[-4:]
        assert f.readinto_at(len(blob) + 5, target) == 0
        with pytest.raises(ValueError, match="negative"):
            f.readinto_at(-1, target)


def test_read_tail_is_one_suffix_request(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        offset, data = f.read_tail(3000)
    assert (offset, data) == (len(blob) - 3000, blob[-3000:])
    assert [r[2] for r in log] == ["bytes=-3000"]


def test_read_at_beyond_end_is_empty(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb") as f:
        assert f.read_at(len(blob) + 5, 10) == b""


def test_pickled_reader_reopens_at_position(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb") as f:
        f.seek(1_000_000)
        clone = pickle.loads(pickle.dumps(f))
    with clone:
        assert clone.tell() == 1_000_000
        assert clone.read(20) == blob[1_000_000:1_000_020]


def test_closed_reader_refuses_reads(fs: S3, blob: bytes) -> None:
    f = fs.open("blob", "rb")
    f.close()
    with pytest.raises(ValueError):
        f.read(1)


def test_text_reader_over_s3(fs: S3) -> None:
    with fs.open("t", "wb") as f:
        f.write("α\nβ\n".encode())
    with fs.open("t", "r", encoding="utf-8") as f:
        assert list(f) == ["α\n", "β\n"]


def test_sequential_run_after_seek_grows_fetches(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        f.seek(1_100_000)
        assert f.read(10_000) == blob[1_100_000:1_110_000]
        assert f.read(90_000) == blob[1_110_000:1_200_000]
    lengths = [int(b) - int(a) + 1 for a, b in (r[2][6:].split("-") for r in log)]
    assert lengths == [64 << 10, 128 << 10]  # not a whole block plus read-ahead


def test_negative_first_fetch_opens_with_a_suffix_range(fs: S3, blob: bytes,
                                                        s3_requests) -> None:
    log = s3_requests(fs)
    with fs.open("blob", "rb", first_fetch=-4096) as f:
        assert f.size == len(blob)
        assert f.read_tail(4096) == (len(blob) - 4096, blob[-4096:])
        assert f.read_at(len(blob) - 100, 100) == blob[-100:]
    assert [r[2] for r in log] == ["bytes=-4096"]


def test_negative_first_fetch_reads_from_the_start_too(fs: S3, blob: bytes) -> None:
    with fs.open("blob", "rb", first_fetch=-4096) as f:
        assert f.read(1000) == blob[:1000]
        f.seek(-10, io.SEEK_END)
        assert f.read() == blob[-10:]


def test_negative_first_fetch_of_an_empty_object(fs: S3) -> None:
    with fs.open("e", "wb"):
        pass
    with fs.open("e", "rb", first_fetch=-4096) as f:
        assert f.size == 0 and f.read() == b"" and f.read_tail(10) == (0, b"")


def test_negative_first_fetch_larger_than_the_object_reads_it_whole(fs: S3,
                                                                    s3_requests) -> None:
    with fs.open("small", "wb") as f:
        f.write(b"abcdef")
    log = s3_requests(fs)
    with fs.open("small", "rb", first_fetch=-4096) as f:
        assert f.read() == b"abcdef"
    assert len(log) == 1


def test_negative_offsets_and_sizes_raise(fs: S3, blob: bytes, s3_requests) -> None:
    with fs.open("blob", "rb") as f:
        log = s3_requests(fs)
        f.seek(5)
        with pytest.raises(ValueError, match="negative"):
            f.read_at(-10, 5)
        with pytest.raises(ValueError, match="negative"):
            f.read_at(10, -5)
        with pytest.raises(ValueError, match="negative"):
            f.read_tail(-1)
        with pytest.raises(ValueError):
            f.seek(-1)
        with pytest.raises(ValueError):
            f.seek(-6, io.SEEK_CUR)
        with pytest.raises(ValueError):
            f.seek(-len(blob) - 1, io.SEEK_END)
        with pytest.raises(TypeError):
            f.read_at(1.5, 10)
        with pytest.raises(TypeError):
            f.seek(1.5)
        assert f.tell() == 5 and f.read(10) == blob[5:15]
        assert f.read_at(0, 0) == b"" and f.read_tail(0) == (len(blob), b"")
    assert log == []
