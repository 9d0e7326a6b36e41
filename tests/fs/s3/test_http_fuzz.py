"""The ``http`` engine's answer parser (:class:`pfio.fs.s3.http1.Http1Connection`) against
an independent one, h11, on a few thousand generated answers: valid and malformed status
lines and header lines, interim answers, length-framed, chunked and close-delimited bodies,
trailing bytes, truncations, and random splits of the bytes across ``recv_into`` calls (a
scripted socket, no network).

For every answer either both parsers accept it, with the same status, headers, body and
keep-alive decision, or pfio rejects it with a ``ConnectionError`` where h11 rejects it too.
pfio rejects some answers h11 accepts, on purpose (each generated case names the ones it
holds, and only those may differ):

* ``version``: a status line of another version than HTTP/1.x (h11 takes any ``d.d``);
* ``obs-fold``: a folded header line (h11 unfolds it; the brief of issue #23 refuses it);
* ``bare-lf``: a line ended by LF alone (h11 accepts it);
* ``control``: a control character other than HTAB in a value or reason (h11 refuses only
  NUL and whitespace other than SP/HTAB);
* ``cl-and-te``: ``Content-Length`` with ``Transfer-Encoding`` (h11 lets chunked win);
* ``te-in-1.0``: ``Transfer-Encoding`` in an HTTP/1.0 answer (RFC 9112 6.1: faulty framing);
* ``long-length``: a ``Content-Length`` of 19 or 20 digits (h11 allows 20);
* ``long-chunk``: a chunk size of 17 to 20 hex digits (h11 allows 20);
* ``chunk-ext``: a chunk extension with a CR or another control character (h11: ``;.*``);
* ``get-no-content``: a GET answered 204 or 304 (h11: an empty body; pfio never asks
  conditionally, so an object is never "no content").

Comparing, ``Transfer-Encoding`` values are compared lower-cased (h11 lower-cases it).
"""

from __future__ import annotations

import random
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import h11
import pytest

from pfio.fs.s3.http1 import Http1Connection

SEED = 23_2026
CASES = 4000

TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
VCHARS = bytes(range(0x21, 0x7f)) + bytes(range(0x80, 0x100))
NAMES = ["ETag", "Content-Type", "x-amz-request-id", "x-amz-meta-origin", "Last-Modified",
         "Date", "Server", "Accept-Ranges", "Content-Range", "Cache-Control", "X-Empty"]


@dataclass
class Case:
    """One generated answer: its bytes, the request method, the deliberate differences it
    holds, and how its bytes are split across receives."""

    data: bytes
    method: str
    tags: set[str] = field(default_factory=set)
    pieces: list[bytes] = field(default_factory=list)


