"""End-to-end integrity of the bytes pfio writes to S3 (no IO).

Every PUT and part carries the CRC32 of its bytes (``x-amz-checksum-crc32``). A server that
checks it (AWS, MinIO, recent Ceph) refuses a body that does not match before storing it,
and echoes the checksum in its answer: pfio compares the echo with what it sent, and, once an
endpoint has echoed, trusts it to check the next ones. Until then (servers that ignore the
header, such as Ceph 16 and moto) every body also carries its MD5 (``Content-MD5``, which
those servers check before storing it: Ceph answers ``BadDigest``), and the answer's ETag is
compared with that MD5 when the ETag is one: a single PUT or a part of an object known
unencrypted or encrypted with SSE-S3 (an ETag of SSE-KMS or SSE-C is not an MD5).

A mismatch is raised as a :class:`ServerError` ``BadDigest`` (status 400; ``StoredBadDigest``
when the server stored the damaged bytes), which the retry loop retries (the bytes were
damaged on the way: the next try sends them again), then an ``OSError``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from ...checksums import crc32
from .errors import ServerError
from .wire import UNREADABLE

#: the code of a mismatch between the bytes sent and the checksum the server echoed
BAD_DIGEST = "BadDigest"
#: the code of a mismatch between the bytes sent and the MD5 ETag of what the server
#: stored (it checked neither the CRC nor ``Content-MD5``)
STORED_BAD_DIGEST = "StoredBadDigest"
_MD5 = re.compile(r"[0-9a-f]{32}")
#: server-side encryptions whose ETags are the MD5 of the bytes (None: no encryption)
_MD5_ETAG_ENCRYPTIONS = frozenset({None, "AES256"})
#: the endpoints (``S3Settings.endpoint``, None for AWS) that echoed a checksum pfio sent:
#: they check it themselves
_verifying: set[str | None] = set()


@dataclass(frozen=True)
class Digests:
    """The checksums of one body: ``crc32`` as S3 wants it (base64 of 4 big-endian
    bytes); ``md5`` (hex) and ``content_md5`` (base64) when it was taken."""

    crc32: str
    md5: str | None = None
    content_md5: str | None = None


def crc32_of(data: bytes | bytearray | memoryview) -> str:
    """The CRC32 of ``data`` as S3 wants it: base64 of its 4 big-endian bytes."""
    return base64.b64encode(crc32(data).to_bytes(4, "big")).decode()


def digests_of(data: bytes | bytearray | memoryview, endpoint: str | None) -> Digests:
    """The checksums to send with ``data`` to ``endpoint``: its CRC32, and its MD5 unless
    the endpoint is known to check the CRC32 itself."""
    crc = crc32_of(data)
    if endpoint in _verifying:
        return Digests(crc)
    md5 = hashlib.md5(data, usedforsecurity=False)
    return Digests(crc, md5.hexdigest(), base64.b64encode(md5.digest()).decode())


def verify(response: dict[str, Any], sent: Digests, endpoint: str | None,
           what: str) -> bool:
    """Check the answer ``response`` to a PUT (or a part, ``what`` names it) of a body whose
    checksums were ``sent``. Returns whether its ETag is known to be the body's MD5.

    Raises:
        ServerError: the echoed checksum or the MD5 ETag is not the body's (``BadDigest``),
            or the answer names no ETag (:data:`~pfio.fs.s3.wire.UNREADABLE`); both are
            retried.
    """
    headers = response.get("ResponseMetadata", {}).get("HTTPHeaders") or {}
    etag = str(response.get("ETag") or headers.get("etag") or "").strip('"').lower()
    if not etag:
        raise ServerError(500, UNREADABLE, f"the answer to {what} names no ETag", headers)
    echoed = headers.get("x-amz-checksum-crc32")
    if echoed is not None:
        if echoed != sent.crc32:
            raise ServerError(400, BAD_DIGEST, f"{what} was stored with the CRC32 {echoed}, "
                              f"not {sent.crc32}: the bytes were damaged on the way", headers)
        _verifying.add(endpoint)
    md5_etag = _MD5.fullmatch(etag) is not None and \
        headers.get("x-amz-server-side-encryption") in _MD5_ETAG_ENCRYPTIONS and \
        "x-amz-server-side-encryption-customer-algorithm" not in headers
    if md5_etag and sent.md5 is not None and etag != sent.md5:
        raise ServerError(400, STORED_BAD_DIGEST, f"{what} was stored with the ETag {etag}, "
                          f"not the "
                          f"MD5 of the bytes written ({sent.md5}): the bytes were damaged "
                          "on the way", headers)
    return md5_etag
