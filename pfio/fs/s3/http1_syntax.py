"""The syntax and framing of an HTTP/1.1 answer's head, without IO (the rules are in
:mod:`pfio.fs.s3.http1`, whose connections read the bytes): header lines checked and made a
dict (:func:`fields`), the framing fields checked (:func:`framed`: ``Content-Length``,
``Transfer-Encoding``, ``Connection``) and the length of the body that follows
(:func:`body_length`)."""

from __future__ import annotations

import re
from typing import NamedTuple

from .errors import ProtocolError

#: the body length of an answer whose body is chunked, or ends with the connection
CHUNKED, TO_CLOSE = -1, -2

_TCHAR = rb"-!#$%&'*+.^_`|~0-9A-Za-z"
_VCHAR = rb"\x21-\x7e\x80-\xff"
STATUS_LINE = re.compile(r"HTTP/1\.([0-9]) ([0-9]{3})(?: [\t \x21-\x7e\x80-\xff]*)?")
#: one header line, CRLF included (every line has one parse: a failed match costs time
#: linear in its length)
FIELD_LINE = re.compile(rb"[%s]+:[ \t]*(?:[%s]+(?:[ \t]+[%s]+)*[ \t]*)?\r\n"
                        % (_TCHAR, _VCHAR, _VCHAR))
_TOKEN = re.compile(f"[{_TCHAR.decode()}]+")
#: the bytes the lines of a head may hold, besides the CRLF that ends each
LINE_BYTES = bytes(range(0x20, 0x7f)) + bytes(range(0x80, 0x100)) + b"\t"
#: header names seen valid -> in lower case (a few hundred at most: servers send few)
_NAMES: dict[str, str] = {}
CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})(?:;[\t %s]*|[ \t]*)" % _VCHAR)
_MAX_LENGTH_DIGITS = 18


class AnswerHead(NamedTuple):
    """The head of an answer."""

    status: int
    #: lower-case names; the values of a repeated name joined with ", "
    headers: dict[str, str]
    #: HTTP/1.1 (or later 1.x) without ``Connection: close``
    keep: bool
    #: the ``Content-Length``, else None
    length: int | None
    chunked: bool


#: makes an :class:`AnswerHead` of a tuple (as ``AnswerHead(...)`` does, without its
#: Python call)
_new_head = tuple.__new__


def body_length(method: str, head: AnswerHead, endpoint: str) -> int:
    """The length of the body of the answer ``head`` to ``method``: a byte count,
    :data:`CHUNKED` or :data:`TO_CLOSE`.

    Raises:
        ProtocolError: a GET answered 204 or 304 (an object is never "no content").
    """
    status = head.status
    if status in (204, 304):
        if method == "GET":
            raise ProtocolError(f"{endpoint} answered a GET with {status}")
        return 0
    if method == "HEAD" or (method == "CONNECT" and status < 300):
        return 0
    if head.chunked:
        return CHUNKED
    return TO_CLOSE if head.length is None else head.length


def fields(lines: list[str]) -> dict[str, str] | None:
    """The header ``lines`` (their characters checked) as a dict; None when a line is
    not ``token ":" value`` (no name, a space before the colon, a folded line, ...)."""
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        key = _NAMES.get(name)
        if key is None:
            key = _checked_name(name)
        if key is None or not colon:
            return None
        value = value.strip(" \t")
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


def _checked_name(name: str) -> str | None:
    """``name`` in lower case if it is a token, else None (remembered: see
    :data:`_NAMES`)."""
    if _TOKEN.fullmatch(name) is None:
        return None
    key = name.lower()
    if len(_NAMES) < 1024:
        _NAMES[name] = key
    return key


def framed(status: int, headers: dict[str, str], http11: bool,
           endpoint: str) -> AnswerHead:
    """The :class:`AnswerHead` of ``status`` and ``headers``, its framing fields checked (and
    repeats of one ``Content-Length`` made one)."""
    text = headers.get("content-length")
    if text is None:
        length = None
    elif text.isdigit() and text.isascii() and len(text) <= _MAX_LENGTH_DIGITS:
        length = int(text)
    else:
        length = _content_length(text, endpoint)
        headers["content-length"] = text.split(",")[0].strip(" \t")  # repeats made one
    coding = headers.get("transfer-encoding")
    if coding is not None:
        if coding.lower() != "chunked":
            raise ProtocolError(f"{endpoint} sent a body in the transfer coding "
                                f"{coding[:40]!r} (only 'chunked' is understood)")
        if length is not None or not http11:
            raise ProtocolError(f"{endpoint} framed a body two ways (Content-Length and "
                                "Transfer-Encoding), or chunked it in HTTP/1.0")
    connection = headers.get("connection")
    keep = http11 and (connection is None or "close" not in
                       {token.strip(" \t").lower() for token in connection.split(",")})
    return _new_head(AnswerHead, (status, headers, keep, length, coding is not None))


def _content_length(value: str, endpoint: str) -> int:
    """The value of ``Content-Length`` (repeats joined with ", " must agree)."""
    if not (value.isdigit() and value.isascii()):
        values = {item.strip(" \t") for item in value.split(",")}
        value = values.pop()
        if values or not (value.isdigit() and value.isascii()):
            raise ProtocolError(f"{endpoint} sent a bad or conflicting Content-Length")
    if len(value) > _MAX_LENGTH_DIGITS:
        raise ProtocolError(f"{endpoint} sent a Content-Length of {len(value)} digits")
    return int(value)
