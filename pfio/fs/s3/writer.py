"""``S3Sink``: the all-or-nothing writer of one S3 object.

Up to ``chunk_size`` bytes the object is sent with one PUT when the file is closed. Past
that a multipart upload starts: every full chunk is uploaded as a part in the background
while the caller goes on writing, with at most ``max_inflight`` parts in flight, so memory
stays below ``max_inflight + 2`` parts. The part size is ``chunk_size``, doubled after
every 2,000 parts (so that the 10,000 parts S3 allows hold 62,000 chunks). Closing uploads
the last part and completes the upload; an exception (or :meth:`abort`) aborts it, so
nothing is published.

Completing is not idempotent: when the answer to CompleteMultipartUpload is lost (the
connection broke after the server applied it) the next try gets ``NoSuchUpload``, the upload
being gone. So when a completion fails after a try that may have reached the server (a
broken or silent connection, a 5xx, or ``NoSuchUpload``), :class:`Completion` looks at the
object: when its ETag is this upload's (the MD5 of the parts' binary MD5s followed by
``-<number of parts>``, where the parts' ETags are MD5s as on AWS without KMS, MinIO, Ceph
and moto; else an ETag ending with ``-<number of parts>`` and the size written) the close
succeeds; otherwise it raises an ``OSError`` saying so. An upload whose completion may have
succeeded is never aborted unless that look said it did not: when the object cannot be
looked at, the upload is left for the bucket's lifecycle rules, with a warning.

Every PUT carries the CRC32 of its body (``x-amz-checksum-crc32``), which S3 checks before
it stores the bytes, and a multipart upload declares CRC32 as its checksum algorithm (S3
then keeps a checksum of checksums and does not checksum the whole object again). The
CRC is computed here rather than by botocore, which would send it in an ``aws-chunked``
trailer that older S3-compatible servers reject.
"""

from __future__ import annotations

import base64
import binascii
import errno
import functools
import hashlib
import logging
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ...checksums import crc32
from ..writers import AtomicSink
from .errors import client_error_info, may_have_been_applied
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
        self._completion: Completion | None = None

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

    def _upload_part(self, number: int,
                     holder: list[bytes | bytearray]) -> tuple[dict[str, Any], int]:
        """Upload part ``number`` (the bytes in ``holder``); its entry of the completion
        and its size."""
        conn = self._conn
        chunk = holder.pop()  # the request below holds the only reference: freed before
        size = len(chunk)     # the slot is
        checksum = crc32_of(chunk)
        request = functools.partial(conn.engine().upload_part, conn.bucket, self._key,
                                    self._upload_id, number, chunk, checksum)
        del chunk
        try:
            response = call(conn.retry, "PUT", self.name, request, nbytes=lambda _: size)
            return {"PartNumber": number, "ETag": response["ETag"],
                    "ChecksumCRC32": checksum}, size
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
        completion = Completion(conn, self._key, self._upload_id)
        for future in self._parts:
            completion.add(*future.result())
        self._completion = completion
        completion.complete()

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
        if self._completion is not None and self._completion.may_be_published:
            logger.warning("not aborting the multipart upload %s of %s: its completion may "
                           "have succeeded (left for the bucket's lifecycle rules)",
                           self._upload_id, self.name)
            return
        conn = self._conn
        try:
            call(conn.retry, "DELETE", self.name, lambda: conn.engine().abort_multipart_upload(
                conn.bucket, self._key, self._upload_id))
        except OSError as exc:
            logger.warning("could not abort the multipart upload of %s: %s", self.name, exc)


class Completion:
    """Completes the multipart upload ``upload_id`` of ``key`` (see the module
    documentation): :meth:`add` each part in order, then :meth:`complete`.

    ``may_be_published`` is True when :meth:`complete` failed and the upload may still
    have been completed (whoever would abort it must not).
    """

    def __init__(self, conn: S3Connection, key: str, upload_id: str) -> None:
        self._conn = conn
        self._key = key
        self.upload_id = upload_id
        self.name = conn.url(key)
        self.parts: list[dict[str, Any]] = []
        self.size = 0
        self.may_be_published = False

    def add(self, part: dict[str, Any], size: int) -> None:
        """The next part (``PartNumber``, ``ETag``, maybe ``ChecksumCRC32``), of ``size``
        bytes."""
        self.parts.append(part)
        self.size += size

    def complete(self) -> None:
        """Send CompleteMultipartUpload (with retries); a failure after a try that may
        have been applied is resolved by a HEAD of the object.

        Raises:
            FileNotFoundError, PermissionError, OSError: the upload was not completed, or
            whether it was could not be told (the message says which).
        """
        conn, key, upload_id, parts = self._conn, self._key, self.upload_id, self.parts
        unsure = False

        def send() -> dict[str, Any]:
            nonlocal unsure
            try:
                return conn.engine().complete_multipart_upload(conn.bucket, key, upload_id,
                                                               parts)
            except Exception as exc:
                unsure = unsure or may_have_been_applied(exc)
                raise

        try:
            call(conn.retry, "POST", self.name, send)
            return
        except OSError as exc:
            failure = exc
        info = client_error_info(failure.__cause__) if failure.__cause__ else None
        if not unsure and (info is None or info[0] != "NoSuchUpload"):
            raise failure  # answered, and not applied: the upload may be aborted
        self.may_be_published = True
        try:
            head = call(conn.retry, "HEAD", self.name,
                        lambda: conn.engine().head_object(conn.bucket, key))
        except FileNotFoundError:
            head = None
        except OSError as exc:
            raise OSError(errno.EIO, f"completing the multipart upload failed "
                          f"({failure.strerror}) and whether it was completed could not be "
                          f"checked ({exc.strerror}): the object may or may not be "
                          "published", self.name) from failure
        if head is not None and self.is_ours(head):
            logger.info("%s: the answer to completing its multipart upload was lost; the "
                        "object is this upload's (ETag %s)", self.name, head.get("ETag"))
            return
        self.may_be_published = False  # looked at: it was not completed
        found = "no object" if head is None else f"another object (ETag {head.get('ETag')})"
        raise OSError(errno.EIO, f"completing the multipart upload failed "
                      f"({failure.strerror}) and {found} is at its key: nothing was "
                      "published", self.name) from failure

    def expected_etag(self) -> str | None:
        """The ETag S3 gives the object this upload makes (MD5 of the parts' binary MD5s,
        ``-`` and the number of parts), None when the parts' ETags are not MD5s."""
        digests = []
        for part in self.parts:
            etag = str(part.get("ETag") or "").strip('"').lower()
            if len(etag) != 32:
                return None
            try:
                digests.append(binascii.unhexlify(etag))
            except binascii.Error:
                return None
        digest = hashlib.md5(b"".join(digests), usedforsecurity=False).hexdigest()
        return f"{digest}-{len(self.parts)}"

    def is_ours(self, head: dict[str, Any]) -> bool:
        """Whether the object ``head`` describes is the one this upload makes: its ETag is
        :meth:`expected_etag`, or (parts without MD5 ETags) it ends with the number of parts
        and the size is the size written."""
        etag = str(head.get("ETag") or "").strip('"').lower()
        if not etag.endswith(f"-{len(self.parts)}"):
            return False
        expected = self.expected_etag()
        if expected is not None:
            return etag == expected
        return head.get("ContentLength") == self.size
