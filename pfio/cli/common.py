"""What the commands share: defining a command, finding a URL's filesystem, output streams,
progress, running a command on many URLs, refusing to lose data, errors."""

from __future__ import annotations

import argparse
import errno
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, TypeVar

from .._uri import parse_uri, split_container_path
from ..fs import resolver
from ..fs.base import FS
from ..trace.redact import redact

#: bytes moved per read/write when copying (a large block keeps remote reads few)
CHUNK_SIZE = 1 << 20

#: the width the description of a command's help is wrapped to
HELP_WIDTH = 88

#: the names under which commands keep the URLs they are given (see :func:`urls_of`)
URL_ARGUMENTS = ("url", "urls", "src", "dst")

T = TypeVar("T")

Handler = Callable[[argparse.Namespace], int]

if TYPE_CHECKING:
    #: what ``ArgumentParser.add_subparsers`` returns (a generic class only to typeshed)
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


class UsageError(Exception):
    """A command line that parses but does not make sense (exit status 2)."""


def add_command(subparsers: Subparsers, name: str, summary: str, description: str,
                examples: str, handler: Handler, **options: Any) -> argparse.ArgumentParser:
    """Add the command ``name`` to the ``pfio`` command's ``subparsers``: ``summary`` in
    ``pfio --help``; ``description`` and ``examples`` (lines starting ``  pfio name``) in
    ``pfio name --help``, the description wrapped. ``handler(args)`` runs it and returns
    the exit status; ``options`` go to :class:`argparse.ArgumentParser`."""
    parser = subparsers.add_parser(
        name, help=summary, description=textwrap.fill(description, HELP_WIDTH),
        epilog="examples:\n" + examples,
        formatter_class=argparse.RawDescriptionHelpFormatter, **options)
    parser.set_defaults(handler=handler)
    return parser


def locate(url: str) -> tuple[FS, str]:
    """The filesystem holding ``url`` and the name in it (``""`` when ``url`` is the root of
    its filesystem); containers along the way are opened. The caller closes the filesystem
    (see :func:`pfio.fs.resolver.locate`)."""
    return resolver.locate(url, shared=False)


def locate_top(url: str) -> tuple[FS, str]:
    """The outermost filesystem holding ``url`` and the whole path in it: the root of the
    bucket, store or name node (the whole local filesystem for a local path, which is
    then named as given), or, when the URL passes through archives, the innermost one.

    Unlike :func:`locate`, the directories on the way need not exist (``mkdir -p``), and
    two URLs with the same :func:`top` are on the same filesystem (a rename can move
    between them). The caller closes the filesystem.
    """
    uri = parse_uri(url)
    if split_container_path(uri.path)[1]:
        return locate(url)
    fs, _ = resolver.open_directory(uri.with_path(""), shared=False)
    path = uri.path if uri.scheme == "file" else uri.path.strip("/")
    return fs, path.rstrip("/") or path


def top(url: str) -> tuple[str, str] | None:
    """What :func:`locate_top` roots ``url`` at, as ``(scheme, netloc)``; None when the URL
    passes through an archive."""
    uri = parse_uri(url)
    if split_container_path(uri.path)[1]:
        return None
    return uri.scheme, uri.netloc


def is_root(name: str) -> bool:
    """True when the name :func:`locate_top` gives names the root of its filesystem, or
    ends in ``.`` or ``..`` (which ``rm`` and ``mv`` refuse, as coreutils do)."""
    last = name.rstrip("/").rpartition("/")[2]
    return last in ("", ".", "..")


def refuse_existing(fs: FS, name: str, url: str, force: bool) -> None:
    """Refuse to write over ``name`` of ``fs`` (shown as ``url``) unless ``force``.

    Raises:
        FileExistsError: it exists and ``force`` is false.
    """
    if not force and fs.exists(name):
        raise FileExistsError(errno.EEXIST, "already exists (use --force to replace it)",
                              url)


