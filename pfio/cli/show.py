"""The commands that look: ``ls``, ``cat`` and ``stat``."""

from __future__ import annotations

import json
import shutil
import stat as _stat
import sys
import time
from typing import IO, Any

from ..api import from_url, open_url
from ..fs.stat import FileStat, with_implied_directories
from .common import CHUNK_SIZE, add_command, binary_stdout, for_each, locate


def add_parsers(commands: Any) -> None:
    """Add ``ls``, ``cat`` and ``stat`` to the ``pfio`` command's ``commands``."""
    ls_parser = add_command(
        commands, "ls", "list a directory",
        "List the directory at URL, sorted, one entry a line. Directory names end with '/'. "
        "A URL naming a file lists that file.",
        "  pfio ls s3://bucket/prefix/\n"
        "  pfio ls -lR data/train.zip",
        lambda args: ls(args.url, long=args.long, recursive=args.recursive))
    ls_parser.add_argument("url", nargs="?", default=".", metavar="URL",
                           help="the directory to list (default: the working directory)")
    ls_parser.add_argument("-l", dest="long", action="store_true",
                           help="long format: mode, size, modification time, name")
    ls_parser.add_argument("-R", dest="recursive", action="store_true",
                           help="list everything below URL, with paths relative to it")
    cat_parser = add_command(
        commands, "cat", "write files to standard output",
        "Write the bytes of each file to standard output, one after the other. A file that "
        "cannot be read is reported and skipped (the exit status is then 1).",
        "  pfio cat s3://bucket/config.yaml\n"
        "  pfio cat data/train.zip/a.txt data/train.zip/b.txt > ab.txt",
        lambda args: cat(args.urls))
    cat_parser.add_argument("urls", nargs="+", metavar="URL", help="the files to write")
    stat_parser = add_command(
        commands, "stat", "show the status of a file or directory",
        "Print the fields of the FileStat of URL (filename, size, mode, last_modified, "
        "isdir, and what the filesystem adds, e.g. etag on S3 or crc32 in a zip; in the "
        "text form a zip member's crc32 is in hexadecimal, as unzip -v shows it).",
        "  pfio stat s3://bucket/model.pt\n"
        "  pfio stat --json data/train.zip/img/0001.jpg",
        lambda args: stat(args.url, as_json=args.json))
    stat_parser.add_argument("url", metavar="URL", help="the file or directory")
    stat_parser.add_argument("--json", action="store_true", help="print a JSON object")


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

    def write(url: str) -> None:
        with open_url(url, "rb") as f:
            shutil.copyfileobj(f, out, CHUNK_SIZE)

    return for_each("cat", urls, write)


def stat(url: str, as_json: bool = False) -> int:
    """Print the :class:`~pfio.FileStat` of ``url``: one ``field: value`` a line, or a JSON
    object with ``as_json``."""
    fs, name = locate(url)
    with fs:
        st = fs.stat(name)
    fields = stat_fields(st)
    if as_json:
        sys.stdout.write(json.dumps(fields, indent=2, sort_keys=False, default=_jsonable) + "\n")
        return 0
    for key, value in fields.items():
        if key == "mode":
            value = f"{_stat.filemode(st.mode)} ({oct(st.mode)})"
        elif key == "last_modified" and value is not None:
            value = f"{_format_time(value)} ({value})"
        elif key == "crc32" and isinstance(value, int):
            value = f"{value:08x}"
        sys.stdout.write(f"{key}: {value}\n")
    return 0


def _jsonable(value: Any) -> Any:
    """What JSON cannot hold as it is: bytes (a zip comment) as text, the rest as str."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)


def stat_fields(st: FileStat) -> dict[str, Any]:
    """The fields of ``st``: the common ones first (``filename``, ``size``, ``mode``,
    ``last_modified``, ``isdir``), then what its filesystem adds, whether kept on the object
    (``etag`` on S3) or computed by its class (``crc32`` of a zip member); a field that is
    another name of one already shown (a zip stat's ``CRC``) is left out."""
    common = ("filename", "size", "mode", "last_modified")
    fields: dict[str, Any] = {key: getattr(st, key) for key in common}
    fields["isdir"] = st.isdir()
    extra = vars(st)
    for key in sorted(extra):
        if key not in fields and not key.startswith("_"):
            fields[key] = extra[key]
    seen: list[property] = []
    for cls in type(st).__mro__:
        for key, member in vars(cls).items():
            if not isinstance(member, property) or key.startswith("_") or key in fields \
                    or member in seen:
                continue
            seen.append(member)
            try:
                fields[key] = getattr(st, key)
            except (AttributeError, LookupError, ValueError):
                continue  # not known for this entry
    return fields
