"""S3's REST protocol without IO: where requests go (:class:`Endpoint`), the credentials of
boto3's chain, the headers and bodies of requests, and reading their answers into the
result types of :mod:`pfio.fs.s3.engine` (errors, upload ids, heads, completions, copies,
batch deletes, uploads in progress)."""

from __future__ import annotations

import datetime
import email.utils
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit
from xml.sax.saxutils import escape

from .engine import Copied, Deleted, Head, NewUpload, NotDeleted, Part, PendingUpload, UploadsPage
from .errors import ProtocolError, ServerError, server_error
from .sigv4 import Credentials

if TYPE_CHECKING:
    from collections.abc import Callable

    from .settings import S3Settings

_CODE = re.compile(rb"<Code>([^<]*)</Code>")
_MESSAGE = re.compile(rb"<Message>([^<]*)</Message>")
_UPLOAD_ID = re.compile(rb"<UploadId>([^<]*)</UploadId>")


@dataclass(frozen=True)
class Endpoint:
    """Where an engine sends requests: ``settings.endpoint``, else AWS's in ``region``."""

    url: str
    #: the host to connect to (an IPv6 address without its brackets)
    host: str
    port: int
    tls: bool
    #: the ``Host`` header of path-style requests (with the port when one was given; an
    #: IPv6 address in brackets)
    host_header: str
    path_style: bool

    @classmethod
    def of(cls, settings: S3Settings, region: str) -> Endpoint:
        parts = urlsplit(settings.endpoint or f"https://s3.{region}.amazonaws.com")
        host = parts.hostname or ""
        tls = parts.scheme == "https"
        authority = f"[{host}]" if ":" in host else host
        return cls(parts.geturl(), host, parts.port or (443 if tls else 80), tls,
                   authority if parts.port is None else f"{authority}:{parts.port}",
                   settings.path_style())

    def address(self, bucket: str, key: str) -> tuple[str, str, str]:
        """The host to connect to, the ``Host`` header and the path of ``key`` (of the
        bucket itself when ``key`` is ""). Virtual-host style puts the bucket in the host,
        except for a bucket with dots over TLS (as botocore does)."""
        path = "/" + quote(key, safe="/~")
        if self.path_style or (self.tls and "." in bucket):  # (no certificate names a.b.host)
            return self.host, self.host_header, f"/{bucket}{path if key else ''}"
        return f"{bucket}.{self.host}", f"{bucket}.{self.host_header}", path


def credential_source(session: Any) -> tuple[Callable[[], Credentials], bool] | None:
    """What gives the credentials of boto3's chain for ``session`` (refreshed whenever
    botocore refreshes them), and whether they are static (fixed for the process); None
    (unsigned requests) when there are none."""
    credentials = session.get_credentials()
    if credentials is None:
        return None
    if not hasattr(credentials, "refresh_needed"):
        frozen = credentials.get_frozen_credentials()
        fixed = Credentials(frozen.access_key, frozen.secret_key, frozen.token)
        return (lambda: fixed), True
    return credentials.get_frozen_credentials, False  # refreshes when near expiry


@dataclass(frozen=True)
class RawAnswer:
    """An answer as the ``http`` engine read it: status, (lower-case) headers, body (empty
    when a sink took it)."""

    status: int
    headers: dict[str, str]
    body: bytes


def error_answer(status: int, body: bytes, headers: dict[str, str]) -> ServerError:
    """The error S3 answered with ``status`` and the XML ``body``."""
    code = _CODE.search(body)
    message = _MESSAGE.search(body)
    return server_error(status, code.group(1).decode() if code else str(status),
                        message.group(1).decode() if message else "", headers)


def new_upload(answer: RawAnswer) -> NewUpload:
    """The answer to CreateMultipartUpload: the ``UploadId`` its body names.

    Raises:
        ServerError: the body names no upload.
    """
    match = _UPLOAD_ID.search(answer.body)
    if match is None:
        raise server_error(answer.status, "NoUploadId", "no UploadId in the answer", {})
    return NewUpload(status=answer.status, upload_id=match.group(1).decode())


def completion_body(parts: list[Part]) -> bytes:
    """The XML body of CompleteMultipartUpload for ``parts`` (their CRC32s when known)."""
    xml = "".join(
        f"<Part><PartNumber>{p.number}</PartNumber><ETag>{escape(p.etag)}</ETag>"
        + (f"<ChecksumCRC32>{p.crc32}</ChecksumCRC32>" if p.crc32 is not None else "")
        + "</Part>" for p in parts)
    return f"<CompleteMultipartUpload>{xml}</CompleteMultipartUpload>".encode()


#: the code of the :class:`ServerError` raised for a 200 answer to a write or a copy whose
#: body is not the result it should be (retried as a 5xx: S3 may fail these inside a 200)
UNREADABLE = "UnreadableAnswer"


def completed(answer: RawAnswer, result: str) -> ElementTree.Element:
    """The root element of ``answer`` to a request that completes a write or a copy
    (CompleteMultipartUpload, CopyObject, UploadPartCopy, DeleteObjects), which S3 may fail
    inside a 200 (and whose answer may be cut): it must be the XML element ``result``.

    Raises:
        ServerError: the body is an ``<Error>`` (status 500, its code), or anything but
            ``result`` (whitespace, truncated XML, another element): :data:`UNREADABLE`,
            status 500. Both are retried.
    """
    body = answer.body
    try:
        root: ElementTree.Element | None = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        root = None
    tag = None if root is None else _local(root.tag)
    if tag == "Error":
        raise error_answer(500, body, {})
    if root is None or tag != result:
        raise server_error(500, UNREADABLE, f"a 200 answer without {result}: {excerpt(body)}",
                           answer.headers)
    return root