def join_url(url: str, name: str) -> str:
    """``url`` with the relative ``name`` appended (``""`` gives ``url`` itself)."""
    return url.rstrip("/") + "/" + name if name else url


def urls_of(args: argparse.Namespace) -> list[str]:
    """The URLs a parsed command line names (the arguments of :data:`URL_ARGUMENTS`)."""
    found: list[str] = []
    for key in URL_ARGUMENTS:
        value = getattr(args, key, None)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
    return found


def warn_in_memory(command: str, urls: Iterable[str]) -> None:
    """Say on standard error, once, that ``mem://`` stores live in this process only: a
    ``pfio`` command starts with them empty and what it writes there is gone when it
    exits."""
    for url in urls:
        try:
            scheme = parse_uri(url).scheme
        except (TypeError, ValueError):
            continue  # the command says what is wrong with it
        if scheme == "mem":
            sys.stderr.write(
                f"pfio {command}: warning: {redact(url)}: mem:// stores live in the memory of "
                "one process: this command starts with them empty and what it writes there "
                "is gone when it exits\n")
            return


def for_each(command: str, urls: Iterable[str], action: Callable[[str], object]) -> int:
    """Run ``action(url)`` for each URL; a URL it fails on is reported on standard error
    (one line) and the others are still done. Returns 0, or 1 when any failed."""
    status = 0
    for url in urls:
        try:
            action(url)
        except BrokenPipeError:
            raise  # the reader went away: stop (see pfio.cli.main)
        except (OSError, ValueError) as e:
            flush_stdout()
            sys.stderr.write(f"pfio {command}: {describe_error(e)}\n")
            status = 1
    flush_stdout()
    return status


def copy_file(src: FS, src_path: str, dst: FS, dst_path: str, **open_options: Any) -> None:
    """Stream the file ``src_path`` of ``src`` to ``dst_path`` on ``dst``, a chunk at a time.
    The destination appears only when the copy is complete."""
    with src.open(src_path, "rb") as reader, dst.open(dst_path, "wb", **open_options) as writer:
        shutil.copyfileobj(reader, writer, CHUNK_SIZE)


def binary_stdout() -> IO[bytes]:
    """Standard output as a binary stream (text written so far is flushed first)."""
    sys.stdout.flush()
    stdout: Any = sys.stdout  # a TextIO with a buffer, or a binary stream put in its place
    binary: IO[bytes] = getattr(stdout, "buffer", stdout)
    return binary


def flush_stdout() -> None:
    """Flush standard output, text and binary (before a message on standard error)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.flush()


def progress(items: Iterable[T], total: int, description: str, quiet: bool) -> Iterator[T]:
    """``items``, with a tqdm progress bar on standard error when it is a terminal (and tqdm
    is installed) unless ``quiet``."""
    if quiet or not sys.stderr.isatty():
        return iter(items)
    try:
        from tqdm import tqdm
    except ImportError:
        return iter(items)
    return iter(tqdm(items, total=total, desc=description, unit="file", file=sys.stderr))


def human_size(size: int) -> str:
    """``size`` bytes the way ``du -h`` shows them: ``512``, ``1.5K``, ``20M``, ``3.0G``
    (powers of 1024, rounded)."""
    if size < 1024:
        return str(size)
    value = size / 1024
    unit = "K"
    for bigger in ("M", "G", "T", "P"):
        if value < 1024:
            break
        value /= 1024
        unit = bigger
    return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: an integer of at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def describe_error(exc: BaseException) -> str:
    """A one-line description of ``exc`` for the user, without credentials (the URLs it
    names may carry a ``user:password@`` or a presigned query string)."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None \
            and type(exc).__str__ is OSError.__str__:
        return redact(f"{exc.strerror}: {exc.filename}")
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, KeyError) and not isinstance(exc, OSError) and exc.args:
        text = str(exc.args[0])
    return redact(" ".join(text.split()))
