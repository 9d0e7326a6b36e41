"""Removing secrets from what the tracer writes: URL credentials, presigned query strings and
access key ids."""

from __future__ import annotations

import re
from typing import Any

# scheme://user:password@host -> scheme://***@host
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]*@")
# a query string of a URL (presigned URLs carry their signature and credential there)
_QUERY = re.compile(r"(?P<url>[A-Za-z][A-Za-z0-9+.-]*://[^?\s]*)\?[^\s#]*")
# AWS access key ids and anything that looks like key=value credentials
_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{12,}\b")
_SECRET_PARAM = re.compile(
    r"(?i)((?:secret|signature|token|password|passwd|credential|access_?key)[\w-]*=)[^&\s]+")

REDACTED = "<redacted>"


def redact(text: str) -> str:
    """``text`` (a URL, a path, a message) without credentials or query strings."""
    if not text:
        return text
    text = _USERINFO.sub(rf"\g<scheme>{REDACTED}@", text)
    text = _QUERY.sub(rf"\g<url>?{REDACTED}", text)
    text = _KEY_ID.sub(REDACTED, text)
    return _SECRET_PARAM.sub(rf"\1{REDACTED}", text)


def redact_args(args: dict[str, Any]) -> dict[str, Any]:
    """A copy of span arguments with every string value redacted."""
    return {k: redact(v) if isinstance(v, str) else v for k, v in args.items()}
