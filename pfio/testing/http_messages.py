"""HTTP/1.1 messages as the fault proxy (:mod:`pfio.testing.faultproxy`) and scripted test
servers handle them: a :class:`MessageReader` that reads heads, lines, exact counts and
chunked bodies off a socket; the :class:`Request` a proxy received; the :class:`Answer` on its
way to a client, which a test may rewrite (status, fields, body, framing) before it is sent.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass


class PeerClosed(Exception):
    """The peer closed its side (raised by :class:`MessageReader`)."""


class MessageReader:
    """Reads of HTTP messages from a socket: lines, exact byte counts."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def _more(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise PeerClosed
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
        except (PeerClosed, OSError):
            data = bytes(self.buf)
            self.buf.clear()
            return data


def header_fields(head: bytes) -> dict[str, str]:
    """The header fields of an HTTP message's ``head`` (names in lower case)."""
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines if ln)}


@dataclass(frozen=True)
class Request:
    """A request as the proxy received it: what ``fail_next``'s ``match`` is given."""

    method: str
    target: str
    #: the header fields, names in lower case
    headers: dict[str, str]


#: how an :class:`Answer`'s body is delimited on its way to the client
FRAMINGS = ("length", "chunked", "close")


@dataclass
class Answer:
    """An answer on its way to the client, for a rewrite (see ``FaultProxy.rewrite_next``).

    Attributes:
        status: the status code.
        reason: the reason phrase.
        fields: the header fields in order, names as the server spelled them; a name may
            come twice (a duplicate field).
        body: the body (not framed).
        framing: ``"length"``: sent as it is, the header fields as they are (nothing is
            recomputed: ``Content-Length`` may lie); ``"chunked"``: sent in chunks, with
            ``Transfer-Encoding: chunked`` and no ``Content-Length``; ``"close"``: without
            ``Content-Length``, ended by closing the connection.
        request: the request it answers.
    """

    status: int
    reason: str
    fields: list[tuple[str, str]]
    body: bytes
    request: Request
    framing: str = "length"

    def get(self, name: str) -> str | None:
        """The value of the first field ``name`` (any case), else None."""
        name = name.lower()
        return next((value for key, value in self.fields if key.lower() == name), None)

    def set(self, name: str, value: str | None) -> None:
        """Make ``value`` the only field ``name`` (None: remove every field of that name)."""
        lowered = name.lower()
        self.fields = [(k, v) for k, v in self.fields if k.lower() != lowered]
        if value is not None:
            self.fields.append((name, value))

    def add(self, name: str, value: str) -> None:
        """Add a field ``name`` (another one, when there is one already)."""
        self.fields.append((name, value))

    def encode(self) -> bytes:
        """The bytes sent to the client."""
        fields = self.fields
        body = self.body
        if self.framing not in FRAMINGS:
            raise ValueError(f"unknown framing {self.framing!r}; known: {FRAMINGS}")
        if self.framing != "length":
            fields = [(k, v) for k, v in fields
                      if k.lower() not in ("content-length", "transfer-encoding")]
        if self.framing == "chunked":
            fields.append(("Transfer-Encoding", "chunked"))
            half = len(body) // 2  # two chunks (of a non-empty body), then the last one
            chunks = [part for part in (body[:half], body[half:]) if part]
            body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in chunks) + \
                b"0\r\n\r\n"
        elif self.framing == "close":
            fields = [(k, v) for k, v in fields if k.lower() != "connection"]
            fields.append(("Connection", "close"))
        head = "".join([f"HTTP/1.1 {self.status} {self.reason}\r\n",
                        *[f"{k}: {v}\r\n" for k, v in fields], "\r\n"])
        return head.encode("latin-1") + body


def parse_answer(head: bytes, body: bytes, request: Request) -> Answer:
    """The :class:`Answer` of a response's ``head`` and ``body``."""
    lines = head.decode("latin-1").split("\r\n")
    _, status, reason = (lines[0].split(" ", 2) + [""])[:3]
    fields = [(k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)]
    return Answer(int(status), reason, fields, body, request)


def dechunk(raw: bytes) -> bytes:
    """The body of a chunked message ``raw`` (as :meth:`MessageReader.chunked` returns it)."""
    body = bytearray()
    at = 0
    while True:
        end = raw.index(b"\r\n", at)
        size = int(raw[at:end].split(b";")[0].strip(), 16)
        if size == 0:
            return bytes(body)
        body += raw[end + 2:end + 2 + size]
        at = end + 2 + size + 2
