"""The commands that change names: ``rm``, ``mv``, ``mkdir`` and ``touch``.

Each URL is taken from the top of its filesystem (:func:`pfio.cli.common.locate_top`), so
``mkdir -p`` needs no existing parent and ``mv`` within one bucket, store or local
filesystem is a rename there (on S3: server-side copies, then deletes); between
filesystems ``mv`` copies, then removes the source once every file has arrived.
"""

from __future__ import annotations

import argparse
import errno
import os
import posixpath
from typing import Any

from ..fs.local import Local
from . import copying
from .common import (
    add_command,
    describe_error,
    for_each,
    is_root,
    join_url,
    locate_top,
    top,
)

_MV_HELP = (
    "Move SRC to DST, on one filesystem or between two. When DST is an existing directory, "
    "SRC moves into it. An existing file at the target is replaced only with --force (data "
    "would be lost otherwise); a directory is never replaced. Within one bucket, mem:// "
    "store or local filesystem this is a rename (on S3 a server-side copy and a delete per "
    "object); between filesystems, or through an archive, SRC is copied (each file "
    "appearing complete) and removed once the copy is done.")


def add_parsers(commands: Any) -> None:
    """Add ``rm``, ``mv``, ``mkdir`` and ``touch`` to the ``pfio`` command's
    ``commands``."""
    rm_parser = add_command(
        commands, "rm", "remove files and directories",
        "Remove each URL. A directory (an S3 prefix) needs -r, which removes everything "
        "under it (on S3 in batches of 1000 keys). The root of a filesystem (s3://bucket/, "
        "mem://store/) and paths ending in '.' or '..' are refused. A URL that cannot be "
        "removed is reported and the others are still removed.",
        "  pfio rm s3://bucket/tmp/model.pt\n"
        "  pfio rm -r s3://bucket/runs/old/ scratch/",
        lambda args: rm(args.urls, recursive=args.recursive, force=args.force))
    rm_parser.add_argument("urls", nargs="+", metavar="URL", help="what to remove")
    rm_parser.add_argument("-r", "-R", "--recursive", action="store_true",
                           help="remove directories and everything in them")
    rm_parser.add_argument("-f", "--force", action="store_true",
                           help="say nothing of URLs that do not exist")
    mv_parser = add_command(
        commands, "mv", "move or rename a file or directory", _MV_HELP,
        "  pfio mv s3://bucket/tmp/model.pt s3://bucket/models/\n"
        "  pfio mv -f results.csv s3://bucket/results.csv",
        _mv_command)
    mv_parser.add_argument("src", metavar="SRC", help="the file or directory to move")
    mv_parser.add_argument("dst", metavar="DST", help="the new name, or a directory")
    mv_parser.add_argument("-f", "--force", action="store_true",
                           help="replace a file at the target")
    mv_parser.add_argument("-q", "--quiet", action="store_true",
                           help="no progress bar (when copying between filesystems)")
    mkdir_parser = add_command(
        commands, "mkdir", "make directories",
        "Make each directory; its parent must exist, unless -p, which also makes the "
        "missing parents and accepts a directory that exists. On S3 this does nothing: a "
        "prefix exists as soon as an object is under it.",
        "  pfio mkdir -p mem://scratch/a/b\n"
        "  pfio mkdir out/run1",
        lambda args: mkdir(args.urls, parents=args.parents))
    mkdir_parser.add_argument("urls", nargs="+", metavar="URL", help="the directories")
    mkdir_parser.add_argument("-p", "--parents", action="store_true",
                              help="make missing parents; no error if the directory exists")
    touch_parser = add_command(
        commands, "touch", "make empty files",
        "Make each file that does not exist, empty (its parent must exist on a local "
        "filesystem). An existing local file gets the current time as its modification "
        "time; an existing object elsewhere is left as it is (S3 cannot change an object's "
        "time without writing it again).",
        "  pfio touch s3://bucket/run1/_SUCCESS\n"
        "  pfio touch out/done",
        lambda args: touch(args.urls))
    touch_parser.add_argument("urls", nargs="+", metavar="URL", help="the files")


