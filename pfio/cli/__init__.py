"""The ``pfio`` command (also ``python -m pfio``): look at and move files on any filesystem.

Every argument that names a file is a URL as :func:`pfio.from_url` takes it: a local path,
``file://``, ``s3://``, ``hdfs://``, ``mem://``, a registered or INI custom scheme, and paths
through archives (``data/train.zip/img/0001.jpg``).

Exit status: 0 on success, 1 when a command fails (a one-line message on standard error),
2 for a command line that does not make sense.

This module parses the command line and dispatches; each command lives in a module of its
own kind, which adds its parser (``add_parsers``) with the function that runs it:
:mod:`~pfio.cli.show` (ls, cat, stat), :mod:`~pfio.cli.read` (head, tail, md5sum, du),
:mod:`~pfio.cli.copying` (cp, sync, pack),
:mod:`~pfio.cli.files` (rm, mv, mkdir, touch), :mod:`~pfio.cli.bucket` (mb),
:mod:`~pfio.cli.uploads` (uploads ls|abort),
:mod:`~pfio.cli.trace` and :mod:`pfio.demo.run`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from .. import __version__
from ..demo.run import add_demo_parser
from ..trace.redact import RedactingFilter
from . import bucket, copying, files, read, show, uploads
from .common import UsageError, describe_error, urls_of, warn_in_memory
from .trace import add_trace_parser

_DESCRIPTION = """\
pfio: look at and move files on any filesystem pfio serves.

A URL is a local path (data/train, /mnt/x), file:///abs/path, s3://bucket/key,
hdfs://nameservice/path, mem://store/path, or any scheme registered with pfio or named in
the INI file ($PFIO_CONFIG_PATH, else $XDG_CONFIG_HOME/pfio.ini). A path component ending
in .zip, .tar, .tar.gz or .tgz is entered as an archive: data/train.zip/img/0001.jpg.
mem:// stores live in one process: a pfio command starts with them empty.
"""

_EPILOG = """\
examples:
  pfio ls -l s3://bucket/datasets/
  pfio cat data/train.zip/labels.txt | head
  pfio cp -r s3://bucket/run1/ checkpoints/
  pfio sync --delete data/ s3://bucket/data/
  pfio pack images/ s3://bucket/images.zip
  pfio du -sh s3://bucket/datasets/
  pfio demo --epochs 3 --workers 4

'pfio COMMAND --help' explains each command."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pfio`` command; the parsed arguments of a command carry
    ``handler``, the function that runs it."""
    parser = argparse.ArgumentParser(
        prog="pfio", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pfio {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log what pfio does (to standard error); -vv logs what the "
                             "libraries below it do too (botocore, urllib3, ...). "
                             "Credentials and signatures are redacted")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (show, read, copying, files, bucket, uploads):
        module.add_parsers(commands)
    add_trace_parser(commands)  # pfio trace summary|merge (pfio/cli/trace.py)
    add_demo_parser(commands)  # pfio demo (pfio/demo/run.py)
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
    warn_in_memory(args.command, urls_of(args))
    try:
        status: int = args.handler(args)
        return status
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
