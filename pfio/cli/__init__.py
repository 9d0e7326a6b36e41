"""The ``pfio`` command (also ``python -m pfio``): look at and move files on any filesystem.

Every argument that names a file is a URL as :func:`pfio.from_url` takes it: a local path,
``file://``, ``s3://``, ``hdfs://``, ``mem://``, a registered or INI custom scheme, and paths
through archives (``data/train.zip/img/0001.jpg``).

Exit status: 0 on success, 1 when a command fails (a one-line message on standard error),
2 for a command line that does not make sense.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from .. import __version__
from ..demo.run import add_demo_parser
from ..trace.redact import RedactingFilter
from .common import UsageError, describe_error
from .trace import add_trace_parser

_DESCRIPTION = """\
pfio: look at and move files on any filesystem pfio serves.

A URL is a local path (data/train, /mnt/x), file:///abs/path, s3://bucket/key,
hdfs://nameservice/path, mem://store/path, or any scheme registered with pfio or named in
the INI file ($PFIO_CONFIG_PATH, else $XDG_CONFIG_HOME/pfio.ini). A path component ending
in .zip, .tar, .tar.gz or .tgz is entered as an archive: data/train.zip/img/0001.jpg.
"""

_EPILOG = """\
examples:
  pfio ls -l s3://bucket/datasets/
  pfio cat data/train.zip/labels.txt | head
  pfio cp -r s3://bucket/run1/ checkpoints/
  pfio pack images/ s3://bucket/images.zip
  pfio demo --epochs 3 --workers 4

'pfio COMMAND --help' explains each command."""

_COMMANDS = {
    "ls": (
        "list a directory",
        "List the directory at URL, sorted, one entry a line. Directory names end with '/'. "
        "A URL naming a file lists that file.",
        "  pfio ls s3://bucket/prefix/\n"
        "  pfio ls -lR data/train.zip",
    ),
    "cat": (
        "write files to standard output",
        "Write the bytes of each file to standard output, one after the other. A file that "
        "cannot be read is reported and skipped (the exit status is then 1).",
        "  pfio cat s3://bucket/config.yaml\n"
        "  pfio cat data/train.zip/a.txt data/train.zip/b.txt > ab.txt",
    ),
    "stat": (
        "show the status of a file or directory",
        "Print the fields of the FileStat of URL (filename, size, mode, last_modified, "
        "isdir, and what the filesystem adds, e.g. etag on S3 or crc32 in a zip).",
        "  pfio stat s3://bucket/model.pt\n"
        "  pfio stat --json data/train.zip/img/0001.jpg",
    ),
    "cp": (
        "copy files between any filesystems",
        "Copy SRC to DST; either may be on any filesystem. When DST is an existing "
        "directory, SRC is copied into it. Files are streamed and appear at DST only when "
        "they are complete.",
        "  pfio cp s3://bucket/model.pt ./model.pt\n"
        "  pfio cp -r data/ s3://bucket/data/",
    ),
    "pack": (
        "pack a directory into one .zip or .tar archive",
        "Write every file and directory under SRC into a new archive DST (its name ends in "
        ".zip or .tar), in sorted order, streaming: neither the archive nor a file is held in "
        "memory. One archive of many small files reads much faster than the files do, "
        "above all on object stores. A progress bar is shown when standard error is a "
        "terminal.",
        "  pfio pack images/ images.zip\n"
        "  pfio pack --compression stored s3://bucket/jpegs/ s3://bucket/jpegs.zip",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pfio`` command."""
    parser = argparse.ArgumentParser(
        prog="pfio", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pfio {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log what pfio does (to standard error); -vv logs what the "
                             "libraries below it do too (botocore, urllib3, ...). "
                             "Credentials and signatures are redacted")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub = {}
    for name, (summary, description, examples) in _COMMANDS.items():
        sub[name] = commands.add_parser(
            name, help=summary, description=description, epilog="examples:\n" + examples,
            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_trace_parser(commands)  # pfio trace summary|merge (pfio/cli/trace.py)
    add_demo_parser(commands)  # pfio demo (pfio/demo/run.py)

    sub["ls"].add_argument("url", nargs="?", default=".", metavar="URL",
                           help="the directory to list (default: the working directory)")
    sub["ls"].add_argument("-l", dest="long", action="store_true",
                           help="long format: mode, size, modification time, name")
    sub["ls"].add_argument("-R", dest="recursive", action="store_true",
                           help="list everything below URL, with paths relative to it")
    sub["cat"].add_argument("urls", nargs="+", metavar="URL", help="the files to write")
    sub["stat"].add_argument("url", metavar="URL", help="the file or directory")
    sub["stat"].add_argument("--json", action="store_true", help="print a JSON object")
    sub["cp"].add_argument("src", metavar="SRC", help="the file (or directory, with -r)")
    sub["cp"].add_argument("dst", metavar="DST", help="the destination file or directory")
    sub["cp"].add_argument("-r", "--recursive", action="store_true",
                           help="copy directories and everything in them")
    sub["pack"].add_argument("src", metavar="SRC", help="the directory to pack")
    sub["pack"].add_argument("dst", metavar="DST", help="the archive to write: *.zip or *.tar")
    sub["pack"].add_argument("--compression", choices=["deflated", "stored", "bzip2", "lzma"],
                             help="zip member compression (default: deflated); 'stored' "
                                  "suits files that are compressed already (JPEG, PNG)")
    for name in ("cp", "pack"):
        sub[name].add_argument("-q", "--quiet", action="store_true",
                               help="no progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``pfio`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit
    status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors
        return e.code if isinstance(e.code, int) else 0 if e.code is None else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    _configure_logging(args.verbose)
    try:
        return _run(args)
    except UsageError as e:
        sys.stderr.write(f"pfio {args.command}: error: {describe_error(e)}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("pfio: interrupted\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except Exception as e:  # noqa: BLE001 - every failure becomes one line, not a traceback
        logging.getLogger(__name__).debug("pfio %s failed", args.command, exc_info=True)
        sys.stderr.write(f"pfio {args.command}: {describe_error(e)}\n")
        return 1


def _run(args: argparse.Namespace) -> int:
    from . import show, transfer

    if args.command in ("trace", "demo"):
        return args.handler(args)
    if args.command == "ls":
        return show.ls(args.url, long=args.long, recursive=args.recursive)
    if args.command == "cat":
        return show.cat(args.urls)
    if args.command == "stat":
        return show.stat(args.url, as_json=args.json)
    if args.command == "cp":
        return transfer.cp(args.src, args.dst, recursive=args.recursive, quiet=args.quiet)
    return transfer.pack(args.src, args.dst, quiet=args.quiet, compression=args.compression)


def _configure_logging(verbosity: int) -> None:
    """Log to standard error: warnings; with ``-v`` pfio's debug messages too, with ``-vv``
    every library's. Every line goes through :class:`~pfio.trace.redact.RedactingFilter`, so
    no access key id, session token, signature or presigned query string is printed."""
    logging.basicConfig(level=logging.DEBUG if verbosity > 1 else logging.WARNING,
                        format="pfio: %(levelname)s: %(message)s")
    if verbosity:
        logging.getLogger("pfio").setLevel(logging.DEBUG)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def _silence_stdout() -> None:
    """After the reader of a pipe went away: send what is left to /dev/null, so that
    flushing at exit does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


__all__ = ["build_parser", "main"]
