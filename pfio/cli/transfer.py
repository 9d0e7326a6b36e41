"""The commands that write: ``cp`` (any filesystem to any filesystem) and ``pack``."""

from __future__ import annotations

import posixpath
from typing import Any

from .._uri import URI, container_kind, is_relative_name, parse_uri
from ..api import from_url
from ..fs.base import FS
from ..fs.stat import FileStat, with_implied_directories
from .common import UsageError, copy_file, locate, progress


def cp(src: str, dst: str, recursive: bool = False, quiet: bool = False) -> int:
    """Copy the file (or, with ``recursive``, the directory) ``src`` to ``dst``.

    When ``dst`` is an existing directory the copy goes into it under the name of ``src``.
    Files are streamed; each appears at its destination only when it is complete.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        IsADirectoryError: ``src`` is a directory and ``recursive`` is false.
        ValueError: ``src`` lists a name that would land outside ``dst`` (see
            :func:`check_names`); nothing is copied then.
    """
    src_fs, src_name = locate(src)
    with src_fs:
        is_dir = src_fs.stat(src_name).isdir()
        if is_dir and not recursive:
            raise IsADirectoryError(f"{src} is a directory (use cp -r to copy it)")
        dst_fs, dst_name = locate(dst)
        with dst_fs:
            target = dst_name
            if dst_fs.isdir(dst_name):
                target = posixpath.join(dst_name, posixpath.basename(src_name))
            if is_dir:
                _copy_tree(src_fs.subfs(src_name), dst_fs, target, quiet, (src, dst))
            else:
                copy_file(src_fs, src_name, dst_fs, target)
    return 0


def _copy_tree(src: FS, dst: FS, target: str, quiet: bool, urls: tuple[str, str]) -> None:
    entries = _checked_tree(src, *urls)
    if target:
        dst.makedirs(target, exist_ok=True)
    for st in progress(entries, len(entries), "cp", quiet):
        path = posixpath.join(target, st.filename)
        if st.isdir():
            dst.makedirs(path, exist_ok=True)
        else:
            copy_file(src, st.filename, dst, path)


def _checked_tree(fs: FS, src: str, dst: str, leave_out: str | None = None) -> list[FileStat]:
    """Everything under the root of ``fs`` (but ``leave_out``), sorted (directories before
    what they hold), the directories its listing implies included, once
    :func:`check_names` has passed the names it lists."""
    listed = [st for st in fs.list("", recursive=True, detail=True) if st.filename != leave_out]
    check_names([st.filename for st in listed], src, dst)
    return sorted(with_implied_directories(listed), key=lambda st: st.filename)


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
    kind = container_kind(posixpath.basename(parse_uri(dst).path.rstrip("/")))
    if kind is None:
        raise UsageError(f"the archive name must end in .zip or .tar: {dst}")
    if compression is not None and kind != "zip":
        raise UsageError("--compression applies to zip archives only")
    with from_url(src) as src_fs:
        if not src_fs.isdir(""):
            raise NotADirectoryError(f"{src} is not a directory")
        inside = _relative_inside(parse_uri(dst), parse_uri(src))
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


def check_names(names: list[str], src: str, dst: str) -> None:
    """Refuse a recursive copy from ``src`` to ``dst`` (before anything is written) when a
    name listed under ``src`` is not a plain relative path (:func:`pfio._uri.is_relative_name`):
    joined to ``dst``, a leading ``/`` or a ``..`` component would land outside it, and an
    empty or ``.`` component would name another file than the one listed.

    pfio's own filesystems never list such names (archives normalise member names, S3 skips
    such keys with a warning); this guards the copy against any other filesystem.

    Raises:
        ValueError: naming ``src``, the first such name and how many there are.
    """
    bad = [name for name in names if not is_relative_name(name)]
    if bad:
        raise ValueError(f"{src}: refusing to copy to {dst}: {len(bad)} listed name(s) would "
                         f"land outside it or name another file, e.g. {bad[0]!r} (an empty, "
                         "'.' or '..' component, or a leading '/')")


def _relative_inside(path: URI, directory: URI) -> str | None:
    """The name of ``path`` relative to ``directory`` when it lies under it (so that an
    archive written into the directory it packs is not packed into itself)."""
    if (path.scheme, path.netloc) != (directory.scheme, directory.netloc):
        return None
    if path.scheme == "file":
        full, top = posixpath.abspath(path.path), posixpath.abspath(directory.path)
    else:
        full, top = posixpath.normpath("/" + path.path), posixpath.normpath("/" + directory.path)
    relative = posixpath.relpath(full, top)
    return None if relative.startswith("..") else relative
