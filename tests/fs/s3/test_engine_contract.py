"""The typed contract between S3's IO layer and its engines (``pfio.fs.s3.engine``).

1. The ``boto3`` engine converts botocore's answers (dicts) and errors (``ClientError``,
   botocore's, urllib3's and http.client's connection errors) once, at its edge: one test
   per conversion, on the shapes botocore returns.
2. Both engines answer each request with the same result types and raise the same error
   classes, against the real S3 servers of the suite (moto, and Ceph when it runs).
"""

from __future__ import annotations

import datetime
import http.client
from typing import Any

import botocore.exceptions
import pytest
import urllib3.exceptions

from pfio.fs.s3 import S3
from pfio.fs.s3.boto3_engine import (
    converted,
    copied_of,
    deleted_of,
    head_of,
    list_page_of,
    uploads_page_of,
    written_of,
)
from pfio.fs.s3.engine import (
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
from pfio.fs.s3.errors import (
    BrokenConnection,
    BucketExists,
    Denied,
    NoSuchUpload,
    NotFound,
    PreconditionFailed,
    RangeNotSatisfiable,
    Retryable,
    ServerError,
    SilentConnection,
    Throttled,
    is_transient,
    retry_after,
    translate,
)
from pfio.fs.s3.integrity import crc32_of
from pfio.fs.s3.stat import S3ObjectStat
from pfio.fs.s3.wire import UNREADABLE

WHEN = datetime.datetime(2026, 11, 24, 5, 6, 7, tzinfo=datetime.timezone.utc)


def meta(status: int = 200, **headers: str) -> dict[str, Any]:
    """botocore's ``ResponseMetadata`` of an answer."""
    return {"ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": dict(headers)}}


def client_error(status: int, code: str, message: str = "m", **headers: str
                 ) -> botocore.exceptions.ClientError:
    return botocore.exceptions.ClientError(
        {"Error": {"Code": code, "Message": message}, **meta(status, **headers)}, "GetObject")


def raised(exc: BaseException) -> BaseException:
    """What ``exc`` raised inside the boto3 engine's edge comes out as."""
    with pytest.raises(BaseException) as info:
        with converted():
            raise exc
    return info.value


# -- 1. the boto3 engine's edge: errors ---------------------------------------------------

def test_slow_down_is_throttled_with_its_retry_after() -> None:
    error = raised(client_error(503, "SlowDown", **{"retry-after": "3"}))
    assert isinstance(error, Throttled) and is_transient(error)
    assert (error.status, error.code, retry_after(error)) == (503, "SlowDown", 3.0)
    assert isinstance(error.__cause__, botocore.exceptions.ClientError)


def test_an_internal_error_is_retryable_but_not_throttled() -> None:
    error = raised(client_error(500, "InternalError"))
    assert isinstance(error, Retryable) and not isinstance(error, Throttled)


def test_not_implemented_is_a_server_error_never_retried() -> None:
    error = raised(client_error(501, "NotImplemented"))
    assert type(error) is ServerError and not is_transient(error)


def test_no_such_key_is_not_found_and_reaches_the_caller_as_file_not_found() -> None:
    error = raised(client_error(404, "NoSuchKey"))
    assert isinstance(error, NotFound)
    assert isinstance(translate(error, "s3://b/k"), FileNotFoundError)


def test_a_404_without_a_code_is_not_found() -> None:
    error = raised(client_error(404, ""))
    assert isinstance(error, NotFound) and error.code == "404"


def test_no_such_upload_is_its_own_not_found() -> None:
    assert isinstance(raised(client_error(404, "NoSuchUpload")), NoSuchUpload)


def test_access_denied_is_denied_and_reaches_the_caller_as_permission_error() -> None:
    error = raised(client_error(403, "AccessDenied"))
    assert isinstance(error, Denied)
    assert isinstance(translate(error, "s3://b/k"), PermissionError)


def test_precondition_failed_is_its_class() -> None:
    assert isinstance(raised(client_error(412, "PreconditionFailed")), PreconditionFailed)


def test_invalid_range_carries_the_object_size_botocore_parsed() -> None:
    exc = botocore.exceptions.ClientError(
        {"Error": {"Code": "InvalidRange", "Message": "m", "ActualObjectSize": "42"},
         **meta(416)}, "GetObject")
    error = raised(exc)
    assert isinstance(error, RangeNotSatisfiable) and error.object_size == 42


