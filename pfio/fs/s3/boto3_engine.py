"""The ``boto3`` engine of S3: the data path through botocore.

botocore spends a few milliseconds of CPU per request, so this engine is not the default;
it is the one moto's in-process ``mock_aws`` intercepts, and it follows every botocore
setting. Bodies are read straight into the caller's buffer where
urllib3 allows it.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

import urllib3.exceptions
from botocore import exceptions as botocore_errors

from .engine import (
    Answer,
    Copied,
    Deleted,
    Entry,
    Head,
    ListPage,
    NewUpload,
    NotDeleted,
    Part,
    PendingUpload,
    UploadsPage,
    Written,
)
from .errors import BrokenConnection, ServerError, SilentConnection, server_error
from .wire import UNREADABLE

if TYPE_CHECKING:
    from .connection import S3Connection
    from .engine import BodySink, RequestHook


#: an answer of botocore: a parsed dict, as its client methods return it
Reply = dict[str, Any]

#: botocore's and urllib3's errors of connections that went silent (before the broken ones:
#: botocore's timeouts are also its HTTP client errors)
_SILENT = (botocore_errors.ReadTimeoutError, botocore_errors.ConnectTimeoutError,
           urllib3.exceptions.TimeoutError)
#: ... of connections that broke, could not be made, or ended a body early
_BROKEN = (botocore_errors.HTTPClientError, botocore_errors.ConnectionError,
           botocore_errors.IncompleteReadError,
           urllib3.exceptions.HTTPError, http.client.HTTPException)


class BotocoreClient(Protocol):
    """The methods of botocore's S3 client this engine calls (botocore has no type hints):
    keyword arguments in, the parsed answer out."""

    meta: Any

    def get_object(self, **kwargs: Any) -> Reply: ...
    def list_objects_v2(self, **kwargs: Any) -> Reply: ...
    def head_object(self, **kwargs: Any) -> Reply: ...
    def put_object(self, **kwargs: Any) -> Reply: ...
    def create_multipart_upload(self, **kwargs: Any) -> Reply: ...
    def upload_part(self, **kwargs: Any) -> Reply: ...
    def complete_multipart_upload(self, **kwargs: Any) -> Reply: ...
    def list_multipart_uploads(self, **kwargs: Any) -> Reply: ...
    def abort_multipart_upload(self, **kwargs: Any) -> Reply: ...
    def delete_object(self, **kwargs: Any) -> Reply: ...
    def delete_objects(self, **kwargs: Any) -> Reply: ...
    def copy_object(self, **kwargs: Any) -> Reply: ...
    def upload_part_copy(self, **kwargs: Any) -> Reply: ...
    def head_bucket(self, **kwargs: Any) -> Reply: ...
    def create_bucket(self, **kwargs: Any) -> Reply: ...


class Boto3Engine:
    """S3's data path over the botocore client of ``connection``: botocore's answers and
    errors are converted here, once, to the types of :mod:`pfio.fs.s3.engine` and
    :mod:`pfio.fs.s3.errors`."""

    plain_gets = True
    #: botocore signs or not by its own rules (the hash of the body over plain http):
    #: pfio gives it Content-MD5 instead
    signs_payloads = False

    def __init__(self, connection: S3Connection, hooks: list[RequestHook]) -> None:
        # its before-send event calls the hooks
        self._client: BotocoreClient = connection.client()

    def _call(self, operation: Callable[..., Reply], **kwargs: Any) -> Reply:
        """``operation(**kwargs)``, botocore's errors converted (see :func:`converted`)."""
        with converted():
            return operation(**kwargs)

    def get(self, bucket: str, key: str, rng: str, if_match: str | None,
            sink: BodySink) -> None:
        kwargs = {"IfMatch": if_match} if if_match else {}
        if rng:
            kwargs["Range"] = rng
        with converted():
            response = self._client.get_object(Bucket=bucket, Key=key, **kwargs)
            body = response["Body"]
            try:
                sink.begin(_status(response), _headers(response))
                _read_body(body, sink)
            except BaseException:
                _discard(body)
                raise

    def list_objects_v2(self, bucket: str, prefix: str, delimiter: str | None = None,
                        max_keys: int | None = None, token: str | None = None) -> ListPage:
        kwargs: dict[str, Any] = {"Prefix": prefix}
        if delimiter:
            kwargs["Delimiter"] = delimiter
        if max_keys:
            kwargs["MaxKeys"] = max_keys
        if token:
            kwargs["ContinuationToken"] = token
        return list_page_of(self._call(self._client.list_objects_v2, Bucket=bucket, **kwargs))

    def head_object(self, bucket: str, key: str) -> Head:
        return head_of(self._call(self._client.head_object, Bucket=bucket, Key=key))

    def put_object(self, bucket: str, key: str, body: Any, crc32: str,
                   md5: str | None = None, exclusive: bool = False,
                   sha256: str | None = None) -> Written:
        """A PUT (``sha256`` is never given: see :attr:`signs_payloads`)."""
        kwargs = {"ContentMD5": md5} if md5 else {}
        if exclusive:
            kwargs["IfNoneMatch"] = "*"
        return written_of(self._call(self._client.put_object, Bucket=bucket, Key=key,
                                     Body=_payload(body), ChecksumCRC32=crc32, **kwargs))

    def create_multipart_upload(self, bucket: str, key: str,
                                checksum: str | None = "CRC32") -> NewUpload:
        kwargs = {"ChecksumAlgorithm": checksum} if checksum else {}
        response = self._call(self._client.create_multipart_upload, Bucket=bucket, Key=key,
                              **kwargs)
        return NewUpload(status=_status(response), upload_id=response["UploadId"])

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int, body: Any,
                    crc32: str, md5: str | None = None,
                    sha256: str | None = None) -> Written:
        """A part (``sha256`` is never given: see :attr:`signs_payloads`)."""
        kwargs = {"ContentMD5": md5} if md5 else {}
        return written_of(self._call(
            self._client.upload_part, Bucket=bucket, Key=key, UploadId=upload_id,
            PartNumber=number, Body=_payload(body), ChecksumCRC32=crc32, **kwargs))

    def complete_multipart_upload(self, bucket: str, key: str, upload_id: str,
                                  parts: list[Part], exclusive: bool = False) -> Copied:
        kwargs = {"IfNoneMatch": "*"} if exclusive else {}
        listed = [{"PartNumber": p.number, "ETag": p.etag,
                   **({"ChecksumCRC32": p.crc32} if p.crc32 is not None else {})}
                  for p in parts]
        return copied_of(self._call(
            self._client.complete_multipart_upload, Bucket=bucket, Key=key,
            UploadId=upload_id, MultipartUpload={"Parts": listed}, **kwargs),
            "CompleteMultipartUploadResult")

    def list_multipart_uploads(self, bucket: str, prefix: str, key_marker: str = "",
                               upload_id_marker: str = "") -> UploadsPage:
        markers = {"KeyMarker": key_marker, "UploadIdMarker": upload_id_marker} \
            if key_marker else {}
        return uploads_page_of(self._call(self._client.list_multipart_uploads,
                                          Bucket=bucket, Prefix=prefix, **markers))

    def abort_multipart_upload(self, bucket: str, key: str, upload_id: str) -> Answer:
        return _answer(self._call(self._client.abort_multipart_upload, Bucket=bucket,
                                  Key=key, UploadId=upload_id))

    def delete_object(self, bucket: str, key: str) -> Answer:
        return _answer(self._call(self._client.delete_object, Bucket=bucket, Key=key))

    def delete_objects(self, bucket: str, keys: list[str]) -> Deleted:
        return deleted_of(self._call(
            self._client.delete_objects, Bucket=bucket,
            Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True}))

    def copy_object(self, bucket: str, key: str, source_bucket: str,
                    source_key: str) -> Copied:
        return copied_of(self._call(
            self._client.copy_object, Bucket=bucket, Key=key,
            CopySource={"Bucket": source_bucket, "Key": source_key}), "CopyObjectResult")

    def upload_part_copy(self, bucket: str, key: str, upload_id: str, number: int,
                         source_bucket: str, source_key: str, rng: str) -> Copied:
        return copied_of(self._call(
            self._client.upload_part_copy, Bucket=bucket, Key=key, UploadId=upload_id,
            PartNumber=number, CopySource={"Bucket": source_bucket, "Key": source_key},
            CopySourceRange=rng), "CopyPartResult", required=True)

    def head_bucket(self, bucket: str) -> Answer:
        return _answer(self._call(self._client.head_bucket, Bucket=bucket))

    def create_bucket(self, bucket: str) -> Answer:
        region = self._client.meta.region_name
        kwargs: dict[str, Any] = {}
        if region and region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
        return _answer(self._call(self._client.create_bucket, Bucket=bucket, **kwargs))

    def close(self) -> None:
        """Nothing to do: the botocore client belongs to the connection."""


