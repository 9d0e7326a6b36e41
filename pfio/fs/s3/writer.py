"""``S3Sink``: the all-or-nothing writer of one S3 object.

Up to ``chunk_size`` bytes the object is sent with one PUT when the file is closed. Past
that a multipart upload starts: every full part is uploaded in the background while the
caller goes on writing, with at most ``max_inflight`` chunks' worth of parts in flight (a
part of two chunks counts twice), so memory stays below ``max_inflight`` chunks plus the 2
parts being filled and handed over. The first :attr:`S3Sink.GROW_AFTER` parts are of
``chunk_size``; the later ones of twice that, as a large object has fewer parts that way
(each part costs the server work of its own: on Ceph RGW, parts of 16 MiB instead of 8 saved
its CPU and made saves of 968 MiB 1.08x faster per round, median); the part
size doubles again after every 2,000 parts (so that the 10,000 parts S3 allows hold more
than 100,000 chunks). Closing uploads the last part and completes the upload; an exception
(or :meth:`abort`) aborts it, so nothing is published.

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

Every PUT and part carries the CRC32 of its body (``x-amz-checksum-crc32``) and, until the
endpoint has shown that it checks that CRC, its signed SHA-256 where the endpoint is known to
check that (the first multipart upload to an endpoint probes it), else its ``Content-MD5``;
the answer is checked (:mod:`pfio.fs.s3.integrity`: the echoed CRC32, else the ETag when it
is the body's MD5). A
multipart upload declares CRC32 as its checksum algorithm (S3 then keeps a checksum of
checksums and does not checksum the whole object again). The checksums are computed here
rather than by botocore, which would send the CRC in an ``aws-chunked`` trailer that older
S3-compatible servers reject: a part's in the thread that uploads it, while the caller
writes on.

``exclusive`` (``open(name, "xb")``): the PUT, or the completion, carries
``If-None-Match: *``, so that on a server with conditional writes (PUTs: AWS, Ceph, moto;
completions: AWS) only one of several writers creates the object and the others get
``FileExistsError``; a server without them ignores the header (the check is then the HEADs
made when the file is opened and before the upload is completed, racy).
"""

from __future__ import annotations

import binascii
import errno
import functools
import logging
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ...digests import md5_digest
from ..writers import AtomicSink
from .engine import Answer, Copied, Head, NewUpload, Part, Written
from .errors import (
    NoSuchUpload,
    PreconditionFailed,
    ServerError,
    may_have_been_applied,
)
from .integrity import (
    STORED_BAD_DIGEST,
    Digests,
    digests_of,
    probe,
    signed_payloads,
    verify,
)
from .retry import call

if TYPE_CHECKING:
    from .connection import S3Connection

logger = logging.getLogger(__name__)

#: S3 allows at most this many parts in one upload
MAX_PARTS = 10000
#: ... each but the last at least this big
MIN_PART = 5 << 20