def test_a_bucket_already_owned_is_bucket_exists() -> None:
    assert isinstance(raised(client_error(409, "BucketAlreadyOwnedByYou")), BucketExists)


@pytest.mark.parametrize("exc", [
    botocore.exceptions.EndpointConnectionError(endpoint_url="http://127.0.0.1:9"),
    botocore.exceptions.ConnectionClosedError(endpoint_url="http://127.0.0.1:9"),
    botocore.exceptions.ResponseStreamingError(error="reset"),
    urllib3.exceptions.ProtocolError("Connection broken"),
    http.client.IncompleteRead(b"", 5),
], ids=type)
def test_a_broken_connection_below_the_engine_is_a_connection_error(exc: Exception) -> None:
    error = raised(exc)
    assert isinstance(error, BrokenConnection) and isinstance(error, ConnectionError)
    assert type(exc).__name__ in str(error) and error.__cause__ is exc and is_transient(error)


@pytest.mark.parametrize("exc", [
    botocore.exceptions.ReadTimeoutError(endpoint_url="http://127.0.0.1:9"),
    botocore.exceptions.ConnectTimeoutError(endpoint_url="http://127.0.0.1:9"),
    urllib3.exceptions.ReadTimeoutError(None, "/k", "timed out"),
], ids=type)
def test_a_silent_connection_below_the_engine_is_a_timeout_error(exc: Exception) -> None:
    error = raised(exc)
    assert isinstance(error, SilentConnection) and isinstance(error, TimeoutError)
    assert is_transient(error)


def test_other_botocore_errors_pass_as_they_are() -> None:
    exc = botocore.exceptions.NoCredentialsError()
    assert raised(exc) is exc and not is_transient(exc)


# -- 1. the boto3 engine's edge: answers --------------------------------------------------

def test_a_head_answer_is_a_head() -> None:
    head = head_of({"ContentLength": 5, "ETag": '"e"', "LastModified": WHEN,
                    "Metadata": {"a": "1"}, "ContentType": "text/plain", **meta()})
    assert head == Head(status=200, size=5, etag='"e"', last_modified=WHEN,
                        metadata={"a": "1"}, content_type="text/plain")


def test_a_listing_answer_is_a_list_page() -> None:
    page = list_page_of({"Contents": [{"Key": "d/a", "Size": 3, "ETag": '"e"',
                                       "LastModified": WHEN}],
                         "CommonPrefixes": [{"Prefix": "d/e/"}], "IsTruncated": True,
                         "NextContinuationToken": "t", **meta()})
    assert page == ListPage(status=200, entries=(Entry(key="d/a", size=3, etag='"e"',
                                                       last_modified=WHEN),),
                            prefixes=("d/e/",), truncated=True, token="t")


def test_an_empty_listing_answer_is_an_empty_page() -> None:
    assert list_page_of({"IsTruncated": False, **meta()}) == ListPage(status=200)


def test_a_put_answer_is_written_with_what_its_headers_say_of_the_body() -> None:
    written = written_of({"ETag": '"e"', **meta(**{
        "x-amz-checksum-crc32": "AAAAAA==", "x-amz-server-side-encryption": "AES256",
        "x-amz-server-side-encryption-customer-algorithm": "AES256"})})
    assert written == Written(status=200, etag='"e"', crc32="AAAAAA==", encryption="AES256",
                              customer_key=True)


def test_a_copy_answer_is_copied() -> None:
    assert copied_of({"CopyObjectResult": {"ETag": '"e"'}, **meta()},
                     "CopyObjectResult") == Copied(status=200, etag='"e"')


def test_a_completion_answer_is_copied() -> None:
    assert copied_of({"ETag": '"e-2"', "Key": "k", **meta()},
                     "CompleteMultipartUploadResult") == Copied(status=200, etag='"e-2"')


def test_a_copy_answer_without_its_result_is_a_retryable_unreadable_answer() -> None:
    with pytest.raises(Retryable) as info:
        copied_of({**meta()}, "CopyObjectResult")
    assert info.value.code == UNREADABLE and info.value.status == 500


def test_a_part_copy_answer_without_an_etag_is_unreadable() -> None:
    with pytest.raises(Retryable, match="CopyPartResult"):
        copied_of({"CopyPartResult": {"LastModified": WHEN}, **meta()}, "CopyPartResult",
                  required=True)


