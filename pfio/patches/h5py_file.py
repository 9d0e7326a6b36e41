"""``h5py.File`` accepts remote URIs.

``h5py.File(url, "r")`` reads through a seekable pfio file object: HDF5 asks for the ranges
it needs (the metadata, the chunks of what is read), so opening a 50 MiB file to read a few
rows moves little more than those rows; with ``patch_all(cache=True)`` the ranges come
through the object cache. Other modes (``"w"``, ``"w-"``, ``"x"``, ``"a"``, ``"r+"``) work on
a local temporary file (holding the current object first for ``"a"`` and ``"r+"``) that is
uploaded atomically when the file is closed, and dropped when the ``with`` block that opened
it ends with an exception. The object returned is an ``h5py.File`` (``isinstance`` holds).
"""

from __future__ import annotations

from typing import Any

from .leases import LeasedFile, opened, remote_constructor
from .machinery import PatchSpec, define_target


def _remote_class(base: type[Any]) -> type:
    """A subclass of ``h5py.File`` that opens a URL through a :class:`~.leases.Lease`."""

    # (the library's class is the base, known only at run time)
    class File(LeasedFile, base):  # type: ignore[misc]
        def __init__(self, url: str, mode: str = "r", *args: Any, **kwargs: Any) -> None:
            self._pfio_lease = opened(
                url, mode == "r", mode in ("a", "r+"),
                lambda target: base.__init__(self, target, mode, *args, **kwargs))
            self.pfio_url = url

    return File


define_target("h5py", [PatchSpec("h5py", "File", remote_constructor(_remote_class))])
