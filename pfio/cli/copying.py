"""The commands that copy: ``cp`` and ``sync`` (any filesystem to any filesystem, through
:func:`pfio.copy` and :func:`pfio.sync`) and ``pack``: their command lines and what they do
beyond the library's functions (``cp``'s destination rule, the report of failed files,
``sync --dry-run``'s output, the archive ``pack`` writes)."""

from __future__ import annotations

import argparse
import posixpath
import sys
from typing import Any

from .._uri import container_kind, parse_uri
from ..api import from_url
from ..fs.base import FS
from ..fs.stat import FileStat, with_implied_directories
from ..transfer import COMPARES, TransferError, check_names, copy, sync
from ..transfer.plan import relative_inside
from .common import (
    UsageError,
    add_command,
    copy_file,
    describe_error,
    locate,
    positive_int,
    progress,
    refuse_existing,
)

__all__ = ["add_parsers", "archive_kind", "cp", "pack", "sync_command"]


def add_parsers(commands: Any) -> None:
    """Add ``cp``, ``sync`` and ``pack`` to the ``pfio`` command's ``commands``."""
    cp = add_command(
        commands, "cp", "copy files between any filesystems",
        "Copy SRC to DST; either may be on any filesystem. When DST is an existing "
        "directory, SRC is copied into it; a SRC ending with '/' copies what is in the "
        "directory, as rsync does. Files are copied by a pool of threads (server-side "
        "between buckets of one S3 endpoint) and appear at DST only when they are complete. "
        "A file at DST is replaced, as cp replaces it, unless -n ('pfio sync' copies only "
        "what changed).",
        "  pfio cp s3://bucket/model.pt ./model.pt\n"
        "  pfio cp -r data/ s3://bucket/data/",
        _cp)
    cp.add_argument("src", metavar="SRC", help="the file (or directory, with -r)")
    cp.add_argument("dst", metavar="DST", help="the destination file or directory")
    cp.add_argument("-r", "--recursive", action="store_true",
                    help="copy directories and everything in them")
    cp.add_argument("-n", "--no-clobber", action="store_true",
                    help="fail, copying nothing, when a destination file exists")
    sync = add_command(
        commands, "sync", "make a directory a copy of another",
        "Copy to DST every file under SRC that DST lacks or holds in another version "
        "(--compare), so that DST/a/b holds SRC/a/b; either may be on any filesystem, and "
        "DST is made when missing. Running it again copies nothing. With --delete, files "
        "under DST that SRC does not have are removed; --dry-run prints what would be "
        "copied and deleted ('copy NAME', 'delete NAME') and changes nothing.",
        "  pfio sync data/ s3://bucket/data/\n"
        "  pfio sync --delete --dry-run s3://bucket/run1/ checkpoints/run1/",
        _sync)
    sync.add_argument("src", metavar="SRC", help="the directory to copy from")
    sync.add_argument("dst", metavar="DST", help="the directory to bring up to date")
    sync.add_argument("--delete", action="store_true",
                      help="remove the files under DST that SRC does not have")
    sync.add_argument("-n", "--dry-run", action="store_true",
                      help="print what would be copied and removed; change nothing")
    sync.add_argument("--compare", choices=COMPARES, default="size_mtime",
                      help="what makes a file at DST out of date: size_mtime (the default: "
                           "another size, or older than SRC's), size, etag (S3's ETag, "
                           "else the MD5 of the bytes) or checksum (MD5 of the bytes)")
    pack = add_command(
        commands, "pack", "pack a directory into one .zip or .tar archive",
        "Write every file and directory under SRC into a new archive DST (its name ends in "
        ".zip or .tar), in sorted order, streaming: neither the archive nor a file is held "
        "in memory. One archive of many small files reads much faster than the files do, "
        "above all on object stores. An existing DST is replaced only with --force. A "
        "progress bar is shown when standard error is a terminal.",
        "  pfio pack images/ images.zip\n"
        "  pfio pack --compression stored s3://bucket/jpegs/ s3://bucket/jpegs.zip",
        _pack)
    pack.add_argument("src", metavar="SRC", help="the directory to pack")
    pack.add_argument("dst", metavar="DST", help="the archive to write: *.zip or *.tar")
    pack.add_argument("--compression", choices=["deflated", "stored", "bzip2", "lzma"],
                      help="zip member compression (default: deflated); 'stored' suits "
                           "files that are compressed already (JPEG, PNG)")
    pack.add_argument("-f", "--force", action="store_true",
                      help="replace an existing archive at DST")
    for parser in (cp, sync):
        parser.add_argument("-w", "--workers", type=positive_int, metavar="N",
                            help="files copied at once (default: 8 between local or mem:// "
                                 "files, else 32)")
    for parser in (cp, sync, pack):
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar" + (" and no summary" if parser is sync
                                                      else ""))


