"""The commands that write: ``cp`` and ``sync`` (any filesystem to any filesystem, through
:func:`pfio.copy` and :func:`pfio.sync`) and ``pack``."""

from __future__ import annotations

import posixpath
import sys
from typing import Any

from .._uri import container_kind, parse_uri
from ..api import from_url
from ..fs.base import FS
from ..fs.stat import FileStat, with_implied_directories
from ..fs.transfer import TransferError, check_names, copy, sync
from ..fs.transfer.plan import relative_inside
from .common import UsageError, copy_file, describe_error, locate, progress

__all__ = ["check_names", "cp", "pack", "sync_command"]


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
