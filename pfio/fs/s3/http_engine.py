"""The ``http`` engine of S3: the data path on pfio's own HTTP/1.1 client.

Each request is a few system calls on a kept-alive socket (``ssl`` for ``https``) made by
the thread that asks: the request is signed here (:mod:`pfio.fs.s3.sigv4`), sent with one
``send`` (large bodies straight from the caller's buffer) and its body is received with
``recv_into`` straight into the buffer that keeps it, with the GIL released while the kernel
copies. No thread of a runtime calls back into Python, so a 100 KiB GET costs about 0.15 ms
of CPU (kernel included), on par with the Rust clients (figures in the README), and nothing
survives a fork that would need the parent's threads.

Connections are kept per host, at most ``max_pool_connections`` at once; a request that
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
import functools
import os
import platform
import socket
import ssl
import struct
import threading
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ...version import __version__
from .http1 import MIN_RATE, Http1Connection, Socket, Stale
from .rest import RestRequests
from .sigv4 import Signer
from .wire import RawAnswer, credential_source, error_answer, get_headers

if TYPE_CHECKING:
    from collections.abc import Callable

    from .connection import S3Connection
    from .engine import BodySink, RequestHook
    from .wire import Endpoint

#: bodies of plain GETs kept on their connections for their readers at once, at most (more:
#: their connections are dropped, and the readers go on with ranged GETs)
MAX_PARKED = 64
#: the shortest timeout (a timeout of 0 would mean "never" to ``SO_RCVTIMEO``, and "do not
#: wait" to Python's sockets)
_SHORTEST_WAIT = 0.001
#: the ``User-Agent`` of every request (not signed, as botocore does not sign it: proxies
#: may rewrite it)
USER_AGENT = f"pfio/{__version__} python/{platform.python_version()}"


class HttpEngine(RestRequests):
    """S3's data path over pfio's HTTP/1.1 client (see the module documentation)."""

    plain_gets = True

    def __init__(self, connection: S3Connection, hooks: list[RequestHook]) -> None:
        super().__init__(connection, hooks)
        settings, at = connection.settings, self._at
        source = credential_source(self._session)
        self._signer = None if source is None else Signer(source[0], self._region)
        #: (anonymous requests are not signed)
        self.signs_payloads = self._signer is not None
        proxy = _proxy(at)
        #: through a proxy, plain http requests name their whole URL; https ones tunnel
        self._absolute = proxy is not None and not at.tls
        self._proxy_headers = [("proxy-authorization", proxy.authorization)] \
            if proxy is not None and proxy.authorization and self._absolute else []
        rate = settings.min_rate
        waits = _Waits(max(settings.connect_timeout, _SHORTEST_WAIT),
                       max(settings.read_timeout, _SHORTEST_WAIT),
                       MIN_RATE if rate is None else float(rate))
        self._pool = _Pool(at.url, at.port, waits, _tls_context() if at.tls else None,
                           max(1, settings.max_pool_connections), proxy)

    # -- the data path ------------------------------------------------------------------

    def get(self, bucket: str, key: str, rng: str, if_match: str | None,
            sink: BodySink) -> None:
        headers = get_headers(rng, if_match)
        self._send("GET", bucket, key, "", headers, None, sink)

    def close(self) -> None:
        self._pool.close()

    # -- one request --------------------------------------------------------------------

    def _send(self, method: str, bucket: str, key: str, query: str,
              headers: list[tuple[str, str]], body: Any,
              sink: BodySink | None = None) -> RawAnswer:
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
        """Sign and send one request, and read its answer (see ``_Pool.exchange``)."""
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


@dataclass(frozen=True)
class _Waits:
    """How long the connections of a pool wait (see the module documentation)."""

    connect_timeout: float
    read_timeout: float
    min_rate: float = MIN_RATE


class _Pool:
    """Kept-alive connections to one endpoint, per host, at most ``size`` in use."""

    def __init__(self, endpoint: str, port: int, waits: _Waits, tls: ssl.SSLContext | None,
                 size: int, proxy: _Proxy | None = None) -> None:
        self._endpoint = endpoint
        self._port = port
        self._proxy = proxy
        self._waits = waits
        self._tls = tls
        self._idle: dict[str, list[Http1Connection]] = {}
        self._lock = threading.Lock()
        self._free = size  # connections that may still be opened or taken
        self._parked = 0  # bodies left on their connections for their readers
        self._freed = threading.Condition(self._lock)

    def exchange(self, host: str, method: str, head: bytes, body: memoryview | None,
                 sink: BodySink | None, patient: bool = False
                 ) -> tuple[int, dict[str, str], bytes]:
        """Send a request on a connection to ``host`` and read its answer: the status,
        the headers and the body (empty when ``sink`` took it). A ``patient`` answer has
        a deadline instead of a rate floor (see :mod:`pfio.fs.s3.http1`)."""
        self._take_slot()
        try:
            connection = self._reused(host)
            try:
                return self._exchange(connection, host, method, head, body, sink, patient)
            except Stale:
                _close(connection.sock)
                return self._exchange(self._connect(host), host, method, head, body, sink,
                                      patient)
        finally:
            with self._lock:
                self._free += 1
                self._freed.notify()

    def _exchange(self, connection: Http1Connection, host: str, method: str, head: bytes,
                  body: memoryview | None, sink: BodySink | None, patient: bool
                  ) -> tuple[int, dict[str, str], bytes]:
        keep = handed = False
        try:
            try:
                connection.send(head, body)
            except (BrokenPipeError, ConnectionResetError) as exc:
                if connection.reused:
                    raise Stale() from exc
                # the server may have answered (and closed) before taking the whole body
                answer, data, _, _ = connection.read_answer(method)
                return answer.status, answer.headers, data
            answer = connection.read_head()
            ok = sink is not None and answer.status < 300
            data, keep, left = connection.read_body(method, answer, sink if ok else None,
                                                    patient)
            if left:  # the sink reads on from the connection, or it is dropped
                give_back = functools.partial(self._give_back, host) if keep else None
                assert sink is not None  # a body is left only when it went to the sink
                if self._park():
                    handed = sink.take_rest(_Rest(connection, left, give_back, self._unpark))
                    if not handed:
                        self._unpark()
                keep = False
            return answer.status, answer.headers, data
        finally:
            if handed:
                pass
            elif keep:
                connection.reused = True
                with self._lock:
                    self._idle.setdefault(host, []).append(connection)
            else:
                _close(connection.sock)

    def _park(self) -> bool:
        """Count one more body left on its connection for its reader to read on, unless
        :data:`MAX_PARKED` are already (a process that keeps many files open must not
        keep as many connections)."""
        with self._lock:
            if self._parked >= MAX_PARKED:
                return False
            self._parked += 1
            return True

    def _unpark(self) -> None:
        with self._lock:
            self._parked -= 1

    def _give_back(self, host: str, connection: Http1Connection) -> None:
        """Keep ``connection``, whose answer was read to its end by a :class:`_Rest`."""
        connection.reused = True
        with self._lock:
            self._idle.setdefault(host, []).append(connection)

    def _take_slot(self) -> None:
        """Wait until fewer than ``size`` connections are in use, and count one more."""
        with self._lock:
            while not self._free:
                self._freed.wait()
            self._free -= 1

    def _reused(self, host: str) -> Http1Connection:
        """An idle connection to ``host`` (the last one used: the likeliest to be open),
        else a new one."""
        with self._lock:
            idle = self._idle.get(host)
            if idle:
                return idle.pop()
        return self._connect(host)

    def _connect(self, host: str) -> Http1Connection:
        """A new connection to ``host`` (through the proxy if any; TLS when the endpoint
        is https), its waits bounded (see the module documentation)."""
        proxy, waits = self._proxy, self._waits
        address = (host, self._port) if proxy is None else (proxy.host, proxy.port)
        where = self._endpoint if proxy is None else f"the proxy {proxy}"
        try:
            sock = socket.create_connection(address, timeout=waits.connect_timeout)
        except TimeoutError:
            raise TimeoutError(f"could not connect to {where} within "
                               f"{waits.connect_timeout:g} s") from None
        except socket.gaierror as exc:
            raise OSError(f"cannot resolve the host of {where}: {exc}") from None
        except ConnectionError as exc:
            raise ConnectionError(f"could not connect to {where}: {exc}") from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls is None:
                sock.settimeout(None)  # blocking, the kernel bounds each wait
                _bound_waits(sock, waits.read_timeout)
                return Http1Connection(sock, self._endpoint, waits.read_timeout,
                                       waits.min_rate)
            sock.settimeout(waits.read_timeout)
            if proxy is not None:
                self._tunnel(sock, proxy, host)
            return Http1Connection(self._handshake(sock, host), self._endpoint,
                                   waits.read_timeout, waits.min_rate, tls=True)
        except BaseException:
            _close(sock)
            raise

    def _handshake(self, sock: socket.socket, host: str) -> ssl.SSLSocket:
        """``sock`` wrapped in TLS for ``host``, the handshake done within
        ``connect_timeout``; its waits then bounded by ``read_timeout`` (Python's socket
        timeout: ``ssl`` would retry a receive that ``SO_RCVTIMEO`` ended, forever).

        Raises:
            TimeoutError: no handshake within ``connect_timeout``.
            OSError: the certificate was refused, or the handshake failed.
        """
        assert self._tls is not None
        sock.settimeout(self._waits.connect_timeout)
        try:  # (a TLS EOF without close_notify raises: it may be a truncation)
            secure = self._tls.wrap_socket(sock, server_hostname=host,
                                           suppress_ragged_eofs=False)
        except TimeoutError:
            raise TimeoutError(f"no TLS handshake with {self._endpoint} within "
                               f"{self._waits.connect_timeout:g} s") from None
        except ssl.SSLCertVerificationError as exc:
            raise OSError(f"TLS certificate of {self._endpoint} refused: "
                          f"{exc.verify_message}") from None
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError) as exc:
            raise ConnectionError(f"{self._endpoint} closed the connection during the TLS "
                                  f"handshake: {exc}") from None
        except ssl.SSLError as exc:
            raise OSError(f"TLS handshake with {self._endpoint} failed: {exc}") from None
        secure.settimeout(self._waits.read_timeout)
        return secure

    def _tunnel(self, sock: socket.socket, proxy: _Proxy, host: str) -> None:
        """Ask ``proxy`` (connected on ``sock``) for a tunnel to ``host`` (``CONNECT``).

        Raises:
            OSError: the proxy refused (its status line says why).
        """
        authority = f"{_bracketed(host)}:{self._port}"
        auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization \
            else ""
        request = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{auth}\r\n"
        if _unsafe(authority) or _unsafe(proxy.authorization):
            raise ValueError(f"refusing to ask the proxy {proxy} for a tunnel: its request "
                             "would hold CR, LF or NUL")
        answer = Http1Connection(sock, f"the proxy {proxy}", self._waits.read_timeout,
                                 self._waits.min_rate)
        answer.send(request.encode(), None)
        head = answer.read_head()
        if head.status != 200:
            raise OSError(f"the proxy {proxy} refused a tunnel to {authority}: {head.status}")
        if answer.buffered():
            raise ConnectionError(f"the proxy {proxy} sent bytes before the tunnel opened")

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                _close(connection.sock)


class _Rest:
    """The rest of the body of a plain GET, read on by the sink that took it (see
    ``BodySink.take_rest``): its connection goes back to the pool once the body is read to
    its end (unless the server closes it), and is closed when the rest is dropped. Only
    the process that sent the request reads it (a forked child's reads raise
    ``ConnectionError``)."""

    def __init__(self, connection: Http1Connection, left: int,
                 give_back: Callable[[Http1Connection], None] | None,
                 ended: Callable[[], None]) -> None:
        self._connection: Http1Connection | None = connection
        self._give_back = give_back  # None: the server closes the connection after it
        self._ended = ended  # called once, when the rest is read or dropped
        self._pid = os.getpid()
        self.left = left

    def readinto(self, target: memoryview) -> int:
        """Fill ``target`` with the next bytes (all of them unless the body ends first).

        Raises:
            ConnectionError, TimeoutError: the connection broke, or went silent.
        """
        connection = self._connection
        if connection is None or self._pid != os.getpid():
            raise ConnectionError("the body was dropped, or is another process's")
        n = connection.readinto_body(target[:self.left])
        self.left -= n
        if not self.left:
            self._connection = None
            self._ended()
            if self._give_back is not None and not connection.buffered():
                self._give_back(connection)
            else:
                _close(connection.sock)
        return n

    def close(self) -> None:
        """Drop the rest (its connection is closed; in another process, only its copy)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._ended()
            _close(connection.sock)


