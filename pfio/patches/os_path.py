"""``os.path.exists``, ``isfile``, ``isdir``, ``getsize`` and ``getmtime`` accept remote URIs.

Path-only code often checks a file before opening it; these answer from the remote filesystem
(one ``stat``) with the semantics of ``os.path``: ``exists``/``isfile``/``isdir`` return False
for a missing path, ``getsize``/``getmtime`` raise ``FileNotFoundError``. A root is a
directory: ``isdir("s3://bucket")`` for an existing bucket, ``isdir("mem://store")``, and a
directory inside an archive (``isdir("s3://b/train.zip/class_a")``) is one too.
"""

from __future__ import annotations

from typing import Any

from .locate import stat_url
from .machinery import PatchSpec, define_target
from .targets import is_remote


def _predicate(check: Any) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not (args and is_remote(args[0])):
            return wrapped(*args, **kwargs)
        try:
            return check(stat_url(args[0]))
        except (FileNotFoundError, NotADirectoryError, PermissionError, ValueError):
            return False

    return wrapper


def _field(name: str) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not (args and is_remote(args[0])):
            return wrapped(*args, **kwargs)
        value = getattr(stat_url(args[0]), name)
        if value is None:
            raise OSError(f"{args[0]!r}: its filesystem does not record {name}")
        return value

    return wrapper


define_target("os.path", [
    PatchSpec("os.path", "exists", _predicate(lambda st: True)),
    PatchSpec("os.path", "isfile", _predicate(lambda st: not st.isdir())),
    PatchSpec("os.path", "isdir", _predicate(lambda st: st.isdir())),
    PatchSpec("os.path", "getsize", _field("size")),
    PatchSpec("os.path", "getmtime", _field("last_modified")),
])
