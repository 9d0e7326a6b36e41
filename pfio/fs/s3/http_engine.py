"""The ``http`` engine of S3: every request on pfio's own HTTP/1.1 client (GET, HEAD,
listings, PUT and multipart uploads, DELETE one object or a batch, server-side copies, the
bucket requests), built and read with :mod:`pfio.fs.s3.wire` and
:mod:`pfio.fs.s3.listing`, so that botocore gives it nothing but credentials (and its debug
log never sees a signed request).

Each request is a few system calls on a kept-alive socket (``ssl`` for ``https``) made by
the thread that asks: the request is signed here (:mod:`pfio.fs.s3.sigv4`), sent with one
``send`` (large bodies straight from the caller's buffer) and its body is received with
``recv_into`` straight into the buffer that keeps it, with the GIL released while the kernel
copies. No thread of a runtime calls back into Python, so a 100 KiB GET costs about 0.15 ms
of CPU (kernel included), on par with the Rust clients (figures in the README), and nothing
survives a fork that would need the parent's threads.

Connections (:mod:`pfio.fs.s3.http_pool`) are kept per host, at most
``max_pool_connections`` at once; a request that
finds its reused connection closed by the server (before any byte of an answer) is sent
again once on a new connection: the server did not take it. Answers are read by
:mod:`pfio.fs.s3.http1` (strict framing, bodies received in bounded pieces). Every wait is
bounded, on ``http`` and ``https`` alike: connecting and the TLS handshake by
``connect_timeout``; each wait for bytes by ``read_timeout`` (plain sockets give up in the
kernel, ``SO_RCVTIMEO``, which costs no system call per receive; TLS sockets use Python's
socket timeouts, as ``ssl`` retries a receive the kernel gave up on); a head must arrive
within ``read_timeout`` of its first byte, and bodies must move at ``min_rate`` bytes/s
(``TimeoutError`` naming the endpoint). Header values are checked before a request is
sent: none carries CR, LF or NUL (a hostile ETag cannot add a header). Credentials come
from boto3's whole chain and are read at each request, so they refresh as botocore
refreshes them; ``https`` endpoints use the system's CA store, or ``$AWS_CA_BUNDLE``.
"""

from __future__ import annotations

import base64
import platform
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ...digests import md5_digest
from ...version import __version__
from .engine import (
    Answer,
    Copied,
    Deleted,
    Head,
    ListPage,
    NewUpload,
    Part,
    UploadsPage,
    Written,
)
from .http1 import MIN_RATE
from .http_pool import Pool, Waits, proxy_for, tls_context, unsafe
from .listing import listing_query, parse_listing
from .sigv4 import PAYLOAD_HEADER, Signer
from .wire import (
    Endpoint,
    RawAnswer,
    bucket_configuration,
    completion_body,
    copy_source,
    credential_source,
    delete_body,
    error_answer,
    get_headers,
    head_of,
    new_upload,
    parse_delete_result,
    parse_uploads,
    result_etag,
)

if TYPE_CHECKING:
    from .connection import S3Connection
    from .engine import BodySink, RequestHook

#: the shortest timeout (a timeout of 0 would mean "never" to ``SO_RCVTIMEO``, and "do not
#: wait" to Python's sockets)
_SHORTEST_WAIT = 0.001
#: the ``User-Agent`` of every request (not signed, as botocore does not sign it: proxies
#: may rewrite it)
USER_AGENT = f"pfio/{__version__} python/{platform.python_version()}"


