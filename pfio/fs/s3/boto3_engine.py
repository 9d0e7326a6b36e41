"""The ``boto3`` engine of S3: the data path through botocore.

botocore spends a few milliseconds of CPU per request, so this engine is not the default;
it is the one moto's in-process ``mock_aws`` intercepts, and it follows every botocore
setting. Bodies are read straight into the caller's buffer where
urllib3 allows it.
"""

from __future__ import annotations

import http.client
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ServerError
from .wire import UNREADABLE

if TYPE_CHECKING:
    from .connection import BodySink, RequestHook, S3Connection


Answer = dict[str, Any]


class BotocoreClient(Protocol):
    """The methods of botocore's S3 client this engine calls (botocore has no type hints):
    keyword arguments in, the parsed answer out."""

    meta: Any

    def get_object(self, **kwargs: Any) -> Answer: ...
    def list_objects_v2(self, **kwargs: Any) -> Answer: ...
    def head_object(self, **kwargs: Any) -> Answer: ...
    def put_object(self, **kwargs: Any) -> Answer: ...
    def create_multipart_upload(self, **kwargs: Any) -> Answer: ...
    def upload_part(self, **kwargs: Any) -> Answer: ...
    def complete_multipart_upload(self, **kwargs: Any) -> Answer: ...
    def list_multipart_uploads(self, **kwargs: Any) -> Answer: ...
    def abort_multipart_upload(self, **kwargs: Any) -> Answer: ...
    def delete_object(self, **kwargs: Any) -> Answer: ...
    def delete_objects(self, **kwargs: Any) -> Answer: ...
    def copy_object(self, **kwargs: Any) -> Answer: ...
    def upload_part_copy(self, **kwargs: Any) -> Answer: ...
    def head_bucket(self, **kwargs: Any) -> Answer: ...
    def create_bucket(self, **kwargs: Any) -> Answer: ...


class Boto3Engine:
    """S3's data path over the botocore client of ``connection``."""

    plain_gets = True
    #: botocore signs or not by its own rules (the hash of the body over plain http):
    #: pfio gives it Content-MD5 instead
    signs_payloads = False

    def __init__(self, connection: S3Connection, hooks: list[RequestHook]) -> None:
        # its before-send event calls the hooks
        self._client: BotocoreClient = connection.client()

    def get(self, bucket: str, key: str, rng: str, if_match: str | None,
            sink: BodySink) -> None:
        kwargs = {"IfMatch": if_match} if if_match else {}
        if rng:
            kwargs["Range"] = rng
        response = self._client.get_object(Bucket=bucket, Key=key, **kwargs)
        meta = response["ResponseMetadata"]
        body = response["Body"]
        try:
            sink.begin(meta["HTTPStatusCode"], meta.get("HTTPHeaders", {}))
            _read_body(body, sink)
        except BaseException:
            _discard(body)
            raise

    def list_objects_v2(self, bucket: str, **kwargs: Any) -> dict[str, Any]:
        return self._client.list_objects_v2(Bucket=bucket, **kwargs)

    def head_object(self, bucket: str, key: str) -> dict[str, Any]:
        return self._client.head_object(Bucket=bucket, Key=key)

    def put_object(self, bucket: str, key: str, body: Any, crc32: str,
                   md5: str | None = None, exclusive: bool = False,
                   sha256: str | None = None) -> dict[str, Any]:
        """A PUT (``sha256`` is never given: see :attr:`signs_payloads`)."""
        kwargs = {"ContentMD5": md5} if md5 else {}
        if exclusive:
            kwargs["IfNoneMatch"] = "*"
        return self._client.put_object(Bucket=bucket, Key=key, Body=_payload(body),
                                       ChecksumCRC32=crc32, **kwargs)

    def create_multipart_upload(self, bucket: str, key: str,
                                checksum: str | None = "CRC32") -> dict[str, Any]:
        kwargs = {"ChecksumAlgorithm": checksum} if checksum else {}
        return self._client.create_multipart_upload(Bucket=bucket, Key=key, **kwargs)

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int, body: Any,
                    crc32: str, md5: str | None = None,
                    sha256: str | None = None) -> dict[str, Any]:
        """A part (``sha256`` is never given: see :attr:`signs_payloads`)."""
        kwargs = {"ContentMD5": md5} if md5 else {}
        return self._client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id,
                                        PartNumber=number, Body=_payload(body),
                                        ChecksumCRC32=crc32, **kwargs)

    def complete_multipart_upload(self, bucket: str, key: str, upload_id: str,
                                  parts: list[dict[str, Any]],
                                  exclusive: bool = False) -> dict[str, Any]:
        kwargs = {"IfNoneMatch": "*"} if exclusive else {}
        return _checked_result(self._client.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts},
            **kwargs), "CompleteMultipartUploadResult")

    def list_multipart_uploads(self, bucket: str, prefix: str, key_marker: str = "",
                               upload_id_marker: str = "") -> dict[str, Any]:
        markers = {"KeyMarker": key_marker, "UploadIdMarker": upload_id_marker} \
            if key_marker else {}
        return self._client.list_multipart_uploads(Bucket=bucket, Prefix=prefix, **markers)

    def abort_multipart_upload(self, bucket: str, key: str, upload_id: str) -> dict[str, Any]:
        return self._client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)

    def delete_object(self, bucket: str, key: str) -> dict[str, Any]:
        return self._client.delete_object(Bucket=bucket, Key=key)

    def delete_objects(self, bucket: str, keys: list[str]) -> dict[str, Any]:
        return self._client.delete_objects(
            Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True})

    def copy_object(self, bucket: str, key: str, source_bucket: str,
                    source_key: str) -> dict[str, Any]:
        return _checked_result(self._client.copy_object(
            Bucket=bucket, Key=key, CopySource={"Bucket": source_bucket, "Key": source_key}),
            "CopyObjectResult")

    def upload_part_copy(self, bucket: str, key: str, upload_id: str, number: int,
                         source_bucket: str, source_key: str, rng: str) -> dict[str, Any]:
        return _checked_result(self._client.upload_part_copy(
            Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number,
            CopySource={"Bucket": source_bucket, "Key": source_key}, CopySourceRange=rng),
            "CopyPartResult")

    def head_bucket(self, bucket: str) -> dict[str, Any]:
        return self._client.head_bucket(Bucket=bucket)

    def create_bucket(self, bucket: str) -> dict[str, Any]:
        region = self._client.meta.region_name
        kwargs: dict[str, Any] = {}
        if region and region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
        return self._client.create_bucket(Bucket=bucket, **kwargs)

    def close(self) -> None:
        """Nothing to do: the botocore client belongs to the connection."""


