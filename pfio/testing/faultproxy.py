"""A fault-injecting HTTP/1.1 proxy on loopback, for testing clients against bad networks.

``FaultProxy(upstream_host, upstream_port)`` listens on 127.0.0.1 at a free port and relays
requests to the upstream server, one upstream connection per client connection. While it
runs, these faults can be set (and changed) at any time:

* ``fail_next(k, status=503, code="SlowDown")``: answer the next ``k`` requests with an S3
  style error, without forwarding them;
* ``cut_next(k, after_bytes)``: for the next ``k`` responses whose body is longer than
  ``after_bytes``, send the head and the first ``after_bytes`` bytes of the body, then
  close the connection;
* ``ignore_range_next(k, skip=0)``: after ``skip`` more ranged requests, forward the next
  ``k`` ones without their ``Range`` header (the server answers 200, the whole object);
* ``latency`` (seconds): wait before forwarding each request.

It counts requests (``requests``, ``methods``), response body bytes sent to clients
(``bytes_down``) and request body bytes (``bytes_up``); :meth:`reset` zeroes counters and
faults.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import Counter
from types import TracebackType

logger = logging.getLogger(__name__)

_ERROR_BODY = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
               '<Message>injected by pfio.testing.faultproxy</Message></Error>')


class _Closed(Exception):
    """The peer closed its side."""


class _Stream:
    """Reads of HTTP messages from a socket: lines, exact byte counts."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def _more(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise _Closed
        self.buf += data

    def head(self) -> bytes:
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                head = bytes(self.buf[:end + 4])
                del self.buf[:end + 4]
                return head
            self._more()

    def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._more()
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def line(self) -> bytes:
        while True:
            end = self.buf.find(b"\r\n")
            if end >= 0:
                line = bytes(self.buf[:end + 2])
                del self.buf[:end + 2]
                return line
            self._more()

    def chunked(self) -> bytes:
        """A whole chunked body, as it was sent (sizes, chunks and trailers)."""
        out = bytearray()
        while True:
            line = self.line()
            out += line
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                while True:
                    trailer = self.line()
                    out += trailer
                    if trailer == b"\r\n":
                        return bytes(out)
            out += self.exactly(size + 2)

    def until_closed(self) -> bytes:
        try:
            while True:
                self._more()
        except (_Closed, OSError):
            data = bytes(self.buf)
            self.buf.clear()
            return data


def _headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines if ln)}


class FaultProxy:
    """See the module documentation. Use as a context manager, or :meth:`start`/:meth:`stop`.

    Attributes:
        endpoint: ``http://127.0.0.1:PORT`` of the proxy.
        latency: seconds added before each forwarded request.
    """

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.latency = 0.0
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        self.endpoint = ""
        self.reset()

    # -- configuration ------------------------------------------------------------------

    def reset(self) -> None:
        """Zero the counters and clear every fault."""
        with self._lock:
            self.requests = 0
            self.methods: Counter[str] = Counter()
            self.bytes_down = 0
            self.bytes_up = 0
            self.failed = 0
            self.cut = 0
            self._fail_left = 0
            self._fail_status = 503
            self._fail_code = "SlowDown"
            self._cut_left = 0
            self._cut_after = 0
            self._unrange_skip = 0
            self._unrange_left = 0
            self.latency = 0.0

    def fail_next(self, k: int, status: int = 503, code: str = "SlowDown") -> None:
        """Answer the next ``k`` requests with ``status`` and an S3 error ``code``."""
        with self._lock:
            self._fail_left, self._fail_status, self._fail_code = k, status, code

    def cut_next(self, k: int, after_bytes: int) -> None:
        """Close the connection after ``after_bytes`` body bytes of the next ``k`` responses
        that are longer than that."""
        with self._lock:
            self._cut_left, self._cut_after = k, after_bytes

    def ignore_range_next(self, k: int, skip: int = 0) -> None:
        """After ``skip`` more requests with a ``Range`` header, send the next ``k`` ones
        upstream without it (as a server that ignores ranges: the whole object, 200)."""
        with self._lock:
            self._unrange_skip, self._unrange_left = skip, k

    # -- lifetime -----------------------------------------------------------------------

    def start(self) -> FaultProxy:
        listener = socket.create_server(("127.0.0.1", 0))
        self._listener = listener
        self.endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
        thread = threading.Thread(target=self._accept, name="faultproxy-accept", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            _close(conn)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -- relaying -----------------------------------------------------------------------

    def _accept(self) -> None:
        listener = self._listener
        while listener is not None:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True,
                             name="faultproxy-conn").start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            reader = _Stream(client)
            up_reader: _Stream | None = None
            while True:
                head = reader.head()
                method = head.split(b" ", 1)[0].decode("latin-1")
                headers = _headers(head)
                if headers.get("expect", "").lower() == "100-continue":
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    head = _without_expect(head)
                if "chunked" in headers.get("transfer-encoding", ""):
                    body = reader.chunked()
                else:
                    body = reader.exactly(int(headers.get("content-length", 0)))
                if self._inject_error(client, method, len(body)):
                    continue
                if "range" in headers:
                    head = self._maybe_unrange(head)
                if self.latency:
                    time.sleep(self.latency)
                if upstream is None:
                    upstream = socket.create_connection(self.upstream)
                    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    up_reader = _Stream(upstream)
                upstream.sendall(head + body)
                if not self._relay_response(client, up_reader, method):
                    return
        except (_Closed, OSError):
            return
        finally:
            _close(client)
            if upstream is not None:
                _close(upstream)
            with self._lock:
                self._conns.discard(client)

    def _inject_error(self, client: socket.socket, method: str, up: int) -> bool:
        with self._lock:
            self.requests += 1
            self.methods[method] += 1
            self.bytes_up += up
            if self._fail_left <= 0:
                return False
            self._fail_left -= 1
            self.failed += 1
            status, code = self._fail_status, self._fail_code
        body = _ERROR_BODY.format(code=code).encode()
        client.sendall(
            f"HTTP/1.1 {status} Injected\r\nContent-Type: application/xml\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        return True

    def _maybe_unrange(self, head: bytes) -> bytes:
        with self._lock:
            if self._unrange_skip > 0:
                self._unrange_skip -= 1
                return head
            if self._unrange_left <= 0:
                return head
            self._unrange_left -= 1
        lines = head.split(b"\r\n")
        return b"\r\n".join(ln for ln in lines if not ln.lower().startswith(b"range:"))

    def _relay_response(self, client: socket.socket, up: _Stream, method: str) -> bool:
        """Relay one response; False when the client connection must end."""
        head = up.head()
        while head.split(b" ", 2)[1].startswith(b"1"):  # answered to the client already
            head = up.head()
        headers = _headers(head)
        status = int(head.split(b" ", 2)[1])
        keep = headers.get("connection", "").lower() != "close"
        if method == "HEAD" or status in (204, 304):
            body = b""
        elif "chunked" in headers.get("transfer-encoding", ""):
            body = up.chunked()
        elif "content-length" in headers:
            body = up.exactly(int(headers["content-length"]))
        else:
            body, keep = up.until_closed(), False
        with self._lock:
            cut = self._cut_left > 0 and len(body) > self._cut_after
            if cut:
                self._cut_left -= 1
                self.cut += 1
                body = body[:self._cut_after]
            self.bytes_down += len(body)
        client.sendall(head + body)
        return keep and not cut


def _without_expect(head: bytes) -> bytes:
    lines = head.split(b"\r\n")
    return b"\r\n".join(ln for ln in lines if not ln.lower().startswith(b"expect:"))


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
