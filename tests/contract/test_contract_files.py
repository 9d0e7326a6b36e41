"""Contract: opening, reading and writing files."""

from __future__ import annotations

import io

import pytest

DATA = b"line one\nline two\r\nline three"


def write(fs, path: str, data: bytes = DATA) -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


def read(fs, path: str) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read()


# -- writing and reading back ----------------------------------------------------------

def test_write_then_read_binary(fs):
    write(fs, "f.bin")
    assert read(fs, "f.bin") == DATA


def test_default_mode_is_text_read(fs):
    write(fs, "f.txt")
    with fs.open("f.txt") as f:  # as builtin open and PFIO 2.x: text, universal newlines
        assert f.read() == "line one\nline two\nline three"


def test_write_returns_byte_count(fs):
    with fs.open("f.bin", "wb") as f:
        assert f.write(b"12345") == 5


def test_empty_file(fs):
    write(fs, "empty", b"")
    assert read(fs, "empty") == b""
    assert fs.stat("empty").size == 0


def test_overwrite_replaces_content(fs):
    write(fs, "f", b"a long first version")
    write(fs, "f", b"short")
    assert read(fs, "f") == b"short"


def test_text_roundtrip_with_encoding(fs):
    with fs.open("t.txt", "w", encoding="latin-1") as f:
        f.write("héllo wörld")
    with fs.open("t.txt", "r", encoding="latin-1") as f:
        assert f.read() == "héllo wörld"
    assert read(fs, "t.txt") == "héllo wörld".encode("latin-1")


def test_text_utf16_starts_with_bom(fs):
    with fs.open("t.txt", "w", encoding="utf-16") as f:
        f.write("hé")
    assert read(fs, "t.txt") == "hé".encode("utf-16")


def test_text_write_translates_newline(fs):
    with fs.open("t.txt", "w", newline="\r\n") as f:
        f.write("a\nb\n")
    assert read(fs, "t.txt") == b"a\r\nb\r\n"


def test_text_read_universal_newlines(fs):
    write(fs, "t.txt", b"a\r\nb\rc\n")
    with fs.open("t.txt", "r") as f:
        assert f.read() == "a\nb\nc\n"


def test_text_read_newline_empty_keeps_endings(fs):
    write(fs, "t.txt", b"a\r\nb\n")
    with fs.open("t.txt", "r", newline="") as f:
        assert f.readlines() == ["a\r\n", "b\n"]


def test_binary_mode_rejects_encoding(fs):
    with pytest.raises(ValueError):
        fs.open("f", "wb", encoding="utf-8")


@pytest.mark.parametrize("mode", ["rw", "q", "rbt", "rr", ""])
def test_invalid_mode(fs, mode):
    with pytest.raises(ValueError):
        fs.open("f", mode)


def test_write_into_missing_directory(backend):
    fs = backend.fs
    if backend.write_creates_parents:
        write(fs, "new/dir/f", b"x")
        assert read(fs, "new/dir/f") == b"x"
        assert fs.isdir("new/dir") or not backend.has_directories
    else:
        with pytest.raises(FileNotFoundError):
            write(fs, "new/dir/f", b"x")


# -- reading -------------------------------------------------------------------------

def test_read_with_size(fs):
    write(fs, "f")
    with fs.open("f", "rb") as f:
        assert f.read(4) == DATA[:4]
        assert f.read(5) == DATA[4:9]
        assert f.read() == DATA[9:]
        assert f.read() == b""


def test_readinto(fs):
    write(fs, "f")
    buffer = bytearray(8)
    with fs.open("f", "rb") as f:
        assert f.readinto(buffer) == 8
    assert bytes(buffer) == DATA[:8]


def test_readline_binary(fs):
    write(fs, "f")
    with fs.open("f", "rb") as f:
        assert f.readline() == b"line one\n"
        assert f.readline() == b"line two\r\n"
        assert f.readline() == b"line three"
        assert f.readline() == b""


def test_iterate_lines(fs):
    write(fs, "f")
    with fs.open("f", "rb") as f:
        assert list(f) == [b"line one\n", b"line two\r\n", b"line three"]


def test_iterate_text_lines(fs):
    write(fs, "f", b"x\ny\n")
    with fs.open("f", "r") as f:
        assert list(f) == ["x\n", "y\n"]


def test_seek_and_tell(fs):
    write(fs, "f")
    with fs.open("f", "rb") as f:
        assert f.seekable()
        assert f.seek(5) == 5
        assert f.tell() == 5
        assert f.read(3) == DATA[5:8]
        assert f.seek(-5, io.SEEK_END) == len(DATA) - 5
        assert f.read() == DATA[-5:]
        f.seek(2)
        assert f.seek(3, io.SEEK_CUR) == 5


def test_seek_past_end_reads_nothing(fs):
    write(fs, "f")
    with fs.open("f", "rb") as f:
        f.seek(len(DATA) + 10)
        assert f.read() == b""


