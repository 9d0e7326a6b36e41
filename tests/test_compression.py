"""Transparent compression through FS.open and open_url (pfio.compression)."""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import subprocess
import sys
import uuid
import zipfile

import pytest
import zstandard

import pfio
from pfio.compression import CODECS as CODECS_BY_NAME
from pfio.compression import DecodeError, decompressed
from pfio.fs.local import Local

CODECS = ["gzip", "bz2", "xz", "zstd"]
EXTENSIONS = {"gzip": ".gz", "bz2": ".bz2", "xz": ".xz", "zstd": ".zst"}
DATA = b"".join(b"line %06d of some compressible text\n" % i for i in range(10000))

COMPRESS = {
    "gzip": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda data: zstandard.ZstdCompressor(write_checksum=True).compress(data),
}
DECOMPRESS = {
    "gzip": gzip.decompress,
    "bz2": bz2.decompress,
    "xz": lzma.decompress,
    "zstd": lambda data: zstandard.ZstdDecompressor().decompressobj().decompress(data),
}


@pytest.fixture(params=["local", "mem"])
def fs(request, tmp_path):
    """A local and an in-memory filesystem (S3 has its own tests at the end)."""
    if request.param == "local":
        return Local(str(tmp_path))
    return pfio.from_url(f"mem://compression-{uuid.uuid4().hex}/")


@pytest.fixture
def s3(s3_env, s3_bucket):
    """A prefix of a new bucket on the test S3 server."""
    return pfio.from_url(f"s3://{s3_bucket}/compression/")


def store(fs, path: str, data: bytes) -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


def stored(fs, path: str) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read()


# -- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_write_then_read_round_trip(fs, codec):
    with fs.open("data.bin", "wb", compression=codec) as f:
        f.write(DATA)
    with fs.open("data.bin", "rb", compression=codec) as f:
        assert f.read() == DATA


@pytest.mark.parametrize("codec", CODECS)
def test_written_file_is_a_standard_stream(fs, codec):
    with fs.open("data", "wb", compression=codec) as f:
        f.write(DATA)
    assert DECOMPRESS[codec](stored(fs, "data")) == DATA


@pytest.mark.parametrize("codec", CODECS)
def test_reads_a_file_compressed_by_the_standard_tools(fs, codec):
    store(fs, "data", COMPRESS[codec](DATA))
    with fs.open("data", "rb", compression=codec) as f:
        assert f.read() == DATA


def test_default_reads_bytes_as_stored(fs):
    packed = gzip.compress(DATA)
    store(fs, "data.gz", packed)
    with fs.open("data.gz", "rb") as f:
        assert f.read() == packed


def test_gzip_output_is_deterministic(fs):
    for name in ("a.gz", "b.gz"):
        with fs.open(name, "wb", compression="gzip") as f:
            f.write(DATA)
    assert stored(fs, "a.gz") == stored(fs, "b.gz")


def test_compresslevel_is_used(fs):
    with fs.open("fast.gz", "wb", compression="gzip", compresslevel=1) as f:
        f.write(DATA)
    with fs.open("best.gz", "wb", compression="gzip", compresslevel=9) as f:
        f.write(DATA)
    assert len(stored(fs, "best.gz")) < len(stored(fs, "fast.gz"))


def test_concatenated_streams_read_as_one(fs):
    store(fs, "cat.gz", gzip.compress(b"first\n") + gzip.compress(b"second\n"))
    with fs.open("cat.gz", "rb", compression="gzip") as f:
        assert f.read() == b"first\nsecond\n"


@pytest.mark.parametrize("codec", CODECS)
def test_append_adds_a_stream(tmp_path, codec):
    fs = Local(str(tmp_path))
    with fs.open("log", "wb", compression=codec) as f:
        f.write(b"one\n")
    with fs.open("log", "ab", compression=codec) as f:
        f.write(b"two\n")
    with fs.open("log", "rb", compression=codec) as f:
        assert f.read() == b"one\ntwo\n"


def test_open_url_takes_compression():
    url = f"mem://compression-url-{uuid.uuid4().hex}/notes.txt.gz"
    with pfio.open_url(url, "w", compression="infer") as f:
        f.write("hello\n")
    with pfio.open_url(url, "rb") as f:
        assert gzip.decompress(f.read()) == b"hello\n"
    with pfio.open_url(url, compression="infer") as f:
        assert f.read() == "hello\n"


