"""pfio.fs.skipping: the one forward skip over a stream."""

from __future__ import annotations

import io

import pytest

from pfio.fs import skipping
from pfio.fs.skipping import drop, skip


class OneWay(io.RawIOBase):
    """``data`` as a stream that cannot seek, counting the bytes asked per read."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)
        self.asked: list[int] = []

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        self.asked.append(len(b))
        return self._data.readinto(b)


class Counted(io.BytesIO):
    """A seekable stream that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size=-1):
        data = super().read(size)
        self.read_bytes += len(data)
        return data


def test_a_seekable_stream_is_skipped_by_seeking():
    f = Counted(b"0123456789")
    f.seek(2)
    assert skip(f, 5) == 5
    assert (f.tell(), f.read_bytes) == (7, 1)  # only the last byte skipped is read


def test_a_seekable_stream_stops_at_its_end():
    f = io.BytesIO(b"0123456789")
    f.seek(4)
    assert skip(f, 100) == 6
    assert f.tell() == 10


def test_a_stream_that_cannot_seek_is_read():
    f = OneWay(b"0123456789")
    assert skip(f, 7) == 7
    assert f.read() == b"789"


def test_a_short_stream_that_cannot_seek_says_how_far_it_went():
    assert skip(OneWay(b"0123"), 10) == 4


def test_reads_are_at_most_one_chunk(monkeypatch):
    monkeypatch.setattr(skipping, "SKIP_CHUNK", 4)
    f = OneWay(b"x" * 10)
    assert skip(f, 10) == 10
    assert max(f.asked) == 4


def test_drop_without_a_count_reads_to_the_end():
    f = OneWay(b"x" * 10)
    f.read(3)
    assert drop(f) == 7


def test_a_negative_count_is_refused():
    with pytest.raises(ValueError, match="negative"):
        skip(io.BytesIO(b"abc"), -1)


class NoEnd(io.BytesIO):
    """A seekable stream that cannot tell its size (a seek from the end fails)."""

    def seek(self, offset, whence=io.SEEK_SET):
        if whence == io.SEEK_END:
            raise io.UnsupportedOperation("no size")
        return super().seek(offset, whence)


def test_a_short_stream_without_a_size_is_counted_by_reading():
    f = NoEnd(b"0123456789")
    f.seek(3)
    assert skip(f, 100) == 7
    assert f.tell() == 10