class S3Sink(AtomicSink):
    """Writes ``key`` through ``conn``; see the module documentation."""

    #: the parts of ``chunk_size`` an upload begins with; the later ones are larger
    GROW_AFTER = 8

    def __init__(self, conn: S3Connection, key: str, chunk_size: int,
                 max_inflight: int = 4, exclusive: bool = False) -> None:
        super().__init__(conn.url(key))
        self._conn = conn
        self._key = key
        self._exclusive = exclusive
        self._endpoint = conn.settings.endpoint
        self.chunk_size = max(chunk_size, MIN_PART)
        self._buffer = bytearray()  # the part being filled
        #: a whole part of the caller's immutable bytes, not copied, waiting to know whether
        #: more come (then it is a part) or not (then it is the object, one PUT)
        self._held: memoryview | None = None
        self._upload_id: str | None = None
        self._parts: list[Future[tuple[Part, int, bool]]] = []
        self._inflight = max(1, max_inflight)
        self._slots = threading.BoundedSemaphore(self._inflight)  # chunks in flight
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
                # before the upload starts, a full part waits for more bytes (an object of
                # exactly one part is one PUT); once it has started, parts go at once, so
                # that no more parts are held than before
                started = self._upload_id is not None
                if self._held is not None:
                    self._send_part(self._take_buffer(), copy=False)
                    continue
                if len(self._buffer) == part:
                    self._send_part(self._take_buffer())
                    continue
                if not self._buffer and n - pos >= part:
                    if started or n - pos > part:
                        if kept is not None:
                            self._send_part(kept[pos:pos + part], copy=False)
                        else:
                            self._send_part(view[pos:pos + part])
                    elif kept is not None:
                        self._held = kept[pos:pos + part]
                    else:
                        break  # (buffered below)
                    pos += part
                    continue
                take = min(n - pos, part - len(self._buffer))
                self._buffer += view[pos:pos + take]
                pos += take
                if started and len(self._buffer) == part:
                    self._send_part(self._take_buffer())
            if pos < n:  # a whole part of mutable bytes, the last of this write: copied
                self._buffer += view[pos:]
        return n

    def _take_buffer(self) -> bytearray | memoryview:
        """The part held, else the bytes buffered so far (handed over, not copied); both
        are emptied."""
        if self._held is not None:
            held, self._held = self._held, None
            return held
        chunk, self._buffer = self._buffer, bytearray()
        return chunk

    def _part_size(self) -> int:
        """``chunk_size`` for the first :attr:`GROW_AFTER` parts, then twice that, doubled
        again after every 2,000 parts."""
        count = len(self._parts)
        return self.chunk_size << ((count >= self.GROW_AFTER) + count // 2000)

    def _send_part(self, data: memoryview | bytearray, copy: bool = True) -> None:
        """Upload ``data`` as the next part in the background: a view of the caller's
        bytes is copied once a slot is free (so at most ``max_inflight`` parts exist)
        unless ``copy`` is False (a view of ``bytes``, which cannot change), a filled
        buffer is handed over. A part takes a slot per chunk it holds (at most all)."""
        if self._upload_id is None:
            self._upload_id = self._create_upload()
        number = len(self._parts) + 1
        if number > MAX_PARTS:
            raise OSError(27, f"more than {MAX_PARTS} parts of {self.chunk_size} bytes: "
                          "raise mpu_chunksize", self.name)
        for done in [f for f in self._parts if f.done()]:
            done.result()  # a failed part fails the write now
        slots = min(self._inflight, max(1, -(-len(data) // self.chunk_size)))
        taken = 0
        try:
            for _ in range(slots):
                self._slots.acquire()
                taken += 1
            holder = [bytes(data) if copy and isinstance(data, memoryview) else data]
            future = self._conn.executor().submit(self._upload_part, number, holder, slots)
        except BaseException:
            self._slots.release(taken)
            raise
        self._parts.append(future)

    def _create_upload(self) -> str:
        """Start the multipart upload; its id. A try that may have started one whose answer
        was lost is not resent blindly: once an upload is started, the others of this key
        the server began while pfio was trying (the orphans) are aborted."""
        conn = self._conn
        unsure = False
        began = time.monotonic()

        def create() -> NewUpload:
            nonlocal unsure
            try:
                return conn.engine().create_multipart_upload(conn.bucket, self._key)
            except Exception as exc:
                unsure = unsure or may_have_been_applied(exc)
                raise

        upload_id = call(conn.retry, "POST", self.name, create).upload_id
        if unsure:
            self._abort_orphans(upload_id, time.monotonic() - began)
        return upload_id

    def _abort_orphans(self, ours: str, window: float) -> None:
        """Abort the uploads of this key other than ``ours`` that the server began in the
        ``window`` seconds before it began ours (by its own clock, to the second): those
        the tries whose answers were lost started."""
        conn, key = self._conn, self._key
        try:
            uploads = call(conn.retry, "GET", self.name, lambda: conn.engine().
                           list_multipart_uploads(conn.bucket, key)).uploads
        except OSError as exc:
            logger.warning("%s: could not look for the uploads a lost answer may have "
                           "started (%s): left for the bucket's lifecycle rules", self.name,
                           exc)
            return
        mine = [(u.upload_id, u.initiated.timestamp()) for u in uploads
                if u.key == key and u.initiated is not None]
        start = next((at for upload_id, at in mine if upload_id == ours), None)
        if start is None:
            logger.warning("%s: the upload %s is not listed: the uploads a lost answer may "
                           "have started are left for the bucket's lifecycle rules",
                           self.name, ours)
            return
        for orphan, at in mine:
            if orphan == ours or not start - window - 1.0 <= at <= start:
                continue
            logger.warning("%s: aborting the multipart upload %s, started by a try whose "
                           "answer was lost", self.name, orphan)
            try:
                call(conn.retry, "DELETE", self.name, functools.partial(
                    self._abort_upload, key, orphan))
            except OSError as exc:
                logger.warning("%s: could not abort %s: %s", self.name, orphan, exc)

    def _upload_part(self, number: int, holder: list[bytes | bytearray],
                     slots: int = 1) -> tuple[Part, int, bool]:
        """Upload part ``number`` (the bytes in ``holder``, which hold ``slots``); its entry
        of the completion, its size and whether its ETag is its MD5."""
        conn = self._conn
        chunk = holder.pop()  # the request below holds the only reference: freed before
        size = len(chunk)     # the slot is
        request = None
        try:
            sums = digests_of(chunk, self._endpoint, self._signed(number))
            request = functools.partial(self._send_part_once, number, chunk, sums)
            del chunk
            response, md5_etag = call(conn.retry, "PUT", self.name, request,
                                      nbytes=lambda _: size)
            return Part(number=number, etag=response.etag, crc32=sums.crc32), size, md5_etag
        finally:
            del request
            self._slots.release(slots)

    def _signed(self, number: int = 0, exclusive: bool = False) -> bool:
        """Whether the body of part ``number`` (0: a single PUT, ``exclusive`` or not)
        proves itself with its signed SHA-256 rather than its MD5. Part 1 of an upload to
        an endpoint not known yet probes it first (:func:`~.integrity.probe`). An exclusive
        PUT sends its MD5, by which a try whose answer was lost is recognised."""
        conn = self._conn
        engine = conn.engine()
        if not engine.signs_payloads or exclusive:
            return False
        signed = signed_payloads(self._endpoint, conn.settings.write_digest)
        if signed is None and number == 1:
            probe(engine, conn.bucket, self._key, str(self._upload_id), self._endpoint)
            signed = signed_payloads(self._endpoint, conn.settings.write_digest)
        return bool(signed)

    def _send_part_once(self, number: int, chunk: bytes | bytearray,
                        sums: Digests) -> tuple[Written, bool]:
        """One try of part ``number``: the answer, and whether its ETag is the part's MD5."""
        conn = self._conn
        assert self._upload_id is not None  # parts are sent once the upload has started
        response = conn.engine().upload_part(conn.bucket, self._key, self._upload_id, number,
                                             chunk, sums.crc32, sums.content_md5, sums.sha256)
        return response, verify(response, sums, self._endpoint,
                                f"part {number} of {self.name}")

    def _commit(self) -> None:
        if self._upload_id is None:
            self._put(self._take_buffer())
            return
        if self._held is not None:
            self._send_part(self._take_buffer(), copy=False)
        elif self._buffer:
            self._send_part(self._take_buffer())
        completion = Completion(self._conn, self._key, self._upload_id, self._exclusive)
        for future in self._parts:
            completion.add(*future.result())
        self._completion = completion
        completion.complete()

    def _put(self, body: bytearray | memoryview) -> None:
        """Send the whole object ``body`` with one PUT, its checksums checked.

        Raises:
            FileExistsError: ``exclusive``, and an object is at the key.
        """
        conn, endpoint = self._conn, self._endpoint
        sums = digests_of(body, endpoint, self._signed(exclusive=self._exclusive))
        unsure = False

        def send() -> Written:
            nonlocal unsure
            try:
                response = conn.engine().put_object(conn.bucket, self._key, body, sums.crc32,
                                                    sums.content_md5, self._exclusive,
                                                    sums.sha256)
            except Exception as exc:
                unsure = unsure or may_have_been_applied(exc)
                raise
            verify(response, sums, endpoint, self.name)
            return response

        try:
            call(conn.retry, "PUT", self.name, send, nbytes=lambda _: len(body))
        except OSError as exc:
            cause = exc.__cause__
            if isinstance(cause, ServerError) and cause.code == STORED_BAD_DIGEST:
                raise OSError(errno.EIO, f"{exc.strerror}; the server checks neither the "
                              "CRC nor Content-MD5 and stored them: the object at this key "
                              "is damaged, write it again", self.name) from exc
            if not (self._exclusive and _precondition_failed(exc)):
                raise
            if unsure and sums.md5 is not None and self._is_ours(sums.md5, len(body)):
                return  # a try that created it lost its answer; the next one found it
            raise FileExistsError(errno.EEXIST, "file exists", self.name) from None

    def _is_ours(self, md5: str, size: int) -> bool:
        """Whether the object at the key has ``size`` bytes and the ETag ``md5``."""
        conn = self._conn
        try:
            head = call(conn.retry, "HEAD", self.name,
                        lambda: conn.engine().head_object(conn.bucket, self._key))
        except FileNotFoundError:
            return False
        return head.size == size and head.etag.strip('"') == md5

    def _abort_upload(self, key: str, upload_id: str) -> Answer:
        """One try of aborting the multipart upload ``upload_id`` of ``key``."""
        conn = self._conn
        return conn.engine().abort_multipart_upload(conn.bucket, key, upload_id)

    def _discard(self) -> None:
        self._held, self._buffer = None, bytearray()
        upload_id = self._upload_id
        if upload_id is None:
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
            call(conn.retry, "DELETE", self.name,
                 functools.partial(self._abort_upload, self._key, upload_id))
        except OSError as exc:
            logger.warning("could not abort the multipart upload of %s: %s", self.name, exc)


class Completion:
    """Completes the multipart upload ``upload_id`` of ``key`` (see the module
    documentation): :meth:`add` each part in order, then :meth:`complete`.

    ``may_be_published`` is True when :meth:`complete` failed and the upload may still
    have been completed (whoever would abort it must not).
    """

    def __init__(self, conn: S3Connection, key: str, upload_id: str,
                 exclusive: bool = False) -> None:
        self._conn = conn
        self._key = key
        self.upload_id = upload_id
        self.exclusive = exclusive
        self.name = conn.url(key)
        self.parts: list[Part] = []
        self.size = 0
        self.md5_etags = True
        self.may_be_published = False

    def add(self, part: Part, size: int, md5_etag: bool = True) -> None:
        """The next part, of ``size`` bytes; ``md5_etag``: False when its ETag may not be
        the MD5 of its bytes (SSE-KMS, SSE-C)."""
        self.parts.append(part)
        self.size += size
        self.md5_etags = self.md5_etags and md5_etag

    def complete(self) -> None:
        """Send CompleteMultipartUpload (with retries); a failure after a try that may
        have been applied is resolved by a HEAD of the object.

        Raises:
            FileNotFoundError, PermissionError, OSError: the upload was not completed, or
            whether it was could not be told (the message says which).
        """
        conn, key, upload_id, parts = self._conn, self._key, self.upload_id, self.parts
        unsure = False
        if self.exclusive and self._head() is not None:  # (for servers that ignore the
            raise FileExistsError(errno.EEXIST, "file exists", self.name)  # condition)

        def send() -> Copied:
            nonlocal unsure
            try:
                return conn.engine().complete_multipart_upload(conn.bucket, key, upload_id,
                                                               parts, self.exclusive)
            except Exception as exc:
                unsure = unsure or may_have_been_applied(exc)
                raise

        try:
            call(conn.retry, "POST", self.name, send)
            return
        except OSError as exc:
            failure = exc
        if self.exclusive and _precondition_failed(failure) and not unsure:
            raise FileExistsError(errno.EEXIST, "file exists", self.name) from None
        if not unsure and not isinstance(failure.__cause__, NoSuchUpload) and \
                not _precondition_failed(failure):
            raise failure  # answered, and not applied: the upload may be aborted
        self.may_be_published = True
        try:
            head = self._head()
        except OSError as exc:
            raise OSError(errno.EIO, f"completing the multipart upload failed "
                          f"({failure.strerror}) and whether it was completed could not be "
                          f"checked ({exc.strerror}): the object may or may not be "
                          "published", self.name) from failure
        if head is not None and self.is_ours(head):
            logger.info("%s: the answer to completing its multipart upload was lost; the "
                        "object is this upload's (ETag %s)", self.name, head.etag)
            return
        self.may_be_published = False  # looked at: it was not completed
        found = "no object" if head is None else f"another object (ETag {head.etag})"
        raise OSError(errno.EIO, f"completing the multipart upload failed "
                      f"({failure.strerror}) and {found} is at its key: nothing was "
                      "published", self.name) from failure

    def _head(self) -> Head | None:
        """The HEAD of the object at the key, None when there is none."""
        conn = self._conn
        try:
            return call(conn.retry, "HEAD", self.name,
                        lambda: conn.engine().head_object(conn.bucket, self._key))
        except FileNotFoundError:
            return None

    def expected_etag(self) -> str | None:
        """The ETag S3 gives the object this upload makes (MD5 of the parts' binary MD5s,
        ``-`` and the number of parts), None when the parts' ETags are not MD5s."""
        if not self.md5_etags:
            return None
        digests = []
        for part in self.parts:
            etag = part.etag.strip('"').lower()
            if len(etag) != 32:
                return None
            try:
                digests.append(binascii.unhexlify(etag))
            except binascii.Error:
                return None
        digest = md5_digest(b"".join(digests)).hex()
        return f"{digest}-{len(self.parts)}"

    def is_ours(self, head: Head) -> bool:
        """Whether the object ``head`` describes is the one this upload makes: its ETag is
        :meth:`expected_etag`, or (parts without MD5 ETags) it ends with the number of parts
        and the size is the size written."""
        etag = head.etag.strip('"').lower()
        if not etag.endswith(f"-{len(self.parts)}"):
            return False
        expected = self.expected_etag()
        if expected is not None:
            return etag == expected
        return head.size == self.size


def _precondition_failed(exc: OSError) -> bool:
    """Whether ``exc`` is a refused ``If-None-Match: *`` (an object is at the key)."""
    return isinstance(exc.__cause__, PreconditionFailed)