@dataclass(frozen=True)
class _Proxy:
    """An HTTP proxy of the environment: where it listens, and its ``Proxy-Authorization``
    (Basic, from the URL's user and password) if any."""

    host: str
    port: int
    authorization: str = field(default="", repr=False)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def _proxy(at: Endpoint) -> _Proxy | None:
    """The proxy ``HTTP_PROXY``/``HTTPS_PROXY`` name for the endpoint ``at`` (none when
    ``NO_PROXY`` covers its host).

    Raises:
        ValueError: the proxy is not an ``http://`` one (``https://``, ``socks5://``).
    """
    url = urllib.request.getproxies().get("https" if at.tls else "http")
    if not url or urllib.request.proxy_bypass(at.host):
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme != "http":
        raise ValueError(f"pfio's S3 client speaks to http:// proxies only, not "
                         f"{parts.scheme}:// ones (from the environment): pass "
                         "engine='boto3' to S3, or set PFIO_S3_ENGINE=boto3")
    authorization = ""
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(pair.encode()).decode()
    return _Proxy(parts.hostname or "", parts.port or 80, authorization)


def _bound_waits(sock: socket.socket, seconds: float) -> None:
    """Make each blocking send or receive on ``sock`` give up after ``seconds`` without
    progress (the kernel's ``SO_RCVTIMEO``/``SO_SNDTIMEO``). Python's own socket timeouts
    would poll before every call: two system calls, and two waits for the GIL, each. For
    plain sockets only: ``ssl`` retries a receive the kernel gave up on, forever."""
    whole = int(seconds)
    interval = struct.pack("ll", whole, int((seconds - whole) * 1_000_000))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, interval)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, interval)


