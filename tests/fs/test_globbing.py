"""The glob walk of pfio.fs.globbing, behind FS.glob."""

from __future__ import annotations

from pfio.fs.globbing import has_magic, walk
from pfio.fs.memory import MemoryFS


def test_has_magic_sees_each_wildcard():
    assert [has_magic(p) for p in ("a*", "b?", "[c]", "plain")] == [True, True, True, False]


def test_walk_skips_a_missing_directory():
    fs = MemoryFS()
    with fs.open("d/a.txt", "w") as f:
        f.write("x")
    assert sorted(walk(fs, "", ["missing", "*"])) == []
    assert sorted(walk(fs, "", ["*", "*.txt"])) == ["d/a.txt"]
