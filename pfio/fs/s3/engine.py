"""The contract between S3's IO layer and its engines, without IO: the :class:`Engine`
protocol (the requests :mod:`~pfio.fs.s3.get`, :mod:`~pfio.fs.s3.writer`,
:mod:`~pfio.fs.s3.operations`, :mod:`~pfio.fs.s3.uploads` and the filesystem send), where a
GET's body goes (:class:`BodySink`, :class:`BodyRest`), and what each request answers: a
frozen dataclass per kind of answer (:class:`Head`, :class:`ListPage`, :class:`Written`,
:class:`NewUpload`, :class:`UploadsPage`, :class:`Copied`, :class:`Deleted`, ...).

Both engines return these types: the ``http`` engine builds them from the answers it reads
(:mod:`~pfio.fs.s3.wire`, :mod:`~pfio.fs.s3.listing`), the ``boto3`` engine converts
botocore's dicts once, at its edge. An error answer is raised as a
:class:`~pfio.fs.s3.errors.ServerError` (of the subclass that says what it is: throttled,
not found, ...), a broken or silent connection as a ``ConnectionError`` or a
``TimeoutError``; :mod:`~pfio.fs.s3.retry` retries them and
:mod:`~pfio.fs.s3.errors` makes them the builtin errors users see.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

#: ``hook(method, path, headers)``, called before each request is sent (``path`` is
#: ``/bucket/key``, the header names are lower-case)
RequestHook = Callable[[str, str, "dict[str, str]"], None]


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A successful answer: its HTTP status (what the tracer records). The answer of the
    requests that tell nothing else (DELETE of one object, an abort, the bucket
    requests)."""

    status: int = 200


@dataclass(frozen=True, kw_only=True)
class Head(Answer):
    """An object's HEAD."""

    size: int
    #: as the server sent it (quoted); "" when it sent none
    etag: str = ""
    #: None when the server sent no date that reads
    last_modified: datetime.datetime | None = None
    #: the user metadata (the ``x-amz-meta-*`` headers, without the prefix)
    metadata: Mapping[str, str] = field(default_factory=dict)
    content_type: str | None = None


@dataclass(frozen=True, kw_only=True)
class Entry:
    """An object of a listing page (its key decoded)."""

    key: str
    size: int = 0
    etag: str = ""
    last_modified: datetime.datetime | None = None


@dataclass(frozen=True, kw_only=True)
class ListPage(Answer):
    """One page of ListObjectsV2."""

    entries: tuple[Entry, ...] = ()
    #: the common prefixes (with a delimiter), each ending with it
    prefixes: tuple[str, ...] = ()
    truncated: bool = False
    #: where the next page starts (a truncated page names one)
    token: str | None = None


@dataclass(frozen=True, kw_only=True)
class Written(Answer):
    """The answer to a PUT of a body (an object, or a part of an upload)."""

    #: as the server sent it (quoted); "" when it sent none
    etag: str = ""
    #: the CRC32 the server echoed (``x-amz-checksum-crc32``), None when it echoed none
    crc32: str | None = None
    #: the server-side encryption it applied (``x-amz-server-side-encryption``), if any
    encryption: str | None = None
    #: whether the body was encrypted with a key of the client's (SSE-C)
    customer_key: bool = False


@dataclass(frozen=True, kw_only=True)
class NewUpload(Answer):
    """The answer to CreateMultipartUpload."""

    upload_id: str


@dataclass(frozen=True, kw_only=True)
class Part:
    """A part of a multipart upload as its completion names it."""

    number: int
    #: as the server sent it (quoted)
    etag: str
    #: its CRC32 (base64) when it was sent with one
    crc32: str | None = None


@dataclass(frozen=True, kw_only=True)
class Copied(Answer):
    """The answer to a completion or a copy (CompleteMultipartUpload, CopyObject,
    UploadPartCopy), which S3 may fail inside a 200: the engine checks that it is the
    result it should be."""

    #: "" when the result names none (Ceph may leave a completion's empty)
    etag: str = ""


@dataclass(frozen=True, kw_only=True)
class NotDeleted:
    """A key a DeleteObjects request did not delete, and why."""

    key: str
    code: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class Deleted(Answer):
    """The answer to a (quiet) DeleteObjects: the keys it did not delete."""

    failed: tuple[NotDeleted, ...] = ()


@dataclass(frozen=True, kw_only=True)
class PendingUpload:
    """A multipart upload in progress, as ListMultipartUploads names it."""

    key: str
    upload_id: str
    #: None when the server tells no time
    initiated: datetime.datetime | None = None


@dataclass(frozen=True, kw_only=True)
class UploadsPage(Answer):
    """One page of ListMultipartUploads."""

    uploads: tuple[PendingUpload, ...] = ()
    truncated: bool = False
    next_key_marker: str = ""
    next_upload_id_marker: str = ""


class BodyRest(Protocol):
    """The unread rest of a response body, still on its connection."""

    #: bytes not read yet
    left: int

    def readinto(self, target: memoryview) -> int:
        """Fill ``target`` with the next bytes (all of them unless the body ends first);
        raises ``ConnectionError`` or ``TimeoutError`` when the connection fails."""

    def close(self) -> None:
        """Drop the rest."""


