"""Recursive listings of local directories do not follow symbolic links to directories (as
``os.walk`` does not): a loop does not fail them, a link to a directory elsewhere does not
pull its files into ``ls -R``, ``cp -r`` or ``pack``."""

from __future__ import annotations

import logging
import os
import zipfile

import pytest

from pfio.cli import main
from pfio.fs.local import Local


@pytest.fixture
def tree(tmp_path):
    """src/a.txt, src/sub/b.txt, src/sub/loop -> src, src/etc -> outside/ (secret.txt),
    src/alias.txt -> src/a.txt"""
    src, outside = tmp_path / "src", tmp_path / "outside"
    (src / "sub").mkdir(parents=True)
    outside.mkdir()
    (src / "a.txt").write_bytes(b"a")
    (src / "sub" / "b.txt").write_bytes(b"b")
    (outside / "secret.txt").write_bytes(b"secret")
    os.symlink(src, src / "sub" / "loop")
    os.symlink(outside, src / "etc")
    os.symlink(src / "a.txt", src / "alias.txt")
    return src


EXPECTED = ["a.txt", "alias.txt", "sub/", "sub/b.txt"]


def test_recursive_list_does_not_follow_directory_links(tree, caplog):
    with caplog.at_level(logging.WARNING, logger="pfio.fs.local"):
        assert sorted(Local(tree).list(recursive=True)) == EXPECTED
    assert str(tree / "etc") in caplog.text and str(tree / "sub" / "loop") in caplog.text


def test_recursive_detail_list_does_not_follow_directory_links(tree):
    names = sorted(st.filename for st in Local(tree).list(recursive=True, detail=True))
    assert names == [n.rstrip("/") for n in EXPECTED]


def test_plain_list_still_shows_a_directory_link(tree):
    assert sorted(Local(tree).list()) == ["a.txt", "alias.txt", "etc/", "sub/"]


def test_a_file_link_reads_its_target(tree):
    assert Local(tree).open("alias.txt", "rb").read() == b"a"


def test_a_dangling_link_is_listed_with_details(tree):
    os.symlink(tree / "gone", tree / "dangling")
    stats = {st.filename: st for st in Local(tree).list(recursive=True, detail=True)}
    assert "dangling" in stats and not stats["dangling"].isdir()


def test_glob_does_not_follow_directory_links(tree):
    assert sorted(Local(tree).glob("**/*.txt")) == ["a.txt", "alias.txt", "sub/b.txt"]


def test_ls_r(tree, capsys):
    assert main(["ls", "-R", str(tree)]) == 0
    assert capsys.readouterr().out.split() == EXPECTED


def test_pack(tree, tmp_path):
    assert main(["pack", "-q", str(tree), str(tmp_path / "out.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "out.zip") as zf:
        assert sorted(zf.namelist()) == EXPECTED
        assert zf.read("alias.txt") == b"a"


def test_cp_r(tree, tmp_path):
    assert main(["cp", "-r", "-q", str(tree), str(tmp_path / "copy")]) == 0
    found = sorted(os.path.relpath(os.path.join(d, f), tmp_path / "copy")
                   for d, _, files in os.walk(tmp_path / "copy") for f in files)
    assert found == ["a.txt", "alias.txt", "sub/b.txt"]
