"""Where backends differ on directories, pinned: one row per operation, one column per backend.

``ROWS`` is the table of README.md's "Backend differences" section: each row sets up some
files and directories, does one operation and names what came of it (``True``/``False``, ``ok``
or the builtin error raised; ``ENOTEMPTY`` is an ``OSError`` with that errno). The first test
runs each row on every backend of ``conftest.py`` (local, mem://, HDFS, S3), the second on zip
and tar archives open for writing and for reading, and the last checks that README's table
says what this file pins.
"""

from __future__ import annotations

import errno
import io
import posixpath
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pfio.fs.base import FS
from pfio.fs.memory import MemoryFS

README = Path(__file__).resolve().parents[2] / "README.md"

#: the table's columns, in README's order
COLUMNS = ("local", "mem://", "HDFS", "S3", "zip, tar (writing)", "zip, tar (reading)")


@dataclass(frozen=True)
class Row:
    """One operation: ``label`` (README's first column), what exists before (``dirs``,
    then ``files`` with their parents), the operation, and what each column gets."""

    label: str
    operation: Callable[[FS], str]
    expected: tuple[str, ...]
    dirs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


def _read(fs: FS, path: str) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read()


def _write(fs: FS, path: str, data: bytes = b"data") -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


def _mkdir_isdir(fs: FS) -> str:
    fs.mkdir("d")
    return str(fs.isdir("d"))


def _ok(action: Callable[[FS], object]) -> Callable[[FS], str]:
    """An operation whose only outcome is success (``ok``) or an error."""

    def run(fs: FS) -> str:
        action(fs)
        return "ok"

    return run


def _rename_file(fs: FS) -> str:
    fs.rename("a", "b")
    assert _read(fs, "b") == b"data" and not fs.exists("a")
    return "ok"


def _rename_dir(fs: FS) -> str:
    fs.rename("d", "e")
    assert _read(fs, "e/f") == b"data" and not fs.exists("d")
    return "ok"


def _rename_onto_file(fs: FS) -> str:
    _write(fs, "a", b"new")
    fs.rename("a", "b")
    assert _read(fs, "b") == b"new" and not fs.exists("a")
    return "ok"


def _rename_into_missing(fs: FS) -> str:
    fs.rename("a", "new/a")
    assert _read(fs, "new/a") == b"data"
    return "ok"


def _rename_onto_dir(fs: FS) -> str:
    fs.rename("a", "d")
    assert _read(fs, "d/f") == b"data"  # what was in the directory stays
    return "ok"


def _append(fs: FS) -> str:
    with fs.open("a", "ab") as f:
        f.write(b"+more")
    assert _read(fs, "a") == b"data+more"
    return "ok"


def _open_dir_for_writing(fs: FS) -> str:
    with fs.open("d", "wb") as f:
        f.write(b"x")
    return "ok"


def _remove_recursive(fs: FS) -> str:
    fs.remove("d", recursive=True)
    return str(fs.exists("d"))


#: README's table, row by row; the expected outcomes are in the order of ``COLUMNS``
ROWS = (
    Row('`mkdir("d")`, then `isdir("d")`', _mkdir_isdir,
        ("True", "True", "True", "False", "True", "UnsupportedOperation")),
    Row('`mkdir("d")` where `d` is a directory', _ok(lambda fs: fs.mkdir("d")),
        ("FileExistsError", "FileExistsError", "FileExistsError", "ok", "FileExistsError",
         "UnsupportedOperation"), dirs=("d",)),
    Row('`mkdir("a")` where `a` is a file', _ok(lambda fs: fs.mkdir("a")),
        ("FileExistsError", "FileExistsError", "FileExistsError", "ok", "FileExistsError",
         "UnsupportedOperation"), files=("a",)),
    Row('`mkdir("n/d")` where `n` is missing', _ok(lambda fs: fs.mkdir("n/d")),
        ("FileNotFoundError", "FileNotFoundError", "FileNotFoundError", "ok",
         "FileNotFoundError", "UnsupportedOperation")),
    Row('`makedirs("d")` where `d` is a directory', _ok(lambda fs: fs.makedirs("d")),
        ("FileExistsError", "FileExistsError", "FileExistsError", "ok", "FileExistsError",
         "UnsupportedOperation"), dirs=("d",)),
    Row('`makedirs("d", exist_ok=True)` where `d` is a directory',
        _ok(lambda fs: fs.makedirs("d", exist_ok=True)),
        ("ok", "ok", "ok", "ok", "ok", "ok"), dirs=("d",)),
    Row('`isdir("d")` of an empty directory', lambda fs: str(fs.isdir("d")),
        ("True", "True", "True", "False", "True", "True"), dirs=("d",)),
    Row('`exists("d")` of a directory holding `d/f`', lambda fs: str(fs.exists("d")),
        ("True", "True", "True", "True", "True", "True"), files=("d/f",)),
    Row('`list("n")` where `n` is missing', lambda fs: str(list(fs.list("n"))),
        ("FileNotFoundError",) * 6),
    Row('`remove("d")` of a directory holding `d/f`', _ok(lambda fs: fs.remove("d")),
        ("ENOTEMPTY", "ENOTEMPTY", "ENOTEMPTY", "ENOTEMPTY", "UnsupportedOperation",
         "UnsupportedOperation"), files=("d/f",)),
    Row('`remove("d", recursive=True)`, then `exists("d")`', _remove_recursive,
        ("False", "False", "False", "False", "UnsupportedOperation", "UnsupportedOperation"),
        files=("d/e/f",)),
    Row('`rename("a", "b")` of a file', _rename_file,
        ("ok", "ok", "ok", "ok", "UnsupportedOperation", "UnsupportedOperation"),
        files=("a",)),
    Row('`rename("d", "e")` of a directory holding `d/f`', _rename_dir,
        ("ok", "ok", "ok", "ok", "UnsupportedOperation", "UnsupportedOperation"),
        files=("d/f",)),
    Row('`rename("a", "b")` where `b` is a file', _rename_onto_file,
        ("ok", "ok", "ok", "ok", "UnsupportedOperation", "UnsupportedOperation"),
        files=("b",)),
    Row('`rename("d", "e")` where `e` holds `e/g`', _ok(lambda fs: fs.rename("d", "e")),
        ("ENOTEMPTY", "ENOTEMPTY", "ENOTEMPTY", "ENOTEMPTY", "UnsupportedOperation",
         "UnsupportedOperation"), files=("d/f", "e/g")),
    Row('`rename("a", "d")` where `d` holds `d/f`', _rename_onto_dir,
        ("IsADirectoryError", "IsADirectoryError", "IsADirectoryError", "IsADirectoryError",
         "UnsupportedOperation", "UnsupportedOperation"), files=("a", "d/f")),
    Row('`rename("a", "n/a")` where `n` is missing', _rename_into_missing,
        ("FileNotFoundError", "ok", "FileNotFoundError", "ok", "UnsupportedOperation",
         "UnsupportedOperation"), files=("a",)),
    Row('`open("n/f", "wb")` where `n` is missing', _ok(lambda fs: _write(fs, "n/f")),
        ("FileNotFoundError", "ok", "ok", "ok", "ok", "UnsupportedOperation")),
    Row('`open("a", "ab")` of a file', _append,
        ("ok", "ok", "ok", "UnsupportedOperation", "UnsupportedOperation",
         "UnsupportedOperation"), files=("a",)),
    Row('`open("d", "rb")` of a directory holding `d/f`', _ok(lambda fs: fs.open("d", "rb")),
        ("IsADirectoryError", "IsADirectoryError", "IsADirectoryError", "IsADirectoryError",
         "UnsupportedOperation", "IsADirectoryError"), files=("d/f",)),
    Row('`open("d", "wb")` of a directory holding `d/f`', _open_dir_for_writing,
        ("IsADirectoryError", "IsADirectoryError", "IsADirectoryError", "ok",
         "IsADirectoryError", "UnsupportedOperation"), files=("d/f",)),
)


