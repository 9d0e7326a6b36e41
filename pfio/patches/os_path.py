"""``os.path.exists``, ``lexists``, ``isfile``, ``isdir``, ``islink``, ``getsize`` and
``getmtime`` accept remote URIs (``lexists`` is ``exists`` and ``islink`` is False: remote
filesystems have no symbolic links). ``abspath`` of a URL is the URL (it is absolute; the
original would put it under the working directory, as ``tempfile.mkdtemp(dir=url)`` of
Python 3.12 and later does with what it returns).

Path-only code often checks a file before opening it; these answer from the remote filesystem
(one ``stat``) with the semantics of ``os.path``: ``exists``/``isfile``/``isdir`` return False
for a missing path, ``getsize``/``getmtime`` raise ``FileNotFoundError``. A root is a
directory: ``isdir("s3://bucket")`` for an existing bucket, ``isdir("mem://store")``, and a
directory inside an archive (``isdir("s3://b/train.zip/class_a")``) is one too. Like
``os.stat`` they are plain functions: a local path costs one Python call more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..fs.stat import FileStat
from .locate import stat_url
from .machinery import PatchSpec, define_target
from .targets import divert


def _predicate(check: Callable[[FileStat], bool]) -> Callable[[str], bool]:
    def remote(url: str) -> bool:
        try:
            return check(stat_url(url))
        except (FileNotFoundError, NotADirectoryError, PermissionError, ValueError):
            return False

    return remote


def _field(name: str) -> Callable[[str], Any]:
    def remote(url: str) -> Any:
        value = getattr(stat_url(url), name)
        if value is None:
            raise OSError(f"{url!r}: its filesystem does not record {name}")
        return value

    return remote


def _never(url: str) -> bool:
    return False


def _itself(url: str) -> str:
    return url


define_target("os.path", [
    PatchSpec("os.path", "exists", replace=divert(_predicate(lambda st: True))),
    PatchSpec("os.path", "lexists", replace=divert(_predicate(lambda st: True))),
    PatchSpec("os.path", "islink", replace=divert(_never)),
    PatchSpec("os.path", "abspath", replace=divert(_itself)),
    PatchSpec("os.path", "isfile", replace=divert(_predicate(lambda st: not st.isdir()))),
    PatchSpec("os.path", "isdir", replace=divert(_predicate(FileStat.isdir))),
    PatchSpec("os.path", "getsize", replace=divert(_field("size"))),
    PatchSpec("os.path", "getmtime", replace=divert(_field("last_modified"))),
])
