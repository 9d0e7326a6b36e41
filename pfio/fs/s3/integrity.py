"""End-to-end integrity of the bytes pfio writes to S3.

Every PUT and part carries the CRC32 of its bytes (``x-amz-checksum-crc32``). A server that
checks it (AWS, MinIO, recent Ceph) refuses a body that does not match before storing it,
and echoes the checksum in its answer: pfio compares the echo with what it sent, and, once an
endpoint has echoed, trusts it to check the next ones. Until then (servers that ignore the
header, such as Ceph 16 and moto) every body also carries a second digest, one of:

* its SHA-256, signed (``x-amz-content-sha256``), where the endpoint is known to check it:
  the server refuses a body that does not match (``XAmzContentSHA256Mismatch``) before
  storing anything. The cheaper of the two for the client (SHA-256 runs at about twice
  MD5's speed on CPUs with SHA extensions), and only sent by an engine that signs bodies
  (:attr:`~pfio.fs.s3.engine.Engine.signs_payloads`: the ``http`` engine with
  credentials).
* its MD5 (``Content-MD5``, which the servers that ignore the CRC check before storing the
  body: Ceph answers ``BadDigest``; moto checks nothing), and the answer's ETag is compared
  with that MD5 when the ETag is one: a single PUT or a part of an object known unencrypted
  or encrypted with SSE-S3 (an ETag of SSE-KMS or SSE-C is not an MD5).

Which one, per endpoint (``S3(write_digest=...)``, see :func:`signed_payloads`): AWS (no
endpoint given) checks signed hashes; another endpoint is probed by the first multipart
upload made to it in the process, with no visible side effect: before part 1 goes, a 1-byte
part 1 signed with a wrong hash (:func:`probe`). A server that checks the hash refuses it
(the endpoint is marked as checking them); one that does not stores it, and the real part 1
replaces it before the upload is completed. Until an endpoint is known, and for single PUTs
that must be recognised after a lost answer (``exclusive``), the MD5 is sent.

A mismatch is raised as a :class:`ServerError` ``BadDigest`` (status 400; ``StoredBadDigest``
when the server stored the damaged bytes; ``XAmzContentSHA256Mismatch`` from the server),
which the retry loop retries (the bytes were damaged on the way: the next try sends them
again), then an ``OSError``.
"""

from __future__ import annotations

import base64
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...checksums import crc32
from ...digests import md5_digest, sha256_hex
from ...trace.redact import redact
from .errors import ServerError, is_transient, server_error
from .wire import UNREADABLE

if TYPE_CHECKING:
    from .engine import Engine, Written

logger = logging.getLogger(__name__)

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
#: the code of a server's refusal of a body whose signed SHA-256 is not its own
SHA256_MISMATCH = "XAmzContentSHA256Mismatch"
#: endpoint -> whether it checks a signed SHA-256 (the probed ones)
_signed: dict[str | None, bool] = {}
#: the body of a probe, and a hash that is not its SHA-256 (that of no bytes)
_PROBE_BODY = b"\0"
_WRONG_SHA256 = sha256_hex(b"")


@dataclass(frozen=True)
class Digests:
    """The checksums of one body: ``crc32`` as S3 wants it (base64 of 4 big-endian
    bytes); ``md5`` (hex) and ``content_md5`` (base64) when it was taken."""

    crc32: str
    md5: str | None = None
    content_md5: str | None = None
    #: the SHA-256 (hex) to sign, when it is the body's proof instead of its MD5
    sha256: str | None = None


def crc32_of(data: bytes | bytearray | memoryview) -> str:
    """The CRC32 of ``data`` as S3 wants it: base64 of its 4 big-endian bytes."""
    return base64.b64encode(crc32(data).to_bytes(4, "big")).decode()


