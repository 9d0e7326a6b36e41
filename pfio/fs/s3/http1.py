"""One HTTP/1.1 client connection of the ``http`` engine: a request out, its answer in, with
strict framing (RFC 9112) and every wait bounded, whatever the server sends.

Framing and syntax: the status line is ``HTTP/1.x SP 3DIGIT [SP reason]``; each header
line ``token ":" OWS value OWS`` (no folded continuation lines, no control characters in a
value); ``Content-Length`` is ``1*DIGIT`` (repeats must agree); ``Transfer-Encoding`` may
only be ``chunked``, never with a ``Content-Length`` nor in an HTTP/1.0 answer; chunk
sizes are 1 to 16 hex digits, each chunk's data is followed by CRLF. A body with neither
ends when the server closes the connection cleanly (a FIN, over TLS a ``close_notify``):
a reset, or a TLS EOF without ``close_notify``, is an error, never the end. A GET answered
204 or 304 is an error (pfio never asks conditionally for them), 101 is an error, other
1xx answers are skipped. Any breach raises :class:`ProtocolError` (a ``ConnectionError``)
naming the endpoint, and the connection is never kept; nor is a connection with bytes
left over after an answer (they would be taken for the next answer).

Bounded waits: each wait for bytes by ``read_timeout`` (the caller makes the socket give
up: ``SO_RCVTIMEO`` on plain sockets, a socket timeout on TLS ones); a head must arrive
whole within about ``read_timeout`` of its first byte; a body (and a request being sent) must
move at ``min_rate`` bytes/s or more, measured over each ``read_timeout`` seconds spent
waiting on the socket (time the reader spends elsewhere does not count), else
:class:`TooSlow` (a ``TimeoutError``). A ``patient`` answer (to CompleteMultipartUpload
or a copy, which S3 keeps alive with whitespace while it works) has no rate floor but must
end within :data:`PATIENT_DEADLINE`.

Memory grows with the bytes received, never with the sizes announced: bodies read into
memory are received in pieces of at most :data:`PIECE` bytes, and are capped
(:data:`MAX_ANSWER` for listings, errors and the other answers; :data:`MAX_UNFRAMED` for
an object's body without a ``Content-Length``, which is kept whole before its sink gets
it). An object's body with a length goes straight into its sink.

Deliberate differences from h11 (pfio is stricter): no obs-fold, no bare-LF line ends, no
control characters other than HTAB in values and reasons, only HTTP/1.x, no
``Content-Length`` with ``Transfer-Encoding``, no ``Transfer-Encoding`` in HTTP/1.0, at
most 18 digits of ``Content-Length`` and 16 of a chunk size, no CR or control characters
in chunk extensions, and no GET answered 204/304.
"""

from __future__ import annotations

import socket
import ssl
from time import monotonic
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ProtocolError, TooSlow
from .http1_syntax import (
    CHUNK_LINE,
    CHUNKED,
    FIELD_LINE,
    LINE_BYTES,
    STATUS_LINE,
    TO_CLOSE,
    AnswerHead,
    body_length,
    fields,
    framed,
)

if TYPE_CHECKING:
    from .engine import BodySink

#: bytes of a connection's receive buffer: a head (and a line of a chunked body) must fit
BUFFER = 16 << 10
#: bodies up to this size are sent in one system call with the head
INLINE_BODY = 64 << 10
#: a body read into memory is received in pieces of at most this many bytes
PIECE = 1 << 20
#: the longest answer body read into memory other than an object's: a listing page (1,000
#: keys of up to 1,024 bytes, URL-encoded, with their fields, is under 5 MiB; servers that
#: page wider stay under this), an error, an upload id, a completion
MAX_ANSWER = 64 << 20
#: the longest object body without a ``Content-Length`` (chunked, or ended by the close of
#: the connection): it is kept in memory whole before its reader sees it
MAX_UNFRAMED = 1 << 30
#: the slowest a body may move, in bytes/s over each ``read_timeout`` seconds of waiting
#: (0.003% of 1 Gbit/s: a connection slower than that is broken, or hostile)
MIN_RATE = 4096.0
#: seconds a patient answer may take in all (see the module documentation)
PATIENT_DEADLINE = 900.0
#: interim (1xx) answers skipped before an answer, at most
MAX_INTERIM = 32
#: bytes of an unwanted rest of a body read to keep the connection (more: it is closed)
_DRAIN = 64 << 10
#: TLS sockets send at most this much per call (each call must finish within the timeout)
TLS_PIECE = 256 << 10
class Stale(Exception):
    """A reused connection was found closed before any byte of an answer came."""


