"""``S3Sink``: the all-or-nothing writer of one S3 object.

Up to ``chunk_size`` bytes the object is sent with one PUT when the file is closed. Past
that a multipart upload starts: every full chunk is uploaded as a part in the background
while the caller goes on writing, with at most ``max_inflight`` parts in flight, so memory
stays below ``max_inflight + 2`` parts. The part size is ``chunk_size``, doubled after
every 2,000 parts (so that the 10,000 parts S3 allows hold 62,000 chunks). Closing uploads
the last part and completes the upload; an exception (or :meth:`abort`) aborts it, so
nothing is published.

Every PUT carries the CRC32 of its body (``x-amz-checksum-crc32``), which S3 checks before
it stores the bytes, and a multipart upload declares CRC32 as its checksum algorithm (S3
then keeps a checksum of checksums and does not checksum the whole object again). The
CRC is computed here rather than by botocore, which would send it in an ``aws-chunked``
trailer that older S3-compatible servers reject.
"""

from __future__ import annotations

import base64
import functools
import logging
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ...checksums import crc32
from ..writers import AtomicSink
from .retry import call

if TYPE_CHECKING:
    from .connection import S3Connection

logger = logging.getLogger(__name__)

#: S3 allows at most this many parts in one upload
MAX_PARTS = 10000
#: ... each but the last at least this big
MIN_PART = 5 << 20


def crc32_of(data: bytes | bytearray | memoryview) -> str:
    """The CRC32 of ``data`` as S3 wants it: base64 of its 4 big-endian bytes."""
    return base64.b64encode(crc32(data).to_bytes(4, "big")).decode()


class S3Sink(AtomicSink):
    """Writes ``key`` through ``conn``; see the module documentation."""

    def __init__(self, conn: S3Connection, key: str, chunk_size: int,
                 max_inflight: int = 4) -> None:
        super().__init__(conn.url(key))
        self._conn = conn
        self._key = key
        self.chunk_size = max(chunk_size, MIN_PART)
        self._buffer = bytearray()  # the part being filled
        self._upload_id: str | None = None
        self._parts: list[Future] = []
        self._slots = threading.BoundedSemaphore(max(1, max_inflight))

    def _write(self, b: Any) -> int:
        with memoryview(b) as outer, outer.cast("B") as view:
            n = len(view)
            pos = 0
            # the bytes of an immutable object (a buffered writer passes a view of the
            # caller's ``bytes``) are sent as they are, not copied
            whole = outer.obj
            kept = memoryview(whole) if isinstance(whole, bytes) and len(whole) == n else None
            while pos < n:
                part = self._part_size()
                if not self._buffer and n - pos >= part:
                    if kept is not None:
                        self._send_part(kept[pos:pos + part], copy=False)
                    else:
                        self._send_part(view[pos:pos + part])
                    pos += part
                    continue
                take = min(n - pos, part - len(self._buffer))
                self._buffer += view[pos:pos + take]
                pos += take
                if len(self._buffer) == part:
                    self._send_part(self._take_buffer())
        return n

    def _take_buffer(self) -> bytearray:
        """The bytes buffered so far (handed over, not copied); the buffer is emptied."""
        chunk, self._buffer = self._buffer, bytearray()
        return chunk

    def _part_size(self) -> int:
        """``chunk_size``, doubled after every 2,000 parts."""
        return self.chunk_size << (len(self._parts) // 2000)

    def _send_part(self, data: memoryview | bytearray, copy: bool = True) -> None:
        """Upload ``data`` as the next part in the background: a view of the caller's
        bytes is copied once a slot is free (so at most ``max_inflight`` parts exist)
        unless ``copy`` is False (a view of ``bytes``, which cannot change), a filled
        buffer is handed over."""
        conn = self._conn
        if self._upload_id is None:
            response = call(conn.retry, "POST", self.name, lambda: conn.engine().
                            create_multipart_upload(conn.bucket, self._key))
            self._upload_id = response["UploadId"]
        number = len(self._parts) + 1
        if number > MAX_PARTS:
            raise OSError(27, f"more than {MAX_PARTS} parts of {self.chunk_size} bytes: "
                          "raise mpu_chunksize", self.name)
        for done in [f for f in self._parts if f.done()]:
            done.result()  # a failed part fails the write now
        self._slots.acquire()
        try:
            holder = [bytes(data) if copy and isinstance(data, memoryview) else data]
            future = conn.executor().submit(self._upload_part, number, holder)
        except BaseException:
            self._slots.release()
            raise
        self._parts.append(future)

    def _upload_part(self, number: int, holder: list[bytes | bytearray]) -> dict[str, Any]:
        conn = self._conn
        chunk = holder.pop()  # the request below holds the only reference: freed before
        size = len(chunk)     # the slot is
        checksum = crc32_of(chunk)
        request = functools.partial(conn.engine().upload_part, conn.bucket, self._key,
                                    self._upload_id, number, chunk, checksum)
        del chunk
        try:
            response = call(conn.retry, "PUT", self.name, request, nbytes=lambda _: size)
            return {"PartNumber": number, "ETag": response["ETag"], "ChecksumCRC32": checksum}
        finally:
            del request
            self._slots.release()

    def _commit(self) -> None:
        conn = self._conn
        engine = conn.engine()
        if self._upload_id is None:
            body = self._take_buffer()
            checksum = crc32_of(body)
            call(conn.retry, "PUT", self.name,
                 lambda: engine.put_object(conn.bucket, self._key, body, checksum),
                 nbytes=lambda _: len(body))
            return
        if self._buffer:
            self._send_part(self._take_buffer())
        parts = [future.result() for future in self._parts]
        call(conn.retry, "POST", self.name, lambda: engine.complete_multipart_upload(
            conn.bucket, self._key, self._upload_id, parts))

    def _discard(self) -> None:
        self._take_buffer()
        if self._upload_id is None:
            return
        for future in self._parts:
            future.cancel()
        for future in self._parts:
            if not future.cancelled():
                try:
                    future.result()
                except Exception:  # noqa: BLE001 - the upload is being thrown away
                    pass
        conn = self._conn
        try:
            call(conn.retry, "DELETE", self.name, lambda: conn.engine().abort_multipart_upload(
                conn.bucket, self._key, self._upload_id))
        except OSError as exc:
            logger.warning("could not abort the multipart upload of %s: %s", self.name, exc)
