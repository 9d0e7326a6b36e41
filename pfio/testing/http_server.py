"""An in-memory HTTP server on loopback for tests of the HTTP caches: ``PUT`` stores a body
under its path, ``GET`` returns it (404 when there is none)."""

from __future__ import annotations

import http
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar


class OnMemoryHTTPServerForTest(http.server.BaseHTTPRequestHandler):
    """The request handler: bodies live in the class attribute :attr:`files` (path ->
    bytes), shared by every server made with it; :func:`make_http_server` empties it."""

    protocol_version = "HTTP/1.1"
    #: headers and body leave in one write, with no Nagle delay (a keep-alive client
    #: waiting for the body's delayed ACK would stall 40 ms per request)
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True
    files: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler calls
        """Answer with the body stored under the path, or 404."""
        body = self.files.get(self.path)
        if body is None:
            self._reply(http.HTTPStatus.NOT_FOUND, b"")
        else:
            self._reply(http.HTTPStatus.OK, body)

    def do_PUT(self) -> None:  # noqa: N802
        """Store the body under the path (201); 411 without a ``Content-Length``."""
        length = self.headers.get("Content-Length")
        if length is None:
            self._reply(http.HTTPStatus.LENGTH_REQUIRED, b"")
            return
        self.files[self.path] = self.rfile.read(int(length))
        self._reply(http.HTTPStatus.CREATED, b"")

    def _reply(self, status: http.HTTPStatus, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Quiet: tests do not want a line on stderr per request."""


@contextmanager
def make_http_server() -> Iterator[tuple[http.server.ThreadingHTTPServer, int]]:
    """Run an :class:`OnMemoryHTTPServerForTest` on ``127.0.0.1`` (a free port) in a thread;
    yield ``(server, port)``, and stop it on exit. The stored bodies start empty.

    PFIO 2.x listened on every interface; this one listens on loopback only.
    """
    OnMemoryHTTPServerForTest.files.clear()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OnMemoryHTTPServerForTest)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,),
                              name="pfio-test-http", daemon=True)
    thread.start()
    try:
        yield server, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