def test_open_url_of_a_zip_member(tmp_path):
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("d/notes.txt.gz", gzip.compress(b"inside\n"))
    with pfio.open_url(str(tmp_path / "a.zip" / "d" / "notes.txt.gz"), compression="infer") as f:
        assert f.read() == "inside\n"


def test_open_url_local_path_takes_compression(tmp_path):
    path = str(tmp_path / "notes.xz")
    with pfio.open_url(path, "wb", compression="infer") as f:
        f.write(b"hello")
    assert lzma.decompress((tmp_path / "notes.xz").read_bytes()) == b"hello"


# -- inference --------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_infer_write_uses_the_extension(fs, codec):
    name = "data" + EXTENSIONS[codec]
    with fs.open(name, "wb", compression="infer") as f:
        f.write(DATA)
    assert DECOMPRESS[codec](stored(fs, name)) == DATA


def test_infer_write_without_known_extension_stores_as_is(fs):
    with fs.open("data.txt", "wb", compression="infer") as f:
        f.write(DATA)
    assert stored(fs, "data.txt") == DATA


@pytest.mark.parametrize("codec", CODECS)
def test_infer_read_uses_the_magic_bytes(fs, codec):
    store(fs, "no-extension", COMPRESS[codec](DATA))
    with fs.open("no-extension", "rb", compression="infer") as f:
        assert f.read() == DATA


def test_infer_read_magic_wins_over_a_wrong_extension(fs):
    store(fs, "mislabelled.bz2", gzip.compress(DATA))
    with fs.open("mislabelled.bz2", "rb", compression="infer") as f:
        assert f.read() == DATA


def test_infer_read_of_plain_data_returns_it_as_stored(fs):
    store(fs, "plain.txt", DATA)
    with fs.open("plain.txt", "rb", compression="infer") as f:
        assert f.read() == DATA


def test_infer_read_of_an_empty_file(fs):
    store(fs, "empty", b"")
    with fs.open("empty", "rb", compression="infer") as f:
        assert f.read() == b""


def test_infer_read_uses_the_extension_when_magic_is_unknown(fs):
    store(fs, "broken.gz", b"this is not gzip data at all")
    with pytest.raises(OSError, match="corrupt gzip stream"):
        with fs.open("broken.gz", "rb", compression="infer") as f:
            f.read()


# -- text mode --------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_text_mode_round_trip(fs, codec):
    text = "héllo wörld\nsecond line\n"
    with fs.open("t" + EXTENSIONS[codec], "w", encoding="utf-8", compression="infer") as f:
        f.write(text)
    with fs.open("t" + EXTENSIONS[codec], "r", encoding="utf-8", compression="infer") as f:
        assert f.readlines() == ["héllo wörld\n", "second line\n"]


def test_text_mode_newline_translation(fs):
    store(fs, "crlf.gz", gzip.compress(b"a\r\nb\r\n"))
    with fs.open("crlf.gz", "r", compression="gzip") as f:
        assert f.read() == "a\nb\n"


def test_text_seek_back_to_a_told_position(fs):
    store(fs, "t.gz", gzip.compress("ä line\nsecond\nthird\n".encode()))
    with fs.open("t.gz", "r", encoding="utf-8", compression="gzip") as f:
        f.readline()
        mark = f.tell()
        assert f.readline() == "second\n"
        f.seek(mark)
        assert f.readline() == "second\n"


# -- seeking ----------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_seek_forward(fs, codec):
    store(fs, "data", COMPRESS[codec](DATA))
    with fs.open("data", "rb", compression=codec) as f:
        assert f.seek(200_000) == 200_000
        assert f.read(100) == DATA[200_000:200_100]
        assert f.tell() == 200_100


@pytest.mark.parametrize("codec", CODECS)
def test_seek_backward_restarts(fs, codec):
    store(fs, "data", COMPRESS[codec](DATA))
    with fs.open("data", "rb", compression=codec) as f:
        f.read(300_000)
        f.seek(123)
        assert f.read(50) == DATA[123:173]


def test_seek_relative_and_from_end(fs):
    store(fs, "data.gz", gzip.compress(DATA))
    with fs.open("data.gz", "rb", compression="gzip") as f:
        f.seek(1000)
        f.seek(-10, io.SEEK_CUR)
        assert f.read(10) == DATA[990:1000]
        assert f.seek(-5, io.SEEK_END) == len(DATA) - 5
        assert f.read() == DATA[-5:]


