"""S3 errors: the error answers of S3 (:class:`ServerError`), what is worth retrying
(:func:`is_transient`) and the builtin exception each becomes (:func:`translate`):
``FileNotFoundError``, ``PermissionError`` or an ``OSError`` saying what happened and how
often it was tried. A botocore ``ClientError`` (or a :class:`ServerError`) never reaches
the caller. No IO here.
"""

from __future__ import annotations

import errno

from ...trace.redact import redact

_NOT_FOUND = {"NoSuchKey", "NoSuchBucket", "NotFound", "404", "NoSuchUpload"}
_DENIED = {"AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch",
           "AllAccessDisabled", "AccountProblem"}
_THROTTLED = {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
              "TooManyRequestsException", "RequestTimeout",
              "InternalError", "ServiceUnavailable", "503", "500", "502", "504"}


class ServerError(Exception):
    """An error answer of S3 to a request of the native engine, shaped as botocore's
    ``ClientError`` (``response["Error"]["Code"]``, ``response["ResponseMetadata"]``)."""

    def __init__(self, status: int, code: str, message: str,
                 headers: dict[str, str]) -> None:
        super().__init__(f"{code or status}: {message}" if message else code or str(status))
        self.response = {"Error": {"Code": code or str(status), "Message": message},
                         "ResponseMetadata": {"HTTPStatusCode": status,
                                              "HTTPHeaders": headers}}


def client_error_info(exc: BaseException) -> tuple[str, int | None] | None:
    """``(code, http status)`` of a botocore ``ClientError``, None for anything else."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict) or "Error" not in response:
        return None
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code, status


def is_transient(exc: BaseException) -> bool:
    """True for an error worth retrying: throttling, 5xx, a broken or timed-out connection."""
    info = client_error_info(exc)
    if info is not None:
        code, status = info
        return code in _THROTTLED or (status is not None and status >= 500)
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    # botocore's EndpointConnectionError, ReadTimeoutError, ResponseStreamingError, ...,
    # urllib3's ProtocolError and http.client's errors all derive from these bases; match
    # them by name so this module imports none of them
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"HTTPClientError", "ConnectionError", "ProtocolError",
                         "ResponseStreamingError", "IncompleteReadError", "ReadTimeoutError",
                         "HTTPError", "HTTPException"})


def translate(exc: BaseException, url: str, attempts: int = 1) -> OSError:
    """The builtin error for ``exc`` raised by a request on ``url``."""
    info = client_error_info(exc)
    if info is not None:
        code, status = info
        if code in _NOT_FOUND or status == 404:
            return FileNotFoundError(errno.ENOENT, f"not found ({code})", url)
        if code in _DENIED or status == 403:
            return PermissionError(errno.EACCES, f"access denied ({code})", url)
        if code == "PreconditionFailed" or status == 412:
            return OSError(errno.EIO, "the object changed while it was open (ETag no "
                           "longer matches): reopen it", url)
        what = f"S3 error {code} (HTTP {status})"
    else:  # its text may name the request's URL, with a presigned query string
        what = f"{type(exc).__name__}: {redact(str(exc))}"
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return OSError(errno.EIO, f"{what}{tries}", url)
