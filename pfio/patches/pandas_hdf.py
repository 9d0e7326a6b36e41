"""pandas HDF5: ``read_hdf``, ``HDFStore`` and ``to_hdf`` accept remote URIs.

HDF5 opens paths in C, so the only way is a local file: reads use a local copy from the object
cache, held for the lifetime of an ``HDFStore``; writes go to a local temporary file (a copy of
the existing object first when the mode appends) that is uploaded atomically when the store is
closed or ``to_hdf`` returns.
"""

from __future__ import annotations

import contextlib
from typing import Any

from .machinery import PatchSpec, define_target
from .targets import is_remote, local_copy, upload_on_success


def _read_hdf(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    with local_copy(args[0]) as path:
        return wrapped(path, *args[1:], **kwargs)


def _to_hdf(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    url = args[0] if args else kwargs.get("path_or_buf")
    if not is_remote(url):
        return wrapped(*args, **kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k != "path_or_buf"}
    mode = kwargs.get("mode", "a")
    with upload_on_success(url, download_first=mode in ("a", "r+")) as path:
        return wrapped(path, *args[1:], **kwargs)


def _hdf_store(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    return _remote_store_class(wrapped)(args[0], *args[1:], **kwargs)


_store_classes: dict[type, type] = {}


def _remote_store_class(base: type) -> type:
    """A subclass of ``pandas.HDFStore`` over a local file that stands for a remote object."""
    cls = _store_classes.get(base)
    if cls is not None:
        return cls

    # (the library's class is the base, known only at run time)
    class RemoteHDFStore(base):  # type: ignore[misc]
        def __init__(self, url: str, mode: str = "a", *args: Any, **kwargs: Any) -> None:
            self._pfio_lease = contextlib.ExitStack()
            if mode == "r":
                path = self._pfio_lease.enter_context(local_copy(url))
            else:
                path = self._pfio_lease.enter_context(
                    upload_on_success(url, download_first=mode in ("a", "r+")))
            try:
                super().__init__(path, mode, *args, **kwargs)
            except BaseException as exc:
                self._pfio_lease.__exit__(type(exc), exc, exc.__traceback__)
                raise
            self.pfio_url = url

        def close(self) -> None:
            try:
                super().close()
            finally:
                self._pfio_lease.close()

    RemoteHDFStore.__name__ = RemoteHDFStore.__qualname__ = "HDFStore"
    _store_classes[base] = RemoteHDFStore
    return RemoteHDFStore


define_target("pandas", [
    PatchSpec("pandas", "read_hdf", _read_hdf),
    PatchSpec("pandas", "HDFStore", _hdf_store),
    PatchSpec("pandas", "to_hdf", _to_hdf, owner="core.generic.NDFrame"),
])
