"""The S3 requests other than GET of an engine that speaks S3's REST protocol itself (the
``http`` engine): HEAD, listings, PUT and multipart uploads, built and read with
:mod:`pfio.fs.s3.wire`, sent with the engine's ``_send``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .wire import (
    Endpoint,
    check_completion,
    completion_body,
    head_response,
    listing_query,
    parse_listing,
    with_upload_id,
)

if TYPE_CHECKING:
    from .connection import BodySink, RequestHook, S3Connection


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
              sink: BodySink | None = None) -> dict[str, Any]:
        """Send one signed request; a sink takes a successful GET's body, the others'
        bodies are returned (``Body``) with their status (``ResponseMetadata``), headers
        and ``ETag``. An error answer raises :class:`ServerError`."""
        raise NotImplementedError

    def list_objects_v2(self, bucket: str, **kwargs: Any) -> dict[str, Any]:
        response = self._send("GET", bucket, "", listing_query(**kwargs), [], None)
        page = parse_listing(response["Body"])
        page["ResponseMetadata"] = response["ResponseMetadata"]
        return page

    def head_object(self, bucket: str, key: str) -> dict[str, Any]:
        meta = self._send("HEAD", bucket, key, "", [], None)["ResponseMetadata"]
        return head_response(meta["HTTPStatusCode"], meta["HTTPHeaders"])

    def put_object(self, bucket: str, key: str, body: Any, crc32: str) -> dict[str, Any]:
        return self._send("PUT", bucket, key, "", [("x-amz-checksum-crc32", crc32)], body)

    def create_multipart_upload(self, bucket: str, key: str) -> dict[str, Any]:
        return with_upload_id(self._send("POST", bucket, key, "uploads",
                                         [("x-amz-checksum-algorithm", "CRC32")], b""))

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int, body: Any,
                    crc32: str) -> dict[str, Any]:
        query = f"partNumber={number}&uploadId={quote(upload_id, safe='')}"
        return self._send("PUT", bucket, key, query, [("x-amz-checksum-crc32", crc32)], body)

    def complete_multipart_upload(self, bucket: str, key: str, upload_id: str,
                                  parts: list[dict[str, Any]]) -> dict[str, Any]:
        return check_completion(self._send(
            "POST", bucket, key, f"uploadId={quote(upload_id, safe='')}",
            [("content-type", "application/xml")], completion_body(parts)))

    def abort_multipart_upload(self, bucket: str, key: str, upload_id: str) -> dict[str, Any]:
        return self._send("DELETE", bucket, key, f"uploadId={quote(upload_id, safe='')}", [],
                          None)