def test_seek_past_the_end_stops_at_the_end(fs):
    store(fs, "data.gz", gzip.compress(b"short"))
    with fs.open("data.gz", "rb", compression="gzip") as f:
        assert f.seek(1000) == 5
        assert f.read() == b""


def test_negative_seek_is_rejected(fs):
    store(fs, "data.gz", gzip.compress(b"short"))
    with fs.open("data.gz", "rb", compression="gzip") as f:
        with pytest.raises(ValueError):
            f.seek(-1)


def test_reader_reports_seekable(fs):
    store(fs, "data.gz", gzip.compress(b"short"))
    with fs.open("data.gz", "rb", compression="gzip") as f:
        assert f.seekable() and f.readable() and not f.writable()


# -- atomic writes ----------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_exception_in_with_publishes_nothing(fs, codec):
    with pytest.raises(RuntimeError):
        with fs.open("never", "wb", compression=codec) as f:
            f.write(DATA)
            raise RuntimeError("boom")
    assert not fs.exists("never")


def test_exception_in_text_with_keeps_the_old_file(fs):
    with fs.open("keep.gz", "w", compression="infer") as f:
        f.write("old\n")
    with pytest.raises(RuntimeError):
        with fs.open("keep.gz", "w", compression="infer") as f:
            f.write("new\n")
            raise RuntimeError("boom")
    with fs.open("keep.gz", "r", compression="infer") as f:
        assert f.read() == "old\n"


def test_file_appears_only_on_close(fs):
    f = fs.open("late.gz", "wb", compression="gzip")
    f.write(DATA)
    assert not fs.exists("late.gz")
    f.close()
    assert fs.exists("late.gz")


def test_tell_counts_uncompressed_bytes(fs):
    with fs.open("count.gz", "wb", compression="gzip") as f:
        f.write(b"x" * 1000)
        assert f.tell() == 1000


