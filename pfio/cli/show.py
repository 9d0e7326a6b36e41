"""The commands that read: ``ls``, ``cat`` and ``stat``."""

from __future__ import annotations

import json
import shutil
import stat as _stat
import sys
import time
from typing import IO, Any

from ..api import from_url, open_url
from ..fs.stat import FileStat, with_implied_directories
from .common import CHUNK_SIZE, binary_stdout, describe_error, locate


def ls(url: str, long: bool = False, recursive: bool = False) -> int:
    """Print the entries of the directory at ``url``, sorted, one a line (names as
    ``FS.list`` gives them: directories end with ``/``); a file is printed as itself."""
    try:
        with from_url(url) as fs:
            entries = list(fs.list("", recursive=recursive, detail=True))
        if recursive:
            entries = with_implied_directories(entries)
        entries.sort(key=lambda st: st.filename)
    except NotADirectoryError:
        fs, name = locate(url)
        with fs:
            entries = [_renamed(fs.stat(name), name)]
    _print_entries(entries, long, sys.stdout)
    return 0


def _renamed(st: FileStat, name: str) -> FileStat:
    st.filename = name
    return st


def _print_entries(entries: list[FileStat], long: bool, out: IO[str]) -> None:
    names = [st.filename + "/" if st.isdir() else st.filename for st in entries]
    if not long:
        for name in names:
            out.write(name + "\n")
        return
    width = max((len(str(st.size)) for st in entries), default=1)
    for st, name in zip(entries, names, strict=True):
        out.write(f"{_stat.filemode(st.mode)} {st.size:>{width}} "
                  f"{_format_time(st.last_modified)} {name}\n")


def _format_time(timestamp: float | None) -> str:
    if timestamp is None:
        return "-" * 19
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp))


def cat(urls: list[str]) -> int:
    """Write the bytes of each file to standard output; report the files that cannot be
    read and go on. Returns 1 when any failed."""
    out = binary_stdout()
    status = 0
    for url in urls:
        try:
            with open_url(url, "rb") as f:
                shutil.copyfileobj(f, out, CHUNK_SIZE)
        except BrokenPipeError:
            raise  # the reader went away: stop (see pfio.cli.main)
        except (OSError, ValueError) as e:
            out.flush()
            sys.stderr.write(f"pfio cat: {describe_error(e)}\n")
            status = 1
    out.flush()
    return status


def stat(url: str, as_json: bool = False) -> int:
    """Print the :class:`~pfio.FileStat` of ``url``: one ``field: value`` a line, or a JSON
    object with ``as_json``."""
    fs, name = locate(url)
    with fs:
        st = fs.stat(name)
    fields = _fields(st)
    if as_json:
        sys.stdout.write(json.dumps(fields, indent=2, sort_keys=False, default=str) + "\n")
        return 0
    for key, value in fields.items():
        if key == "mode":
            value = f"{_stat.filemode(st.mode)} ({oct(st.mode)})"
        elif key == "last_modified" and value is not None:
            value = f"{_format_time(value)} ({value})"
        sys.stdout.write(f"{key}: {value}\n")
    return 0


def _fields(st: FileStat) -> dict[str, Any]:
    common = ("filename", "size", "mode", "last_modified")
    fields: dict[str, Any] = {key: getattr(st, key) for key in common}
    fields["isdir"] = st.isdir()
    extra = vars(st)
    for key in sorted(extra):
        if key not in fields and not key.startswith("_"):
            fields[key] = extra[key]
    return fields
