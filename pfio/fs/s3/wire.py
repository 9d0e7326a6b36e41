"""S3's REST protocol without IO: where requests go (:class:`Endpoint`), the credentials of
boto3's chain, the headers and bodies of requests, and reading their answers (errors,
upload ids, heads, listing pages)."""

from __future__ import annotations

import datetime
import email.utils
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit
from xml.sax.saxutils import escape

from .errors import ProtocolError, ServerError
from .sigv4 import Credentials

if TYPE_CHECKING:
    from collections.abc import Callable

    from .connection import S3Settings

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


def server_error(status: int, body: bytes, headers: dict[str, str]) -> ServerError:
    """The error S3 answered with ``status`` and the XML ``body``."""
    code = _CODE.search(body)
    message = _MESSAGE.search(body)
    return ServerError(status, code.group(1).decode() if code else str(status),
                       message.group(1).decode() if message else "", headers)


def with_upload_id(response: dict[str, Any]) -> dict[str, Any]:
    """``response`` to CreateMultipartUpload with its ``UploadId``, read from its body.

    Raises:
        ServerError: the body names no upload.
    """
    match = _UPLOAD_ID.search(response["Body"])
    if match is None:
        raise ServerError(response["ResponseMetadata"]["HTTPStatusCode"], "NoUploadId",
                          "no UploadId in the answer", {})
    response["UploadId"] = match.group(1).decode()
    return response


def completion_body(parts: list[dict[str, Any]]) -> bytes:
    """The XML body of CompleteMultipartUpload for ``parts`` (``PartNumber``, ``ETag``,
    ``ChecksumCRC32`` when known)."""
    xml = "".join(
        f"<Part><PartNumber>{p['PartNumber']}</PartNumber><ETag>{escape(p['ETag'])}</ETag>"
        + (f"<ChecksumCRC32>{p['ChecksumCRC32']}</ChecksumCRC32>"
           if "ChecksumCRC32" in p else "") + "</Part>" for p in parts)
    return f"<CompleteMultipartUpload>{xml}</CompleteMultipartUpload>".encode()


#: the code of the :class:`ServerError` raised for a 200 answer to a write or a copy whose
#: body is not the result it should be (retried as a 5xx: S3 may fail these inside a 200)
UNREADABLE = "UnreadableAnswer"


def completed(response: dict[str, Any], result: str) -> ElementTree.Element:
    """The root element of ``response`` to a request that completes a write or a copy
    (CompleteMultipartUpload, CopyObject, UploadPartCopy, DeleteObjects), which S3 may fail
    inside a 200 (and whose answer may be cut): it must be the XML element ``result``.

    Raises:
        ServerError: the body is an ``<Error>`` (status 500, its code), or anything but
            ``result`` (whitespace, truncated XML, another element): :data:`UNREADABLE`,
            status 500. Both are retried.
    """
    body = response["Body"]
    try:
        root: ElementTree.Element | None = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        root = None
    tag = None if root is None else _local(root.tag)
    if tag == "Error":
        raise server_error(500, body, {})
    if root is None or tag != result:
        raise ServerError(500, UNREADABLE, f"a 200 answer without {result}: {excerpt(body)}",
                          response["ResponseMetadata"]["HTTPHeaders"])
    return root


def result_etag(response: dict[str, Any], result: str,
                required: bool = False) -> dict[str, Any]:
    """``response`` to a copy or a completion (see :func:`completed`), with the ``ETag`` of
    its ``result`` element as ``response[result]["ETag"]`` and ``response["ETag"]`` ("" when
    it names none: Ceph may leave a completion's empty).

    Raises:
        ServerError: as :func:`completed`; also when the result names no ETag and one is
            ``required``.
    """
    root = completed(response, result)
    etag = next((element.text for element in root if _local(element.tag) == "ETag"),
                None) or ""
    if required and not etag:
        raise ServerError(500, UNREADABLE, f"a {result} without an ETag: "
                          f"{excerpt(response['Body'])}",
                          response["ResponseMetadata"]["HTTPHeaders"])
    response[result] = {"ETag": etag}
    response["ETag"] = etag
    return response


def excerpt(body: bytes, limit: int = 120) -> str:
    """The start of an answer's ``body``, for an error message."""
    text = repr(bytes(body[:limit]))
    return text + (f" ({len(body)} bytes)" if len(body) > limit else "")


def head_response(status: int, headers: dict[str, str]) -> dict[str, Any]:
    """A HEAD of an object's answer (lower-case ``headers``) as botocore's ``head_object``
    returns it: ``ContentLength``, ``LastModified`` (an aware ``datetime``), ``ETag``,
    ``ContentType``, ``Metadata`` (the ``x-amz-meta-*`` headers) and ``ResponseMetadata``.

    Raises:
        ProtocolError: the answer tells no length (a size read as 0 would be wrong).
    """
    length = headers.get("content-length")
    if length is None or not (length.isascii() and length.isdigit()):
        raise ProtocolError(f"the HEAD of an object was answered without its length "
                            f"(Content-Length: {length!r})")
    response: dict[str, Any] = {
        "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": headers},
        "ContentLength": int(length),
        "ETag": headers.get("etag", ""),
        "Metadata": {name[len(_META):]: value for name, value in headers.items()
                     if name.startswith(_META)},
    }
    modified = _http_date(headers.get("last-modified"))
    if modified is not None:  # (optional: a server may leave it out, or send nonsense)
        response["LastModified"] = modified
    if "content-type" in headers:
        response["ContentType"] = headers["content-type"]
    return response


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


def parse_delete_result(response: dict[str, Any]) -> dict[str, Any]:
    """A DeleteObjects answer as botocore's ``delete_objects`` returns it: ``Errors``
    (``Key``, ``Code``, ``Message`` of each key not deleted).

    Raises:
        ServerError: the answer is an error as a whole, or not a ``DeleteResult``.
    """
    root = completed(response, "DeleteResult")
    errors = []
    for element in root:
        if _local(element.tag) == "Error":
            errors.append({_local(child.tag): child.text or "" for child in element})
    return {"Errors": errors} if errors else {}


def parse_uploads(body: bytes) -> dict[str, Any]:
    """A ListMultipartUploads page as botocore gives it: ``Uploads`` (each with ``Key``,
    ``UploadId``, ``Initiated``, an aware ``datetime``, when the answer tells it),
    ``IsTruncated``, and for a truncated page ``NextKeyMarker`` and ``NextUploadIdMarker``.

    Raises:
        ServerError: the answer is not a ListMultipartUploadsResult (retried).
    """
    root = completed({"Body": body, "ResponseMetadata": {"HTTPHeaders": {}}},
                     "ListMultipartUploadsResult")
    uploads: list[dict[str, Any]] = []
    page: dict[str, Any] = {"Uploads": uploads, "IsTruncated": False}
    for element in root:
        tag = _local(element.tag)
        if tag == "IsTruncated":
            page["IsTruncated"] = (element.text or "").strip() == "true"
        elif tag in ("NextKeyMarker", "NextUploadIdMarker"):
            page[tag] = element.text or ""
        if tag != "Upload":
            continue
        fields = {_local(child.tag): child.text or "" for child in element}
        upload: dict[str, Any] = {"Key": fields.get("Key", ""),
                                  "UploadId": fields.get("UploadId", "")}
        if fields.get("Initiated"):
            upload["Initiated"] = datetime.datetime.fromisoformat(
                fields["Initiated"].replace("Z", "+00:00"))
        uploads.append(upload)
    return page