def _close(sock: Socket) -> None:
    try:
        sock.close()
    except OSError:
        pass


def _tls_context() -> ssl.SSLContext:
    """TLS with the system's CA store, or the bundle ``$AWS_CA_BUNDLE`` names."""
    return ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE") or None)


def _patient(method: str, query: str, headers: list[tuple[str, str]]) -> bool:
    """Whether the answer may take minutes: CompleteMultipartUpload, CopyObject and
    UploadPartCopy, which S3 answers with 200 at once and then keeps alive with whitespace
    while it works (their answers have a deadline instead of a rate floor)."""
    if method == "POST":
        return query.startswith("uploadId=")
    return method == "PUT" and any(name == "x-amz-copy-source" for name, _ in headers)


def _bracketed(host: str) -> str:
    """``host`` as a URL's authority names it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def _unsafe(text: str) -> bool:
    """Whether ``text`` would end a line of a request's head (CR, LF or NUL)."""
    return "\r" in text or "\n" in text or "\0" in text


def _request_head(method: str, target: str, headers: list[tuple[str, str]]) -> bytes:
    """The head of a request; every value checked (a server's ETag, a proxy's password,
    ...): none may add a line, and the target holds no whitespace.

    Raises:
        ValueError: a value holds CR, LF or NUL (the error names the header, never its
            value: it may be a secret), or the target whitespace.
    """
    lines = [f"{name}: {value}\r\n" for name, value in headers]
    if _unsafe("".join([value for _, value in headers])):
        name = next(name for name, value in headers if _unsafe(value))
        raise ValueError(f"refusing to send a {name} header holding CR, LF or NUL")
    if _unsafe(target) or " " in target or "\t" in target:
        raise ValueError(f"refusing to send a request target holding whitespace or NUL: "
                         f"{target[:80]!r}")
    return "".join([f"{method} {target} HTTP/1.1\r\n", *lines, "\r\n"]).encode()
