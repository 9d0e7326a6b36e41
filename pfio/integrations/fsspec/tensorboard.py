"""tensorboardX writes its event files to ``pfio://`` URLs through the bridge.

tensorboardX opens event files with builtin ``open`` and ``os.makedirs``, unless a writer
factory is registered for the URL's scheme; for ``pfio://`` none is, so a
``SummaryWriter("pfio://s3/bucket/run")`` (Lightning's ``TensorBoardLogger`` makes one)
would write to a local folder named ``pfio:``. The bridge registers one when it is first
used (or, where ``wrapt`` is installed, when tensorboardX is imported afterwards).

An event file is written to a local temporary file (tensorboardX calls ``os.fsync`` on its
``fileno()``), and published whole to its URL at each flush that added bytes (every
``flush_secs``, and when Lightning saves its logs) and on close, as tensorboardX's own S3
writer does: TensorBoard sees a run while it trains. Each publication uploads the whole
file, which stays small for scalars.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import sys
import tempfile
import threading
from types import ModuleType

logger = logging.getLogger(__name__)

#: the tensorboardX module that keeps the writer factories, by scheme
_RECORD_WRITER = "tensorboardX.record_writer"

_lock = threading.Lock()
_installed = False


class EventFile:
    """An event file being written to ``url`` (a ``pfio://`` URL): a local temporary file,
    published whole when flushed with new bytes and when closed."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._local = tempfile.TemporaryFile(prefix="pfio-events-")
        self._published = -1

    def write(self, data: bytes) -> int:
        return self._local.write(data)

    def fileno(self) -> int:
        """The local file's descriptor (for ``os.fsync``)."""
        return self._local.fileno()

    def flush(self) -> None:
        """Publish the file when bytes were written since it last was."""
        self._local.flush()
        size = self._local.tell()
        if size == self._published:
            return
        import fsspec

        self._local.seek(0)
        with fsspec.filesystem("pfio").open(self.url, "wb") as target:
            shutil.copyfileobj(self._local, target, 1 << 20)
        self._local.seek(size)
        self._published = size

    def close(self) -> None:
        if self._local.closed:
            return
        try:
            self.flush()
        finally:
            self._local.close()

    @property
    def closed(self) -> bool:
        return self._local.closed


class EventFileFactory:
    """tensorboardX's writer factory for ``pfio://`` URLs."""

    def open(self, path: str) -> EventFile:
        return EventFile(path)

    def directory_check(self, path: str) -> None:
        import fsspec

        fsspec.filesystem("pfio").makedirs(path, exist_ok=True)


def register(record_writer: ModuleType) -> None:
    """Register :class:`EventFileFactory` for ``pfio`` in tensorboardX's ``record_writer``."""
    record_writer.register_writer_factory("pfio", EventFileFactory())


def install() -> None:
    """Register the factory now if tensorboardX is imported, else when it is (through a
    ``wrapt`` import hook; without ``wrapt``, an installed tensorboardX is imported now).
    Done once per process; costs nothing without tensorboardX."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    module = sys.modules.get(_RECORD_WRITER)
    if module is not None:
        register(module)
        return
    if importlib.util.find_spec("tensorboardX") is None:
        return
    try:
        import wrapt
    except ImportError:
        register(importlib.import_module(_RECORD_WRITER))
        return
    wrapt.register_post_import_hook(register, _RECORD_WRITER)

