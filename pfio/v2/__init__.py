"""The PFIO 2.x API, for code written against ``pfio.v2``.

Every name here is the same object as in :mod:`pfio` (there is no second implementation),
except :func:`from_url`, which adds PFIO 2.x's ``force_type`` argument. ``S3``, ``Hdfs``,
``Zip`` and ``Tar`` are imported on first use, so ``import pfio.v2`` loads no optional
dependency.

>>> from pfio.v2 import from_url
>>> with from_url("mem://v2doc/data") as fs:
...     with fs.open("a.txt", "w") as f:
...         _ = f.write("hello")
...     sorted(fs.list())
['a.txt']
"""

from __future__ import annotations

from typing import Any

from .. import registry
from .._uri import parse_uri
from ..api import from_url as _from_url
from ..api import open_url
from ..fs.base import FS
from ..fs.local import Local
from ..fs.stat import FileStat
from . import config
from .path import Path

_LAZY = {
    "S3": "pfio.fs.s3",
    "Hdfs": "pfio.fs.hdfs",
    "Zip": "pfio.containers.zip",
    "Tar": "pfio.containers.tar",
}

_ARCHIVE_TYPES = ("zip", "tar")

#: a :class:`Local` rooted at the working directory, as ``pfio.v2.local`` was
local = Local()


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pfio.v2' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def from_url(url: str, *, force_type: str | None = None, create: bool = False,
             **options: Any) -> FS:
    """Return the filesystem at ``url``, as PFIO 2.x's ``from_url`` did.

    Without ``force_type`` this is :func:`pfio.from_url`: a path component ending in
    ``.zip`` (or ``.tar``, ``.tar.gz``, ``.tgz``) is opened as an archive.

    Args:
        url: where the filesystem is rooted.
        force_type: ``"zip"`` (or ``"tar"``) opens the file at ``url`` as that kind of
            archive whatever its name; a scheme name (``"file"``, ``"s3"``, ``"hdfs"``, ...)
            opens ``url`` as a directory of that filesystem even when its name ends in
            ``.zip``, and must be the scheme of ``url``.
        create: create the root directory when it is missing (not for archives).
        options: backend options.

    Raises:
        ValueError: ``force_type`` is a scheme other than that of ``url``, or ``create`` is
            asked of an archive; also as :func:`pfio.from_url`.
    """
    if force_type is None:
        return _from_url(url, create=create, **options)
    if not isinstance(force_type, str):
        raise ValueError(f"force_type must be a str, not {type(force_type).__name__}")
    uri = parse_uri(url)
    if force_type in _ARCHIVE_TYPES:
        if create:
            raise ValueError(f"create=True is not supported when opening {url!r} as a "
                             f"{force_type} archive")
        parent, name = uri.split()
        if not name:
            raise ValueError(f"{url!r} names no file to open as a {force_type} archive")
        outer = _from_url(str(parent), **options)
        archive = outer.open_zip(name) if force_type == "zip" else outer.open_tar(name)
        archive.owns_backing_fs = True
        return archive
    if force_type.lower() != uri.scheme:
        raise ValueError(
            f"force_type {force_type!r} does not match the scheme {uri.scheme!r} of {url!r} "
            f"(use 'zip', 'tar' or the URL's scheme)"
        )
    if create:
        options["create"] = True
    return registry.create(uri, **options)


__all__ = [
    "FS",
    "FileStat",
    "Hdfs",
    "Local",
    "Path",
    "S3",
    "Tar",
    "Zip",
    "config",
    "from_url",
    "local",
    "open_url",
]