def _cp(args: argparse.Namespace) -> int:
    return cp(args.src, args.dst, recursive=args.recursive, quiet=args.quiet,
              no_clobber=args.no_clobber, workers=args.workers)


def _sync(args: argparse.Namespace) -> int:
    return sync_command(args.src, args.dst, delete=args.delete, dry_run=args.dry_run,
                        workers=args.workers, quiet=args.quiet, compare=args.compare)


def _pack(args: argparse.Namespace) -> int:
    archive_kind(args.dst, args.compression)  # a wrong name is a usage error first
    fs, name = locate(args.dst)
    with fs:
        refuse_existing(fs, name, args.dst, args.force)
    return pack(args.src, args.dst, quiet=args.quiet, compression=args.compression)


def cp(src: str, dst: str, recursive: bool = False, quiet: bool = False, *,
       no_clobber: bool = False, workers: int | None = None) -> int:
    """Copy the file (or, with ``recursive``, the directory) ``src`` to ``dst``.

    As POSIX ``cp``: when ``dst`` is an existing directory (or, for a file, ends with
    ``/``), the copy goes into it under the name of ``src``; files there are replaced.
    As ``rsync``, a ``src`` ending with ``/`` copies what is in the directory, never the
    directory itself: ``cp -r data/ backup`` puts ``data``'s files in ``backup`` however
    often it runs, where ``cp -r data backup`` makes ``backup`` the first time and
    ``backup/data`` the next. ``pfio sync`` copies only what changed.

    Files are copied by a thread pool (server-side between buckets of one S3 endpoint),
    each appearing at its destination only when it is complete.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        IsADirectoryError: ``src`` is a directory and ``recursive`` is false.
        FileExistsError: ``no_clobber`` and a destination file exists (nothing is copied).
        ValueError: ``src`` lists a name that would land outside ``dst`` (see
            :func:`check_names`); nothing is copied then.
        pfio.TransferError: some files failed (each is reported on standard error).
    """
    target = _cp_target(src, dst) if recursive else dst
    try:
        _reporting(copy, src, target, recursive=recursive, overwrite=not no_clobber,
                   workers=workers, progress=False if quiet else None)
    except IsADirectoryError as exc:
        if recursive or exc.filename != src:
            raise
        raise IsADirectoryError(f"{src} is a directory (use cp -r to copy it)") from None
    return 0


def sync_command(src: str, dst: str, *, delete: bool, dry_run: bool, workers: int | None,
                 quiet: bool, compare: str = "size_mtime") -> int:
    """``pfio sync SRC DST``: make the directory ``dst`` hold the files of ``src``, copying
    only the missing and changed ones (see :func:`pfio.sync`). With ``dry_run`` nothing
    changes: each file that would be copied (``copy NAME``) or deleted (``delete NAME``) is
    printed on standard output. A summary goes to standard error unless ``quiet``.

    Raises:
        pfio.TransferError: some files failed (each is reported on standard error first).
    """
    result = _reporting(sync, src, dst, delete=delete, workers=workers, dry_run=dry_run,
                        progress=False if quiet else None, compare=compare)
    if dry_run:
        sys.stdout.writelines([f"copy {name}\n" for name in sorted(result.copied)] +
                              [f"delete {name}\n" for name in sorted(result.deleted)])
    if not quiet:
        sys.stderr.write(f"pfio sync: {result}\n")
    return 0