def _mv_command(args: argparse.Namespace) -> int:
    return mv(args.src, args.dst, force=args.force, quiet=args.quiet)


def rm(urls: list[str], recursive: bool = False, force: bool = False) -> int:
    """Remove each URL (a directory only with ``recursive``); with ``force`` a URL that
    does not exist is no error. Returns 1 when any could not be removed."""
    def remove(url: str) -> None:
        fs, name = locate_top(url)
        with fs:
            if is_root(name):
                raise ValueError(f"refusing to remove {url}: it is the root of its "
                                 "filesystem, '.' or '..'")
            try:
                is_dir = fs.stat(name).isdir()
            except FileNotFoundError:
                if force:
                    return
                raise
            if is_dir and not recursive:
                raise IsADirectoryError(errno.EISDIR, "is a directory (use rm -r)", url)
            fs.remove(name, recursive=is_dir)

    return for_each("rm", urls, remove)


def mv(src: str, dst: str, force: bool = False, quiet: bool = False) -> int:
    """Move ``src`` to ``dst`` (into it when it is an existing directory); see the help of
    ``pfio mv``.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        FileExistsError: the target exists and ``force`` is false, or is a directory, or
            ``src`` is a directory and the target is a file.
        ValueError: ``src`` is the root of its filesystem, or would move onto or into
            itself.
    """
    src_fs, src_name = locate_top(src)
    with src_fs:
        if is_root(src_name):
            raise ValueError(f"refusing to move {src}: it is the root of its filesystem, "
                             "'.' or '..'")
        is_dir = src_fs.stat(src_name).isdir()
        dst_fs, dst_name = locate_top(dst)
        with dst_fs:
            target, target_url = dst_name, dst
            if dst_fs.isdir(dst_name):
                base = posixpath.basename(src_name.rstrip("/"))
                target = posixpath.join(dst_name, base) if dst_name else base
                target_url = join_url(dst, base)
            same_top = top(src) is not None and top(src) == top(dst)
            if same_top and _inside(target, src_name):
                raise ValueError(f"cannot move {src} onto or into itself ({target_url})")
            if dst_fs.exists(target):
                if dst_fs.isdir(target) or is_dir:
                    raise FileExistsError(errno.EEXIST, "already exists (a directory is "
                                          "never replaced)", target_url)
                if not force:
                    raise FileExistsError(errno.EEXIST, "already exists (use --force to "
                                          "replace it)", target_url)
            if same_top and _renamed(src_fs, src_name, target):
                return 0
    copying.cp(src, target_url, recursive=is_dir, quiet=quiet)
    src_fs, src_name = locate_top(src)
    with src_fs:
        try:
            src_fs.remove(src_name, recursive=is_dir)
        except OSError as e:
            raise OSError(e.errno, f"copied to {target_url}, but could not remove the "
                          f"source ({describe_error(e)})", src) from e
    return 0


def _inside(path: str, directory: str) -> bool:
    path, directory = posixpath.normpath(path), posixpath.normpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _renamed(fs: Any, src: str, dst: str) -> bool:
    """Rename ``src`` to ``dst`` on ``fs``; False when the two are on different devices of
    a local filesystem (the caller copies then)."""
    try:
        fs.rename(src, dst)
    except OSError as e:
        if e.errno == errno.EXDEV:
            return False
        raise
    return True


def mkdir(urls: list[str], parents: bool = False) -> int:
    """Make each directory (with ``parents``, the missing parents too, and an existing
    directory is no error). Returns 1 when any could not be made."""
    def make(url: str) -> None:
        fs, name = locate_top(url)
        with fs:
            if parents:
                fs.makedirs(name, exist_ok=True)
            else:
                fs.mkdir(name)

    return for_each("mkdir", urls, make)


def touch(urls: list[str]) -> int:
    """Make each missing file, empty; give an existing local file the current time.
    Returns 1 when any could not be made."""
    def make(url: str) -> None:
        fs, name = locate_top(url)
        with fs:
            if fs.exists(name):
                if isinstance(fs, Local) and not fs.isdir(name):
                    os.utime(name)  # a Local from locate_top names paths as given
                return
            fs.open(name, "wb").close()

    return for_each("touch", urls, make)
