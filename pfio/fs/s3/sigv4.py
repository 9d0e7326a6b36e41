"""AWS Signature Version 4 for S3 requests, in headers.

The signature covers the method, the path and query, every header sent and the date. A
body is sent as ``UNSIGNED-PAYLOAD`` (as AWS's own native clients send it), so that signing
costs a few microseconds, unless the caller gives its SHA-256 in an
``x-amz-content-sha256`` header: that hash is then signed, and a server that checks it (AWS,
Ceph, MinIO) refuses a body that does not match (``XAmzContentSHA256Mismatch``) before
storing anything. The signing key is derived once per day and secret. The hashes are
:mod:`pfio.digests`' (no OpenSSL in the signing thread: a fork is safe). Credentials are read
from their source at every request, so expiring ones (assume-role, web identity, instance
metadata) are refreshed by botocore as it would refresh them for itself.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import quote, unquote

from ...digests import HmacSha256, hmac_sha256, sha256_hex

UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
#: the header that names the hash of the body the signature covers
PAYLOAD_HEADER = "x-amz-content-sha256"
_ALGORITHM = "AWS4-HMAC-SHA256"


class Credentials(NamedTuple):
    """One set of credentials (what botocore's ``get_frozen_credentials`` gives)."""

    access_key: str
    secret_key: str
    token: str | None = None


class Signer:
    """Signs requests for ``service`` in ``region`` with the credentials ``credentials()``
    returns at each request."""

    def __init__(self, credentials: Callable[[], Credentials], region: str,
                 service: str = "s3") -> None:
        self._credentials = credentials
        self._region = region
        self._service = service
        self._keys: dict[tuple[str, str, str], HmacSha256] = {}

    def sign(self, method: str, path: str, query: str, headers: list[tuple[str, str]],
             now: float | None = None, region: str | None = None) -> list[tuple[str, str]]:
        """The headers to send: ``headers`` (lower-case names, one of them ``host``) with
        the date, the payload marker (unless ``headers`` has one: the body's SHA-256, hex),
        the session token if any and ``authorization``.
        ``path`` is the percent-encoded path as sent; ``query`` the query string as sent;
        ``region`` the one to sign for, when not the signer's own."""
        region = region or self._region
        credentials = self._credentials()
        stamp = _stamp(int(time.time() if now is None else now))
        day = stamp[:8]
        payload = next((value for name, value in headers if name == PAYLOAD_HEADER), None)
        signed = [*headers, ("x-amz-date", stamp)]
        if payload is None:
            payload = UNSIGNED_PAYLOAD
            signed.append((PAYLOAD_HEADER, payload))
        if credentials.token:
            signed.append(("x-amz-security-token", credentials.token))
        signed.sort()
        names = ";".join(name for name, _ in signed)
        canonical = "\n".join((
            method, path, _canonical_query(query),
            "".join([f"{name}:{_trimmed(value)}\n" for name, value in signed]),
            names, payload))
        scope = f"{day}/{region}/{self._service}/aws4_request"
        to_sign = "\n".join((_ALGORITHM, stamp, scope,
                             sha256_hex(canonical.encode())))
        signature = self._key(credentials.secret_key, day, region).digest(
            to_sign.encode()).hex()
        signed.append(("authorization",
                       f"{_ALGORITHM} Credential={credentials.access_key}/{scope}, "
                       f"SignedHeaders={names}, Signature={signature}"))
        return signed

    def _key(self, secret: str, day: str, region: str) -> HmacSha256:
        signer = self._keys.get((secret, day, region))
        if signer is None:
            key = hmac_sha256(f"AWS4{secret}".encode(), day.encode())
            for part in (region, self._service, "aws4_request"):
                key = hmac_sha256(key, part.encode())
            signer = HmacSha256(key)
            if any(old[:2] != (secret, day) for old in self._keys):
                self._keys = {}  # the keys of another day or secret are dropped
            self._keys[(secret, day, region)] = signer
        return signer


@functools.lru_cache(maxsize=4)
def _stamp(second: int) -> str:
    """The ``x-amz-date`` of the UTC second ``second`` (the last few are kept: requests
    of one second share it)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(second))


def _trimmed(value: str) -> str:
    """A header value as signed: stripped, inner runs of spaces made one."""
    return " ".join(value.split()) if "  " in value or value != value.strip() else value


def _canonical_query(query: str) -> str:
    """``query`` as SigV4 signs it: each name and value encoded, sorted by name."""
    if not query:
        return ""
    pairs = []
    for item in query.split("&"):
        name, _, value = item.partition("=")
        pairs.append((_encode(name), _encode(value)))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def _encode(text: str) -> str:
    """RFC 3986 encoding of a query name or value, as sent (already encoded ones stay)."""
    return quote(unquote(text), safe="-_.~")
