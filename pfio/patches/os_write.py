"""``os.remove``/``os.unlink``, ``os.rmdir``, ``os.mkdir``, ``os.makedirs``,
``os.rename``/``os.replace`` and ``os.path.samefile`` accept remote URIs.

A script that writes its outputs under a URL also tidies them: it makes directories,
renames a finished file into place, removes what it no longer needs. On a URL these resolve
the filesystem through pfio and call its ``remove``, ``mkdir``, ``makedirs`` and ``rename``,
with the errors of ``os``:

* ``remove``/``unlink`` of a missing path raise ``FileNotFoundError``, of a directory
  ``IsADirectoryError``; ``rmdir`` of a file ``NotADirectoryError``, of a non-empty directory
  ``OSError(ENOTEMPTY)``; ``mkdir`` of an existing path, and ``makedirs`` of one without
  ``exist_ok``, ``FileExistsError``.
* ``rename``/``replace`` within one filesystem (one bucket, one ``mem://`` store, one HDFS
  namenode) rename there (on S3: a server-side copy and a delete, key by key for a
  directory, so not atomic), replacing a file at the destination; a file cannot replace a
  directory (``IsADirectoryError``). Across filesystems (a local path and a URL, two
  buckets) they raise ``OSError(EXDEV)`` as ``os.rename`` does across devices, and
  ``shutil.move`` copies and removes instead.
* ``os.path.samefile`` of URLs is true when both name the same path of one filesystem (the
  ``os.stat`` of a URL has no inode number to compare).

Where the backend has no such thing, the call does what the backend can: S3 has no
directories (a prefix exists while an object is under it), so ``mkdir``/``makedirs`` of a
new prefix create nothing on the server and ``makedirs`` of a missing parent does not fail;
this process remembers the directories it made there (in :mod:`pfio.fs.made_directories`,
shared with the fsspec bridge), which are directories to its patches until it removes them
(``os.path.isdir`` is true, ``os.listdir`` lists them empty and in their parent,
``mkdir`` again raises ``FileExistsError``), and removing one whose last file moved out
(``rmdir``, ``shutil.rmtree``) succeeds: the pattern ``tempfile.mkdtemp(dir=url)``, write,
move the file out, ``shutil.rmtree`` works as on local disk. Other processes see such a
directory once something is written in it. A name ending with ``/`` names a directory:
renaming a file to it raises ``IsADirectoryError`` (or ``NotADirectoryError`` when a file
has that name without the ``/``), as on local disk. Archives (``s3://b/x.zip/member``) are
read-only: changing them raises ``io.UnsupportedOperation``. ``file://`` URLs are handed
to the original functions as local paths; ``dir_fd`` arguments are ignored for URLs.

A path removed or renamed through these is fetched anew by the next spooled read of it in
the process (as a path written through a patch is), whatever the object cache's validation
policy.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import Any

from .._uri import place
from ..fs import made_directories
from ..fs.base import FS
from .locate import directory, refuse_directory_name, stat_url
from .machinery import PatchSpec, define_target
from .targets import divert, is_remote, note_written


def filesystem(url: str) -> tuple[FS, str]:
    """The filesystem at the top of ``url`` (see :func:`place`; shared by the calls of the
    process: never close it) and ``url``'s path in it."""
    top, path = place(url)
    return directory(top), path


def is_directory(fs: FS, path: str, url: str | None = None) -> bool:
    """Whether ``path`` is a directory (a root is; so is ``url``, the URL of ``path``, when
    this process made it on a filesystem without directories: see
    :mod:`pfio.fs.made_directories`); raises ``FileNotFoundError`` when nothing is there."""
    try:
        return not path or fs.stat(path).isdir()
    except FileNotFoundError:
        if url is not None and made_directories.made(url):
            return True
        raise


def is_directory_or_none(fs: FS, path: str, url: str) -> bool:
    """:func:`is_directory`, False where nothing is."""
    try:
        return is_directory(fs, path, url)
    except FileNotFoundError:
        return False


def vanished(fs: FS, path: str, url: str) -> bool:
    """True when ``url`` is a directory this process made on a filesystem without
    directories and nothing is under it (any more): removing it is forgetting it."""
    if not made_directories.made(url):
        return False
    try:
        fs.stat(path)
    except FileNotFoundError:
        made_directories.forget(url)
        return True
    return False


def refuse_root(path: str, url: str) -> None:
    """Raise ``PermissionError`` when ``path`` is the root of its filesystem (a bucket, a
    store): pfio does not remove or rename one."""
    if not path:
        raise PermissionError(errno.EPERM, "pfio does not remove the root of a filesystem",
                              url)


