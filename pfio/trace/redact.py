"""Removing secrets from what pfio writes (traces, log lines, error names): URL credentials,
presigned query strings, access key ids, and the signing headers of HTTP requests
(``Authorization``, ``X-Amz-Security-Token``, ...) as botocore's debug log prints them.

:class:`RedactingFilter` applies :func:`redact` to every record a logging handler emits; the
``pfio`` command installs it on its handler.
"""

from __future__ import annotations

import logging
import re
from typing import Any

# scheme://user:password@host -> scheme://<redacted>@host (up to the netloc's last "@", as
# URL parsers split it, so that a password holding an "@" goes whole)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s]*@")
# a query string of a URL (presigned URLs carry their signature and credential there)
_QUERY = re.compile(r"(?P<url>[A-Za-z][A-Za-z0-9+.-]*://[^?\s]*)\?[^\s#]*")
# AWS access key ids and anything that looks like key=value credentials
_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{12,}\b")
_SECRET_PARAM = re.compile(
    r"(?i)((?:secret|signature|token|password|passwd|credential|access_?key)[\w-]*=|\bsig=)"
    r"[^&\s]+")
# a header whose value is a credential, as a dict repr prints it ('Authorization': b'...') or
# as a line of a canonical request (x-amz-security-token:...): the whole value goes
_SECRET_HEADER = re.compile(
    r"(?im)((?:['\"]|^)[\w-]*(?:authorization|token|signature|credential|secret|password|"
    r"customer-key)[\w-]*['\"]?:\s*b?['\"]?)[^'\"\r\n]+")

REDACTED = "<redacted>"


def redact(text: str) -> str:
    """``text`` (a URL, a path, a message) without credentials or query strings."""
    if not text:
        return text
    text = _USERINFO.sub(rf"\g<scheme>{REDACTED}@", text)
    text = _QUERY.sub(rf"\g<url>?{REDACTED}", text)
    text = _KEY_ID.sub(REDACTED, text)
    text = _SECRET_HEADER.sub(rf"\1{REDACTED}", text)
    return _SECRET_PARAM.sub(rf"\1{REDACTED}", text)


def redact_args(args: dict[str, Any]) -> dict[str, Any]:
    """A copy of span arguments with every string value redacted."""
    return {k: redact(v) if isinstance(v, str) else v for k, v in args.items()}


class RedactingFilter(logging.Filter):
    """A logging filter (for handlers) that :func:`redact` s each record's message, and the
    traceback of one logged with ``exc_info``, before any formatter sees them. Records of
    every logger pass through a handler, botocore's and urllib3's included."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
