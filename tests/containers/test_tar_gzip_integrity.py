"""A corrupt ``.tar.gz`` never reads as wrong member data: the gzip trailer (CRC-32 and
length of the data) is checked when the archive is opened, and again by member reads that
reach the end of the archive."""

from __future__ import annotations

import gzip
import io
import random
import tarfile

import pytest

from pfio.errors import ArchiveError

GZIP_HEADER = 10  # magic, method, flags, mtime (4), extra flags, OS: no name, no comment
TRAILER = 8  # CRC-32 and length
MEMBERS = {f"m{i}.bin": random.Random(i).randbytes(300 + 200 * i) for i in range(4)}


def tgz(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return gzip.compress(out.getvalue(), mtime=0)


GOOD = tgz(MEMBERS)


def flipped(data: bytes, position: int) -> bytes:
    corrupt = bytearray(data)
    corrupt[position] ^= 0x01
    return bytes(corrupt)


def read_all(local, name: str) -> dict[str, bytes]:
    with local.open_tar(name) as tar:
        return {n: tar.open(n, "rb").read() for n in MEMBERS}


def test_the_good_archive_reads(tmp_path, local):
    (tmp_path / "a.tgz").write_bytes(GOOD)
    assert read_all(local, "a.tgz") == MEMBERS


def test_no_flipped_byte_reads_as_wrong_data(tmp_path, local):
    """Every byte in turn: the archive either fails with ArchiveError or reads exactly.
    Bytes that carry no data may flip unnoticed: the gzip header's flags and mtime, and a
    back-reference distance inside the tar's zero padding that copies zeros from elsewhere."""
    harmless = []
    for position in range(len(GOOD)):
        (tmp_path / "a.tgz").write_bytes(flipped(GOOD, position))
        try:
            got = read_all(local, "a.tgz")
        except ArchiveError as exc:
            assert "a.tgz" in str(exc)
            continue
        assert got == MEMBERS, f"byte {position} flipped reads as wrong data"
        harmless.append(position)
    assert len(harmless) < 16, harmless


@pytest.mark.parametrize("where", ["data", "end of data", "crc", "length"])
def test_a_flipped_byte_fails_the_open_naming_the_archive(tmp_path, local, where):
    position = {"data": GZIP_HEADER + 200, "end of data": len(GOOD) - TRAILER - 3,
                "crc": len(GOOD) - TRAILER + 1, "length": len(GOOD) - 2}[where]
    (tmp_path / "a.tgz").write_bytes(flipped(GOOD, position))
    with pytest.raises(ArchiveError, match=r"a\.tgz.*(corrupt|truncated)"):
        local.open_tar("a.tgz")


@pytest.mark.parametrize("limit", [1 << 20, 100], ids=["whole", "streamed"])
def test_member_read_reaching_the_end_checks_the_trailer(tmp_path, local, limit):
    """The archive changes on disk after it was opened (same size, a bad CRC): the read of
    the last member reaches the end of the data and fails; nothing wrong is returned."""
    path = tmp_path / "a.tgz"
    path.write_bytes(GOOD)
    last = list(MEMBERS)[-1]
    with local.open_tar("a.tgz", whole_member_limit=limit) as tar:
        path.write_bytes(flipped(GOOD, len(GOOD) - TRAILER))
        with pytest.raises(ArchiveError, match=r"a\.tgz.*CRC"):
            with tar.open(last, "rb") as f:
                f.read()


def test_zeros_after_the_gzip_stream_are_padding(tmp_path, local):
    """gzip and Python's gzip module skip zeros after a stream: such an archive reads."""
    (tmp_path / "a.tgz").write_bytes(GOOD + bytes(10240))
    assert read_all(local, "a.tgz") == MEMBERS


def test_a_gzip_member_after_zeros_reads_on(tmp_path, local):
    raw = gzip.decompress(GOOD)
    split = gzip.compress(raw[:4096], mtime=0) + bytes(600) + gzip.compress(raw[4096:], mtime=0)
    (tmp_path / "a.tgz").write_bytes(split)
    assert read_all(local, "a.tgz") == MEMBERS