def note_changed(fs: FS, path: str, is_dir: bool, *urls: str) -> None:
    """Note (see :func:`~.targets.note_written`) ``urls``, the URLs that ``path`` of ``fs``
    has or takes, and when it is a directory every file below it under each of them:
    what a spooled read cached of them is stale after this call."""
    names = [n for n in fs.list(path, recursive=True) if not n.endswith("/")] if is_dir else []
    for url in urls:
        note_written(url)
        for name in names:
            note_written(f"{url.rstrip('/')}/{name}")


def _remove(original: Callable[..., Any], url: str, *, dir_fd: Any = None) -> None:
    fs, path = filesystem(url)
    if is_directory(fs, path, url):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), url)
    fs.remove(path)
    note_written(url)


def _rmdir(original: Callable[..., Any], url: str, *, dir_fd: Any = None) -> None:
    fs, path = filesystem(url)
    refuse_root(path, url)
    if vanished(fs, path, url):
        return
    if not is_directory(fs, path):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), url)
    fs.remove(path)  # OSError(ENOTEMPTY) from the backend when something is in it
    made_directories.forget(url)
    note_written(url)


def _refuse_existing(fs: FS, path: str, url: str, exist_ok: bool) -> bool:
    """True when ``path`` is a directory and ``exist_ok``; raises ``FileExistsError`` when
    something else exists there; False when nothing does."""
    try:
        is_dir = is_directory(fs, path, url)
    except FileNotFoundError:
        return False
    if exist_ok and is_dir:
        return True
    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), url)


def _mkdir(original: Callable[..., Any], url: str, mode: int = 0o777, *,
           dir_fd: Any = None) -> None:
    fs, path = filesystem(url)
    _refuse_existing(fs, path, url, exist_ok=False)
    fs.mkdir(path, mode)
    made_directories.note(url, fs)


def _makedirs(original: Callable[..., Any], url: str, mode: int = 0o777,
              exist_ok: bool = False) -> None:
    fs, path = filesystem(url)
    if not _refuse_existing(fs, path, url, exist_ok):
        fs.makedirs(path, mode, exist_ok=exist_ok)
        made_directories.note(url, fs, parents=True)


def _rename(original: Callable[..., Any], src: str, dst: str, *, src_dir_fd: Any = None,
            dst_dir_fd: Any = None) -> None:
    if not (is_remote(src) and is_remote(dst)):
        raise _cross_device(src, dst)
    (src_top, src_path), (dst_top, dst_path) = place(src), place(dst)
    if src_top != dst_top:
        raise _cross_device(src, dst)
    fs = directory(src_top)
    refuse_root(src_path, src)
    if made_directories.made(src) and not fs.exists(src_path):  # an empty one made here
        _refuse_occupied(fs, dst_path, dst)
        made_directories.move(src, dst)
        return
    is_dir = is_directory(fs, src_path, src)
    if not is_dir and dst.endswith("/"):
        refuse_directory_name(dst, writing=True)  # a file is not renamed to a directory
    if not is_dir and is_directory_or_none(fs, dst_path, dst):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), dst)
    note_changed(fs, src_path, is_dir, src, dst)
    fs.rename(src_path, dst_path)
    if is_dir:
        made_directories.move(src, dst)


def _refuse_occupied(fs: FS, path: str, url: str) -> None:
    """Raise what ``os.rename`` of a directory onto ``url`` raises when a file
    (``NotADirectoryError``) or a directory with something in it (``ENOTEMPTY``) is there."""
    try:
        is_dir = is_directory(fs, path, url)
    except FileNotFoundError:
        return
    if not is_dir:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), url)
    if fs.exists(path):  # a prefix on S3 exists only through what is in it
        raise OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), url)


def _cross_device(src: Any, dst: Any) -> OSError:
    return OSError(errno.EXDEV, os.strerror(errno.EXDEV), src, None, dst)


def _samefile(original: Callable[..., Any], first: Any, second: Any) -> bool:
    for path in (first, second):  # both must exist, as for os.path.samefile
        if is_remote(path):
            stat_url(path)
        else:
            os.stat(path)
    return is_remote(first) and is_remote(second) and place(first) == place(second)


define_target("os", [
    PatchSpec("os", "remove", replace=divert(_remove, with_original=True)),
    PatchSpec("os", "unlink", replace=divert(_remove, with_original=True)),
    PatchSpec("os", "rmdir", replace=divert(_rmdir, with_original=True)),
    PatchSpec("os", "mkdir", replace=divert(_mkdir, with_original=True)),
    PatchSpec("os", "makedirs", replace=divert(_makedirs, with_original=True)),
    PatchSpec("os", "rename", replace=divert(_rename, paths=2, with_original=True)),
    PatchSpec("os", "replace", replace=divert(_rename, paths=2, with_original=True)),
    PatchSpec("os.path", "samefile", replace=divert(_samefile, paths=2, with_original=True)),
])

__all__ = ["filesystem", "is_directory", "note_changed", "refuse_root", "vanished"]
