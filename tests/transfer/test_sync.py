"""``pfio.sync`` between filesystems: what it copies, skips and deletes, twice in a row, dry
runs, refused names, failures collected, atomic files, progress."""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pfio
from pfio.fs.memory import MemoryFS
from pfio.fs.modes import Mode

FILES = {"a.txt": b"alpha", "sub/b.bin": bytes(range(256)) * 10, "sub/deeper/c.txt": b"gamma"}


def _read(fs: pfio.FS, name: str) -> bytes:
    with fs.open(name, "rb") as f:
        return f.read()


def _write(fs: pfio.FS, name: str, data: bytes) -> None:
    with fs.open(name, "wb") as f:
        f.write(data)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def src(tmp_path: Path) -> Path:
    """A local directory holding :data:`FILES`, each modified a minute ago."""
    root = tmp_path / "src"
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        past = time.time() - 60
        os.utime(root / name, (past, past))
    return root


def _puts(log: list[tuple[str, str, str | None]]) -> list[str]:
    return [path for method, path, _ in log if method in ("PUT", "POST")]


# -- twice in a row: nothing the second time -------------------------------------------------

def test_sync_local_to_s3_twice_moves_nothing_the_second_time(src, s3, s3_requests):
    first = pfio.sync(str(src), f"s3://{s3.bucket}/data")
    assert sorted(first.copied) == sorted(FILES) and first.bytes == sum(map(len, FILES.values()))
    log = s3_requests(s3)
    second = pfio.sync(str(src), f"s3://{s3.bucket}/data")
    assert (second.copied, sorted(second.skipped)) == ([], sorted(FILES))
    assert _puts(log) == []
    assert {name: _read(s3, f"data/{name}") for name in FILES} == FILES


def test_sync_s3_to_local_twice_moves_nothing_the_second_time(s3, tmp_path, s3_requests):
    for name, data in FILES.items():
        _write(s3, f"data/{name}", data)
    first = pfio.sync(f"s3://{s3.bucket}/data/", str(tmp_path / "dst"))
    assert sorted(first.copied) == sorted(FILES)
    assert _tree(tmp_path / "dst") == FILES
    log = s3_requests(s3)
    second = pfio.sync(f"s3://{s3.bucket}/data/", str(tmp_path / "dst"))
    assert second.copied == [] and sorted(second.skipped) == sorted(FILES)
    assert [m for m, path, _ in log if m == "GET" and not path.endswith("/")] == []


def test_sync_gives_local_copies_their_source_time(s3, tmp_path):
    _write(s3, "data/x.txt", b"x")
    pfio.sync(f"s3://{s3.bucket}/data", str(tmp_path / "dst"))
    assert int((tmp_path / "dst" / "x.txt").stat().st_mtime) == int(s3.stat("data/x.txt")
                                                                    .last_modified)


def test_sync_mem_to_local_twice_moves_nothing_the_second_time(mem, tmp_path):
    for name, data in FILES.items():
        _write(mem, f"d/{name}", data)
    assert sorted(pfio.sync(f"mem://{mem.name}/d", str(tmp_path / "out")).copied) == \
        sorted(FILES)
    second = pfio.sync(f"mem://{mem.name}/d", str(tmp_path / "out"))
    assert second.copied == [] and len(second.skipped) == len(FILES)
    assert _tree(tmp_path / "out") == FILES


def test_sync_mirrors_and_never_nests(src, tmp_path):
    for _ in range(2):
        pfio.sync(str(src), str(tmp_path / "dst"))
    assert _tree(tmp_path / "dst") == FILES


def test_sync_makes_the_destination_and_its_empty_directories(src, tmp_path):
    (src / "empty").mkdir()
    pfio.sync(str(src), str(tmp_path / "new" / "deep"))
    assert (tmp_path / "new" / "deep" / "empty").is_dir()


# -- what counts as changed ----------------------------------------------------------------

def test_sync_copies_a_file_of_another_size(src, tmp_path):
    pfio.sync(str(src), str(tmp_path / "dst"))
    (src / "a.txt").write_bytes(b"alpha, longer")
    assert pfio.sync(str(src), str(tmp_path / "dst")).copied == ["a.txt"]
    assert (tmp_path / "dst" / "a.txt").read_bytes() == b"alpha, longer"


def test_sync_copies_a_newer_file_of_the_same_size(src, tmp_path):
    pfio.sync(str(src), str(tmp_path / "dst"))
    (src / "a.txt").write_bytes(b"ALPHA")  # now: newer than the copy (a minute old)
    assert pfio.sync(str(src), str(tmp_path / "dst")).copied == ["a.txt"]
    assert (tmp_path / "dst" / "a.txt").read_bytes() == b"ALPHA"


