"""The connections of the ``http`` engine (see :mod:`pfio.fs.s3.http_engine`): kept alive
per host, at most ``max_pool_connections`` in use at once (:class:`Pool`), each opened with
its waits bounded (``connect_timeout``, then ``read_timeout`` per wait, the kernel's
``SO_RCVTIMEO`` on plain sockets, Python's socket timeouts on TLS ones), through an
``http://`` proxy of the environment where one is set (a ``CONNECT`` tunnel for https);
and the bodies of plain GETs left on their connections for their readers to read on
(:data:`MAX_PARKED` at most at once).
"""

from __future__ import annotations

import base64
import functools
import os
import socket
import ssl
import struct
import threading
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from .http1 import MIN_RATE, Http1Connection, Socket, Stale

if TYPE_CHECKING:
    from collections.abc import Callable

    from .engine import BodySink
    from .wire import Endpoint

#: bodies of plain GETs kept on their connections for their readers at once, at most (more:
#: their connections are dropped, and the readers go on with ranged GETs)
MAX_PARKED = 64


@dataclass(frozen=True)
class Waits:
    """How long the connections of a pool wait (see the module documentation)."""

    connect_timeout: float
    read_timeout: float
    min_rate: float = MIN_RATE


class Pool:
    """Kept-alive connections to one endpoint, per host, at most ``size`` in use."""

    def __init__(self, endpoint: str, port: int, waits: Waits, tls: ssl.SSLContext | None,
                 size: int, proxy: Proxy | None = None) -> None:
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
                close_socket(connection.sock)
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
                close_socket(connection.sock)

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
            close_socket(sock)
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

    def _tunnel(self, sock: socket.socket, proxy: Proxy, host: str) -> None:
        """Ask ``proxy`` (connected on ``sock``) for a tunnel to ``host`` (``CONNECT``).

        Raises:
            OSError: the proxy refused (its status line says why).
        """
        authority = f"{_bracketed(host)}:{self._port}"
        auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization \
            else ""
        request = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{auth}\r\n"
        if unsafe(authority) or unsafe(proxy.authorization):
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
                close_socket(connection.sock)


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
                close_socket(connection.sock)
        return n

    def close(self) -> None:
        """Drop the rest (its connection is closed; in another process, only its copy)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._ended()
            close_socket(connection.sock)


@dataclass(frozen=True)
class Proxy:
    """An HTTP proxy of the environment: where it listens, and its ``Proxy-Authorization``
    (Basic, from the URL's user and password) if any."""

    host: str
    port: int
    authorization: str = field(default="", repr=False)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def proxy_for(at: Endpoint) -> Proxy | None:
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
    return Proxy(parts.hostname or "", parts.port or 80, authorization)


def _bound_waits(sock: socket.socket, seconds: float) -> None:
    """Make each blocking send or receive on ``sock`` give up after ``seconds`` without
    progress (the kernel's ``SO_RCVTIMEO``/``SO_SNDTIMEO``). Python's own socket timeouts
    would poll before every call: two system calls, and two waits for the GIL, each. For
    plain sockets only: ``ssl`` retries a receive the kernel gave up on, forever."""
    whole = int(seconds)
    interval = struct.pack("ll", whole, int((seconds - whole) * 1_000_000))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, interval)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, interval)


def close_socket(sock: Socket) -> None:
    try:
        sock.close()
    except OSError:
        pass


def tls_context() -> ssl.SSLContext:
    """TLS with the system's CA store, or the bundle ``$AWS_CA_BUNDLE`` names."""
    return ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE") or None)


def _bracketed(host: str) -> str:
    """``host`` as a URL's authority names it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def unsafe(text: str) -> bool:
    """Whether ``text`` would end a line of a request's head (CR, LF or NUL)."""
    return "\r" in text or "\n" in text or "\0" in text
