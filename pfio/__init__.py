"""pfio: one URI filesystem for deep-learning IO.

>>> import pfio
>>> with pfio.from_url("mem://demo/data") as fs:
...     with fs.open("hello.txt", "w") as f:
...         _ = f.write("hi")
...     print(fs.list())
['hello.txt']

``import pfio`` imports no optional dependency (boto3, torch, cv2, pandas are loaded by the
parts that need them).
"""

from __future__ import annotations

from typing import Any

from ._uri import URI, parse_uri
from .api import from_url, open_url
from .errors import ArchiveError, MemberNotFoundError
from .fs.base import FS
from .fs.stat import FileStat
from .registry import (
    known_schemes,
    register_container,
    register_filesystem,
    unregister_container,
    unregister_filesystem,
)
from .version import __version__

#: subpackages that ``pfio.<name>`` imports on first use (PFIO 2.x code writes
#: ``import pfio`` then ``pfio.v2.from_url(...)``); none imports an optional dependency
_LAZY_MODULES = ("v2", "cache")

_LAZY = {
    "patch_all": "pfio.patches",
    "unpatch_all": "pfio.patches",
    "patched": "pfio.patches",
    "active_patches": "pfio.patches",
    # copying and syncing between filesystems (pfio/transfer)
    "copy": "pfio.transfer",
    "sync": "pfio.transfer",
    "SyncResult": "pfio.transfer",
    "TransferError": "pfio.transfer",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pfio' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def _reapply_inherited_patches() -> None:
    """Processes started by spawn/forkserver inherit the parent's patches by environment."""
    import os

    if os.environ.get("PFIO_PATCHES"):
        from .patches import reapply_inherited

        reapply_inherited()


_reapply_inherited_patches()


def _start_trace_from_env() -> None:
    """``PFIO_TRACE=<file>`` traces the whole run (see :mod:`pfio.trace`)."""
    import os

    if os.environ.get("PFIO_TRACE"):
        from .trace.env import start_from_env

        start_from_env()


_start_trace_from_env()

__all__ = [
    "FS",
    "URI",
    "ArchiveError",
    "FileStat",
    "MemberNotFoundError",
    "SyncResult",
    "TransferError",
    "copy",
    "from_url",
    "known_schemes",
    "open_url",
    "parse_uri",
    "register_container",
    "register_filesystem",
    "sync",
    "unregister_container",
    "unregister_filesystem",
    "__version__",
]
