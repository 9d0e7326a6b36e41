"""The stream an archive is written to, as :mod:`zipfile` and :mod:`tarfile` see it."""

from __future__ import annotations

from typing import IO, Any


class ArchiveOutput:
    """Writes to ``stream``, counting them (``tell``; it cannot seek). After :meth:`drop`
    (the archive was abandoned) writes go nowhere, so the library's own closing writes
    reach nothing that could be published."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream: IO[bytes] | None = stream
        self._written = 0

    def write(self, data: Any) -> int:
        if self._stream is None:
            return len(data)
        n = self._stream.write(data)
        if n is None:  # a raw stream that does not say: it took everything
            n = memoryview(data).nbytes
        self._written += n
        return n

    def tell(self) -> int:
        return self._written

    def flush(self) -> None:
        if self._stream is not None:
            self._stream.flush()

    def drop(self) -> None:
        self._stream = None