class HttpEngine:
    """S3's data path over pfio's HTTP/1.1 client (see the module documentation): it
    signs each request, sends it on a connection of its pool, and reads the answer into
    the result types of :mod:`pfio.fs.s3.engine`."""

    plain_gets = True

    def __init__(self, connection: S3Connection, hooks: list[RequestHook]) -> None:
        self._hooks = hooks
        self._session = connection.session()
        self._settings = connection.settings
        self._region = self._session.region_name or "us-east-1"
        self._at = Endpoint.of(connection.settings, self._region)
        #: the region of each bucket S3 said is elsewhere, and where to reach it
        self._elsewhere: dict[str, tuple[str, Endpoint]] = {}
        settings, at = connection.settings, self._at
        source = credential_source(self._session)
        self._signer = None if source is None else Signer(source[0], self._region)
        #: (anonymous requests are not signed)
        self.signs_payloads = self._signer is not None
        proxy = proxy_for(at)
        #: through a proxy, plain http requests name their whole URL; https ones tunnel
        self._absolute = proxy is not None and not at.tls
        self._proxy_headers = [("proxy-authorization", proxy.authorization)] \
            if proxy is not None and proxy.authorization and self._absolute else []
        rate = settings.min_rate
        waits = Waits(max(settings.connect_timeout, _SHORTEST_WAIT),
                      max(settings.read_timeout, _SHORTEST_WAIT),
                      MIN_RATE if rate is None else float(rate))
        self._pool = Pool(at.url, at.port, waits, tls_context() if at.tls else None,
                          max(1, settings.max_pool_connections), proxy)

    # -- the data path ------------------------------------------------------------------

    def get(self, bucket: str, key: str, rng: str, if_match: str | None,
            sink: BodySink) -> None:
        headers = get_headers(rng, if_match)
        self._send("GET", bucket, key, "", headers, None, sink)

    def close(self) -> None:
        self._pool.close()

    # -- the other requests -------------------------------------------------------------

    def list_objects_v2(self, bucket: str, prefix: str, delimiter: str | None = None,
                        max_keys: int | None = None, token: str | None = None) -> ListPage:
        answer = self._send("GET", bucket, "", listing_query(prefix, delimiter, max_keys,
                                                             token), [], None)
        return parse_listing(answer.body, answer.status)

    def head_object(self, bucket: str, key: str) -> Head:
        answer = self._send("HEAD", bucket, key, "", [], None)
        return head_of(answer.status, answer.headers)

    def put_object(self, bucket: str, key: str, body: Any, crc32: str,
                   md5: str | None = None, exclusive: bool = False,
                   sha256: str | None = None) -> Written:
        return _written(self._send("PUT", bucket, key, "",
                                   _put_headers(crc32, md5, exclusive, sha256), body))

    def create_multipart_upload(self, bucket: str, key: str,
                                checksum: str | None = "CRC32") -> NewUpload:
        headers = [("x-amz-checksum-algorithm", checksum)] if checksum else []
        return new_upload(self._send("POST", bucket, key, "uploads", headers, b""))

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int, body: Any,
                    crc32: str, md5: str | None = None,
                    sha256: str | None = None) -> Written:
        query = f"partNumber={number}&uploadId={quote(upload_id, safe='')}"
        return _written(self._send("PUT", bucket, key, query,
                                   _put_headers(crc32, md5, sha256=sha256), body))

    def complete_multipart_upload(self, bucket: str, key: str, upload_id: str,
                                  parts: list[Part], exclusive: bool = False) -> Copied:
        headers = [("content-type", "application/xml")]
        if exclusive:
            headers.append(("if-none-match", "*"))
        return result_etag(self._send(
            "POST", bucket, key, f"uploadId={quote(upload_id, safe='')}", headers,
            completion_body(parts)), "CompleteMultipartUploadResult")

    def list_multipart_uploads(self, bucket: str, prefix: str, key_marker: str = "",
                               upload_id_marker: str = "") -> UploadsPage:
        query = f"prefix={quote(prefix, safe='-_.~')}&uploads="
        if key_marker:
            query = (f"key-marker={quote(key_marker, safe='-_.~')}&{query}"
                     f"&upload-id-marker={quote(upload_id_marker, safe='-_.~')}")
        return parse_uploads(self._send("GET", bucket, "", query, [], None))

    def abort_multipart_upload(self, bucket: str, key: str, upload_id: str) -> Answer:
        return _answer(self._send("DELETE", bucket, key,
                                  f"uploadId={quote(upload_id, safe='')}", [], None))

    def delete_object(self, bucket: str, key: str) -> Answer:
        return _answer(self._send("DELETE", bucket, key, "", [], None))

    def delete_objects(self, bucket: str, keys: list[str]) -> Deleted:
        body = delete_body(keys)
        md5 = base64.b64encode(md5_digest(body)).decode()
        return parse_delete_result(self._send(
            "POST", bucket, "", "delete",
            [("content-md5", md5), ("content-type", "application/xml")], body))

    def copy_object(self, bucket: str, key: str, source_bucket: str,
                    source_key: str) -> Copied:
        return result_etag(self._send(
            "PUT", bucket, key, "", [("x-amz-copy-source", copy_source(source_bucket,
                                                                        source_key))], b""),
            "CopyObjectResult")

    def upload_part_copy(self, bucket: str, key: str, upload_id: str, number: int,
                         source_bucket: str, source_key: str, rng: str) -> Copied:
        query = f"partNumber={number}&uploadId={quote(upload_id, safe='')}"
        return result_etag(self._send(
            "PUT", bucket, key, query,
            [("x-amz-copy-source", copy_source(source_bucket, source_key)),
             ("x-amz-copy-source-range", rng)], b""), "CopyPartResult", required=True)

    def head_bucket(self, bucket: str) -> Answer:
        return _answer(self._send("HEAD", bucket, "", "", [], None))

    def create_bucket(self, bucket: str) -> Answer:
        region = self._region
        body = b"" if region == "us-east-1" else bucket_configuration(region)
        return _answer(self._send("PUT", bucket, "", "", [], body))

    # -- regions ------------------------------------------------------------------------

    def _where(self, bucket: str) -> tuple[str, Endpoint]:
        """The region to sign requests on ``bucket`` for, and its endpoint."""
        return self._elsewhere.get(bucket) or (self._region, self._at)

    def _moved(self, bucket: str, status: int, headers: dict[str, str]) -> bool:
        """Whether an error answer says ``bucket`` is in another region than the one the
        request was signed for (S3 then names it in ``x-amz-bucket-region``); the bucket's
        requests go there from now on (to its regional endpoint unless an ``endpoint``
        was given), as botocore redirects them."""
        region = headers.get("x-amz-bucket-region")
        if status not in (301, 307, 400) or not region or region == self._where(bucket)[0]:
            return False
        self._elsewhere[bucket] = (region, Endpoint.of(self._settings, region))
        return True

    # -- one request --------------------------------------------------------------------

    def _send(self, method: str, bucket: str, key: str, query: str,
              headers: list[tuple[str, str]], body: Any,
              sink: BodySink | None = None) -> RawAnswer:
        """Send one signed request; a sink takes a successful GET's body, the others'
        bodies are returned with their status and headers. An error answer raises
        :class:`~pfio.fs.s3.errors.ServerError`."""
        status, answer, data = self._exchange(method, bucket, key, query, headers, body, sink)
        if status >= 300 and self._moved(bucket, status, answer):  # once, to its region
            status, answer, data = self._exchange(method, bucket, key, query, headers, body,
                                                  sink)
        if status >= 300:
            raise error_answer(status, data, answer)
        return RawAnswer(status, answer, data)

    def _exchange(self, method: str, bucket: str, key: str, query: str,
                  headers: list[tuple[str, str]], body: Any,
                  sink: BodySink | None) -> tuple[int, dict[str, str], bytes]:
        """Sign and send one request, and read its answer (see ``Pool.exchange``)."""
        region, at = self._where(bucket)
        host, host_header, path = at.address(bucket, key)
        patient = method != "GET" and _patient(method, query, headers)
        headers = [("host", host_header), *headers]
        view = None
        if body is not None:
            view = memoryview(body).cast("B")
            headers.append(("content-length", str(len(view))))
        if self._signer is not None:
            headers = self._signer.sign(method, path, query, headers, region=region)
        headers.append(("user-agent", USER_AGENT))
        if self._hooks:
            names = dict(headers)
            for hook in self._hooks:
                hook(method, f"/{bucket}/{key}", names)
        target = path + ("?" + query if query else "")
        if self._absolute:  # (the proxy drops its own header: it is not signed)
            target = f"http://{host_header}{target}"
            headers += self._proxy_headers
        return self._pool.exchange(host, method, _request_head(method, target, headers),
                                   view, sink, patient)


