"""``os.path.exists``, ``isfile``, ``isdir`` and ``getsize`` accept remote URIs.

Path-only code often checks a file before opening it; these answer from the remote filesystem
(one ``stat``) with the semantics of ``os.path``: ``exists``/``isfile``/``isdir`` return False
for a missing path, ``getsize`` raises ``FileNotFoundError``.
"""

from __future__ import annotations

from typing import Any

from ..fs.resolver import locate
from .machinery import PatchSpec, define_target
from .targets import is_remote


def _stat(url: str) -> Any:
    fs, name = locate(url)  # an archive on the way is the resolver's shared one
    return fs.stat(name)


def _predicate(check: Any) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not (args and is_remote(args[0])):
            return wrapped(*args, **kwargs)
        try:
            return check(_stat(args[0]))
        except (FileNotFoundError, NotADirectoryError, PermissionError, ValueError):
            return False

    return wrapper


def _getsize(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    return _stat(args[0]).size


define_target("os.path", [
    PatchSpec("os.path", "exists", _predicate(lambda st: True)),
    PatchSpec("os.path", "isfile", _predicate(lambda st: not st.isdir())),
    PatchSpec("os.path", "isdir", _predicate(lambda st: st.isdir())),
    PatchSpec("os.path", "getsize", _getsize),
])
