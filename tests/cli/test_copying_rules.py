"""The command side of copying (``pfio/cli/copying.py``): ``cp``'s destination rule (POSIX,
and rsync's trailing ``/``), ``no_clobber``, and ``sync_command``'s output."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import pfio
from pfio.cli.copying import cp, sync_command


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"a")
    (root / "sub" / "b.txt").write_bytes(b"b")
    for path in (root / "a.txt", root / "sub" / "b.txt"):
        os.utime(path, (time.time() - 60, time.time() - 60))
    return root


def test_cp_r_twice_without_a_slash_copies_into_the_existing_directory(src, tmp_path):
    assert cp(str(src), str(tmp_path / "backup"), recursive=True, quiet=True) == 0
    assert _tree(tmp_path / "backup") == {"a.txt": b"a", "sub/b.txt": b"b"}
    assert cp(str(src), str(tmp_path / "backup"), recursive=True, quiet=True) == 0
    assert set(_tree(tmp_path / "backup")) == {"a.txt", "sub/b.txt", "data/a.txt",
                                               "data/sub/b.txt"}  # as POSIX cp -r does


def test_cp_r_of_a_source_ending_with_a_slash_never_nests(src, tmp_path):
    for _ in range(2):
        assert cp(str(src) + "/", str(tmp_path / "backup"), recursive=True, quiet=True) == 0
    assert _tree(tmp_path / "backup") == {"a.txt": b"a", "sub/b.txt": b"b"}


def test_cp_r_to_s3_twice_with_a_slash_never_nests(src, s3_env, s3_bucket):
    for _ in range(2):
        cp(str(src) + "/", f"s3://{s3_bucket}/data/", recursive=True, quiet=True)
    with pfio.from_url(f"s3://{s3_bucket}/data") as fs:
        assert sorted(fs.list(recursive=True)) == ["a.txt", "sub/b.txt"]


def test_cp_of_a_directory_without_r_says_to_use_it(src, tmp_path):
    with pytest.raises(IsADirectoryError, match="use cp -r"):
        cp(str(src), str(tmp_path / "dst"))


def test_cp_no_clobber_refuses_existing_files(src, tmp_path):
    (tmp_path / "dst").write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        cp(str(src / "a.txt"), str(tmp_path / "dst"), no_clobber=True)
    assert (tmp_path / "dst").read_bytes() == b"mine"


def test_cp_reports_each_failed_file(src, tmp_path, capsys):
    (tmp_path / "dst" / "a.txt").mkdir(parents=True)
    (tmp_path / "dst" / "a.txt" / "x").write_bytes(b"x")
    with pytest.raises(pfio.TransferError):
        cp(str(src) + "/", str(tmp_path / "dst"), recursive=True, quiet=True)
    err = capsys.readouterr().err
    assert err.startswith("pfio: failed: a.txt: ")
    assert (tmp_path / "dst" / "sub" / "b.txt").read_bytes() == b"b"


def test_sync_command_prints_a_summary(src, tmp_path, capsys):
    kwargs = {"delete": False, "dry_run": False, "workers": None, "quiet": False}
    assert sync_command(str(src), str(tmp_path / "dst"), **kwargs) == 0
    assert "copied 2 files" in capsys.readouterr().err
    assert sync_command(str(src), str(tmp_path / "dst"), **kwargs) == 0
    err = capsys.readouterr().err
    assert err.startswith("pfio sync: ") and "copied 0 files" in err and "2 unchanged" in err


def test_sync_command_dry_run_lists_what_it_would_do(src, tmp_path, capsys):
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "old.txt").write_bytes(b"o")
    assert sync_command(str(src), str(tmp_path / "dst"), delete=True, dry_run=True,
                        workers=2, quiet=True) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["copy a.txt", "copy sub/b.txt", "delete old.txt"]
    assert err == ""
    assert _tree(tmp_path / "dst") == {"old.txt": b"o"}