class Socket(Protocol):
    """What a connection talks through: a socket, an SSL socket, or a test's fake one."""

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int: ...

    def send(self, data: Any) -> int: ...

    def close(self) -> None: ...


class Http1Connection:
    """One connection to ``endpoint`` (how errors name it) over ``sock``.

    Args:
        sock: a connected socket whose waits give up after ``read_timeout`` (blocking with
            ``SO_RCVTIMEO``/``SO_SNDTIMEO``, or a socket timeout).
        endpoint: the server, as errors name it.
        read_timeout: the longest wait for bytes, and the window of the rate floor.
        min_rate: the rate floor in bytes/s (0: none).
        tls: ``sock`` is TLS (no ``MSG_WAITALL``; sends in pieces).
    """

    def __init__(self, sock: Socket, endpoint: str, read_timeout: float,
                 min_rate: float = MIN_RATE, tls: bool = False) -> None:
        self.sock = sock
        self.endpoint = endpoint
        self.read_timeout = read_timeout
        self.min_rate = min_rate
        #: the flags of a receive of a body's rest: the whole of it in one system call
        #: where the socket allows (TLS does not)
        self.wait_all = 0 if tls else socket.MSG_WAITALL
        self._send_piece = TLS_PIECE if tls else 1 << 62
        self.reused = False
        self._buffer = bytearray(BUFFER)
        self._view = memoryview(self._buffer)
        self._start = self._end = 0
        # the pace of the transfer under way: bytes moved and seconds waited in this window
        self._floor = 0.0
        self._deadline: float | None = None
        self._waited = 0.0
        self._moved = 0

    # -- the request --------------------------------------------------------------------

    def send(self, head: bytes, body: memoryview | None) -> None:
        """Send a request: ``head`` and ``body`` (unchanged: the caller checked them)."""
        self._floor, self._deadline, self._waited, self._moved = self.min_rate, None, 0.0, 0
        if body is not None and len(body) <= INLINE_BODY:
            self._send_all(head + body)
        else:
            self._send_all(head)
            if body is not None:
                self._send_all(body)

    def _send_all(self, data: Any) -> None:
        """Send all of ``data`` (in pieces of at most ``_send_piece`` bytes: one, mostly)."""
        size = len(data)
        done = self._send(data) if size <= self._send_piece else 0
        if done < size:
            view = memoryview(data)
            while done < size:
                done += self._send(view[done:done + self._send_piece])

    def _send(self, data: Any) -> int:
        """Send some of ``data`` (at least a byte), within ``read_timeout``."""
        began = monotonic()
        try:
            n = self.sock.send(data)
        except (TimeoutError, BlockingIOError, ssl.SSLWantWriteError):
            raise TimeoutError(f"{self.endpoint} took no bytes of a request within "
                               f"{self.read_timeout:g} s") from None
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError) as exc:
            raise BrokenPipeError(f"{self.endpoint} closed the connection: {exc}") from None
        self._waited += monotonic() - began
        self._moved += n
        if self._waited >= self.read_timeout:
            self._check_pace()
        return n

    # -- the answer ---------------------------------------------------------------------

    def read_answer(self, method: str, sink: BodySink | None = None,
                    patient: bool = False) -> tuple[AnswerHead, bytes, bool, int]:
        """The next answer to ``method`` whole: its head, body (see :meth:`read_body`),
        whether the connection may be kept and the bytes of the body left unread."""
        head = self.read_head()
        body, keep, left = self.read_body(method, head, sink, patient)
        return head, body, keep, left

    def read_head(self) -> AnswerHead:
        """The head of the next answer (1xx answers skipped).

        Raises:
            ProtocolError: not an HTTP/1.x head, or not a valid one.
            TooSlow: the head did not arrive whole within ``read_timeout`` of its first
                byte.
        """
        self._floor, self._deadline = 0.0, None  # (a head has a deadline of its own)
        deadline = None
        interim = 0
        while True:
            end = self._buffer.find(b"\r\n\r\n", self._start, self._end)
            if end < 0:
                if self._end > self._start:  # the head has begun: it has a deadline
                    now = monotonic()
                    if deadline is None:
                        deadline = now + self.read_timeout
                    elif now > deadline:
                        raise TooSlow(f"{self.endpoint} did not send a whole head within "
                                      f"{self.read_timeout:g} s")
                self._fill("head")
                continue
            head = self._parse_head(end)
            if head.status >= 200:
                return head
            if head.status == 101 or head.status < 100:
                raise ProtocolError(f"{self.endpoint} answered with the status "
                                    f"{head.status:03d} (101: switching protocols unasked)")
            interim += 1
            if interim > MAX_INTERIM:
                raise ProtocolError(f"{self.endpoint} sent over {MAX_INTERIM} interim answers")

    def read_body(self, method: str, head: AnswerHead, sink: BodySink | None,
                  patient: bool = False) -> tuple[bytes, bool, int]:
        """Read the body of the answer ``head`` to ``method``. With ``sink`` (a successful
        GET's) the sink is begun and takes the body, or as much of it as it wants; else the
        body is returned. Returns the body, whether the connection may be kept, and the
        bytes of the body left unread (a sink took what it wanted of a long body).

        Raises:
            ProtocolError: the body's framing is broken, or it is longer than allowed.
            TooSlow: the body moved slower than ``min_rate``.
        """
        length = head.length
        if length is None or head.status not in (200, 206) or method != "GET":
            length = body_length(method, head, self.endpoint)
        self._waited, self._moved = 0.0, 0
        if patient:
            self._floor, self._deadline = 0.0, monotonic() + PATIENT_DEADLINE
        else:
            self._floor, self._deadline = self.min_rate, None
        keep = head.keep
        if length >= 0 and sink is not None:
            sink.begin(head.status, head.headers)
            left = self._into_sink(sink, length)
            if 0 < left <= _DRAIN:
                self._read_exact(left)
                left = 0
            # (with a rest left, whether the connection may be kept once it is read)
            return b"", keep and (left > 0 or self._start == self._end), left
        limit = MAX_ANSWER if sink is None else MAX_UNFRAMED
        if length == CHUNKED:
            body = self._read_chunked(limit)
        elif length == TO_CLOSE:
            body, keep = self._read_to_end(limit), False
        elif length > limit:
            raise ProtocolError(f"{self.endpoint} announced an answer of {length} bytes: "
                                f"over the {limit} bytes allowed")
        else:
            body = self._read_exact(length)
        keep = keep and self._start == self._end
        if sink is None:
            return body, keep, 0
        sink.begin(head.status, {**head.headers, "content-length": str(len(body))})
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

    # -- heads --------------------------------------------------------------------------

    def _parse_head(self, end: int) -> AnswerHead:
        """The head in the buffer up to ``end`` (where its empty line begins)."""
        start = self._start
        self._start = end + 4
        raw = bytes(self._view[start:end + 2])  # its lines, each with its CRLF
        first, _, rest = raw.decode("latin-1").partition("\r\n")
        lines = rest.split("\r\n")
        lines.pop()
        status = STATUS_LINE.fullmatch(first)
        if status is None:
            raise ProtocolError(f"{self.endpoint} answered with something other than "
                                f"HTTP/1.x: {first[:80]!r}")
        # once the bytes a line may hold are taken out, only the CRLF of each is left: no
        # control character, no CR or LF of its own
        headers = fields(lines) if len(raw.translate(None, LINE_BYTES)) == \
            2 * len(lines) + 2 else None
        if headers is None:
            raise self._bad_field(start + len(first) + 2, end + 2)
        return framed(int(status.group(2)), headers, status.group(1) != "0", self.endpoint)

    def _bad_field(self, start: int, end: int) -> ProtocolError:
        """The error naming the first bad header line in the buffer's ``[start, end)``."""
        while (match := FIELD_LINE.match(self._buffer, start, end)) is not None:
            start = match.end()
        line = bytes(self._buffer[start:min(end, start + 80)]).split(b"\r\n")[0]
        return ProtocolError(f"{self.endpoint} sent a malformed header line: {line!r}")

    # -- bodies -------------------------------------------------------------------------

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
                self._fill("body")
                continue
            left -= n
        return left

    def _read_exact(self, size: int) -> bytes:
        """The next ``size`` bytes, received in pieces of at most :data:`PIECE` (so
        memory follows the bytes that come, not the size announced)."""
        pieces: list[bytearray] = []
        while size or not pieces:
            piece = bytearray(min(size, PIECE))
            view = memoryview(piece)
            done = min(len(piece), self._end - self._start)
            view[:done] = self._view[self._start:self._start + done]
            self._start += done
            while done < len(piece):
                done += self._recv_into(view[done:], self.wait_all)
            view.release()
            pieces.append(piece)
            size -= len(piece)
        return b"".join(pieces)

    def _read_chunked(self, limit: int) -> bytes:
        pieces = []
        total = 0
        while size := self._chunk_size():
            total += size
            if total > limit:
                raise ProtocolError(f"{self.endpoint} sent a chunked answer of over "
                                    f"{limit} bytes")
            pieces.append(self._read_exact(size))
            if self._read_exact(2) != b"\r\n":
                raise ProtocolError(f"{self.endpoint} sent chunk data not ended by CRLF")
        trailers = 0
        while line := self._read_line():  # trailers, up to the empty line
            trailers += len(line) + 2
            if trailers > BUFFER or FIELD_LINE.fullmatch(line + b"\r\n") is None:
                raise ProtocolError(f"{self.endpoint} sent a malformed trailer: "
                                    f"{line[:80]!r}")
        return b"".join(pieces)

    def _chunk_size(self) -> int:
        line = self._read_line()
        match = CHUNK_LINE.fullmatch(line)
        if match is None:
            raise ProtocolError(f"{self.endpoint} sent a bad chunk size {line[:20]!r}")
        return int(match.group(1), 16)

    def _read_to_end(self, limit: int) -> bytes:
        """The rest of a body that ends with the connection (cleanly: see
        :meth:`_recv_into`)."""
        out = bytearray(self._view[self._start:self._end])
        self._start = self._end = 0
        while n := self._recv_into(self._view, end_ok=True):
            out += self._view[:n]
            if len(out) > limit:
                raise ProtocolError(f"{self.endpoint} sent an answer of over {limit} bytes "
                                    "without a length")
        return bytes(out)

    def _read_line(self) -> bytes:
        while True:
            end = self._buffer.find(b"\r\n", self._start, self._end)
            if end >= 0:
                line = bytes(self._view[self._start:end])
                self._start = end + 2
                return line
            self._fill("line of a chunked body")

    # -- bytes --------------------------------------------------------------------------

    def _fill(self, what: str) -> None:
        """Receive more bytes into the buffer (a ``what`` that does not fit is an error)."""
        if self._start == self._end:
            self._start = self._end = 0
        elif self._end == len(self._buffer):
            if self._start == 0:
                raise ProtocolError(f"{self.endpoint} sent a {what} of over {BUFFER} bytes")
            rest = self._end - self._start
            self._buffer[:rest] = self._buffer[self._start:self._end]
            self._start, self._end = 0, rest
        self._end += self._recv_into(self._view[self._end:])

    def _recv_into(self, target: memoryview, flags: int = 0, end_ok: bool = False) -> int:
        """Receive at least one byte into ``target``; 0 only at a clean end of the stream
        (a FIN, over TLS after a ``close_notify``) where ``end_ok`` (the end of the stream
        is the end of the body), else the end is an error. A reset or a TLS EOF without
        ``close_notify`` is always an error."""
        began = monotonic()
        try:
            n = self.sock.recv_into(target, 0, flags)
        except (TimeoutError, BlockingIOError, ssl.SSLWantReadError):
            raise TimeoutError(f"{self.endpoint} sent nothing for "
                               f"{self.read_timeout:g} s") from None
        except (ConnectionError, ssl.SSLError) as exc:  # a reset, a TLS EOF, a bad record
            if self.reused:
                raise Stale() from exc
            raise ConnectionError(f"{self.endpoint} broke the connection: {exc}") from None
        if n == 0:
            if self.reused:
                raise Stale()
            if end_ok:
                return 0
            raise ConnectionError(f"{self.endpoint} closed the connection in the middle "
                                  "of an answer")
        self.reused = False  # an answer has begun: a failure now is not a stale connection
        self._waited += monotonic() - began
        self._moved += n
        if self._waited >= self.read_timeout:
            self._check_pace()
        return n

    # -- pace ---------------------------------------------------------------------------

    def _check_pace(self) -> None:
        if self._deadline is not None and monotonic() > self._deadline:
            raise TooSlow(f"{self.endpoint} did not finish its answer within "
                          f"{PATIENT_DEADLINE:g} s")
        if self._moved < self._floor * self._waited:
            raise TooSlow(f"{self.endpoint} moved {self._moved} bytes in "
                          f"{self._waited:.1f} s: slower than {self._floor:.0f} bytes/s")
        self._waited = 0.0
        self._moved = 0
