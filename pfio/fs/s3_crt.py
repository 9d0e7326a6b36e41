"""The ``crt`` engine of S3: the data path on AWS's native C runtime (``awscrt``).

Requests are HTTP/1.1 on ``awscrt.http`` connections kept in a small pool per host,
signed with SigV4 by ``awscrt.auth``: a 100 KiB GET costs a fraction of a millisecond of
CPU here against botocore's 3-4 ms (figures in the README). GETs of ``LARGE_GET`` bytes or
more (read-ahead blocks) go through ``awscrt.s3.S3Client`` instead, which fetches their
parts over parallel connections and hands each part over in one piece (``awscrt.http``
calls back for every 16 KiB, which costs CPU on long bodies). Credentials come from boto3's
whole chain (options, environment, shared files and profiles, assume-role, web identity,
instance metadata) through a delegate provider, so they are refreshed as botocore refreshes
them. ``https`` endpoints use the system's CA store, or ``$AWS_CA_BUNDLE``.

Waits are bounded: connecting by ``connect_timeout``, and a response that stays silent
(no headers or body bytes) for ``read_timeout`` seconds closes its connection and raises
``TimeoutError`` naming the endpoint. The engine is made per process (see
:mod:`pfio.fs.s3_connection`): the runtime's event-loop threads do not survive a fork.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import io
import os
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from awscrt import auth, http, s3
from awscrt import io as crt_io
from awscrt.exceptions import AwsCrtError

from .s3_wire import RestRequests, credential_source, get_headers, server_error

if TYPE_CHECKING:
    from .s3_connection import BodySink, RequestHook, S3Connection

_TIMEOUTS = {"AWS_IO_SOCKET_TIMEOUT", "AWS_ERROR_HTTP_RESPONSE_FIRST_BYTE_TIMEOUT"}
_SPAN = re.compile(r"bytes=(\d+)-(\d+)$")

#: explicit ranges of this many bytes or more (read-ahead blocks, Parquet column chunks; not
#: the 1 MiB opening read) are fetched by the S3Client (signed requests: anonymous ones stay
#: on ``awscrt.http``): ``awscrt.http`` calls Python back for every 16 KiB of a body, which
#: made a Parquet scan 0.68x pyarrow's with an 8 MiB threshold (1.05x with this one)
LARGE_GET = 2 << 20
#: the parts the S3Client splits a large GET into (fetched in parallel, each handed over whole)
PART_SIZE = 8 << 20


class CrtEngine(RestRequests):
    """S3's data path over ``awscrt`` (see the module documentation)."""

    plain_gets = False

    def __init__(self, connection: S3Connection, hooks: list[RequestHook]) -> None:
        super().__init__(connection, hooks)
        settings = connection.settings
        self._read_timeout = settings.read_timeout
        self._endpoint = self._at.url
        threads = max(1, min(4, (os.cpu_count() or 1)))
        loops = crt_io.EventLoopGroup(threads)
        self._bootstrap = crt_io.ClientBootstrap(loops, crt_io.DefaultHostResolver(loops))
        self._socket = crt_io.SocketOptions()
        self._socket.connect_timeout_ms = int(settings.connect_timeout * 1000)
        self._socket.keep_alive = True
        self._tls_context = _tls_context() if self._at.tls else None
        provider = _credentials_provider(self._session)
        self._signing = None if provider is None else auth.AwsSigningConfig(
            credentials_provider=provider, region=self._region,
            service="s3", use_double_uri_encode=False, should_normalize_uri_path=False,
            signed_body_value=auth.AwsSignedBodyValue.UNSIGNED_PAYLOAD,
            signed_body_header_type=auth.AwsSignedBodyHeaderType.X_AMZ_CONTENT_SHA_256)
        self._idle: dict[str, list[Any]] = {}
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max(1, settings.max_pool_connections))
        self._provider = provider
        self._max_connections = max(1, settings.max_pool_connections)
        self._connect_ms = int(settings.connect_timeout * 1000)
        self._s3_client: Any = None

    # -- the data path ------------------------------------------------------------------

    def get(self, bucket: str, key: str, rng: str, if_match: str | None,
            sink: BodySink) -> None:
        headers = get_headers(rng, if_match)
        span = _SPAN.match(rng)
        if span is not None and self._provider is not None and \
                int(span.group(2)) - int(span.group(1)) + 1 >= LARGE_GET:
            self._get_large(bucket, key, headers, sink)
        else:
            self._send("GET", bucket, key, "", headers, None, sink)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
            self._s3_client = None
        for connections in idle.values():
            for connection in connections:
                connection.close()

    # -- large GETs -----------------------------------------------------------------------

    def _get_large(self, bucket: str, key: str, headers: list[tuple[str, str]],
                   sink: BodySink) -> None:
        _, host_header, path = self._at.address(bucket, key)
        request = http.HttpRequest("GET", path,
                                   http.HttpHeaders([("host", host_header), *headers]))
        if self._hooks:
            names = {name.lower(): value for name, value in request.headers}
            for hook in self._hooks:
                hook("GET", f"/{bucket}/{key}", names)
        exchange = _Exchange(sink)
        meta = self._client_for_large().make_request(
            type=s3.S3RequestType.GET_OBJECT, request=request,
            on_headers=lambda status_code, headers, **_: exchange.on_response(
                None, status_code, headers),
            on_body=lambda chunk, offset, **_: exchange.on_body(None, chunk))
        try:
            self._wait(meta.finished_future, exchange, meta.cancel)
        except s3.S3ResponseError as exc:
            raise server_error(exc.status_code or 0, exc.body or b"",
                                {k.lower(): v for k, v in exc.headers or ()}) from None
        if not sink.complete():
            raise ConnectionError(f"the body from {self._endpoint} ended early")

    def _client_for_large(self) -> Any:
        with self._lock:
            if self._s3_client is None:
                tls = None
                if self._tls_context is not None:
                    tls = self._tls_context.new_connection_options()
                self._s3_client = s3.S3Client(
                    bootstrap=self._bootstrap, region=self._region,
                    credential_provider=self._provider,
                    tls_mode=s3.S3RequestTlsMode.ENABLED if self._at.tls else
                    s3.S3RequestTlsMode.DISABLED, tls_connection_options=tls,
                    part_size=PART_SIZE, throughput_target_gbps=1.0,
                    max_active_connections_override=self._max_connections,
                    connect_timeout_ms=self._connect_ms)
            return self._s3_client

    # -- one request --------------------------------------------------------------------

    def _send(self, method: str, bucket: str, key: str, query: str,
              headers: list[tuple[str, str]], body: Any,
              sink: BodySink | None = None) -> dict[str, Any]:
        host, host_header, path = self._at.address(bucket, key)
        request = http.HttpRequest(method, path + ("?" + query if query else ""),
                                   http.HttpHeaders([("host", host_header), *headers]))
        if body is not None:
            request.headers.add("content-length", str(len(body)))
            request.body_stream = _Body(body)
        if self._signing is not None:
            config = self._signing.replace(date=datetime.datetime.now(datetime.timezone.utc))
            auth.aws_sign_request(request, config).result()
        if self._hooks:
            names = {name.lower(): value for name, value in request.headers}
            for hook in self._hooks:
                hook(method, f"/{bucket}/{key}", names)
        exchange = _Exchange(sink)
        connection = self._acquire(host)
        reusable = False
        try:
            stream = connection.request(request, exchange.on_response, exchange.on_body)
            stream.activate()
            self._wait(stream.completion_future, exchange, connection.close)
            reusable = exchange.reusable and connection.is_open()
        finally:
            self._release(host, connection, reusable)
        status = exchange.status
        if sink is not None and status < 300 and not sink.complete():
            raise ConnectionError(f"the body from {self._endpoint} ended early")
        if status >= 300:
            raise server_error(status, b"".join(exchange.body), exchange.headers)
        return {"ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": exchange.headers},
                "ETag": exchange.headers.get("etag"), "Body": b"".join(exchange.body)}

    def _wait(self, done: concurrent.futures.Future, exchange: _Exchange,
              abandon: Callable[[], Any]) -> None:
        """Wait for the response, raising ``TimeoutError`` after ``read_timeout`` seconds
        without a byte (``abandon`` then drops the request)."""
        while True:
            silent = time.monotonic() - exchange.last
            try:
                done.result(timeout=max(0.0, self._read_timeout - silent))
                return
            except concurrent.futures.TimeoutError:
                if time.monotonic() - exchange.last >= self._read_timeout:
                    abandon()
                    raise TimeoutError(f"{self._endpoint} did not answer within "
                                       f"{self._read_timeout:g} s") from None
            except s3.S3ResponseError:
                raise
            except AwsCrtError as exc:
                if exchange.failure is not None:  # the sink refused the response
                    raise exchange.failure from None
                raise _connection_error(exc, self._endpoint) from None

    def _acquire(self, host: str) -> Any:
        self._slots.acquire()
        try:
            with self._lock:
                idle = self._idle.get(host)
                while idle:
                    connection = idle.pop()
                    if connection.is_open():
                        return connection
            tls = None
            if self._tls_context is not None:
                tls = self._tls_context.new_connection_options()
                tls.set_server_name(host)
            future = http.HttpClientConnection.new(
                host_name=host, port=self._at.port, bootstrap=self._bootstrap,
                socket_options=self._socket, tls_connection_options=tls)
            try:
                return future.result()
            except AwsCrtError as exc:
                raise _connection_error(exc, self._endpoint) from None
        except BaseException:
            self._slots.release()
            raise

    def _release(self, host: str, connection: Any, reusable: bool) -> None:
        if reusable:
            with self._lock:
                self._idle.setdefault(host, []).append(connection)
        else:
            connection.close()
        self._slots.release()