# -- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_truncated_stream_names_the_file(fs, codec):
    packed = COMPRESS[codec](DATA)
    store(fs, "cut", packed[: len(packed) // 2])
    with pytest.raises(OSError, match=f"truncated {codec} stream") as info:
        with fs.open("cut", "rb", compression=codec) as f:
            f.read()
    assert info.value.errno == errno.EIO
    assert info.value.filename.endswith("cut")


@pytest.mark.parametrize("codec", CODECS)
def test_corrupt_stream_names_the_file(fs, codec):
    packed = bytearray(COMPRESS[codec](DATA))
    middle = len(packed) // 2
    packed[middle:middle + 16] = bytes(b ^ 0xFF for b in packed[middle:middle + 16])
    store(fs, "bad", bytes(packed))
    with pytest.raises(OSError, match=f"corrupt {codec} stream") as info:
        with fs.open("bad", "rb", compression=codec) as f:
            f.read()
    assert info.value.errno == errno.EIO
    assert info.value.filename.endswith("bad")


def test_corrupt_stream_in_text_mode(fs):
    store(fs, "bad.gz", b"\x1f\x8b" + b"\x00" * 40)
    with pytest.raises(OSError, match="corrupt gzip stream"):
        with fs.open("bad.gz", "r", compression="infer") as f:
            f.read()


def test_a_wrong_gzip_crc_says_what_the_trailer_check_means(fs):
    packed = bytearray(gzip.compress(DATA))
    packed[-8] ^= 0x01  # the CRC-32 of the trailer
    store(fs, "crc.gz", bytes(packed))
    with pytest.raises(DecodeError, match="corrupt gzip stream .*CRC-32") as info:
        with fs.open("crc.gz", "rb", compression="gzip") as f:
            f.read()
    assert (info.value.reason, info.value.errno) == ("corrupt", errno.EIO)


def test_a_truncated_stream_is_a_decode_error_that_says_so(fs):
    store(fs, "cut.gz", gzip.compress(DATA)[:-20])
    with pytest.raises(DecodeError) as info:
        with fs.open("cut.gz", "rb", compression="gzip") as f:
            f.read()
    assert info.value.reason == "truncated" and "end marker" in info.value.detail


# -- zero padding after a gzip stream ---------------------------------------------------------

def test_zeros_after_a_gzip_stream_are_skipped(fs):
    store(fs, "padded.gz", gzip.compress(DATA) + bytes(10_000))
    assert fs.open("padded.gz", "rb", compression="gzip").read() == DATA


def test_zeros_between_gzip_streams_are_skipped(fs):
    store(fs, "two.gz", gzip.compress(b"one ") + bytes(700) + gzip.compress(b"two"))
    assert fs.open("two.gz", "rb", compression="gzip").read() == b"one two"


def test_a_gzip_file_that_starts_with_zeros_is_corrupt(fs):
    store(fs, "zeros.gz", bytes(100) + gzip.compress(b"x"))
    with pytest.raises(DecodeError, match="corrupt gzip stream"):
        fs.open("zeros.gz", "rb", compression="gzip").read()


# -- decompressing any stream -----------------------------------------------------------------

class OneWay(io.RawIOBase):
    """``data`` as a stream that cannot seek (a network body)."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self._data.readinto(b)


def test_decompressed_reads_a_stream_and_seeks_forward():
    f = decompressed(OneWay(gzip.compress(DATA)), CODECS_BY_NAME["gzip"], "one-way")
    f.seek(1000)
    assert f.read(10) == DATA[1000:1010]


def test_decompressed_cannot_seek_back_in_a_stream_it_cannot_open_again():
    f = decompressed(OneWay(gzip.compress(DATA)), CODECS_BY_NAME["gzip"], "one-way")
    f.read(100_000)
    with pytest.raises(io.UnsupportedOperation, match="one-way: cannot seek backward"):
        f.seek(0)


def test_decompressed_seeks_back_by_rewinding():
    f = decompressed(io.BytesIO(gzip.compress(DATA)), CODECS_BY_NAME["gzip"], "rewinds")
    f.read(100_000)
    f.seek(5)
    assert f.read(5) == DATA[5:10]


def test_unknown_codec_lists_the_supported_ones(fs):
    with pytest.raises(ValueError, match="'gzip', 'bz2', 'xz', 'zstd'"):
        fs.open("x", "rb", compression="lz4")


def test_update_mode_is_unsupported(fs):
    with pytest.raises(io.UnsupportedOperation):
        fs.open("x.gz", "r+b", compression="gzip")


def test_missing_file_raises_file_not_found(fs):
    with pytest.raises(FileNotFoundError):
        fs.open("missing.gz", "rb", compression="infer")


def test_missing_zstandard_names_the_extra(tmp_path):
    path = tmp_path / "x.zst"
    code = (
        "import sys; sys.modules['zstandard'] = None\n"
        "import pfio\n"
        "try:\n"
        f"    pfio.open_url({str(path)!r}, 'wb', compression='infer')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "pip install 'pfio[zstd]'" in out
    assert not path.exists()


def test_missing_zstandard_on_read_by_magic(tmp_path, monkeypatch):
    (tmp_path / "x").write_bytes(COMPRESS["zstd"](b"data"))
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(ImportError, match="pfio\\[zstd\\]"):
        Local(str(tmp_path)).open("x", "rb", compression="infer")


# -- S3 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_s3_round_trip_inferred(s3, codec):
    name = "data" + EXTENSIONS[codec]
    with s3.open(name, "wb", compression="infer") as f:
        f.write(DATA)
    assert DECOMPRESS[codec](stored(s3, name)) == DATA
    with s3.open(name, "rb", compression="infer") as f:
        assert f.read() == DATA


def test_s3_text_mode(s3):
    with s3.open("notes.txt.gz", "w", encoding="utf-8", compression="infer") as f:
        f.write("héllo\nwörld\n")
    with s3.open("notes.txt.gz", "r", encoding="utf-8", compression="infer") as f:
        assert list(f) == ["héllo\n", "wörld\n"]


def test_s3_seek_backward(s3):
    store(s3, "data.zst", COMPRESS["zstd"](DATA))
    with s3.open("data.zst", "rb", compression="infer") as f:
        f.seek(300_000)
        assert f.read(10) == DATA[300_000:300_010]
        f.seek(42)
        assert f.read(10) == DATA[42:52]


def test_s3_exception_publishes_nothing(s3):
    with pytest.raises(RuntimeError):
        with s3.open("never.gz", "wb", compression="infer") as f:
            f.write(DATA)
            raise RuntimeError("boom")
    assert not s3.exists("never.gz")


def test_s3_truncated_names_the_url(s3, s3_bucket):
    packed = COMPRESS["xz"](DATA)
    store(s3, "cut.xz", packed[: len(packed) // 2])
    with pytest.raises(OSError, match="truncated xz stream") as info:
        with pfio.open_url(f"s3://{s3_bucket}/compression/cut.xz", "rb",
                           compression="infer") as f:
            f.read()
    assert info.value.filename == f"s3://{s3_bucket}/compression/cut.xz"
