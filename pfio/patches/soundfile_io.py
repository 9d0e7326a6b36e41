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

from .leases import LeasedFile, opened, remote_constructor
from .machinery import PatchSpec, define_target


def _remote_class(base: type[Any]) -> type:
    """A subclass of ``soundfile.SoundFile`` that opens a URL through a
    :class:`~.leases.Lease`; its ``name`` is the URL."""

    # (the library's class is the base, known only at run time)
    class SoundFile(LeasedFile, base):  # type: ignore[misc]
        def __init__(self, url: str, mode: str = "r", *args: Any, **kwargs: Any) -> None:
            self._pfio_lease = opened(
                url, mode == "r", mode.startswith("r"),
                lambda target: base.__init__(self, target, mode, *args, **kwargs))
            self._name = url

    return SoundFile


define_target("soundfile", [PatchSpec("soundfile", "SoundFile", remote_constructor(_remote_class))])
