"""``SaveStream``: the file a checkpoint serializer writes to, keeping the storage's error.

``torch.save`` (and DCP's writers, which call it per tensor) replace an exception raised by
the file's ``write`` with their own (``unexpected pos 64 vs 0``), which hides the cause (an
S3 ``SlowDown``, a full disk). A ``SaveStream`` remembers the first error of a write, logs
it once with its cause, and :meth:`SaveStream.reraise` raises it in place of the
serializer's.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ...trace.redact import redact

logger = logging.getLogger(__name__)


class SaveDiscarded(Exception):
    """A save was given up on purpose (see ``discard``): nothing was published."""


class SaveStream:
    """Writes to ``f`` (the open file of ``url``); after ``discard`` is set, every write
    raises :class:`SaveDiscarded`. Other attributes are ``f``'s."""

    def __init__(self, f: Any, url: str, discard: threading.Event | None = None) -> None:
        self._f = f
        self._url = url
        self._discard = discard
        self.error: BaseException | None = None

    def write(self, b: Any) -> int:
        try:
            if self._discard is not None and self._discard.is_set():
                raise SaveDiscarded(f"the save of {redact(self._url)} was discarded")
            written: int = self._f.write(b)
            return written
        except BaseException as exc:
            if self.error is None:
                self.error = exc
                self._log(exc)
            raise

    def reraise(self, exc: BaseException) -> None:
        """Saving failed with ``exc``: raise the write's error in its place (the
        serializer's), if there was one; else log ``exc`` (once)."""
        if self.error is None:
            self.error = exc
            self._log(exc)
        elif self.error is not exc:
            raise self.error from exc

    def _log(self, exc: BaseException) -> None:
        if not isinstance(exc, SaveDiscarded):
            cause = exc.__cause__ or exc.__context__
            logger.error("writing %s failed: %s%s", redact(self._url), exc,
                         f" (caused by {cause!r})" if cause is not None else "")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)