def result_etag(answer: RawAnswer, result: str, required: bool = False) -> Copied:
    """The answer to a copy or a completion (see :func:`completed`) with the ``ETag`` of its
    ``result`` element ("" when it names none: Ceph may leave a completion's empty).

    Raises:
        ServerError: as :func:`completed`; also when the result names no ETag and one is
            ``required``.
    """
    root = completed(answer, result)
    etag = next((element.text for element in root if _local(element.tag) == "ETag"),
                None) or ""
    if required and not etag:
        raise server_error(500, UNREADABLE, f"a {result} without an ETag: "
                           f"{excerpt(answer.body)}", answer.headers)
    return Copied(status=answer.status, etag=etag)


def excerpt(body: bytes, limit: int = 120) -> str:
    """The start of an answer's ``body``, for an error message."""
    text = repr(bytes(body[:limit]))
    return text + (f" ({len(body)} bytes)" if len(body) > limit else "")


def head_of(status: int, headers: dict[str, str]) -> Head:
    """The HEAD of an object from its answer's (lower-case) ``headers``: its length, ETag,
    ``Last-Modified`` (None when it reads as no date), content type and user metadata
    (the ``x-amz-meta-*`` headers).

    Raises:
        ProtocolError: the answer tells no length (a size read as 0 would be wrong).
    """
    length = headers.get("content-length")
    if length is None or not (length.isascii() and length.isdigit()):
        raise ProtocolError(f"the HEAD of an object was answered without its length "
                            f"(Content-Length: {length!r})")
    return Head(status=status, size=int(length), etag=headers.get("etag", ""),
                last_modified=_http_date(headers.get("last-modified")),
                metadata={name[len(_META):]: value for name, value in headers.items()
                          if name.startswith(_META)},
                content_type=headers.get("content-type"))


_META = "x-amz-meta-"


def _http_date(text: str | None) -> datetime.datetime | None:
    """The aware ``datetime`` of an HTTP date, None when there is none that reads."""
    if not text:
        return None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=datetime.timezone.utc)


def get_headers(rng: str, if_match: str | None) -> list[tuple[str, str]]:
    """The headers of a GET of the range ``rng`` ("" for none) of the version ``if_match``."""
    headers = [("range", rng)] if rng else []
    if if_match:
        headers.append(("if-match", if_match))
    return headers


def copy_source(bucket: str, key: str) -> str:
    """The ``x-amz-copy-source`` header of a copy of ``key`` in ``bucket`` (URL-encoded)."""
    return quote(f"{bucket}/{key}", safe="/~")


def delete_body(keys: list[str]) -> bytes:
    """The XML body of a quiet DeleteObjects request for ``keys``."""
    objects = "".join(f"<Object><Key>{escape(key)}</Key></Object>" for key in keys)
    return f"<Delete><Quiet>true</Quiet>{objects}</Delete>".encode()


def bucket_configuration(region: str) -> bytes:
    """The XML body of CreateBucket for a bucket in ``region`` (not us-east-1)."""
    return ("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            f"<LocationConstraint>{escape(region)}</LocationConstraint>"
            "</CreateBucketConfiguration>").encode()


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def parse_delete_result(answer: RawAnswer) -> Deleted:
    """A DeleteObjects answer: the keys not deleted, and why.

    Raises:
        ServerError: the answer is an error as a whole, or not a ``DeleteResult``.
    """
    root = completed(answer, "DeleteResult")
    failed = []
    for element in root:
        if _local(element.tag) == "Error":
            fields = {_local(child.tag): child.text or "" for child in element}
            failed.append(NotDeleted(key=fields.get("Key", ""), code=fields.get("Code", ""),
                                     message=fields.get("Message", "")))
    return Deleted(status=answer.status, failed=tuple(failed))


def parse_uploads(answer: RawAnswer) -> UploadsPage:
    """A ListMultipartUploads page (each upload's start time, an aware ``datetime``, when
    the answer tells it; the markers to go on from when it is truncated).

    Raises:
        ServerError: the answer is not a ListMultipartUploadsResult (retried).
    """
    root = completed(answer, "ListMultipartUploadsResult")
    uploads: list[PendingUpload] = []
    truncated = False
    markers = {"NextKeyMarker": "", "NextUploadIdMarker": ""}
    for element in root:
        tag = _local(element.tag)
        if tag == "IsTruncated":
            truncated = (element.text or "").strip() == "true"
        elif tag in markers:
            markers[tag] = element.text or ""
        if tag != "Upload":
            continue
        fields = {_local(child.tag): child.text or "" for child in element}
        initiated = datetime.datetime.fromisoformat(
            fields["Initiated"].replace("Z", "+00:00")) if fields.get("Initiated") else None
        uploads.append(PendingUpload(key=fields.get("Key", ""),
                                     upload_id=fields.get("UploadId", ""),
                                     initiated=initiated))
    return UploadsPage(status=answer.status, uploads=tuple(uploads), truncated=truncated,
                       next_key_marker=markers["NextKeyMarker"],
                       next_upload_id_marker=markers["NextUploadIdMarker"])