# -- botocore's errors and answers, converted ---------------------------------------------

@contextmanager
def converted() -> Iterator[None]:
    """Raise botocore's, urllib3's and http.client's errors as pfio's: an error answer
    (``ClientError``) as the :class:`~pfio.fs.s3.errors.ServerError` that classifies it, a
    silent connection as a :class:`~pfio.fs.s3.errors.SilentConnection` (a
    ``TimeoutError``), a broken one as a :class:`~pfio.fs.s3.errors.BrokenConnection` (a
    ``ConnectionError``); other errors pass as they are."""
    try:
        yield
    except botocore_errors.ClientError as exc:
        raise error_of(exc.response) from exc
    except _SILENT as exc:
        raise SilentConnection.of(exc) from exc
    except _BROKEN as exc:
        raise BrokenConnection.of(exc) from exc


def error_of(response: Mapping[str, Any]) -> ServerError:
    """The error of a ``ClientError``'s ``response``."""
    error = response.get("Error") or {}
    size = error.get("ActualObjectSize")
    return server_error(_status(response), str(error.get("Code") or ""),
                        str(error.get("Message") or ""), _headers(response),
                        int(size) if size is not None and str(size).isdigit() else None)


def head_of(response: Reply) -> Head:
    """botocore's ``head_object`` answer."""
    return Head(status=_status(response), size=int(response.get("ContentLength") or 0),
                etag=response.get("ETag") or "", last_modified=response.get("LastModified"),
                metadata=response.get("Metadata") or {},
                content_type=response.get("ContentType"))


