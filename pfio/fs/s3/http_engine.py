"""The ``http`` engine of S3: the data path on pfio's own HTTP/1.1 client.

Each request is a few system calls on a kept-alive socket (``ssl`` for ``https``) made by
the thread that asks: the request is signed here (:mod:`pfio.fs.s3.sigv4`), sent with one
``sendall`` (large bodies straight from the caller's buffer) and its body is received with
``recv_into`` straight into the buffer that keeps it, with the GIL released while the kernel
copies. No thread of a runtime calls back into Python, so a 100 KiB GET costs about 0.15 ms
of CPU (kernel included), on par with the Rust clients (figures in the README), and nothing
survives a fork that would need the parent's threads.

Connections are kept per host, at most ``max_pool_connections`` at once; a request that
finds its reused connection closed by the server (before any byte of an answer) is sent
again once on a new connection: the server did not take it. Waits are bounded:
connecting by ``connect_timeout``, and each wait for bytes of an answer by
``read_timeout`` (``TimeoutError`` naming the endpoint). Credentials come from boto3's
whole chain and are read at each request, so they refresh as botocore refreshes them;
``https`` endpoints use the system's CA store, or ``$AWS_CA_BUNDLE``.
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
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from .rest import RestRequests
from .sigv4 import Signer
from .wire import credential_source, get_headers, server_error

if TYPE_CHECKING:
    from collections.abc import Callable

    from .connection import BodySink, RequestHook, S3Connection
    from .wire import Endpoint

#: bytes of a connection's receive buffer: the head of an answer must fit in it, and what
#: comes with the head is copied out of it while holding the GIL (the rest of a body is
#: received straight where it goes, with the GIL released)
_BUFFER = 16 << 10
#: bodies up to this size are sent in one ``sendall`` with the head
_INLINE_BODY = 64 << 10
#: bytes of an unwanted rest of a body read to keep the connection (more: it is closed)
_DRAIN = 64 << 10
#: bodies of plain GETs kept on their connections for their readers at once, at most (more:
#: their connections are dropped, and the readers go on with ranged GETs)
MAX_PARKED = 64
_NO_BODY = frozenset({204, 304})


class HttpEngine(RestRequests):
    """S3's data path over pfio's HTTP/1.1 client (see the module documentation)."""

    plain_gets = True

    def __init__(self, connection: S3Connection, hooks: list[RequestHook]) -> None:
        super().__init__(connection, hooks)
        settings, at = connection.settings, self._at
        source = credential_source(self._session)
        self._signer = None if source is None else Signer(source[0], self._region)
        proxy = _proxy(at)
        #: through a proxy, plain http requests name their whole URL; https ones tunnel
        self._absolute = proxy is not None and not at.tls
        self._proxy_headers = [("proxy-authorization", proxy.authorization)] \
            if proxy is not None and proxy.authorization and self._absolute else []
        self._pool = _Pool(at.url, at.port, settings.connect_timeout, settings.read_timeout,
                           _tls_context() if at.tls else None,
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
              sink: BodySink | None = None) -> dict[str, Any]:
        status, answer, data = self._exchange(method, bucket, key, query, headers, body, sink)
        if status >= 300 and self._moved(bucket, status, answer):  # once, to its region
            status, answer, data = self._exchange(method, bucket, key, query, headers, body,
                                                  sink)
        if status >= 300:
            raise server_error(status, data, answer)
        return {"ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": answer},
                "ETag": answer.get("etag"), "Body": data}

    def _exchange(self, method: str, bucket: str, key: str, query: str,
                  headers: list[tuple[str, str]], body: Any,
                  sink: BodySink | None) -> tuple[int, dict[str, str], bytes]:
        """Sign and send one request, and read its answer (see ``_Pool.exchange``)."""
        region, at = self._where(bucket)
        host, host_header, path = at.address(bucket, key)
        headers = [("host", host_header), *headers]
        view = None
        if body is not None:
            view = memoryview(body).cast("B")
            headers.append(("content-length", str(len(view))))
        if self._signer is not None:
            headers = self._signer.sign(method, path, query, headers, region=region)
        if self._hooks:
            names = dict(headers)
            for hook in self._hooks:
                hook(method, f"/{bucket}/{key}", names)
        target = path + ("?" + query if query else "")
        if self._absolute:  # (the proxy drops its own header: it is not signed)
            target = f"http://{host_header}{target}"
            headers += self._proxy_headers
        head = "".join([f"{method} {target} HTTP/1.1\r\n",
                        *[f"{name}: {value}\r\n" for name, value in headers], "\r\n"]).encode()
        return self._pool.exchange(host, head, view, sink)


class _Stale(Exception):
    """A reused connection was found closed before any byte of an answer came."""


class _Connection:
    """One socket to the server, with a receive buffer for the heads of answers."""

    def __init__(self, sock: socket.socket, endpoint: str, read_timeout: float) -> None:
        self.sock = sock
        #: the flags of a receive of a body's rest: the whole of it in one system call
        #: where the socket allows (TLS does not)
        self.wait_all = 0 if isinstance(sock, ssl.SSLSocket) else socket.MSG_WAITALL
        self.endpoint = endpoint
        self.read_timeout = read_timeout
        self.reused = False
        self._buffer = bytearray(_BUFFER)
        self._view = memoryview(self._buffer)
        self._start = self._end = 0

    def send(self, head: bytes, body: memoryview | None) -> None:
        try:
            if body is not None and len(body) <= _INLINE_BODY:
                self.sock.sendall(head + body)
            else:
                self.sock.sendall(head)
                if body is not None:
                    self.sock.sendall(body)
        except (TimeoutError, BlockingIOError, ssl.SSLWantWriteError):
            raise TimeoutError(f"{self.endpoint} took no bytes of a request within "
                               f"{self.read_timeout:g} s") from None

    # -- the answer ---------------------------------------------------------------------

    def read_head(self) -> tuple[int, dict[str, str]]:
        """The status and the (lower-case) headers of the next answer (1xx skipped)."""
        while True:
            end = self._buffer.find(b"\r\n\r\n", self._start, self._end)
            if end < 0:
                self._fill()
                continue
            head = bytes(self._view[self._start:end]).decode("latin-1")
            self._start = end + 4
            first, _, fields = head.partition("\r\n")
            version, _, rest = first.partition(" ")
            try:
                status = int(rest[:3])
            except ValueError:
                raise ConnectionError(f"{self.endpoint} answered with something other "
                                      f"than HTTP: {first[:80]!r}") from None
            headers: dict[str, str] = {}
            for line in fields.split("\r\n"):
                name, _, value = line.partition(":")
                name = name.strip().lower()
                value = value.strip()
                headers[name] = f"{headers[name]}, {value}" if name in headers else value
            if version == "HTTP/1.0":
                headers.setdefault("connection", "close")
            if status >= 200:
                return status, headers

    def read_body(self, status: int, headers: dict[str, str], sink: BodySink | None,
                  bodiless: bool = False) -> tuple[bytes, bool, int]:
        """Read the body of the answer (none to a HEAD: ``bodiless``). With ``sink`` (a
        successful GET's) the sink is begun and takes the body, or as much of it as it
        wants; else the body is returned. Returns the body, whether the connection may be
        kept, and the bytes of the body left unread (a sink took what it wanted of a long
        body)."""
        keep = headers.get("connection", "").lower() != "close"
        if bodiless or status in _NO_BODY:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = self._read_chunked()
        elif "content-length" not in headers:  # the body ends with the connection
            body, keep = self._read_to_end(), False
        elif sink is None:
            return self._read_exact(int(headers["content-length"])), keep, 0
        else:
            sink.begin(status, headers)
            left = self._into_sink(sink, int(headers["content-length"]))
            if 0 < left <= _DRAIN:
                self._read_exact(left)
                left = 0
            return b"", keep, left
        if sink is None:
            return body, keep, 0
        sink.begin(status, {**headers, "content-length": str(len(body))})
        sink.write(body)
        return b"", keep, 0

    def buffered(self) -> int:
        """Bytes received and not read yet."""
        return self._end - self._start

    def readinto_body(self, target: memoryview) -> int:
        """Fill ``target`` with the next bytes of the body being read (all of them unless
        the connection ends)."""
        buffered = min(len(target), self._end - self._start)
        if buffered:
            target[:buffered] = self._view[self._start:self._start + buffered]
            self._start += buffered
            return buffered
        return self._recv_into(target, self.wait_all)

    def _into_sink(self, sink: BodySink, length: int) -> int:
        """Give up to ``length`` body bytes to ``sink``, until it has all it wants; the
        bytes of the body left unread."""
        left = length
        while left and not sink.complete():
            buffered = min(left, self._end - self._start)
            if buffered:
                n = sink.write(self._view[self._start:self._start + buffered])
                self._start += n
            elif (target := sink.target()) is not None:
                n = self._recv_into(target[:left], self.wait_all)
                sink.advance(n)
            else:  # the sink skips bytes first: they go through the buffer
                self._fill()
                continue
            left -= n
        return left

    def _read_chunked(self) -> bytes:
        chunks = []
        while size := self._chunk_size():
            chunks.append(self._read_exact(size))
            self._read_exact(2)
        while self._read_line():  # trailers, up to the empty line
            pass
        return b"".join(chunks)

    # -- bytes --------------------------------------------------------------------------

    def _fill(self) -> None:
        """Receive more bytes into the buffer (a head that does not fit is an error)."""
        if self._start == self._end:
            self._start = self._end = 0
        elif self._end == len(self._buffer):
            if self._start == 0:
                raise ConnectionError(f"{self.endpoint} sent a head of over {_BUFFER} bytes")
            rest = self._end - self._start
            self._buffer[:rest] = self._buffer[self._start:self._end]
            self._start, self._end = 0, rest
        n = self._recv_into(self._view[self._end:])
        self._end += n

    def _recv_into(self, target: memoryview, flags: int = 0) -> int:
        try:
            n = self.sock.recv_into(target, 0, flags)
        except (TimeoutError, BlockingIOError, ssl.SSLWantReadError):
            raise TimeoutError(f"{self.endpoint} did not answer within "
                               f"{self.read_timeout:g} s") from None
        except (ConnectionResetError, ssl.SSLEOFError) as exc:
            if self.reused:
                raise _Stale() from exc
            raise ConnectionError(f"{self.endpoint} closed the connection: {exc}") from None
        if n == 0:
            if self.reused:
                raise _Stale()
            raise ConnectionError(f"{self.endpoint} closed the connection in the middle "
                                  "of an answer")
        self.reused = False  # an answer has begun: a failure now is not a stale connection
        return n

    def _read_exact(self, size: int) -> bytes:
        out = bytearray(size)
        view = memoryview(out)
        buffered = min(size, self._end - self._start)
        view[:buffered] = self._view[self._start:self._start + buffered]
        self._start += buffered
        done = buffered
        while done < size:
            done += self._recv_into(view[done:])
        return bytes(out)

    def _read_line(self) -> bytes:
        while True:
            end = self._buffer.find(b"\r\n", self._start, self._end)
            if end >= 0:
                line = bytes(self._view[self._start:end])
                self._start = end + 2
                return line
            self._fill()

    def _chunk_size(self) -> int:
        line = self._read_line().split(b";", 1)[0].strip()
        try:
            return int(line, 16)
        except ValueError:
            raise ConnectionError(f"{self.endpoint} sent a bad chunk size {line[:20]!r}") \
                from None

    def _read_to_end(self) -> bytes:
        chunks = [bytes(self._view[self._start:self._end])]
        self._start = self._end = 0
        while True:
            try:
                n = self._recv_into(self._view)
            except ConnectionError:
                return b"".join(chunks)
            chunks.append(bytes(self._view[:n]))


class _Pool:
    """Kept-alive connections to one endpoint, per host, at most ``size`` in use."""

    def __init__(self, endpoint: str, port: int, connect_timeout: float,
                 read_timeout: float, tls: ssl.SSLContext | None, size: int,
                 proxy: _Proxy | None = None) -> None:
        self._endpoint = endpoint
        self._port = port
        self._proxy = proxy
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._tls = tls
        self._idle: dict[str, list[_Connection]] = {}
        self._lock = threading.Lock()
        self._free = size  # connections that may still be opened or taken
        self._parked = 0  # bodies left on their connections for their readers
        self._freed = threading.Condition(self._lock)

    def exchange(self, host: str, head: bytes, body: memoryview | None,
                 sink: BodySink | None) -> tuple[int, dict[str, str], bytes]:
        """Send a request on a connection to ``host`` and read its answer: the status,
        the headers and the body (empty when ``sink`` took it)."""
        self._take_slot()
        try:
            connection = self._reused(host)
            try:
                return self._exchange(connection, host, head, body, sink)
            except _Stale:
                connection.sock.close()
                return self._exchange(self._connect(host), host, head, body, sink)
        finally:
            with self._lock:
                self._free += 1
                self._freed.notify()

    def _exchange(self, connection: _Connection, host: str, head: bytes,
                  body: memoryview | None, sink: BodySink | None
                  ) -> tuple[int, dict[str, str], bytes]:
        keep = handed = False
        try:
            try:
                connection.send(head, body)
            except (BrokenPipeError, ConnectionResetError) as exc:
                if connection.reused:
                    raise _Stale() from exc
                # the server may have answered (and closed) before taking the whole body
                status, headers = connection.read_head()
                return status, headers, connection.read_body(status, headers, None)[0]
            status, headers = connection.read_head()
            ok = sink is not None and status < 300
            data, keep, left = connection.read_body(status, headers, sink if ok else None,
                                                    head.startswith(b"HEAD "))
            if left:  # the sink reads on from the connection, or it is dropped
                give_back = functools.partial(self._give_back, host) if keep else None
                if self._park():
                    handed = sink.take_rest(_Rest(connection, left, give_back, self._unpark))
                    if not handed:
                        self._unpark()
                keep = False
            return status, headers, data
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

    def _give_back(self, host: str, connection: _Connection) -> None:
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

    def _reused(self, host: str) -> _Connection:
        """An idle connection to ``host`` (the last one used: the likeliest to be open),
        else a new one."""
        with self._lock:
            idle = self._idle.get(host)
            if idle:
                return idle.pop()
        return self._connect(host)

    def _connect(self, host: str) -> _Connection:
        proxy = self._proxy
        address = (host, self._port) if proxy is None else (proxy.host, proxy.port)
        where = self._endpoint if proxy is None else f"the proxy {proxy}"
        try:
            sock = socket.create_connection(address, timeout=self._connect_timeout)
        except TimeoutError:
            raise TimeoutError(f"could not connect to {where} within "
                               f"{self._connect_timeout:g} s") from None
        except socket.gaierror as exc:
            raise OSError(f"cannot resolve the host of {where}: {exc}") from None
        except ConnectionError as exc:
            raise ConnectionError(f"could not connect to {where}: {exc}") from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(None)
            _bound_waits(sock, self._read_timeout)
            if self._tls is not None:
                if proxy is not None:
                    self._tunnel(sock, proxy, host)
                sock = self._tls.wrap_socket(sock, server_hostname=host)
        except ssl.SSLCertVerificationError as exc:
            _close(sock)
            raise OSError(f"TLS certificate of {self._endpoint} refused: "
                          f"{exc.verify_message}") from None
        except BaseException:
            _close(sock)
            raise
        return _Connection(sock, self._endpoint, self._read_timeout)

    def _tunnel(self, sock: socket.socket, proxy: _Proxy, host: str) -> None:
        """Ask ``proxy`` (connected on ``sock``) for a tunnel to ``host`` (``CONNECT``).

        Raises:
            OSError: the proxy refused (its status line says why).
        """
        authority = f"{host}:{self._port}"
        auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization else ""
        sock.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{auth}\r\n"
                     .encode())
        answer = _Connection(sock, f"the proxy {proxy}", self._read_timeout)
        status, headers = answer.read_head()
        if status != 200:
            raise OSError(f"the proxy {proxy} refused a tunnel to {authority}: {status}")
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

    def __init__(self, connection: _Connection, left: int,
                 give_back: Callable[[_Connection], None] | None,
                 ended: Callable[[], None]) -> None:
        self._connection: _Connection | None = connection
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
            if self._give_back is not None:
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
    would poll before every call: two system calls, and two waits for the GIL, each."""
    whole = int(seconds)
    interval = struct.pack("ll", whole, int((seconds - whole) * 1_000_000))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, interval)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, interval)


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass


def _tls_context() -> ssl.SSLContext:
    """TLS with the system's CA store, or the bundle ``$AWS_CA_BUNDLE`` names."""
    return ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE") or None)
