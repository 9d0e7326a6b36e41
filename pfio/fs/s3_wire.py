"""What the engines that speak S3's REST protocol themselves (``http``, ``crt``) share:
reading error answers, upload ids and the heads of objects, and writing the body that
completes a multipart upload."""

from __future__ import annotations

import email.utils
import re
from typing import Any
from xml.sax.saxutils import escape

from .s3_errors import ServerError

_CODE = re.compile(rb"<Code>([^<]*)</Code>")
_MESSAGE = re.compile(rb"<Message>([^<]*)</Message>")
_UPLOAD_ID = re.compile(rb"<UploadId>([^<]*)</UploadId>")


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


def check_completion(response: dict[str, Any]) -> dict[str, Any]:
    """``response`` to CompleteMultipartUpload, which S3 may fail inside a 200.

    Raises:
        ServerError: the body is an error.
    """
    if b"<Error>" in response["Body"]:
        raise server_error(500, response["Body"], {})
    return response


def head_response(status: int, headers: dict[str, str]) -> dict[str, Any]:
    """A HEAD of an object's answer (lower-case ``headers``) as botocore's ``head_object``
    returns it: ``ContentLength``, ``LastModified`` (an aware ``datetime``), ``ETag``,
    ``ContentType``, ``Metadata`` (the ``x-amz-meta-*`` headers) and ``ResponseMetadata``."""
    response: dict[str, Any] = {
        "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": headers},
        "ContentLength": int(headers.get("content-length", 0)),
        "ETag": headers.get("etag", ""),
        "Metadata": {name[len(_META):]: value for name, value in headers.items()
                     if name.startswith(_META)},
    }
    if "last-modified" in headers:
        response["LastModified"] = email.utils.parsedate_to_datetime(headers["last-modified"])
    if "content-type" in headers:
        response["ContentType"] = headers["content-type"]
    return response


_META = "x-amz-meta-"
