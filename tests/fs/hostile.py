"""A scripted hostile HTTP server on loopback, plain TCP or TLS, for the ``http`` engine's
tests: each connection it accepts runs ``script(peer)`` in a thread of its own, and the
script answers however it likes (a head that never ends, a body trickled a byte at a time,
a reset in the middle, a TLS handshake never made, ...) through :class:`Peer`.

``close`` (or leaving the ``with`` block) stops everything it started: the listener, every
connection and every script (a script waiting in :meth:`Peer.hold` or :meth:`Peer.trickle`
returns once the server stops)."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable
from types import TracebackType

#: how long a script waits for the client at most (a test never waits that long)
PATIENCE = 10.0


class Peer:
    """One accepted connection, as a script sees it."""

    def __init__(self, server: HostileServer, sock: socket.socket) -> None:
        self.server = server
        self.sock = sock
        self._data = b""

    # -- reading ------------------------------------------------------------------------

    def request(self) -> bytes:
        """The head of the next request (its body, if it announces one, is read and
        dropped); b"" when the client closed. The head is recorded in
        ``server.requests``."""
        while b"\r\n\r\n" not in self._data:
            chunk = self._recv()
            if not chunk:
                return b""
            self._data += chunk
        head, _, self._data = self._data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(self._data) < length:
            chunk = self._recv()
            if not chunk:
                break
            self._data += chunk
        self._data = self._data[length:]
        self.server.requests.append(head)
        return head

    def _recv(self) -> bytes:
        """The next bytes the client sent; b"" when it closed, or the server stops."""
        deadline = time.monotonic() + PATIENCE
        try:
            self.sock.settimeout(0.05)
            while not self.server.stopping.is_set() and time.monotonic() < deadline:
                try:
                    return self.sock.recv(65536)
                except TimeoutError:
                    continue
            return b""
        except OSError:
            return b""
        finally:
            try:
                self.sock.settimeout(PATIENCE)
            except OSError:
                pass

    # -- answering ----------------------------------------------------------------------

    def send(self, data: bytes) -> bool:
        """Send ``data``; False when the client went away."""
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        return True

    def trickle(self, data: bytes, every: float = 0.1, piece: int = 1) -> bool:
        """Send ``data`` ``piece`` bytes at a time, one piece every ``every`` seconds;
        False when the client went away or the server stopped first."""
        for i in range(0, len(data), piece):
            if not self.send(data[i:i + piece]) or self.server.stopping.wait(every):
                return False
        return True

    def hold(self) -> None:
        """Keep the connection open, saying nothing, until the server stops."""
        self.server.stopping.wait(PATIENCE)

    def close(self) -> None:
        """Close cleanly: a FIN (over TLS, a ``close_notify`` alert first)."""
        if isinstance(self.sock, ssl.SSLSocket):
            try:
                self.sock.settimeout(0.5)
                self.sock = self.sock.unwrap()
            except OSError:
                pass
        shut(self.sock)

    def drop(self) -> None:
        """Close without a ``close_notify`` (TLS: a truncation attack's EOF; plain TCP: a
        clean FIN)."""
        shut(self.sock)

    def reset(self) -> None:
        """Abort the connection: a TCP RST instead of a FIN."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.sock.close()


class LoopbackServer:
    """Listens on ``host`` (``127.0.0.1``, or ``::1``) at a free port and runs
    ``_serve(client)`` in a thread per accepted connection. ``close`` (or leaving the
    ``with`` block) stops the listener, shuts every socket in ``sockets`` (the accepted ones,
    and any a subclass adds) and waits for every thread."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.create_server((host, 0), family=family)
        self.listener.settimeout(0.05)
        self.port = self.listener.getsockname()[1]
        self.authority = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
        self.stopping = threading.Event()
        self.connections = 0
        self.sockets: list[socket.socket] = []
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def _serve(self, client: socket.socket) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            self.connections += 1
            self.sockets.append(client)
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def close(self) -> None:
        """Stop: the listener, every connection, every thread (waited for)."""
        self.stopping.set()
        self.threads[0].join(timeout=PATIENCE)  # accepts no more
        self.listener.close()
        for sock in list(self.sockets):
            shut(sock)
        for thread in self.threads[1:]:
            thread.join(timeout=PATIENCE)


class HostileServer(LoopbackServer):
    """Runs ``script`` for each connection. With ``tls`` (a server context) connections are
    TLS, the handshake done before the script runs unless ``handshake`` is False (the script
    then gets the raw socket). ``endpoint`` is the URL to give the client; ``connections``
    counts the accepted connections, ``requests`` holds the request heads scripts read."""

    def __init__(self, script: Callable[[Peer], None], tls: ssl.SSLContext | None = None,
                 handshake: bool = True, host: str = "127.0.0.1") -> None:
        self.script = script
        self.tls = tls
        self.handshake = handshake
        self.requests: list[bytes] = []
        self.errors: list[BaseException] = []
        super().__init__(host)
        self.endpoint = f"{'https' if tls else 'http'}://{self.authority}"

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(PATIENCE)
        try:
            if self.tls is not None and self.handshake:
                client = self.tls.wrap_socket(client, server_side=True)
                self.sockets.append(client)
            if self.stopping.is_set():  # (stopped during the handshake)
                shut(client)
                return
            self.script(Peer(self, client))
        except OSError:
            pass  # the client went away, or the server is stopping
        except Exception as exc:  # noqa: BLE001 - a broken script: the test reports it
            self.errors.append(exc)

    def close(self) -> None:
        """Stop everything (see :class:`LoopbackServer`); a script that broke fails the
        test."""
        super().close()
        assert not self.errors, self.errors


def shut(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways and close it (whatever state it is in)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass
    sock.close()


def answer(status: str, *fields: str, body: bytes = b"") -> bytes:
    """An HTTP/1.1 answer: the status line ``HTTP/1.1 {status}``, ``fields`` as given (no
    ``Content-Length`` added) and ``body``."""
    lines = "".join(f"{line}\r\n" for line in fields)
    return f"HTTP/1.1 {status}\r\n{lines}\r\n".encode("latin-1") + body


def ok(body: bytes, *fields: str) -> bytes:
    """A 200 answer with ``body``, its length and an ETag."""
    return answer("200 OK", f"Content-Length: {len(body)}", 'ETag: "e1"', *fields, body=body)


def serve(*answers: bytes) -> Callable[[Peer], None]:
    """A script that answers the requests of one connection with ``answers`` in turn,
    then closes it."""

    def script(peer: Peer) -> None:
        for raw in answers:
            if not peer.request() or not peer.send(raw):
                return
        peer.close()

    return script


def elapsed(since: float) -> float:
    """Seconds since the ``time.monotonic()`` value ``since``."""
    return time.monotonic() - since
