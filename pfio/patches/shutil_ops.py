"""``shutil`` copies, moves and removes remote URIs: ``copyfile``, ``copy``, ``copy2``,
``copytree``, ``rmtree``, ``move`` (and ``copymode``, ``copystat``), from a URL to a local
path, from a local path to a URL, and between URLs of any filesystems.

Most of ``shutil`` is written on ``open``, ``os`` and ``os.path``, so the ``shutil`` target
brings the ``builtins``, ``os`` and ``os.path`` targets with it and patches only what they
leave out:

* ``copyfile`` needs nothing more: it opens both files with the patched ``open`` (a pfio
  reader and an atomic pfio writer: the destination appears whole or not at all).
* ``copymode`` and ``copystat`` (so ``copy`` and ``copy2``): a remote file has no mode bits,
  times or extended attributes to set, so nothing is set on a remote destination (the
  source must exist, as for local files); a local destination of a remote source takes the
  mode and modification time its filesystem reports.
* ``copytree`` from a URL copies by path, not by ``os.DirEntry`` (what ``os.scandir``
  yields for a URL is not one); to a URL it needs nothing more. On S3 an empty directory
  is not copied: S3 has no directories (see :mod:`pfio.patches.os_write`).
* ``rmtree`` of a URL removes the directory with the filesystem's recursive remove (on S3:
  deletes in batches of 1,000 keys); ``ignore_errors``, ``onerror`` and ``onexc`` work as
  for a local tree, and a file raises ``NotADirectoryError``.
* ``move`` needs nothing more: ``os.rename`` renames within a filesystem and raises
  ``OSError(EXDEV)`` across filesystems, where ``move`` copies (``copy2``/``copytree``) and
  removes (``os.unlink``/``rmtree``).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from collections.abc import Callable
from typing import Any

from ..fs import made_directories
from .locate import stat_url
from .machinery import PatchSpec, define_target
from .os_dirs import stat_result
from .os_write import filesystem, is_directory, note_changed, refuse_root, vanished
from .targets import divert, is_remote


def _stat(path: Any) -> os.stat_result:
    """``os.stat`` of a local path (or an ``os.DirEntry``), the remote stat of a URL."""
    if is_remote(path):
        return stat_result(stat_url(path))
    return path.stat() if isinstance(path, os.DirEntry) else os.stat(path)


def _copy_metadata(times: bool) -> Callable[..., None]:
    """The remote version of ``copystat`` (``times``) or ``copymode``."""

    def copy(original: Callable[..., Any], src: Any, dst: Any, *,
             follow_symlinks: bool = True) -> None:
        st = _stat(src)
        if is_remote(dst):
            return  # a remote file has no mode or times to set (an S3 "directory" no stat)
        if times:
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.chmod(dst, stat.S_IMODE(st.st_mode))

    return copy


class _ByPath:
    """A ``copy_function`` of ``copytree`` called with paths: ``copytree`` hands
    ``copy``/``copy2`` its ``os.DirEntry`` objects, but other functions the entries' paths,
    which is what a URL needs."""

    def __init__(self, copy: Callable[..., Any]) -> None:
        self.copy = copy

    def __call__(self, src: Any, dst: Any) -> Any:
        return self.copy(os.fspath(src), dst)


def _copytree(original: Callable[..., Any], src: str, dst: Any, symlinks: bool = False,
              ignore: Any = None, copy_function: Callable[..., Any] = shutil.copy2,
              ignore_dangling_symlinks: bool = False, dirs_exist_ok: bool = False) -> Any:
    if not isinstance(copy_function, _ByPath):
        copy_function = _ByPath(copy_function)
    return original(src, dst, symlinks, ignore, copy_function, ignore_dangling_symlinks,
                    dirs_exist_ok)


def _rmtree(original: Callable[..., Any], url: str, ignore_errors: bool = False,
            onerror: Callable[..., Any] | None = None, *,
            onexc: Callable[..., Any] | None = None, dir_fd: Any = None) -> None:
    step: Callable[..., Any] = os.lstat
    try:
        fs, path = filesystem(url)
        refuse_root(path, url)
        if vanished(fs, path, url):
            return
        if not is_directory(fs, path):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), url)
        note_changed(fs, path, True, url)
        step = os.rmdir
        fs.remove(path, recursive=True)
        made_directories.forget(url)
    except OSError as exc:
        if ignore_errors:
            return
        if onexc is not None:
            onexc(step, url, exc)
        elif onerror is not None:
            onerror(step, url, sys.exc_info())
        else:
            raise


define_target("shutil", [
    PatchSpec("shutil", "copymode", replace=divert(_copy_metadata(False), paths=2,
                                                   with_original=True)),
    PatchSpec("shutil", "copystat", replace=divert(_copy_metadata(True), paths=2,
                                                   with_original=True)),
    PatchSpec("shutil", "copytree", replace=divert(_copytree, with_original=True)),
    PatchSpec("shutil", "rmtree", replace=divert(_rmtree, with_original=True)),
])