def test_a_batch_delete_answer_is_deleted_with_the_keys_it_kept() -> None:
    deleted = deleted_of({"Errors": [{"Key": "k", "Code": "AccessDenied", "Message": "no"}],
                          **meta()})
    assert deleted == Deleted(status=200, failed=(
        NotDeleted(key="k", code="AccessDenied", message="no"),))


def test_an_uploads_answer_is_an_uploads_page() -> None:
    page = uploads_page_of({"Uploads": [{"Key": "k", "UploadId": "u", "Initiated": WHEN}],
                            "IsTruncated": True, "NextKeyMarker": "k",
                            "NextUploadIdMarker": "u", **meta()})
    assert page == UploadsPage(status=200, uploads=(
        PendingUpload(key="k", upload_id="u", initiated=WHEN),), truncated=True,
        next_key_marker="k", next_upload_id_marker="u")


# -- 2. both engines, one contract ----------------------------------------------------------

@pytest.fixture
def fs(s3_env: str, s3_bucket: str) -> S3:
    return S3(s3_bucket)


def test_each_engine_answers_every_request_with_its_result_type(fs: S3) -> None:
    engine, bucket = fs.connection.engine(), fs.bucket
    body = b"payload"
    put = engine.put_object(bucket, "d/a", body, crc32_of(body))
    assert isinstance(put, Written) and put.etag and put.status == 200
    head = engine.head_object(bucket, "d/a")
    assert isinstance(head, Head) and head.size == len(body) and head.etag == put.etag
    page = engine.list_objects_v2(bucket, "d/", "/")
    assert isinstance(page, ListPage) and [e.key for e in page.entries] == ["d/a"]
    assert page.entries[0].size == len(body) and not page.truncated
    copied = engine.copy_object(bucket, "d/b", bucket, "d/a")
    assert isinstance(copied, Copied) and copied.etag
    upload = engine.create_multipart_upload(bucket, "d/c")
    assert isinstance(upload, NewUpload) and upload.upload_id
    part = engine.upload_part(bucket, "d/c", upload.upload_id, 1, body, crc32_of(body))
    assert isinstance(part, Written) and part.etag
    uploads = engine.list_multipart_uploads(bucket, "d/")
    assert isinstance(uploads, UploadsPage)
    assert [(u.key, u.upload_id) for u in uploads.uploads] == [("d/c", upload.upload_id)]
    completed = engine.complete_multipart_upload(
        bucket, "d/c", upload.upload_id, [Part(number=1, etag=part.etag, crc32=crc32_of(body))])
    assert isinstance(completed, Copied)
    assert engine.head_object(bucket, "d/c").size == len(body)
    deleted = engine.delete_objects(bucket, ["d/a", "d/b"])
    assert isinstance(deleted, Deleted) and deleted.failed == ()
    assert isinstance(engine.delete_object(bucket, "d/c"), Answer)
    assert isinstance(engine.head_bucket(bucket), Answer)


def test_each_engine_raises_not_found_for_a_missing_key(fs: S3) -> None:
    with pytest.raises(NotFound):
        fs.connection.engine().head_object(fs.bucket, "missing")


def test_each_engine_raises_no_such_upload_for_an_unknown_upload(fs: S3) -> None:
    with pytest.raises(NoSuchUpload):
        fs.connection.engine().abort_multipart_upload(fs.bucket, "k", "no-such-upload")


# -- the stat of an object, from each shape ------------------------------------------------

def test_an_object_stat_of_a_head_has_its_metadata() -> None:
    stat = S3ObjectStat("k", Head(size=5, etag='"e"', last_modified=WHEN, metadata={"a": "1"}))
    assert (stat.size, stat.etag, stat.last_modified) == (5, "e", WHEN.timestamp())
    assert stat.metadata == {"a": "1"}


def test_an_object_stat_of_a_listing_entry_has_no_metadata() -> None:
    stat = S3ObjectStat("k", Entry(key="d/k", size=3, etag='"e"'))
    assert (stat.size, stat.etag, stat.last_modified) == (3, "e", None)
    assert not hasattr(stat, "metadata")


def test_an_object_stat_still_takes_botocore_s_answer_as_pfio_2_did() -> None:
    stat = S3ObjectStat("k", {"ContentLength": 5, "ETag": '"e"', "LastModified": WHEN,
                              "Metadata": {}})
    assert (stat.size, stat.etag, stat.last_modified) == (5, "e", WHEN.timestamp())