def signed_payloads(endpoint: str | None, setting: str) -> bool | None:
    """Whether bodies sent to ``endpoint`` prove themselves with their signed SHA-256 (True)
    or their MD5 (False), or whether that is not known yet (None: the next multipart upload
    probes it); ``setting`` is ``S3Settings.write_digest``. False for an endpoint that
    echoes CRC32s (no second digest is sent: nothing to learn)."""
    if endpoint in _verifying:
        return False
    if setting != "auto":
        return setting == "sha256"
    if endpoint is None:
        return True  # AWS
    return _signed.get(endpoint)


def digests_of(data: bytes | bytearray | memoryview, endpoint: str | None,
               signed: bool = False) -> Digests:
    """The checksums to send with ``data`` to ``endpoint``: its CRC32, and unless the
    endpoint is known to check the CRC32 itself, its SHA-256 when ``signed`` (see
    :func:`signed_payloads`), else its MD5."""
    crc = crc32_of(data)
    if endpoint in _verifying:
        return Digests(crc)
    if signed:
        return Digests(crc, sha256=sha256_hex(data))
    md5 = md5_digest(data)
    return Digests(crc, md5.hex(), base64.b64encode(md5).decode())


def probe(engine: Engine, bucket: str, key: str, upload_id: str,
          endpoint: str | None) -> None:
    """Learn whether ``endpoint`` checks signed SHA-256s, with part 1 of the fresh upload
    ``upload_id`` of ``key`` (whose real part 1 is sent next and replaces what this one
    stored): one try, 1 byte signed with a wrong hash. Refused with
    ``XAmzContentSHA256Mismatch``: it checks them; stored, or refused for another reason:
    it does not (Content-MD5 then); a transient error or a broken connection leaves it
    unknown (the next upload probes again)."""
    where = redact(endpoint) if endpoint else "AWS"
    try:
        engine.upload_part(bucket, key, upload_id, 1, _PROBE_BODY, crc32_of(_PROBE_BODY),
                           sha256=_WRONG_SHA256)
    except Exception as exc:  # noqa: BLE001 - every outcome is an answer to the question
        if isinstance(exc, ServerError) and exc.code == SHA256_MISMATCH:
            _signed[endpoint] = True
        elif isinstance(exc, ServerError) and not is_transient(exc):
            _signed[endpoint] = False
        logger.debug("%s: the probe of signed payloads got %s", where, exc)
    else:
        _signed[endpoint] = False
    found = _signed.get(endpoint)
    logger.debug("%s %s signed payload hashes", where,
                 "may check" if found is None else "checks" if found else "does not check")


def verify(response: Written, sent: Digests, endpoint: str | None, what: str) -> bool:
    """Check the answer ``response`` to a PUT (or a part, ``what`` names it) of a body whose
    checksums were ``sent``. Returns whether its ETag is known to be the body's MD5.

    Raises:
        ServerError: the echoed checksum or the MD5 ETag is not the body's (``BadDigest``),
            or the answer names no ETag (:data:`~pfio.fs.s3.wire.UNREADABLE`); both are
            retried.
    """
    etag = response.etag.strip('"').lower()
    if not etag:
        raise server_error(500, UNREADABLE, f"the answer to {what} names no ETag", {})
    echoed = response.crc32
    if echoed is not None:
        if echoed != sent.crc32:
            raise server_error(400, BAD_DIGEST, f"{what} was stored with the CRC32 {echoed}, "
                               f"not {sent.crc32}: the bytes were damaged on the way", {})
        _verifying.add(endpoint)
    md5_etag = _MD5.fullmatch(etag) is not None and \
        response.encryption in _MD5_ETAG_ENCRYPTIONS and not response.customer_key
    if md5_etag and sent.md5 is not None and etag != sent.md5:
        raise server_error(400, STORED_BAD_DIGEST, f"{what} was stored with the ETag {etag}, "
                           f"not the MD5 of the bytes written ({sent.md5}): the bytes were "
                           "damaged on the way", {})
    return md5_etag