def test_sync_by_size_leaves_a_newer_file_of_the_same_size(src, tmp_path):
    pfio.sync(str(src), str(tmp_path / "dst"))
    (src / "a.txt").write_bytes(b"ALPHA")
    assert pfio.sync(str(src), str(tmp_path / "dst"), compare="size").copied == []


@pytest.mark.parametrize("compare", ["checksum", "etag"])
def test_sync_by_digest_compares_the_bytes(src, s3, compare):
    pfio.sync(str(src), f"s3://{s3.bucket}/d")
    (src / "a.txt").write_bytes(b"alpha")  # newer, same bytes
    (src / "sub" / "deeper" / "c.txt").write_bytes(b"GAMMA")  # newer, other bytes
    result = pfio.sync(str(src), f"s3://{s3.bucket}/d", compare=compare)
    assert result.copied == ["sub/deeper/c.txt"]
    assert sorted(result.skipped) == ["a.txt", "sub/b.bin"]
    assert _read(s3, "d/sub/deeper/c.txt") == b"GAMMA"


def test_sync_refuses_an_unknown_compare(src, tmp_path):
    with pytest.raises(ValueError, match="unknown compare"):
        pfio.sync(str(src), str(tmp_path / "dst"), compare="mtime")


# -- delete, dry runs ------------------------------------------------------------------------

def test_sync_with_delete_removes_what_the_source_lacks(src, s3):
    _write(s3, "d/stale.txt", b"old")
    _write(s3, "d/sub/stale.bin", b"old")
    result = pfio.sync(str(src), f"s3://{s3.bucket}/d", delete=True)
    assert sorted(result.deleted) == ["stale.txt", "sub/stale.bin"]
    assert sorted(s3.list("d", recursive=True)) == sorted(FILES)


def test_sync_without_delete_keeps_what_the_source_lacks(src, tmp_path):
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "mine.txt").write_bytes(b"kept")
    assert pfio.sync(str(src), str(tmp_path / "dst")).deleted == []
    assert (tmp_path / "dst" / "mine.txt").read_bytes() == b"kept"


def test_sync_dry_run_changes_nothing_and_says_what_it_would_do(src, tmp_path):
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "stale.txt").write_bytes(b"old")
    result = pfio.sync(str(src), str(tmp_path / "dst"), delete=True, dry_run=True)
    assert result.dry_run and sorted(result.copied) == sorted(FILES)
    assert result.deleted == ["stale.txt"]
    assert _tree(tmp_path / "dst") == {"stale.txt": b"old"}


def test_sync_dry_run_to_a_missing_directory_makes_nothing(src, tmp_path):
    result = pfio.sync(str(src), str(tmp_path / "no" / "dst"), dry_run=True)
    assert sorted(result.copied) == sorted(FILES) and result.bytes > 0
    assert not (tmp_path / "no").exists()


# -- refusals ------------------------------------------------------------------------------

def test_sync_of_a_missing_source_raises_file_not_found(tmp_path, s3):
    with pytest.raises(FileNotFoundError):
        pfio.sync(str(tmp_path / "missing"), str(tmp_path / "dst"))
    with pytest.raises(FileNotFoundError):
        pfio.sync(f"s3://{s3.bucket}/no-such-prefix", str(tmp_path / "dst"), delete=True)
    assert not (tmp_path / "dst").exists()


def test_sync_of_a_file_raises_not_a_directory(src, tmp_path):
    with pytest.raises(NotADirectoryError):
        pfio.sync(str(src / "a.txt"), str(tmp_path / "dst"))


@pytest.mark.parametrize("inner", ["src/inner", "."])
def test_sync_between_a_directory_and_one_inside_it_is_refused(src, inner):
    with pytest.raises(ValueError, match="inside"):
        pfio.sync(str(src), str(src.parent / inner))
    assert _tree(src) == FILES


class _ListsVerbatim(MemoryFS):
    """A third-party backend that lists whatever names it is given (pfio's own never list
    a name that climbs)."""

    extra: list[str] = []

    def list(self, path: str = "", recursive: bool = False, detail: bool = False) -> Any:
        yield from super().list(path, recursive, detail)
        for name in self.extra:
            yield pfio.FileStat(name, 1) if detail else name


@pytest.fixture
def verbatim(mem) -> Iterator[list[str]]:
    """``verbatim://<store>/`` is ``mem``, listing also the names in the list returned."""
    _write(mem, "ok.txt", b"x")
    names: list[str] = []
    pfio.register_filesystem(
        "verbatim", lambda uri, **_: type("V", (_ListsVerbatim,), {"extra": names})(mem.name))
    yield names
    pfio.unregister_filesystem("verbatim")