class _Body:
    """A request body read by the runtime straight from the caller's buffer (a
    ``BytesIO`` would copy a part of 8 MiB or more first)."""

    def __init__(self, data: Any) -> None:
        self._view = memoryview(data).cast("B")
        self._pos = 0

    def read(self, size: int = -1) -> bytes:
        stop = len(self._view) if size < 0 else min(len(self._view), self._pos + size)
        data = bytes(self._view[self._pos:stop])
        self._pos = stop
        return data

    def readinto1(self, target: memoryview) -> int:
        n = min(len(target), len(self._view) - self._pos)
        target[:n] = self._view[self._pos:self._pos + n]
        self._pos += n
        return n

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, min(len(self._view), base + offset))
        return self._pos


class _Exchange:
    """The response of one request, as the event-loop thread delivers it."""

    def __init__(self, sink: BodySink | None) -> None:
        self.sink = sink
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body: list[bytes] = []
        self.failure: BaseException | None = None
        self.reusable = True
        self.last = time.monotonic()

    def on_response(self, http_stream: Any, status_code: int,
                    headers: list[tuple[str, str]], **_: Any) -> None:
        self.last = time.monotonic()
        self.status = status_code
        self.headers = {name.lower(): value for name, value in headers}
        if self.headers.get("connection", "").lower() == "close":
            self.reusable = False
        if self.sink is not None and status_code < 300:
            try:
                self.sink.begin(status_code, self.headers)
            except BaseException as exc:
                self.failure = exc
                raise

    def on_body(self, http_stream: Any, chunk: Any, **_: Any) -> None:
        self.last = time.monotonic()
        if self.sink is None or self.status >= 300:
            self.body.append(bytes(chunk))
            return
        try:
            self.sink.write(chunk)
        except BaseException as exc:
            self.failure = exc
            raise


