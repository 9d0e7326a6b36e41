"""``soundfile`` accepts remote URIs: ``SoundFile``, and so ``read``, ``write``, ``blocks``
and ``info``, which open through it.

Reading (mode ``"r"``) goes through a seekable pfio file object (through the object cache
with ``patch_all(cache=True)``). Writing (``"w"``, ``"x"``, ``"r+"``, ...) goes to a local
temporary file with the URL's extension (libsndfile picks the format from it), uploaded
atomically when the file is closed (``soundfile.write`` closes it), and dropped when the
``with`` block that opened it ends with an exception. The object returned is a
``soundfile.SoundFile`` whose ``name`` is the URL.
"""

from __future__ import annotations

from typing import Any

from .leases import opened
from .machinery import PatchSpec, define_target
from .targets import is_remote

_classes: dict[type, type] = {}


def _sound_file(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if not (args and is_remote(args[0])):
        return wrapped(*args, **kwargs)
    return _remote_class(wrapped)(*args, **kwargs)


def _remote_class(base: type) -> type:
    """A subclass of ``soundfile.SoundFile`` that opens a URL through a
    :class:`~.leases.Lease`."""
    cls = _classes.get(base)
    if cls is not None:
        return cls

    class SoundFile(base):  # type: ignore[misc, valid-type]
        def __init__(self, url: str, mode: str = "r", *args: Any, **kwargs: Any) -> None:
            lease = opened(url, mode == "r", mode.startswith("r"),
                           lambda target: base.__init__(self, target, mode, *args, **kwargs))
            self._pfio_lease = lease
            self._name = url

        def close(self) -> None:
            try:
                super().close()
            finally:
                lease = getattr(self, "_pfio_lease", None)
                if lease is not None:
                    lease.release()

        def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
            try:
                super().close()
            finally:
                self._pfio_lease.release(exc)

    SoundFile.__module__, SoundFile.__qualname__ = base.__module__, base.__qualname__
    _classes[base] = SoundFile
    return SoundFile


define_target("soundfile", [PatchSpec("soundfile", "SoundFile", _sound_file)])
