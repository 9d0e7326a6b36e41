"""Positional reads over any open file: own read_at, os.pread, or seek and read."""

from __future__ import annotations

import io

import pytest

import pfio
from pfio.fs.positional import PositionalFile, PositionalReader

DATA = bytes(range(256)) * 40


@pytest.fixture(params=["local", "mem"])
def opened(request, tmp_path):
    """DATA in a file opened for reading: a plain local file (pread) or mem:// (seek+read)."""
    base = str(tmp_path) if request.param == "local" else f"mem://positional-{request.node.name}"
    with pfio.open_url(f"{base}/data.bin", "wb") as f:
        f.write(DATA)
    with pfio.open_url(f"{base}/data.bin", "rb") as f:
        yield f


def test_read_at(opened):
    assert PositionalReader(opened).read_at(1000, 16) == DATA[1000:1016]


def test_pread_leaves_a_local_file_position_alone(tmp_path):
    (tmp_path / "data.bin").write_bytes(DATA)
    with open(tmp_path / "data.bin", "rb") as f:
        f.seek(7)
        assert PositionalReader(f).read_at(1000, 16) == DATA[1000:1016]
        assert f.tell() == 7


def test_read_at_the_end_is_short(opened):
    assert PositionalReader(opened).read_at(len(DATA) - 3, 10) == DATA[-3:]


def test_readinto_at_fills_the_buffer(opened):
    target = bytearray(16)
    assert PositionalReader(opened).readinto_at(1000, memoryview(target)) == 16
    assert bytes(target) == DATA[1000:1016]


def test_readinto_at_the_end_is_short(opened):
    target = bytearray(10)
    assert PositionalReader(opened).readinto_at(len(DATA) - 3, memoryview(target)) == 3
    assert bytes(target[:3]) == DATA[-3:]


def test_read_tail_gives_the_offset(opened):
    assert PositionalReader(opened).read_tail(100) == (len(DATA) - 100, DATA[-100:])


def test_read_tail_of_more_than_the_file_is_the_file(opened):
    assert PositionalReader(opened).read_tail(1 << 20) == (0, DATA)


def test_files_over_one_reader_keep_positions_of_their_own(opened):
    reader = PositionalReader(opened)
    first, second = PositionalFile(reader), PositionalFile(reader)
    first.seek(100)
    assert second.read(4) == DATA[:4]
    assert first.read(4) == DATA[100:104]
    assert (first.tell(), second.tell()) == (104, 4)


def test_positional_file_seeks_from_the_end_and_reads_the_rest(opened):
    f = PositionalFile(PositionalReader(opened))
    assert f.seek(-5, io.SEEK_END) == len(DATA) - 5
    assert f.read() == DATA[-5:]


def test_positional_file_readinto(opened):
    f = PositionalFile(PositionalReader(opened))
    buffer = bytearray(8)
    assert f.readinto(buffer) == 8 and bytes(buffer) == DATA[:8]


def test_positional_file_refuses_a_negative_seek(opened):
    with pytest.raises(ValueError):
        PositionalFile(PositionalReader(opened)).seek(-1)