def outcome(row: Row, fs: FS) -> str:
    """What ``row``'s operation gives on ``fs``: its result, or the error it raised."""
    try:
        return row.operation(fs)
    except io.UnsupportedOperation:  # before OSError: it is one
        return "UnsupportedOperation"
    except OSError as exc:
        if exc.errno == errno.ENOTEMPTY and type(exc) is OSError:
            return "ENOTEMPTY"
        for kind in (FileExistsError, FileNotFoundError, IsADirectoryError,
                     NotADirectoryError):
            if isinstance(exc, kind):
                return kind.__name__
        raise


def prepare(fs: FS, row: Row) -> None:
    """Make ``row``'s directories and files on ``fs``."""
    for path in row.dirs:
        fs.makedirs(path, exist_ok=True)
    for path in row.files:
        parent = posixpath.dirname(path)
        if parent:
            fs.makedirs(parent, exist_ok=True)
        _write(fs, path)


def _column(backend_name: str) -> int:
    for prefix, column in (("local", 0), ("mem", 1), ("hdfs", 2), ("s3", 3)):
        if backend_name.startswith(prefix):
            return column
    raise AssertionError(f"no column for backend {backend_name!r}")


@pytest.mark.parametrize("row", ROWS, ids=[f"row{i:02d}" for i in range(len(ROWS))])
def test_backend(backend, row):
    prepare(backend.fs, row)
    assert outcome(row, backend.fs) == row.expected[_column(backend.name)], row.label


@pytest.mark.parametrize("kind", ["zip", "tar"])
@pytest.mark.parametrize("mode", ["w", "r"])
@pytest.mark.parametrize("row", ROWS, ids=[f"row{i:02d}" for i in range(len(ROWS))])
def test_archive(kind, mode, row):
    store = MemoryFS(f"differences-{secrets.token_hex(6)}", "", create=True)
    opener = store.open_zip if kind == "zip" else store.open_tar
    archive = opener(f"a.{kind}", "w")
    try:
        prepare(archive, row)
        if mode == "r":
            archive.close()
            archive = opener(f"a.{kind}", "r")
        column = COLUMNS.index(f"zip, tar ({'writing' if mode == 'w' else 'reading'})")
        assert outcome(row, archive) == row.expected[column], row.label
    finally:
        if mode == "w":
            archive.__exit__(RuntimeError, RuntimeError("test over"), None)  # publish nothing
        archive.close()


def readme_table() -> list[list[str]]:
    """The rows of README's "Backend differences" table, cells without backticks around
    outcomes and without note numbers."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Backend differences\n"):]
    section = section[:section.index("\n## ", 1)]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = []
    for line in lines[2:]:  # after the header and the |---| line
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        outcomes = [re.sub(r"\s*\(\d+\)$", "", cell).strip("`") for cell in cells[1:]]
        rows.append([cells[0], *outcomes])
    return rows


def test_readme_table_says_what_the_tests_pin():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Backend differences\n"):]
    header = next(line for line in section.splitlines() if line.startswith("|"))
    assert [c.strip().strip("`") for c in header.strip().strip("|").split("|")][1:] == \
        list(COLUMNS)
    assert readme_table() == [[row.label, *row.expected] for row in ROWS]
