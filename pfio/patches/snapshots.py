"""Chainer's and pytorch-pfn-extras' snapshot extensions on URLs.

Both write snapshots through ``os``/``shutil``/``open`` (patched by the ``os``, ``shutil``
and ``builtins`` targets), and both choose the snapshot that ``autoload`` resumes from (and
the stale ones that ``n_retains`` removes) by modification time, breaking ties by the name
as a string. S3 keeps whole seconds, so two snapshots of one second tie, and
``snapshot_iter_10`` sorts before ``snapshot_iter_9``: the older one would be resumed. The
targets here break such ties by the numbers in the names (``9`` before ``10``); times that
differ still decide.

* ``chainer``: the snapshot choice of ``chainer.training.extensions``.
* ``pytorch_pfn_extras``: the same choice in ppe, and its default writer (the one
  ``ExtensionsManager(out_dir=...)`` makes) keeps a URL ``out_dir`` a URL: it would join
  it under the working directory (``./s3:/bucket/...``), and it then writes, renames and
  removes there through the patched ``open`` and ``os``.
"""

from __future__ import annotations

import re
from typing import Any

from .machinery import PatchSpec, define_target
from .targets import is_remote


def natural_key(name: str) -> list[Any]:
    """``name`` cut into text and numbers, the numbers as ints: ``snapshot_iter_9`` sorts
    before ``snapshot_iter_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _in_time_order(wrapped: Any, instance: Any,
                   args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``(mtime, name)`` pairs of the snapshot files, ties of time in natural order."""
    return sorted(wrapped(*args, **kwargs), key=lambda pair: (pair[0], natural_key(pair[1])))


def _actual_path(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A URL is its own actual path (not joined under the working directory)."""
    path = args[0] if args else kwargs.get("path")
    if is_remote(path):
        return path
    return wrapped(*args, **kwargs)


define_target("chainer", [
    PatchSpec("chainer.training.extensions._snapshot", "_find_snapshot_files", _in_time_order),
])

define_target("pytorch_pfn_extras", [
    PatchSpec("pytorch_pfn_extras.training.extensions._snapshot", "_find_snapshot_files",
              _in_time_order),
    PatchSpec("pytorch_pfn_extras.writing._writer_base", "get_actual_path", _actual_path,
              owner="_PosixFileSystem"),
])

__all__ = ["natural_key"]
