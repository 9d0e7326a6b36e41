"""pfio.containers.tar_stream, the one tar writer (under the tar container's writer and the
shard writer): the bytes tarfile writes, read by tarfile and GNU tar."""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import tarfile

import pytest

from pfio.containers import tar_writer
from pfio.containers.tar_stream import BLOCK, RECORD, TarStream, end_blocks, header
from pfio.fs.local import Local

LONG = "deep/" + "n" * 140 + "/ünïcode-" + "x" * 30 + ".txt"
MEMBERS = [  # name, kind, mode, mtime, data
    ("d", tarfile.DIRTYPE, 0o755, 1_700_000_000, b""),
    ("d/a.bin", tarfile.REGTYPE, 0o644, 1_700_000_001, bytes(range(256)) * 5),
    ("d/empty", tarfile.REGTYPE, 0o444, 0, b""),
    ("d/block", tarfile.REGTYPE, 0o600, 7, b"b" * BLOCK),
    (LONG, tarfile.REGTYPE, 0o644, 1_700_000_002, b"long"),
]

needs_gnu_tar = pytest.mark.skipif(shutil.which("tar") is None, reason="no tar command")


def _written(compresslevel=None):
    out = io.BytesIO()
    stream = TarStream(out, compresslevel)
    for name, kind, mode, mtime, data in MEMBERS:
        stream.add(name, len(data), io.BytesIO(data), mode, mtime, kind)
    size = stream.finish()
    return out.getvalue(), size


def _by_tarfile():
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, mode, mtime, data in MEMBERS:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime, info.size = kind, mode, mtime, len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return out.getvalue()


def test_the_bytes_are_tarfiles():
    data, size = _written()
    assert data == _by_tarfile() and size == len(data)


def test_an_archive_ends_on_a_record():
    data, _ = _written()
    assert len(data) % RECORD == 0 and data[-2 * BLOCK:] == bytes(2 * BLOCK)


def test_end_blocks_fill_the_record():
    assert len(end_blocks(0)) == RECORD
    assert len(end_blocks(RECORD - 2 * BLOCK)) == 2 * BLOCK
    assert len(end_blocks(RECORD - BLOCK)) == RECORD + BLOCK


def test_tarfile_reads_names_modes_and_times():
    data, _ = _written()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        got = [(i.name, i.type, i.mode, i.mtime, i.uid, i.gid, i.uname, i.gname)
               for i in tar.getmembers()]
    assert got == [(name, kind, mode, mtime, 0, 0, "", "")
                   for name, kind, mode, mtime, _ in MEMBERS]


@needs_gnu_tar
def test_gnu_tar_lists_long_and_unicode_names(tmp_path):
    data, _ = _written()
    (tmp_path / "a.tar").write_bytes(data)
    listed = subprocess.run(["tar", "-tf", str(tmp_path / "a.tar")], check=True,
                            capture_output=True, env={"LC_ALL": "C.UTF-8"}).stdout
    assert listed.decode().splitlines() == ["d/", "d/a.bin", "d/empty", "d/block", LONG]


@needs_gnu_tar
def test_gnu_tar_extracts_a_gzip_stream(tmp_path):
    data, _ = _written(compresslevel=6)
    (tmp_path / "a.tar.gz").write_bytes(data)
    subprocess.run(["tar", "-xzf", "a.tar.gz"], cwd=tmp_path, check=True,
                   env={"LC_ALL": "C.UTF-8"})
    assert (tmp_path / LONG).read_bytes() == b"long"
    assert (tmp_path / "d" / "a.bin").read_bytes() == bytes(range(256)) * 5


def test_a_gzip_stream_holds_the_same_tar_and_no_timestamp():
    first, size = _written(compresslevel=9)
    assert gzip.decompress(first) == _written()[0] and size == len(_written()[0])
    assert first[4:8] == bytes(4)  # MTIME 0: the same members give the same bytes
    assert _written(compresslevel=9)[0] == first


def test_a_size_of_8_gib_or_more_goes_in_a_pax_header():
    size = 9 << 30
    blocks = header("big", size, 0o644, 0)
    with tarfile.open(fileobj=io.BytesIO(blocks + bytes(BLOCK))) as tar:
        assert tar.firstmember.size == size


def test_data_shorter_than_its_size_is_refused():
    stream = TarStream(io.BytesIO())
    with pytest.raises(ValueError, match="'x': its data ends after 3 of 10 bytes"):
        stream.add("x", 10, io.BytesIO(b"abc"), 0o644, 0)


def test_a_size_without_data_is_refused():
    out = io.BytesIO()
    with pytest.raises(ValueError, match="'x': 10 bytes announced without data"):
        TarStream(out).add("x", 10, None, 0o644, 0)
    assert out.getvalue() == b""  # not even the header


def test_an_abandoned_stream_writes_nothing_more():
    out = io.BytesIO()
    stream = TarStream(out, compresslevel=6)
    stream.add("a", 1, io.BytesIO(b"a"), 0o644, 0)
    written = out.getvalue()
    stream.abandon()
    assert out.getvalue() == written  # no gzip trailer, no end blocks


def test_the_container_writes_members_0644_directories_0755_at_the_time(monkeypatch, tmp_path):
    monkeypatch.setattr(tar_writer.time, "time", lambda: 1_600_000_000.7)
    with Local(tmp_path).open_tar("t.tar", "w") as tar:
        tar.mkdir("d")
        with tar.open("d/f", "wb") as f:
            f.write(b"f")
    with tarfile.open(tmp_path / "t.tar") as tf:
        assert [(i.name, i.mode, i.mtime) for i in tf.getmembers()] == \
            [("d", 0o755, 1_600_000_000), ("d/f", 0o644, 1_600_000_000)]