class ScriptedSocket:
    """A socket whose ``recv_into`` returns the scripted pieces in turn, then 0 (a clean
    end of the stream)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = deque(pieces)

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        if not self.pieces:
            return 0
        piece = self.pieces.popleft()
        n = min(len(piece), nbytes or len(buffer))
        buffer[:n] = piece[:n]
        if n < len(piece):
            self.pieces.appendleft(piece[n:])
        return n

    def send(self, data: Any) -> int:
        return len(data)

    def close(self) -> None:
        pass


# -- what each parser makes of an answer -------------------------------------------------

def pfio_parse(case: Case) -> tuple[int, dict[str, str], bytes, bool] | Exception:
    connection = Http1Connection(ScriptedSocket(case.pieces), "fuzz", read_timeout=60.0)
    try:
        head = connection.read_head()
        body, keep, _ = connection.read_body(case.method, head, None)
    except ConnectionError as exc:
        return exc
    return head.status, _normal(head.headers), bytes(body), keep


def h11_parse(case: Case) -> tuple[int, dict[str, str], bytes, bool | None] | None:
    """h11's status, headers, body and keep-alive decision (None: moot, the body ended
    with the connection, or unknown, bytes were left over); None when it rejects the
    answer."""
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method=case.method, target="/", headers=[("Host", "fuzz")]))
    connection.send(h11.EndOfMessage())
    connection.receive_data(case.data)
    connection.receive_data(b"")
    status, headers, body = 0, {}, []
    try:
        while True:
            event = connection.next_event()
            if isinstance(event, h11.Response):
                status = event.status_code
                headers = _joined((name.decode("latin-1"), value.decode("latin-1"))
                                  for name, value in event.headers)
            elif isinstance(event, h11.Data):
                body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif not isinstance(event, h11.InformationalResponse):
                return None  # ConnectionClosed before the end, NEED_DATA, ...
    except h11.ProtocolError:
        return None
    ended_by_close = not ({"content-length", "transfer-encoding"} & set(headers)) and \
        status not in (204, 304) and case.method != "HEAD"
    keep = None if connection.trailing_data[0] or ended_by_close else \
        connection.their_state is h11.DONE
    return status, _normal(headers), b"".join(body), keep


def _joined(fields: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in fields:
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _normal(headers: dict[str, str]) -> dict[str, str]:
    if "transfer-encoding" in headers:
        headers = {**headers, "transfer-encoding": headers["transfer-encoding"].lower()}
    return headers


# -- generated answers -------------------------------------------------------------------

class Generator:
    """Answers, valid and not, from a seeded ``random.Random``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def case(self) -> Case:
        rng = self.rng
        method = rng.choices(["GET", "HEAD", "PUT", "DELETE"], [70, 15, 10, 5])[0]
        case = Case(b"", method)
        version = rng.choices(["1.1", "1.0"], [85, 15])[0]
        status = rng.choice([200, 200, 200, 201, 206, 301, 404, 500, 503, 204, 304,
                             rng.randrange(200, 600)])
        if method == "GET" and status in (204, 304):
            case.tags.add("get-no-content")
        interim = b"".join(self.head(case, rng.choice([100, 102, 103]), "1.1", [])
                           for _ in range(rng.choices([0, 1, 2], [80, 15, 5])[0]))
        fields, body = self.framing(case, version)
        head = self.head(case, status, version, fields)
        if rng.random() < 0.1:
            head = self.flip(case, head)
        data = interim + head + body
        if rng.random() < 0.1:
            data += rng.choice([b"HTTP/1.1 200 OK\r\n", b"garbage", b"\r\n"])
        if rng.random() < 0.08:
            data = data[:rng.randrange(len(data) + 1)]
        case.data = data
        case.pieces = self.split(data)
        return case

    # heads

    def head(self, case: Case, status: int, version: str, framing: list[bytes]) -> bytes:
        lines = [self.status_line(case, status, version)]
        fields = framing + [self.field(case) for _ in range(self.rng.randrange(6))]
        self.rng.shuffle(fields)
        lines += fields
        ends = [b"\r\n"] * (len(lines) + 1)
        if self.rng.random() < 0.03:
            ends[self.rng.randrange(len(ends))] = b"\n"
            case.tags.add("bare-lf")
        return b"".join(line + end for line, end in zip(lines + [b""], ends, strict=True))

    def status_line(self, case: Case, status: int, version: str) -> bytes:
        rng = self.rng
        reason = rng.choice([b" OK", b" Partial Content", b"", b" ", b" \tweird\xe9 reason",
                             b" Not Found"])
        line = b"HTTP/%s %03d%s" % (version.encode(), status, reason)
        roll = rng.random()
        if roll < 0.02:
            line = rng.choice([b"HTTP/2.0 %d OK", b"HTTP/0.9 %d OK", b"HTTP/3.1 %d"]) % status
            case.tags.add("version")
        elif roll < 0.06:
            line = rng.choice([b"HTTP/1.1 20 OK", b"HTTP/1.1 2000 OK", b"FOO/9 200 OK",
                               b"HTTP/2 200 OK", b"http/1.1 200 OK", b" HTTP/1.1 200 OK",
                               b"HTTP/1.1  200 OK", b"HTTP/1.1\t200 OK", b"HTTP/1.1 200\tOK",
                               b"HTTP/1.1 099 Low", b"", b"HTTP/1.1 2x0 OK"])
        elif roll < 0.07:
            line += b"\x01"
            case.tags.add("control")
        return line

    def field(self, case: Case) -> bytes:
        rng = self.rng
        name = rng.choice(NAMES + ["".join(rng.choice(TCHARS) for _ in range(
            rng.randrange(1, 12)))]).encode()
        value = self.value()
        ows = [rng.choice([b"", b" ", b"  ", b"\t", b" \t "]) for _ in range(2)]
        line = name + b":" + ows[0] + value + ows[1]
        roll = rng.random()
        if roll < 0.015:
            line = name + b" :" + value  # whitespace before the colon
        elif roll < 0.025:
            line = b":" + value
        elif roll < 0.035:
            line = name + rng.choice([b"(", b"@", b"/", b"\xe9", b" "]) + b"x:" + value
        elif roll < 0.045:
            line = name + b": a" + rng.choice([b"\x00", b"\r", b"\x0b", b"\x0c"]) + b"b"
        elif roll < 0.055:
            line = name + b": a" + rng.choice([b"\x01", b"\x1f", b"\x7f"]) + b"b"
            case.tags.add("control")
        elif roll < 0.065:
            line = name + b": a\r\n " + value  # obs-fold
            case.tags.add("obs-fold")
        elif roll < 0.07:
            line = name + value  # no colon
        return line

    def value(self) -> bytes:
        rng = self.rng
        words = [bytes(rng.choice(VCHARS) for _ in range(rng.randrange(1, 9)))
                 for _ in range(rng.randrange(0, 4))]
        return b"".join(word + rng.choice([b" ", b"\t", b"  "]) for word in words[:-1]) + \
            (words[-1] if words else b"")

    def flip(self, case: Case, head: bytes) -> bytes:
        """``head`` with one byte of its header lines (not of their ends) replaced by a
    printable one."""
        first = head.find(b"\r\n") + 2
        if first >= len(head) - 2:
            return head
        at = self.rng.randrange(first, len(head) - 2)
        if head[at] in b"\r\n":  # (a line's end stays: a CR replaced would leave a bare LF)
            return head
        byte = self.rng.choice(b"\t :;,=aZ09-\"")
        if byte in b" \t" and head[at - 1:at] == b"\n" and at > first:
            case.tags.add("obs-fold")
        return head[:at] + bytes([byte]) + head[at + 1:]

    # bodies

    def framing(self, case: Case, version: str) -> tuple[list[bytes], bytes]:
        """The framing header lines of an answer and its body bytes."""
        rng = self.rng
        body = bytes(rng.choice(b"ab\r\n0 \x00\xff") for _ in range(rng.randrange(0, 40)))
        kind = rng.choices(["length", "chunked", "close", "bad-length", "bad-coding"],
                           [40, 30, 15, 8, 7])[0]
        if kind == "length":
            return self.length_fields(case, len(body)), body
        if kind == "close":
            return [], body
        if kind == "bad-length":
            values = [b"-1", b"+5", b"5x", b"0x5", b"", b"5, 6", b" 5 5", b"1e3"]
            fields = [b"Content-Length: " + rng.choice(values)]
            if rng.random() < 0.3:
                fields = [b"Content-Length: 5", b"Content-Length: 6"]
            return fields, body
        if kind == "bad-coding":
            coding = rng.choice([b"gzip", b"chunked, chunked", b"gzip, chunked",
                                 b"chunked, gzip", b"identity", b"chunked;q=1"])
            return [b"Transfer-Encoding: " + coding], self.chunks(case, body)
        fields = [b"Transfer-Encoding: " + rng.choice([b"chunked", b"Chunked", b"CHUNKED"])]
        if rng.random() < 0.05:
            fields.append(b"Content-Length: %d" % len(body))
            case.tags.add("cl-and-te")
        if version == "1.0":
            case.tags.add("te-in-1.0")
        return fields, self.chunks(case, body)

    def length_fields(self, case: Case, length: int) -> list[bytes]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.05:
            return [b"Content-Length: %d" % length] * 2
        if roll < 0.1:
            return [b"Content-Length: %d, %d" % (length, length)]
        if roll < 0.13:
            return [b"Content-Length: 000%d" % length]
        if roll < 0.16:
            return [b"Content-Length: %d" % (length + rng.randrange(1, 5))]  # cut short
        if roll < 0.19:
            return [b"Content-Length: %d" % max(0, length - rng.randrange(1, 5))]
        if roll < 0.21:
            digits = rng.choice([19, 20])
            case.tags.add("long-length")
            return [b"Content-Length: %s" % (b"0" * (digits - len(str(length))) +
                                            str(length).encode())]
        return [b"Content-Length: %d" % length]

    def chunks(self, case: Case, body: bytes) -> bytes:
        rng = self.rng
        out = []
        at = 0
        while at < len(body):
            size = rng.randrange(1, 12)
            data = body[at:at + size]
            at += size
            out.append(self.chunk_line(case, len(data)) + b"\r\n" + data)
            out.append(b"\r\n" if rng.random() > 0.02 else rng.choice([b"", b"XY", b"\n"]))
        out.append(self.chunk_line(case, 0) + b"\r\n")
        trailers = [self.field(case) for _ in range(rng.choices([0, 1, 2], [80, 15, 5])[0])]
        out.append(b"".join(line + b"\r\n" for line in trailers) + b"\r\n")
        return b"".join(out)

    def chunk_line(self, case: Case, size: int) -> bytes:
        rng = self.rng
        digits = b"%x" % size if rng.random() < 0.5 else b"%X" % size
        roll = rng.random()
        if roll < 0.03:
            return rng.choice([b"3_e8", b"0x3e8", b"+3e8", b" 3e8", b"", b"g", b"-1"])
        if roll < 0.05:
            width = rng.choice([17, 18, 19, 20])
            case.tags.add("long-chunk")
            return b"0" * (width - len(digits)) + digits
        if roll < 0.08:
            return b"0" * rng.randrange(1, 8) + digits
        if roll < 0.15:
            return digits + rng.choice([b";name=value", b";x", b"; y=\"q r\"", b";", b"  ",
                                        b" ;x"])
        if roll < 0.16:
            case.tags.add("chunk-ext")
            return digits + rng.choice([b";a\rb", b";a\x01"])
        return digits

    # receives

    def split(self, data: bytes) -> list[bytes]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.2 or not data:
            return [data] if data else []
        if roll < 0.3 and len(data) < 400:
            return [data[i:i + 1] for i in range(len(data))]
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1,
                                                          rng.randrange(1, 12))))
        return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