def _connection_error(exc: AwsCrtError, endpoint: str) -> OSError:
    """A transient ``ConnectionError``/``TimeoutError`` (retried) for ``exc``, or an
    ``OSError`` (not retried) for a TLS or name failure, naming the endpoint."""
    what = f"{exc.name} at {endpoint}: {exc.message}"
    if exc.name in _TIMEOUTS:
        return TimeoutError(what)
    if "TLS" in exc.name or "DNS" in exc.name or "CERT" in exc.name:
        return OSError(what)
    return ConnectionError(what)


def _tls_context() -> Any:
    """TLS with the system's CA store, or the bundle ``$AWS_CA_BUNDLE`` names."""
    options = crt_io.TlsContextOptions()
    bundle = os.environ.get("AWS_CA_BUNDLE")
    if bundle:
        options.override_default_trust_store_from_path(None, bundle)
    return crt_io.ClientTlsContext(options)


def _credentials_provider(session: Any) -> Any:
    """An ``awscrt`` provider of the credentials boto3's chain finds for ``session``
    (refreshed whenever botocore refreshes them); None (unsigned requests) when there are
    none."""
    source = credential_source(session)
    if source is None:
        return None
    current, static = source
    if static:
        return auth.AwsCredentialsProvider.new_static(*current())
    return auth.AwsCredentialsProvider.new_delegate(lambda: auth.AwsCredentials(*current()))