def test_read_file_is_not_writable(fs):
    write(fs, "f")
    with fs.open("f", "rb") as f:
        assert f.readable()
        assert not f.writable()
        with pytest.raises((io.UnsupportedOperation, OSError)):
            f.write(b"x")


def test_read_after_close_raises(fs):
    write(fs, "f")
    f = fs.open("f", "rb")
    f.close()
    assert f.closed
    with pytest.raises(ValueError):
        f.read()


def test_open_missing_file(fs):
    with pytest.raises(FileNotFoundError):
        fs.open("missing", "rb")


def test_open_missing_file_text(fs):
    with pytest.raises(FileNotFoundError):
        fs.open("missing", "r")


def test_open_directory_for_reading(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.mkdir("d")
    with pytest.raises(IsADirectoryError):
        backend.fs.open("d", "rb")


def test_open_directory_for_writing(backend):
    backend.require("has_directories", "no real directories")
    backend.fs.mkdir("d")
    with pytest.raises(IsADirectoryError):
        backend.fs.open("d", "wb")


def test_unreadable_file_raises_permission_error(backend):
    if backend.deny is None:
        pytest.skip(f"{backend.name}: cannot take permissions away here")
    write(backend.fs, "secret")
    backend.deny("secret")
    with pytest.raises(PermissionError):
        read(backend.fs, "secret")


# -- exclusive and append modes -------------------------------------------------------

def test_exclusive_creates(fs):
    with fs.open("x", "xb") as f:
        f.write(b"new")
    assert read(fs, "x") == b"new"


def test_exclusive_on_existing_file(fs):
    write(fs, "x", b"old")
    with pytest.raises(FileExistsError):
        fs.open("x", "xb")
    assert read(fs, "x") == b"old"


def test_exclusive_text(fs):
    with fs.open("x.txt", "x") as f:
        f.write("text")
    assert read(fs, "x.txt") == b"text"


def test_append_to_existing(backend):
    backend.require("supports_append", "no append")
    write(backend.fs, "log", b"one\n")
    with backend.fs.open("log", "ab") as f:
        f.write(b"two\n")
    assert read(backend.fs, "log") == b"one\ntwo\n"


def test_append_creates_missing(backend):
    backend.require("supports_append", "no append")
    with backend.fs.open("log", "a") as f:
        f.write("first")
    assert read(backend.fs, "log") == b"first"


def test_update_mode_rejected_or_works(backend):
    write(backend.fs, "f", b"abc")
    try:
        f = backend.fs.open("f", "r+b")
    except io.UnsupportedOperation:
        return
    with f:
        assert f.read() == b"abc"


# -- all-or-nothing writes ------------------------------------------------------------

class Boom(Exception):
    pass


@pytest.mark.parametrize("mode", ["wb", "w", "xb", "x"])
def test_exception_in_with_publishes_nothing(fs, mode):
    data = b"partial" if "b" in mode else "partial"
    with pytest.raises(Boom):
        with fs.open("f", mode) as f:
            f.write(data * 1000)
            raise Boom
    assert not fs.exists("f")


def test_exception_in_with_keeps_old_file(fs):
    write(fs, "f", b"old")
    with pytest.raises(Boom):
        with fs.open("f", "wb") as f:
            f.write(b"new content")
            raise Boom
    assert read(fs, "f") == b"old"


def test_nothing_visible_before_close(fs):
    with fs.open("f", "wb") as f:
        f.write(b"data")
        f.flush()
        assert not fs.exists("f") or read(fs, "f") == b""
    assert read(fs, "f") == b"data"


def test_no_temporary_files_left(fs):
    write(fs, "f")
    with pytest.raises(Boom):
        with fs.open("g", "wb") as f:
            f.write(b"x")
            raise Boom
    assert sorted(fs.list()) == ["f"]


def test_large_file_in_chunks(fs):
    data = bytes(range(256)) * (10 * 1024 + 7)  # ~2.5 MiB: several buffers on every backend
    with fs.open("big", "wb") as f:
        for start in range(0, len(data), 300_000):
            f.write(data[start:start + 300_000])
    with fs.open("big", "rb") as f:
        assert f.read(1000) == data[:1000]
        f.seek(len(data) - 1_500_000)
        assert f.read(1_200_000) == data[-1_500_000:-300_000]
        assert f.read() == data[-300_000:]
    assert fs.stat("big").size == len(data)


def test_gzip_compression_roundtrip(fs):
    import importlib.util

    if importlib.util.find_spec("pfio.compression") is None:
        pytest.skip("pfio.compression is not there yet")
    import gzip

    with fs.open("t.txt.gz", "w", compression="gzip") as f:
        f.write("compressed text")
    assert gzip.decompress(read(fs, "t.txt.gz")) == b"compressed text"
    with fs.open("t.txt.gz", "r", compression="gzip") as f:
        assert f.read() == "compressed text"
