"""The S3 requests other than GET of an engine that speaks S3's REST protocol itself (the
``http`` engine): HEAD, listings, PUT and multipart uploads, DELETE (one object, or a batch
with DeleteObjects), server-side copies (CopyObject, UploadPartCopy) and the bucket
requests (HeadBucket, CreateBucket), built and read with :mod:`pfio.fs.s3.wire`, sent with
the engine's ``_send``. So the engine needs botocore for nothing but credentials, and
botocore's debug log never sees a signed request of it.
"""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .engine import (
    Answer,
    Copied,
    Deleted,
    Head,
    ListPage,
    NewUpload,
    Part,
    UploadsPage,
    Written,
)
from .listing import listing_query, parse_listing
from .sigv4 import PAYLOAD_HEADER
from .wire import (
    Endpoint,
    RawAnswer,
    bucket_configuration,
    completion_body,
    copy_source,
    delete_body,
    head_of,
    new_upload,
    parse_delete_result,
    parse_uploads,
    result_etag,
)

if TYPE_CHECKING:
    from .connection import S3Connection
    from .engine import BodySink, RequestHook


class RestRequests:
    """The requests of an engine that speaks S3's REST protocol itself, other than GET,
    made with its :meth:`_send`; and what such an engine starts from: the request hooks,
    the boto3 session of the connection (its credential chain), the region and the
    endpoint."""

    def __init__(self, connection: S3Connection, hooks: list[RequestHook]) -> None:
        self._hooks = hooks
        self._session = connection.session()
        self._settings = connection.settings
        self._region = self._session.region_name or "us-east-1"
        self._at = Endpoint.of(connection.settings, self._region)
        #: the region of each bucket S3 said is elsewhere, and where to reach it
        self._elsewhere: dict[str, tuple[str, Endpoint]] = {}

    def _where(self, bucket: str) -> tuple[str, Endpoint]:
        """The region to sign requests on ``bucket`` for, and its endpoint."""
        return self._elsewhere.get(bucket) or (self._region, self._at)

    def _moved(self, bucket: str, status: int, headers: dict[str, str]) -> bool:
        """Whether an error answer says ``bucket`` is in another region than the one the
        request was signed for (S3 then names it in ``x-amz-bucket-region``); the bucket's
        requests go there from now on (to its regional endpoint unless an ``endpoint``
        was given), as botocore redirects them."""
        region = headers.get("x-amz-bucket-region")
        if status not in (301, 307, 400) or not region or region == self._where(bucket)[0]:
            return False
        self._elsewhere[bucket] = (region, Endpoint.of(self._settings, region))
        return True

    def _send(self, method: str, bucket: str, key: str, query: str,
              headers: list[tuple[str, str]], body: Any,
              sink: BodySink | None = None) -> RawAnswer:
        """Send one signed request; a sink takes a successful GET's body, the others'
        bodies are returned with their status and headers. An error answer raises
        :class:`~pfio.fs.s3.errors.ServerError`."""
        raise NotImplementedError

    def list_objects_v2(self, bucket: str, prefix: str, delimiter: str | None = None,
                        max_keys: int | None = None, token: str | None = None) -> ListPage:
        answer = self._send("GET", bucket, "", listing_query(prefix, delimiter, max_keys,
                                                             token), [], None)
        return parse_listing(answer.body, answer.status)

    def head_object(self, bucket: str, key: str) -> Head:
        answer = self._send("HEAD", bucket, key, "", [], None)
        return head_of(answer.status, answer.headers)

    def put_object(self, bucket: str, key: str, body: Any, crc32: str,
                   md5: str | None = None, exclusive: bool = False,
                   sha256: str | None = None) -> Written:
        return _written(self._send("PUT", bucket, key, "",
                                   _put_headers(crc32, md5, exclusive, sha256), body))

    def create_multipart_upload(self, bucket: str, key: str,
                                checksum: str | None = "CRC32") -> NewUpload:
        headers = [("x-amz-checksum-algorithm", checksum)] if checksum else []
        return new_upload(self._send("POST", bucket, key, "uploads", headers, b""))

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int, body: Any,
                    crc32: str, md5: str | None = None,
                    sha256: str | None = None) -> Written:
        query = f"partNumber={number}&uploadId={quote(upload_id, safe='')}"
        return _written(self._send("PUT", bucket, key, query,
                                   _put_headers(crc32, md5, sha256=sha256), body))

    def complete_multipart_upload(self, bucket: str, key: str, upload_id: str,
                                  parts: list[Part], exclusive: bool = False) -> Copied:
        headers = [("content-type", "application/xml")]
        if exclusive:
            headers.append(("if-none-match", "*"))
        return result_etag(self._send(
            "POST", bucket, key, f"uploadId={quote(upload_id, safe='')}", headers,
            completion_body(parts)), "CompleteMultipartUploadResult")

    def list_multipart_uploads(self, bucket: str, prefix: str, key_marker: str = "",
                               upload_id_marker: str = "") -> UploadsPage:
        query = f"prefix={quote(prefix, safe='-_.~')}&uploads="
        if key_marker:
            query = (f"key-marker={quote(key_marker, safe='-_.~')}&{query}"
                     f"&upload-id-marker={quote(upload_id_marker, safe='-_.~')}")
        return parse_uploads(self._send("GET", bucket, "", query, [], None))

    def abort_multipart_upload(self, bucket: str, key: str, upload_id: str) -> Answer:
        return _answer(self._send("DELETE", bucket, key,
                                  f"uploadId={quote(upload_id, safe='')}", [], None))

    def delete_object(self, bucket: str, key: str) -> Answer:
        return _answer(self._send("DELETE", bucket, key, "", [], None))

    def delete_objects(self, bucket: str, keys: list[str]) -> Deleted:
        body = delete_body(keys)
        md5 = base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()
        return parse_delete_result(self._send(
            "POST", bucket, "", "delete",
            [("content-md5", md5), ("content-type", "application/xml")], body))

    def copy_object(self, bucket: str, key: str, source_bucket: str,
                    source_key: str) -> Copied:
        return result_etag(self._send(
            "PUT", bucket, key, "", [("x-amz-copy-source", copy_source(source_bucket,
                                                                        source_key))], b""),
            "CopyObjectResult")

    def upload_part_copy(self, bucket: str, key: str, upload_id: str, number: int,
                         source_bucket: str, source_key: str, rng: str) -> Copied:
        query = f"partNumber={number}&uploadId={quote(upload_id, safe='')}"
        return result_etag(self._send(
            "PUT", bucket, key, query,
            [("x-amz-copy-source", copy_source(source_bucket, source_key)),
             ("x-amz-copy-source-range", rng)], b""), "CopyPartResult", required=True)

    def head_bucket(self, bucket: str) -> Answer:
        return _answer(self._send("HEAD", bucket, "", "", [], None))

    def create_bucket(self, bucket: str) -> Answer:
        region = self._region
        body = b"" if region == "us-east-1" else bucket_configuration(region)
        return _answer(self._send("PUT", bucket, "", "", [], body))


def _answer(answer: RawAnswer) -> Answer:
    return Answer(status=answer.status)


def _written(answer: RawAnswer) -> Written:
    """The answer to a PUT of a body: its ETag and what it says of the body's integrity."""
    headers = answer.headers
    return Written(status=answer.status, etag=headers.get("etag", ""),
                   crc32=headers.get("x-amz-checksum-crc32"),
                   encryption=headers.get("x-amz-server-side-encryption"),
                   customer_key="x-amz-server-side-encryption-customer-algorithm" in headers)


def _put_headers(crc32: str, md5: str | None, exclusive: bool = False,
                 sha256: str | None = None) -> list[tuple[str, str]]:
    """The headers of a PUT of a body (or a part) with the checksum ``crc32``, its
    ``Content-MD5`` when given, its SHA-256 when given (the signer then signs it instead of
    ``UNSIGNED-PAYLOAD``), and ``If-None-Match: *`` when ``exclusive``."""
    headers = [("x-amz-checksum-crc32", crc32)]
    if md5 is not None:
        headers.append(("content-md5", md5))
    if sha256 is not None:
        headers.append((PAYLOAD_HEADER, sha256))
    if exclusive:
        headers.append(("if-none-match", "*"))
    return headers