@pytest.mark.parametrize("hostile", ["../pwn.txt", "/ABS/pwn.txt", "a/../../x"])
def test_sync_refuses_listed_names_that_climb_out(verbatim, mem, tmp_path, hostile):
    verbatim.append(hostile.replace("/ABS", str(tmp_path)))
    with pytest.raises(ValueError, match="refusing to copy"):
        pfio.sync(f"verbatim://{mem.name}/", str(tmp_path / "dst"))
    assert os.listdir(tmp_path) == []


def test_sync_refuses_a_destination_listing_names_that_climb_out(verbatim, src, mem, tmp_path):
    verbatim.append("../victim.txt")
    with pytest.raises(ValueError, match="refusing to copy"):
        pfio.sync(str(src), f"verbatim://{mem.name}/", delete=True)
    assert sorted(mem.list()) == ["ok.txt"]


# -- failures: collected, atomic -------------------------------------------------------------

def test_sync_collects_failures_and_copies_the_rest(src, tmp_path):
    dst = tmp_path / "dst"
    (dst / "a.txt").mkdir(parents=True)  # a directory where a file must go
    (dst / "a.txt" / "keep").write_bytes(b"k")
    with pytest.raises(pfio.TransferError) as caught:
        pfio.sync(str(src), str(dst))
    error = caught.value
    assert isinstance(error, OSError) and "1 of 3" in str(error) and "a.txt" in str(error)
    assert [name for name, _ in error.errors] == ["a.txt"]
    assert isinstance(error.errors[0][1], IsADirectoryError)
    assert sorted(error.result.copied) == ["sub/b.bin", "sub/deeper/c.txt"]
    assert (dst / "sub" / "deeper" / "c.txt").read_bytes() == b"gamma"


class _FailsMidway(MemoryFS):
    """A backend whose readers fail after their first chunk (a connection lost for good)."""

    def _open_binary(self, path: str, mode: Mode, *args: Any, **kwargs: Any) -> Any:
        f = super()._open_binary(path, mode, *args, **kwargs)
        if mode.kind == "r":
            real, calls = f.read, []

            def read(size: int = -1) -> bytes:
                calls.append(size)
                if len(calls) > 1:
                    raise ConnectionResetError("the source went away")
                return real(size)

            f.read = read
        return f


@pytest.mark.parametrize("destination", ["local", "s3"])
def test_a_copy_failing_midway_leaves_no_destination_file(mem, tmp_path, destination,
                                                          request, s3_server):
    _write(mem, "d/big.bin", b"x" * 1000)
    pfio.register_filesystem("failing", lambda uri, **_: _FailsMidway(mem.name, uri.path))
    try:
        if destination == "local":
            url, listed = str(tmp_path / "dst"), lambda: _tree(tmp_path / "dst")
        else:
            s3 = request.getfixturevalue("s3")
            url, listed = f"s3://{s3.bucket}/dst", lambda: list(s3.list("", recursive=True))
        with pytest.raises(pfio.TransferError) as caught:
            pfio.sync(f"failing://{mem.name}/d", url)
        assert isinstance(caught.value.errors[0][1], ConnectionResetError)
        assert not listed()
    finally:
        pfio.unregister_filesystem("failing")


# -- progress and summary -------------------------------------------------------------------

def test_sync_shows_a_progress_bar_on_a_terminal(src, tmp_path, monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    pfio.sync(str(src), str(tmp_path / "dst"))
    assert "sync: 100%" in capsys.readouterr().err
    pfio.sync(str(src), str(tmp_path / "dst2"), progress=False)
    assert capsys.readouterr().err == ""


def test_sync_shows_no_progress_bar_off_a_terminal(src, tmp_path, capsys):
    pfio.sync(str(src), str(tmp_path / "dst"))
    assert capsys.readouterr().err == ""


def test_sync_logs_its_summary(src, tmp_path, caplog):
    with caplog.at_level("INFO", logger="pfio.transfer"):
        result = pfio.sync(str(src), str(tmp_path / "dst"))
    assert str(result) in caplog.text
    assert "copied 3 files" in str(result) and "0 unchanged" in str(result)


def test_sync_local_to_hdfs_twice_moves_nothing_the_second_time(src):
    from pfio.fs.hdfs import Hdfs
    from pfio.testing.hdfs_standin import StandinFactory

    factory = StandinFactory(f"sync-{secrets.token_hex(6)}")
    pfio.register_filesystem("hdfsstandin", lambda uri, **options: Hdfs(
        uri.path or "/", nameservice="standin", client_factory=factory, **options))
    try:
        assert sorted(pfio.sync(str(src), "hdfsstandin://ns/backup").copied) == sorted(FILES)
        again = pfio.sync(str(src), "hdfsstandin://ns/backup")
        assert again.copied == [] and sorted(again.skipped) == sorted(FILES)
        with pfio.from_url("hdfsstandin://ns/backup") as fs:
            assert {name: _read(fs, name) for name in FILES} == FILES
    finally:
        pfio.unregister_filesystem("hdfsstandin")