def _reporting(transfer: Any, *args: Any, **kwargs: Any) -> Any:
    """``transfer(*args, **kwargs)``; when files fail, each is reported on standard error
    (``pfio: failed: NAME: why``) before the error goes up."""
    try:
        return transfer(*args, **kwargs)
    except TransferError as exc:
        for name, error in exc.errors:
            sys.stderr.write(f"pfio: failed: {name}: {describe_error(error)}\n")
        raise


def _cp_target(src: str, dst: str) -> str:
    """Where ``cp -r src dst`` copies to: ``dst/<name of src>`` when ``dst`` is an existing
    directory and ``src`` does not end with ``/`` (nor names ``.``, ``..`` or a bucket's
    root), else ``dst``."""
    name = posixpath.basename(parse_uri(src).path.rstrip("/"))
    if src.endswith("/") or name in ("", ".", ".."):
        return dst
    try:
        fs, path = locate(dst)
    except FileNotFoundError:  # not even its parent exists: made as it is named
        return dst
    with fs:
        if not fs.isdir(path):
            return dst
    return dst.rstrip("/") + "/" + name


def _checked_tree(fs: FS, src: str, dst: str, leave_out: str | None = None) -> list[FileStat]:
    """Everything under the root of ``fs`` (but ``leave_out``), sorted (directories before
    what they hold), the directories its listing implies included, once
    :func:`check_names` has passed the names it lists."""
    listed = [st for st in fs.list("", recursive=True, detail=True) if st.filename != leave_out]
    check_names([st.filename for st in listed], src, dst)
    return sorted(with_implied_directories(listed), key=lambda st: st.filename)


def archive_kind(dst: str, compression: str | None = None) -> str:
    """``"zip"`` or ``"tar"``: the kind of archive ``pfio pack`` writes at ``dst``.

    Raises:
        UsageError: ``dst`` does not end in ``.zip`` or ``.tar``, or ``compression`` is given
            for a tar archive.
    """
    kind = container_kind(posixpath.basename(parse_uri(dst).path.rstrip("/")))
    if kind is None:
        raise UsageError(f"the archive name must end in .zip or .tar: {dst}")
    if compression is not None and kind != "zip":
        raise UsageError("--compression applies to zip archives only")
    return kind


def pack(src: str, dst: str, quiet: bool = False, compression: str | None = None) -> int:
    """Write every file and directory under ``src`` into a new archive ``dst`` (``.zip`` or
    ``.tar``), in sorted order, streaming: neither the archive nor a member is held in
    memory. The archive appears only when it is complete.

    Raises:
        UsageError: ``dst`` does not end in ``.zip`` or ``.tar``, or ``compression`` is given
            for a tar archive.
        NotADirectoryError: ``src`` is not a directory.
        ValueError: ``src`` lists a name that would unpack outside the archive's directory
            (see :func:`check_names`); no archive is written then.
    """
    kind = archive_kind(dst, compression)
    with from_url(src) as src_fs:
        if not src_fs.isdir(""):
            raise NotADirectoryError(f"{src} is not a directory")
        inside = relative_inside(parse_uri(dst), parse_uri(src))
        entries = _checked_tree(src_fs, src, dst, leave_out=inside)
        dst_fs, dst_name = locate(dst)
        with dst_fs:
            options: dict[str, Any] = {} if compression is None else {"compression": compression}
            opener = dst_fs.open_zip if kind == "zip" else dst_fs.open_tar
            with opener(dst_name, "w", **options) as archive:
                for st in progress(entries, len(entries), "pack", quiet):
                    if st.isdir():
                        archive.mkdir(st.filename)
                    else:
                        copy_file(src_fs, st.filename, archive, st.filename, size=st.size)
    return 0
