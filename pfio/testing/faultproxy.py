"""A fault-injecting HTTP/1.1 proxy on loopback, for testing clients against bad networks.

``FaultProxy(upstream_host, upstream_port)`` listens on 127.0.0.1 at a free port and relays
requests to the upstream server, one upstream connection per client connection. While it
runs, these faults can be set (and changed) at any time:

* ``fail_next(k, status=503, code="SlowDown", match=None, body=None)``: answer the next
  ``k`` requests (of those ``match(request)`` selects) with an S3 style error (or with
  ``status`` and exactly ``body``: a 200 of whitespace), without forwarding them;
* ``cut_next(k, after_bytes)``: for the next ``k`` responses whose body is longer than
  ``after_bytes``, send the head and the first ``after_bytes`` bytes of the body, then
  close the connection;
* ``ignore_range_next(k, skip=0)``: after ``skip`` more ranged requests, forward the next
  ``k`` ones without their ``Range`` header (the server answers 200, the whole object);
* ``rewrite_next(k, rewrite, statuses=(200, 206), skip=0, match=None)``: after ``skip``
  more, pass the next ``k`` answers to GETs (or to the requests ``match`` selects) with one
  of ``statuses`` through ``rewrite(answer)``, which
  changes the :class:`Answer` (status, header fields, body, framing) before it is sent:
  a server that lies about its bytes. ``short_body_next`` and ``long_body_next`` are two
  such rewrites of ranged answers (206): the body without its last bytes, or with more,
  while ``Content-Range`` still names the range asked;
* ``corrupt_next(k, match=None)``: flip one bit in the middle of the body of the next ``k``
  requests with a body (of those ``match`` selects) on their way to the server: damage in
  transit;
* ``latency`` (seconds): wait before forwarding each request.

It counts requests (``requests``, ``methods``), response body bytes sent to clients
(``bytes_down``), request body bytes (``bytes_up``) and the faults it injected (``failed``,
``cut``, ``rewritten``, ``corrupted``); :meth:`reset` zeroes counters and faults.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

from .http_messages import (
    FRAMINGS,
    Answer,
    MessageReader,
    PeerClosed,
    Request,
    dechunk,
    header_fields,
    parse_answer,
)

#: the HTTP message types are :mod:`.http_messages`'; tests name them from here too
__all__ = ["FRAMINGS", "Answer", "FaultProxy", "MessageReader", "PeerClosed", "Request",
           "header_fields"]

logger = logging.getLogger(__name__)

_ERROR_BODY = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
               '<Message>injected by pfio.testing.faultproxy</Message></Error>')


def _short_body(missing: int, framing: str) -> Callable[[Answer], None]:
    def rewrite(answer: Answer) -> None:
        answer.body = answer.body[:max(0, len(answer.body) - missing)]
        answer.framing = framing
        if framing == "length":
            answer.set("Content-Length", str(len(answer.body)))
    return rewrite


def _long_body(extra: bytes, framing: str) -> Callable[[Answer], None]:
    def rewrite(answer: Answer) -> None:
        answer.body += extra
        answer.framing = framing
        if framing == "length":
            answer.set("Content-Length", str(len(answer.body)))
    return rewrite


@dataclass
class _Rewrite:
    left: int
    rewrite: Callable[[Answer], None]
    statuses: tuple[int, ...]
    skip: int = 0
    match: Callable[[Request], bool] | None = None
    requests: list[Request] = field(default_factory=list)


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
            self.rewritten = 0
            self.corrupted = 0
            self._corrupt_left = 0
            self._corrupt_match: Callable[[Request], bool] | None = None
            self._fail_left = 0
            self._fail_status = 503
            self._fail_code = "SlowDown"
            self._fail_match: Callable[[Request], bool] | None = None
            self._fail_body: bytes | None = None
            self._rewrite: _Rewrite | None = None
            self._cut_left = 0
            self._cut_after = 0
            self._unrange_skip = 0
            self._unrange_left = 0
            self.latency = 0.0

    def fail_next(self, k: int, status: int = 503, code: str = "SlowDown",
                  match: Callable[[Request], bool] | None = None,
                  body: bytes | None = None) -> None:
        """Answer the next ``k`` requests with ``status`` and an S3 error ``code`` (or
        ``body`` as it is, when given): any requests, or only those for which
        ``match(request)`` is true (the others are forwarded)."""
        with self._lock:
            self._fail_left, self._fail_status, self._fail_code = k, status, code
            self._fail_match, self._fail_body = match, body

    def cut_next(self, k: int, after_bytes: int) -> None:
        """Close the connection after ``after_bytes`` body bytes of the next ``k`` responses
        that are longer than that."""
        with self._lock:
            self._cut_left, self._cut_after = k, after_bytes

    def rewrite_next(self, k: int, rewrite: Callable[[Answer], None],
                     statuses: tuple[int, ...] = (200, 206), skip: int = 0,
                     match: Callable[[Request], bool] | None = None) -> None:
        """After ``skip`` more, pass the next ``k`` answers to GETs (to the requests for
        which ``match(request)`` is true, when given) whose status is one of ``statuses``
        through ``rewrite``, which changes the :class:`Answer` in place before it is sent
        (``cut_next`` leaves rewritten answers alone). ``rewritten`` counts them;
        ``rewritten_requests`` lists the requests they answered."""
        with self._lock:
            self._rewrite = _Rewrite(k, rewrite, tuple(statuses), skip, match)

    def short_body_next(self, k: int, missing: int = 1, framing: str = "length",
                        skip: int = 0) -> None:
        """Send the next ``k`` ranged answers (206) without the last ``missing`` bytes of
        their bodies, their ``Content-Range`` unchanged; the body delimited by a
        ``Content-Length`` of what is sent (``framing="length"``), in chunks
        (``"chunked"``) or by closing the connection (``"close"``)."""
        self.rewrite_next(k, _short_body(missing, framing), (206,), skip)

    def long_body_next(self, k: int, extra: bytes = b"!", framing: str = "length",
                       skip: int = 0) -> None:
        """Send the next ``k`` ranged answers (206) with ``extra`` bytes after their bodies,
        their ``Content-Range`` unchanged (delimited as in :meth:`short_body_next`)."""
        self.rewrite_next(k, _long_body(extra, framing), (206,), skip)

    def corrupt_next(self, k: int, match: Callable[[Request], bool] | None = None) -> None:
        """Flip one bit in the middle of the body of the next ``k`` requests that have one
        (of those for which ``match(request)`` is true, when given) before forwarding them."""
        with self._lock:
            self._corrupt_left, self._corrupt_match = k, match

    def _maybe_corrupt(self, request: Request, body: bytes) -> bytes:
        with self._lock:
            if not body or self._corrupt_left <= 0 or \
                    (self._corrupt_match is not None and not self._corrupt_match(request)):
                return body
            self._corrupt_left -= 1
            self.corrupted += 1
        middle = len(body) // 2
        return body[:middle] + bytes([body[middle] ^ 0x10]) + body[middle + 1:]

    @property
    def rewritten_requests(self) -> list[Request]:
        """The requests whose answers the current ``rewrite_next`` rewrote."""
        with self._lock:
            return list(self._rewrite.requests) if self._rewrite is not None else []

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
            reader = MessageReader(client)
            up_reader: MessageReader | None = None
            while True:
                head = reader.head()
                method = head.split(b" ", 1)[0].decode("latin-1")
                headers = header_fields(head)
                if headers.get("expect", "").lower() == "100-continue":
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    head = _without_expect(head)
                if "chunked" in headers.get("transfer-encoding", ""):
                    body = reader.chunked()
                else:
                    body = reader.exactly(int(headers.get("content-length", 0)))
                request = Request(method, head.split(b" ", 2)[1].decode("latin-1"), headers)
                if self._inject_error(client, request, len(body)):
                    continue
                body = self._maybe_corrupt(request, body)
                if "range" in headers:
                    head = self._maybe_unrange(head)
                if self.latency:
                    time.sleep(self.latency)
                if upstream is None:
                    upstream = socket.create_connection(self.upstream)
                    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    up_reader = MessageReader(upstream)
                upstream.sendall(head + body)
                assert up_reader is not None  # made with the upstream connection
                if not self._relay_response(client, up_reader, request):
                    return
        except (PeerClosed, OSError):
            return
        finally:
            _close(client)
            if upstream is not None:
                _close(upstream)
            with self._lock:
                self._conns.discard(client)

    def _inject_error(self, client: socket.socket, request: Request, up: int) -> bool:
        with self._lock:
            self.requests += 1
            self.methods[request.method] += 1
            self.bytes_up += up
            if self._fail_left <= 0:
                return False
            if self._fail_match is not None and not self._fail_match(request):
                return False
            self._fail_left -= 1
            self.failed += 1
            status, code, body = self._fail_status, self._fail_code, self._fail_body
        if body is None:
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

    def _relay_response(self, client: socket.socket, up: MessageReader, request: Request) -> bool:
        """Relay one response; False when the client connection must end."""
        method = request.method
        head = up.head()
        while head.split(b" ", 2)[1].startswith(b"1"):  # answered to the client already
            head = up.head()
        headers = header_fields(head)
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
        rewrite = self._take_rewrite(method, status, request)
        if rewrite is not None:
            answer = parse_answer(head, body, request)
            if "chunked" in headers.get("transfer-encoding", ""):
                answer.body, answer.framing = dechunk(body), "chunked"
            rewrite(answer)
            data = answer.encode()
            with self._lock:
                self.bytes_down += len(answer.body)
            client.sendall(data)
            return keep and answer.framing != "close"
        with self._lock:
            cut = self._cut_left > 0 and len(body) > self._cut_after
            if cut:
                self._cut_left -= 1
                self.cut += 1
                body = body[:self._cut_after]
            self.bytes_down += len(body)
        client.sendall(head + body)
        return keep and not cut

    def _take_rewrite(self, method: str, status: int,
                      request: Request) -> Callable[[Answer], None] | None:
        """The rewrite of this answer, if ``rewrite_next`` asks for one."""
        with self._lock:
            rewrite = self._rewrite
            if rewrite is None or status not in rewrite.statuses or rewrite.left <= 0:
                return None
            if not (rewrite.match(request) if rewrite.match is not None else method == "GET"):
                return None
            if rewrite.skip > 0:
                rewrite.skip -= 1
                return None
            rewrite.left -= 1
            rewrite.requests.append(request)
            self.rewritten += 1
            return rewrite.rewrite


def _without_expect(head: bytes) -> bytes:
    lines = head.split(b"\r\n")
    return b"\r\n".join(ln for ln in lines if not ln.lower().startswith(b"expect:"))


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