def _patient(method: str, query: str, headers: list[tuple[str, str]]) -> bool:
    """Whether the answer may take minutes: CompleteMultipartUpload, CopyObject and
    UploadPartCopy, which S3 answers with 200 at once and then keeps alive with whitespace
    while it works (their answers have a deadline instead of a rate floor)."""
    if method == "POST":
        return query.startswith("uploadId=")
    return method == "PUT" and any(name == "x-amz-copy-source" for name, _ in headers)


def _request_head(method: str, target: str, headers: list[tuple[str, str]]) -> bytes:
    """The head of a request; every value checked (a server's ETag, a proxy's password,
    ...): none may add a line, and the target holds no whitespace.

    Raises:
        ValueError: a value holds CR, LF or NUL (the error names the header, never its
            value: it may be a secret), or the target whitespace.
    """
    lines = [f"{name}: {value}\r\n" for name, value in headers]
    if unsafe("".join([value for _, value in headers])):
        name = next(name for name, value in headers if unsafe(value))
        raise ValueError(f"refusing to send a {name} header holding CR, LF or NUL")
    if unsafe(target) or " " in target or "\t" in target:
        raise ValueError(f"refusing to send a request target holding whitespace or NUL: "
                         f"{target[:80]!r}")
    return "".join([f"{method} {target} HTTP/1.1\r\n", *lines, "\r\n"]).encode()


def _answer(answer: RawAnswer) -> Answer:
    return Answer(status=answer.status)


def _written(answer: RawAnswer) -> Written:
    """The answer to a PUT of a body: its ETag and what it says of the body's integrity."""
    headers = answer.headers
    return Written(status=answer.status, etag=headers.get("etag", ""),
                   crc32=headers.get("x-amz-checksum-crc32"),
                   encryption=headers.get("x-amz-server-side-encryption"),
                   customer_key="x-amz-server-side-encryption-customer-algorithm" in headers)


def _put_headers(crc32: str, md5: str | None, exclusive: bool = False,
                 sha256: str | None = None) -> list[tuple[str, str]]:
    """The headers of a PUT of a body (or a part) with the checksum ``crc32``, its
    ``Content-MD5`` when given, its SHA-256 when given (the signer then signs it instead of
    ``UNSIGNED-PAYLOAD``), and ``If-None-Match: *`` when ``exclusive``."""
    headers = [("x-amz-checksum-crc32", crc32)]
    if md5 is not None:
        headers.append(("content-md5", md5))
    if sha256 is not None:
        headers.append((PAYLOAD_HEADER, sha256))
    if exclusive:
        headers.append(("if-none-match", "*"))
    return headers