def list_page_of(response: Reply) -> ListPage:
    """botocore's ``list_objects_v2`` answer (its keys decoded by botocore)."""
    entries = tuple(Entry(key=obj["Key"], size=int(obj.get("Size") or 0),
                          etag=obj.get("ETag") or "", last_modified=obj.get("LastModified"))
                    for obj in response.get("Contents") or ())
    return ListPage(status=_status(response), entries=entries,
                    prefixes=tuple(p["Prefix"] for p in response.get("CommonPrefixes") or ()),
                    truncated=bool(response.get("IsTruncated")),
                    token=response.get("NextContinuationToken") or None)


def written_of(response: Reply) -> Written:
    """botocore's ``put_object`` or ``upload_part`` answer (what it says of the body's
    integrity read from its headers, as the ``http`` engine reads them)."""
    headers = _headers(response)
    return Written(status=_status(response),
                   etag=response.get("ETag") or headers.get("etag") or "",
                   crc32=headers.get("x-amz-checksum-crc32"),
                   encryption=headers.get("x-amz-server-side-encryption"),
                   customer_key="x-amz-server-side-encryption-customer-algorithm" in headers)


def copied_of(response: Reply, result: str, required: bool = False) -> Copied:
    """botocore's answer to a copy or a completion, which must be its ``result`` (botocore
    takes an ``<Error>`` or a body that does not parse inside a 200 for a 500; an answer of
    another XML element parses to none of the result's fields); ``required``: its ETag too.

    Raises:
        ServerError: it is not (:data:`~pfio.fs.s3.wire.UNREADABLE`, retried).
    """
    found = response if result == "CompleteMultipartUploadResult" else response.get(result)
    etag = (found or {}).get("ETag") or ""
    if not found or not (etag or found.get("Key") or found.get("LastModified")) or \
            (required and not etag):
        raise server_error(500, UNREADABLE, f"a 200 answer without {result}",
                           _headers(response))
    return Copied(status=_status(response), etag=etag)


def deleted_of(response: Reply) -> Deleted:
    """botocore's ``delete_objects`` answer."""
    return Deleted(status=_status(response), failed=tuple(
        NotDeleted(key=str(e.get("Key", "")), code=str(e.get("Code", "")),
                   message=str(e.get("Message", "")))
        for e in response.get("Errors") or ()))


def uploads_page_of(response: Reply) -> UploadsPage:
    """botocore's ``list_multipart_uploads`` answer."""
    return UploadsPage(
        status=_status(response),
        uploads=tuple(PendingUpload(key=u["Key"], upload_id=u["UploadId"],
                                    initiated=u.get("Initiated"))
                      for u in response.get("Uploads") or ()),
        truncated=bool(response.get("IsTruncated")),
        next_key_marker=response.get("NextKeyMarker") or "",
        next_upload_id_marker=response.get("NextUploadIdMarker") or "")


def _answer(response: Reply) -> Answer:
    return Answer(status=_status(response))


def _status(response: Mapping[str, Any]) -> int:
    return int((response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 0)


def _headers(response: Mapping[str, Any]) -> dict[str, str]:
    headers = (response.get("ResponseMetadata") or {}).get("HTTPHeaders")
    return headers if isinstance(headers, dict) else {}


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
            raise BrokenConnection("the body ended before every byte asked for came")
    if direct and fp.length in (0, None):
        raw.release_conn()  # the connection goes back to the pool
    else:
        _discard(body)  # bytes the sink did not want are left: the connection is dropped


def _discard(body: Any) -> None:
    try:
        body.close()
    except Exception:  # noqa: BLE001 - the connection is broken already
        pass