# -- the comparison ----------------------------------------------------------------------

def test_the_parser_agrees_with_h11() -> None:
    generator = Generator(random.Random(SEED))
    outcomes: Counter[str] = Counter()
    stricter: Counter[str] = Counter()
    for number in range(CASES):
        case = generator.case()
        ours, theirs = pfio_parse(case), h11_parse(case)
        where = f"case {number} ({case.method}, tags {sorted(case.tags)}): {case.data!r}"
        if isinstance(ours, Exception):
            if theirs is None:
                outcomes["both reject"] += 1
                continue
            assert case.tags, f"pfio rejects what h11 accepts: {ours}; {where}"
            outcomes["pfio stricter"] += 1
            stricter.update(case.tags)
            continue
        assert theirs is not None, f"pfio accepts what h11 rejects: {ours}; {where}"
        assert ours[:3] == theirs[:3], where
        if theirs[3] is not None:
            assert ours[3] == theirs[3], f"keep-alive differs; {where}"
        outcomes["both accept"] += 1
    assert outcomes["both accept"] > CASES // 3 and outcomes["both reject"] > CASES // 10, \
        outcomes
    assert outcomes["pfio stricter"] > 0, outcomes  # the differences above are exercised


@pytest.mark.parametrize("data", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    b"HTTP/1.0 200 OK\r\n\r\nhello",
])
def test_every_split_of_an_answer_reads_the_same(data: bytes) -> None:
    for at in range(1, len(data)):
        for method in ("GET", "HEAD"):
            case = Case(data, method, pieces=[data[:at], data[at:]])
            ours, theirs = pfio_parse(case), h11_parse(case)
            assert not isinstance(ours, Exception) and theirs is not None, (at, method)
            assert ours[:3] == theirs[:3] and theirs[3] in (None, ours[3]), (at, method)
