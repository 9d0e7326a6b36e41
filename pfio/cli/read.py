"""The commands that read files: ``head``, ``tail``, ``md5sum`` (any checksum) and ``du``."""

from __future__ import annotations

import argparse
import hashlib
import io
import posixpath
import sys
from collections.abc import Callable
from typing import IO, Any

from ..api import from_url, open_url
from ..checksums import crc32
from ..fs.stat import FileStat, with_implied_directories
from .common import (
    CHUNK_SIZE,
    add_command,
    binary_stdout,
    for_each,
    human_size,
    join_url,
    locate,
    non_negative_int,
)

#: bytes read at a time from the end of a file while ``tail`` looks for line starts (and
#: what the request opening an S3 object for ``tail`` reads: its last bytes)
TAIL_BLOCK = 64 << 10
#: what the request opening an S3 object for ``head`` reads (the reader reads on as needed)
HEAD_FETCH = 64 << 10

ALGORITHMS = ("md5", "sha1", "sha256", "crc32", "crc32c")


def add_parsers(commands: Any) -> None:
    """Add ``head``, ``tail``, ``md5sum`` and ``du`` to the ``pfio`` command's
    ``commands``."""
    for name, end, examples in (
            ("head", "first", "  pfio head s3://bucket/train.csv\n"
                              "  pfio head -c 64 data/train.zip/img/0001.jpg | xxd"),
            ("tail", "last", "  pfio tail -n 20 s3://bucket/logs/run1.log\n"
                             "  pfio tail -c 22 s3://bucket/data.zip | xxd")):
        parser = add_command(
            commands, name, f"print the {end} lines of files",
            f"Write the {end} 10 lines (or -n N lines, or -c N bytes) of each file to "
            "standard output; with more than one file each is headed by '==> URL <=='."
            + (" Only the end of the file is read (a compressed archive member is "
               "decompressed whole)." if name == "tail" else
               " Only as much of the file as that is read."),
            examples, _head_command if name == "head" else _tail_command)
        parser.add_argument("urls", nargs="+", metavar="URL", help="the files to read")
        count = parser.add_mutually_exclusive_group()
        count.add_argument("-n", "--lines", type=non_negative_int, default=10, metavar="N",
                           help=f"the {end} N lines (default: 10)")
        count.add_argument("-c", "--bytes", dest="nbytes", type=non_negative_int,
                           metavar="N", help=f"the {end} N bytes")
    sums = add_command(
        commands, "md5sum", "print checksums of files",
        "Print the checksum of each file and its URL, as md5sum does ('DIGEST  URL'). "
        "--algorithm chooses md5 (the default), sha1 or sha256 (hexadecimal), crc32 or "
        "crc32c (8 hexadecimal digits, big-endian; crc32c needs the awscrt package). The "
        "file is streamed; a directory is an error.",
        "  pfio md5sum s3://bucket/model.pt\n"
        "  pfio md5sum --algorithm sha256 data/train.zip data/train.zip/labels.txt",
        lambda args: md5sum(args.urls, args.algorithm))
    sums.add_argument("urls", nargs="+", metavar="URL", help="the files to checksum")
    sums.add_argument("-a", "--algorithm", choices=ALGORITHMS, default="md5",
                      help="the checksum (default: md5)")
    du_parser = add_command(
        commands, "du", "show how many bytes directories hold",
        "Print the bytes held under each directory below URL, then URL's total ('SIZE\\tURL', "
        "deepest first, as du does). Sizes are what reading the files gives (du "
        "--apparent-size -b): inside an archive the members' uncompressed sizes; a URL "
        "naming an archive counts its members, as 'pfio ls' lists them. One recursive "
        "listing per URL (no file is opened).",
        "  pfio du -sh s3://bucket/datasets/\n"
        "  pfio du data/train.zip",
        lambda args: du(args.urls, summarize=args.summarize, human=args.human),
        conflict_handler="resolve")  # -h is --human-readable, as in du; --help stays
    du_parser.add_argument("urls", nargs="+", metavar="URL",
                           help="the directories (or files) to measure")
    du_parser.add_argument("-s", "--summarize", action="store_true",
                           help="print the total of each URL only")
    du_parser.add_argument("-h", "--human-readable", dest="human", action="store_true",
                           help="sizes as 1.5K, 20M, 3.0G (powers of 1024)")


def _head_command(args: argparse.Namespace) -> int:
    return head(args.urls, lines=args.lines, nbytes=args.nbytes)


def _tail_command(args: argparse.Namespace) -> int:
    return tail(args.urls, lines=args.lines, nbytes=args.nbytes)


def head(urls: list[str], lines: int = 10, nbytes: int | None = None) -> int:
    """Write the first ``lines`` lines (or ``nbytes`` bytes) of each file to standard
    output, reading little more of it than that. Returns 1 when a file could not be
    read."""
    out = binary_stdout()

    def first(f: IO[bytes]) -> None:
        if nbytes is not None:
            _copy_at_most(f, out, nbytes)
            return
        for _ in range(lines):
            line = f.readline()
            if not line:
                return
            out.write(line)

    return for_each("head", urls, _each_file(urls, out, first, HEAD_FETCH))


def tail(urls: list[str], lines: int = 10, nbytes: int | None = None) -> int:
    """Write the last ``lines`` lines (or ``nbytes`` bytes) of each file to standard
    output, reading the file from its end, a block at a time, until enough lines are found
    (every pfio reader can seek). Returns 1 when a file could not be read."""
    out = binary_stdout()

    def last(f: IO[bytes]) -> None:
        if nbytes is not None:
            f.seek(max(0, f.seek(0, io.SEEK_END) - nbytes))
            _copy_at_most(f, out, nbytes)
        else:
            out.write(_last_lines(f, lines))

    return for_each("tail", urls, _each_file(urls, out, last, -TAIL_BLOCK))