def _checked_result(response: dict[str, Any], result: str) -> dict[str, Any]:
    """``response`` to a copy or a completion, which must be its ``result`` (botocore
    takes an ``<Error>`` or a body that does not parse inside a 200 for a 500; an answer of
    another XML element parses to none of the result's fields).

    Raises:
        ServerError: it is not (:data:`~pfio.fs.s3.wire.UNREADABLE`, retried).
    """
    found = response if result == "CompleteMultipartUploadResult" else response.get(result)
    if not found or not (found.get("ETag") or found.get("Key") or found.get("LastModified")):
        meta = response.get("ResponseMetadata", {})
        raise ServerError(500, UNREADABLE, f"a 200 answer without {result}",
                          meta.get("HTTPHeaders", {}))
    return response


def _payload(body: Any) -> Any:
    """``body`` as botocore takes it: ``bytes`` (botocore and moto's ``mock_aws`` treat
    any other non-file object, such as a ``bytearray``, as a dict of form fields)."""
    return body if isinstance(body, bytes) else bytes(body)


def _read_body(body: Any, sink: BodySink) -> None:
    """Read ``body`` into ``sink`` until it has all it wants (a short body raises)."""
    # urllib3's response and its http.client one, private attributes of botocore's body
    raw: Any = getattr(body, "_raw_stream", None)
    fp: Any = getattr(raw, "_fp", None)
    direct = isinstance(fp, http.client.HTTPResponse) and \
        not raw.headers.get("content-encoding")
    while not sink.complete():
        target = sink.target() if direct else None
        if target is not None:
            n = fp.readinto(target)
            if n:
                sink.advance(n)
        else:
            data = body.read(1 << 20)
            n = len(data)
            if n:
                sink.write(data)
        if n == 0:
            raise http.client.IncompleteRead(b"", None)
    if direct and fp.length in (0, None):
        raw.release_conn()  # the connection goes back to the pool
    else:
        _discard(body)  # bytes the sink did not want are left: the connection is dropped


def _discard(body: Any) -> None:
    try:
        body.close()
    except Exception:  # noqa: BLE001 - the connection is broken already
        pass