class BodySink(Protocol):
    """Where an engine delivers the response of a GET."""

    def begin(self, status: int, headers: dict[str, str]) -> None:
        """The status and the (lower-case) headers of a successful response."""

    def target(self) -> memoryview | None:
        """The buffer the next body bytes may be read straight into, else None."""

    def advance(self, n: int) -> None:
        """``n`` bytes were read into :meth:`target`."""

    def write(self, chunk: Any) -> int:
        """The next piece of the body; returns how many of its bytes were taken (fewer
        once the sink is complete)."""

    def complete(self) -> bool:
        """True once every byte wanted has arrived."""

    def take_rest(self, rest: BodyRest) -> bool:
        """The sink is complete and the body goes on: True when it takes ``rest`` to read
        on (and to close), False to have the engine drop it."""


class Engine(Protocol):
    """The data path of S3: every request pfio sends.

    An engine is made by ``Engine(connection, hooks)``: it may use the connection's
    settings, botocore client and session (not its bucket: engines are shared by the
    buckets of a process with equal settings) and calls each ``hook(method, path, headers)``
    of ``hooks`` before it sends a request itself. Answers are the types of this module;
    errors are :class:`~pfio.fs.s3.errors.ServerError` (error answers), ``ConnectionError``
    and ``TimeoutError`` (no answer).
    """

    #: True when :meth:`get` takes ``rng=""`` (no ``Range`` header: a plain GET of the
    #: whole object) and stops receiving once the sink is complete, handing the rest of a
    #: long body to the sink (``take_rest``) or dropping its connection
    plain_gets: bool
    #: True when :meth:`put_object` and :meth:`upload_part` sign the ``sha256`` they are
    #: given as the body's hash (``x-amz-content-sha256``), which a server may check
    signs_payloads: bool

    def get(self, bucket: str, key: str, rng: str, if_match: str | None,
            sink: BodySink) -> None:
        """GET the range ``rng`` (``bytes=first-last``; "" for the whole object) of the
        version ``if_match`` (any when None) of ``key`` into ``sink``."""

    def head_object(self, bucket: str, key: str) -> Head: ...

    def list_objects_v2(self, bucket: str, prefix: str, delimiter: str | None = None,
                        max_keys: int | None = None, token: str | None = None) -> ListPage:
        """One page of the keys under ``prefix`` (rolled up at ``delimiter`` into common
        prefixes), at most ``max_keys`` (None: the server's default), from ``token`` (the
        previous page's) on."""

    def put_object(self, bucket: str, key: str, body: Any, crc32: str,
                   md5: str | None = None, exclusive: bool = False,
                   sha256: str | None = None) -> Written:
        """A PUT of ``body`` with its checksum ``crc32`` (and ``Content-MD5`` ``md5``, and
        its signed SHA-256 ``sha256``, hex, where :attr:`signs_payloads`); ``exclusive``:
        only if nothing is at ``key`` (``If-None-Match: *``)."""

    def create_multipart_upload(self, bucket: str, key: str,
                                checksum: str | None = "CRC32") -> NewUpload:
        """A new multipart upload whose parts carry the ``checksum`` algorithm's checksums
        (None: none, as for copies)."""

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int, body: Any,
                    crc32: str, md5: str | None = None,
                    sha256: str | None = None) -> Written:
        """Part ``number`` of an upload, its checksums as for :meth:`put_object`."""

    def complete_multipart_upload(self, bucket: str, key: str, upload_id: str,
                                  parts: list[Part], exclusive: bool = False) -> Copied:
        """Complete an upload of ``parts`` (``exclusive``: only if nothing is at ``key``)."""

    def list_multipart_uploads(self, bucket: str, prefix: str, key_marker: str = "",
                               upload_id_marker: str = "") -> UploadsPage:
        """One page of the uploads in progress of keys under ``prefix``, after the
        markers."""

    def abort_multipart_upload(self, bucket: str, key: str, upload_id: str) -> Answer: ...

    def delete_object(self, bucket: str, key: str) -> Answer: ...

    def delete_objects(self, bucket: str, keys: list[str]) -> Deleted:
        """A quiet DeleteObjects of ``keys`` (at most 1,000)."""

    def copy_object(self, bucket: str, key: str, source_bucket: str,
                    source_key: str) -> Copied:
        """A server-side copy of ``source_key`` (up to 5 GiB) to ``key``."""

    def upload_part_copy(self, bucket: str, key: str, upload_id: str, number: int,
                         source_bucket: str, source_key: str, rng: str) -> Copied:
        """Part ``number`` of an upload copied from the byte range ``rng``
        (``bytes=first-last``) of ``source_key`` (its ETag required)."""

    def head_bucket(self, bucket: str) -> Answer: ...

    def create_bucket(self, bucket: str) -> Answer:
        """Create ``bucket`` in the region of the engine's session."""

    def close(self) -> None: ...
