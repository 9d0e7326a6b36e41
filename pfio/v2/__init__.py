"""The PFIO 2.x API, for code written against ``pfio.v2``.

Every name here is the same object as in :mod:`pfio` (there is no second implementation),
except :func:`from_url`, which adds PFIO 2.x's ``force_type`` and ``http_cache`` arguments.
PFIO 2.10's modules are here under the same paths (``pfio.v2.fs``, ``.local``, ``.s3``,
``.zip``, ``.hdfs``, ``.pathlib``, ``.config``, ``.http_cache``); ``S3``, ``Hdfs``, ``Zip``,
``Tar``, ``HTTPCachedFS`` and their modules are imported on first use, so ``import pfio.v2``
loads no optional dependency.

>>> from pfio.v2 import from_url
>>> with from_url("mem://v2doc/data") as fs:
...     with fs.open("a.txt", "w") as f:
...         _ = f.write("hello")
...     sorted(fs.list())
['a.txt']
"""

from __future__ import annotations

import importlib
from typing import Any

from . import config
from .fs import FS, FileStat, from_url, lazify, open_url
from .local import Local, LocalFileStat
from .pathlib import Path, PurePath

_LAZY = {
    "S3": "pfio.fs.s3",
    "Hdfs": "pfio.fs.hdfs",
    "HdfsFileStat": "pfio.fs.hdfs",
    "Zip": "pfio.containers.zip",
    "ZipFileStat": "pfio.containers.zip",
    "Tar": "pfio.containers.tar",
    "HTTPCachedFS": "pfio.cache.http_cached_fs",
}

#: PFIO 2.10's submodules that are imported on first use
_LAZY_MODULES = ("s3", "hdfs", "zip", "http_cache")

#: a :class:`Local` rooted at the working directory, as ``pfio.v2.local`` was (the
#: module ``pfio.v2.local`` is imported above, so this name stays the filesystem)
local = Local()


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pfio.v2' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "FS",
    "FileStat",
    "HTTPCachedFS",
    "Hdfs",
    "HdfsFileStat",
    "Local",
    "LocalFileStat",
    "Path",
    "PurePath",
    "S3",
    "Tar",
    "Zip",
    "ZipFileStat",
    "config",
    "from_url",
    "lazify",
    "local",
    "open_url",
]