def _each_file(urls: list[str], out: IO[bytes], action: Callable[[IO[bytes]], None],
               first_fetch: int) -> Callable[[str], None]:
    """Open a URL and run ``action`` on it, after a ``==> URL <==`` heading when there is
    more than one URL (a blank line before each heading but the first). ``first_fetch``
    is the S3 opening hint (the first bytes, or with a negative value the last ones);
    other filesystems ignore it."""
    headings = len(urls) > 1
    done = [0]

    def run(url: str) -> None:
        with open_url(url, "rb", first_fetch=first_fetch) as f:
            if headings:
                out.write(("\n" if done[0] else "").encode() + f"==> {url} <==\n".encode())
            done[0] += 1
            action(f)

    return run


def _copy_at_most(f: IO[bytes], out: IO[bytes], n: int) -> None:
    while n > 0:
        chunk = f.read(min(n, CHUNK_SIZE))
        if not chunk:
            return
        out.write(chunk)
        n -= len(chunk)


def _last_lines(f: IO[bytes], lines: int) -> bytes:
    """The last ``lines`` lines of a seekable file, read backwards a block at a time until
    ``lines`` line starts are found (a final newline ends the last line, it starts none)."""
    if lines == 0:
        return b""
    pos = f.seek(0, io.SEEK_END)
    chunks: list[bytes] = []
    wanted = lines  # newlines still to find before the first line shown
    while pos > 0 and wanted > 0:
        start = max(0, pos - TAIL_BLOCK)
        f.seek(start)
        chunk = f.read(pos - start)
        if not chunks and chunk.endswith(b"\n"):
            wanted += 1
        chunks.append(chunk)
        wanted -= chunk.count(b"\n")
        pos = start
    data = b"".join(reversed(chunks))
    body, final = (data[:-1], b"\n") if data.endswith(b"\n") else (data, b"")
    return b"\n".join(body.split(b"\n")[-lines:]) + final


def md5sum(urls: list[str], algorithm: str = "md5") -> int:
    """Print ``DIGEST  URL`` for each file, its bytes streamed through ``algorithm`` (one of
    :data:`ALGORITHMS`). Returns 1 when a file could not be read."""
    digest_of = _digester(algorithm)

    def show(url: str) -> None:
        with open_url(url, "rb") as f:
            digest = digest_of(f)
        sys.stdout.write(f"{digest}  {url}\n")

    return for_each("md5sum", urls, show)


def _digester(algorithm: str) -> Callable[[IO[bytes]], str]:
    """A function reading a file through and returning its ``algorithm`` checksum as hex.

    Raises:
        ValueError: an unknown algorithm, or crc32c without a package that computes it.
    """
    if algorithm in ("md5", "sha1", "sha256"):
        def hashed(f: IO[bytes]) -> str:
            h = hashlib.new(algorithm, usedforsecurity=False)
            while chunk := f.read(CHUNK_SIZE):
                h.update(chunk)
            return h.hexdigest()
        return hashed
    update: Callable[[bytes, int], int]
    if algorithm == "crc32":
        update = crc32
    elif algorithm == "crc32c":
        try:
            from awscrt.checksums import crc32c
        except ImportError:
            raise ValueError("--algorithm crc32c needs the awscrt package "
                             "(pip install awscrt)") from None
        update = crc32c
    else:
        raise ValueError(f"unknown checksum algorithm {algorithm!r}: one of {ALGORITHMS}")

    def checked(f: IO[bytes]) -> str:
        value = 0
        while chunk := f.read(CHUNK_SIZE):
            value = update(chunk, value)
        return f"{value:08x}"
    return checked


def du(urls: list[str], summarize: bool = False, human: bool = False) -> int:
    """Print ``SIZE<TAB>URL`` for every directory below each URL (deepest first), then the
    URL's total; with ``summarize`` the totals only. A URL naming a file prints its size.
    Returns 1 when a URL could not be listed."""
    def show(url: str) -> None:
        for name, size in _totals(url, summarize):
            shown = human_size(size) if human else str(size)
            sys.stdout.write(f"{shown}\t{join_url(url, name)}\n")

    return for_each("du", urls, show)


def _totals(url: str, summarize: bool) -> list[tuple[str, int]]:
    """``(name relative to url, bytes under it)`` of the directories below ``url`` (none
    with ``summarize``), deepest first, then ``("", total)``."""
    try:
        with from_url(url) as fs:
            entries = with_implied_directories(fs.list("", recursive=True, detail=True))
    except NotADirectoryError:
        fs, name = locate(url)
        with fs:
            return [("", fs.stat(name).size)]
    totals = {_dirname(st): 0 for st in entries if st.isdir()}
    total = 0
    for st in entries:
        if st.isdir():
            continue
        total += st.size
        parent = posixpath.dirname(_dirname(st))
        while parent:
            totals[parent] += st.size
            parent = posixpath.dirname(parent)
    if summarize:
        return [("", total)]
    # "a/b" before "a" (children first), as du prints them
    deepest_first = sorted(totals, key=lambda name: name + "\uffff")
    return [(name, totals[name]) for name in deepest_first] + [("", total)]


def _dirname(st: FileStat) -> str:
    return st.filename.rstrip("/")
