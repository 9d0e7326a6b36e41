"""What a library object opened on a URL holds while it is open (an ``h5py.File``, a
``soundfile.SoundFile``): a pfio file object to read, or a local temporary file to write
whose bytes are uploaded when the object closes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import IO, Any

from .locate import open_for_reading
from .targets import is_remote, upload_on_success


class Lease:
    """Open ``url`` for a library: ``target`` is a seekable pfio file object when ``reading``
    (ranged reads, through the object cache when it is on), else a local temporary path
    (holding the current bytes first when ``download_first``) uploaded atomically by
    :meth:`release`, or dropped when the object is released on an exception."""

    def __init__(self, url: str, reading: bool, download_first: bool = False) -> None:
        self._stack = contextlib.ExitStack()
        self.target: IO[bytes] | str
        if reading:
            self.target = self._stack.enter_context(open_for_reading(url))
        else:
            self.target = self._stack.enter_context(
                upload_on_success(url, download_first=download_first))

    def release(self, exc: BaseException | None = None) -> None:
        """Close what the lease holds: upload the written file, unless ``exc`` is given.
        Calling it again does nothing."""
        stack, self._stack = self._stack, contextlib.ExitStack()
        if exc is None:
            stack.close()
        else:
            stack.__exit__(type(exc), exc, exc.__traceback__)


def opened(url: str, reading: bool, download_first: bool, init: Any) -> Lease:
    """A :class:`Lease` of ``url`` handed to ``init(target)`` (the library's constructor);
    released at once, dropping any written file, when ``init`` raises."""
    lease = Lease(url, reading, download_first)
    try:
        init(lease.target)
    except BaseException as exc:
        lease.release(exc)
        raise
    return lease


class LeasedFile:
    """Mixin of a library's file class opened on a URL through a :class:`Lease` (set
    ``_pfio_lease`` in ``__init__``): ``close()`` releases the lease, and a ``with`` block
    ending in an exception releases it dropping what was written."""

    _pfio_lease: Lease | None = None

    def close(self) -> None:
        try:
            super().close()  # type: ignore[misc]  # the library class's, after this mixin
        finally:
            if self._pfio_lease is not None:
                self._pfio_lease.release()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            super().close()  # type: ignore[misc]  # the library class's, after this mixin
        finally:
            if self._pfio_lease is not None:
                self._pfio_lease.release(exc)


def remote_constructor(make_class: Callable[[type], type]) -> Callable[..., Any]:
    """The wrapper of a library's file class: a remote URL makes an instance of
    ``make_class(cls)`` (a :class:`LeasedFile` subclass of ``cls``, made once per class and
    named as ``cls``); anything else goes to ``cls`` untouched."""
    classes: dict[type, type] = {}

    def construct(wrapped: Any, instance: Any,
                  args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not (args and is_remote(args[0])):
            return wrapped(*args, **kwargs)
        cls = classes.get(wrapped)
        if cls is None:
            cls = make_class(wrapped)
            cls.__module__, cls.__qualname__ = wrapped.__module__, wrapped.__qualname__
            classes[wrapped] = cls
        return cls(*args, **kwargs)

    return construct
