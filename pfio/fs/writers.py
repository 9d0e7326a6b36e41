"""File objects that publish what was written only when they are closed cleanly.

Every backend writes through an :class:`AtomicSink`: bytes go to a private place (a temporary
file, a buffer, a multipart upload) and become visible under the target name only when the
file is closed without an error. If the ``with`` block that wrote them raises, nothing is
published and the private place is cleaned up. A writer that is never closed (dropped after an
exception, or left to the garbage collector) publishes nothing either: it is aborted with a
``ResourceWarning``.
"""

from __future__ import annotations

import codecs
import io
import secrets
import sys
import warnings
from collections.abc import Callable
from typing import Any

from .modes import Mode

#: the longest file name, in bytes, that common filesystems take (``NAME_MAX`` on Linux, HDFS's
#: default limit on a path component)
NAME_MAX = 255
#: what ends the name of a temporary file written beside its target
TEMPORARY_SUFFIX = ".pfio-tmp"


def temporary_name(base: str) -> str:
    """A hidden, unique file name to write ``base`` under before renaming it to ``base``:
    ``.{base}.{random}.pfio-tmp``, with ``base`` cut so that the name fits :data:`NAME_MAX`
    bytes whenever ``base`` does (a longer one is left for the filesystem to refuse)."""
    tag = f".{secrets.token_hex(6)}{TEMPORARY_SUFFIX}"
    room = NAME_MAX - 1 - len(tag)
    encoded = base.encode("utf-8", "surrogateescape")
    if room < len(encoded) <= NAME_MAX:  # a longer base fails as it would without pfio
        base = encoded[:room].decode("utf-8", "ignore")  # a cut character is dropped
    return f".{base}{tag}"


def is_temporary_name(name: str) -> bool:
    """True for a name made by :func:`temporary_name` (hidden from listings)."""
    return name.endswith(TEMPORARY_SUFFIX) and name.startswith(".")


class AtomicSink(io.RawIOBase):
    """Base of the raw writers: publish on close, discard when aborted.

    Subclasses implement :meth:`_write`, :meth:`_commit` and :meth:`_discard`; ``tell`` is the
    number of bytes written so far.
    """

    #: set by :func:`atomic_writer`: a sink garbage-collected unclosed after that was dropped
    #: by its user (one whose construction failed was never in use, and says nothing)
    _handed_out = False

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self._aborted = False
        self._position = 0
        self._on_publish: list[Callable[[], None]] = []

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        if self.closed:
            raise ValueError("write to a closed file")
        written = self._write(b)
        self._position += written
        return written

    def tell(self) -> int:
        return self._position

    def _write(self, b: Any) -> int:
        raise NotImplementedError

    def abort(self) -> None:
        """Mark the file so that closing it publishes nothing."""
        self._aborted = True

    @property
    def aborted(self) -> bool:
        return self._aborted

    def when_published(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` right after a close publishes what was written (never when
        the file is aborted)."""
        self._on_publish.append(callback)

    def close(self) -> None:
        if self.closed:
            return
        try:
            if self._aborted:
                self._discard()
            else:
                try:
                    self._commit()
                except BaseException:
                    self._aborted = True
                    self._discard()
                    raise
                for callback in self._on_publish:
                    callback()
        finally:
            super().close()

    def _commit(self) -> None:
        raise NotImplementedError

    def _discard(self) -> None:
        raise NotImplementedError

    def __del__(self) -> None:
        if not self.closed:
            if self._handed_out:
                _warn_dropped(self, self.name)
            self._aborted = True
        super().__del__()


def _unclosed(f: io.IOBase) -> bool:
    """True when the wrapper ``f`` is open (False when never initialised or detached)."""
    try:
        return not f.closed
    except ValueError:
        return False


def _warn_dropped(writer: Any, name: str) -> None:
    """Say that ``writer`` of ``name`` is being garbage-collected unclosed, so discarded."""
    try:
        warnings.warn(f"{name!r} was not closed: discarding what was written to it",
                      ResourceWarning, stacklevel=3, source=writer)
    except Exception:  # at interpreter shutdown the warnings machinery may be gone
        pass


class AtomicBufferedWriter(io.BufferedWriter):
    """A buffered writer over an :class:`AtomicSink` that discards on error.

    Closing it publishes the file; leaving a ``with`` block by an exception, or a failure
    while flushing, publishes nothing.
    """

    raw: AtomicSink

    def __init__(self, raw: AtomicSink, buffer_size: int = io.DEFAULT_BUFFER_SIZE) -> None:
        super().__init__(raw, buffer_size)

    def abort(self) -> None:
        """Publish nothing when this file is closed."""
        self.raw.abort()

    def close(self) -> None:
        if self.closed:
            return
        try:
            self.flush()
        except BaseException:
            self.raw.abort()
            try:
                super().close()
            except Exception:  # the flush error is the one worth reporting
                pass
            raise
        super().close()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.raw.abort()
        self.close()

    def __del__(self) -> None:
        if _unclosed(self):
            _warn_dropped(self, self.raw.name)
            self.raw.abort()
        super().__del__()


class AtomicTextWriter(io.TextIOWrapper):
    """Text mode over an :class:`AtomicBufferedWriter`, with the same all-or-nothing close."""

    buffer: AtomicBufferedWriter

    def abort(self) -> None:
        """Publish nothing when this file is closed."""
        self.buffer.abort()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.buffer.abort()
        self.close()

    def __del__(self) -> None:
        if _unclosed(self):
            _warn_dropped(self, self.buffer.raw.name)
            self.buffer.abort()
        super().__del__()


def sink_of(f: Any) -> AtomicSink | None:
    """The :class:`AtomicSink` beneath the file ``f`` (a writer of a pfio filesystem, through
    its text and buffer layers), or None for a file written in place."""
    while not isinstance(f, AtomicSink):
        f = getattr(f, "buffer", None) or getattr(f, "raw", None)
        if f is None:
            return None
    return f


def discard(f: Any) -> None:
    """Make ``f``, a writer of a pfio filesystem, publish nothing when it is closed (what
    its ``abort()`` does).

    Raises:
        io.UnsupportedOperation: ``f`` writes in place: it cannot discard.
    """
    sink = sink_of(f)
    if sink is None:
        raise io.UnsupportedOperation(f"{getattr(f, 'name', f)!r} is written in place: "
                                      "what was written cannot be discarded")
    sink.abort()


class KeepingBufferedWriter(AtomicBufferedWriter):
    """An :class:`AtomicBufferedWriter` that hands a ``bytes`` of at least one buffer to its
    sink as it is: ``io.BufferedWriter`` would pass a view that does not tell what it views,
    which a sink that keeps bytes past the call (a part in flight) must copy."""

    def __init__(self, raw: AtomicSink, buffer_size: int = io.DEFAULT_BUFFER_SIZE) -> None:
        super().__init__(raw, buffer_size)
        self._keep_from = buffer_size

    def write(self, b: Any) -> int:
        if type(b) is bytes and len(b) >= self._keep_from and not self.closed:
            self.flush()
            return self.raw.write(b)
        return super().write(b)


def atomic_writer(
    sink: AtomicSink,
    mode: Mode,
    buffering: int = -1,
    encoding: str | None = None,
    errors: str | None = None,
    newline: str | None = None,
    buffer_size: int = io.DEFAULT_BUFFER_SIZE,
    keeping: bool = False,
) -> AtomicBufferedWriter | AtomicTextWriter:
    """Wrap ``sink`` for ``mode``: a buffered binary writer, or a text writer on top of one.
    With ``keeping`` the sink gets large ``bytes`` as they are
    (:class:`KeepingBufferedWriter`)."""
    if buffering > 1:
        buffer_size = buffering
    writer = (KeepingBufferedWriter if keeping else AtomicBufferedWriter)(sink, buffer_size)
    sink._handed_out = True
    if mode.binary:
        return writer
    if encoding is not None and sink.tell() == 0:
        encoding = _write_bom(writer, encoding)
    return AtomicTextWriter(
        writer, encoding=encoding, errors=errors, newline=newline,
        line_buffering=buffering == 1,
    )


#: encodings whose streams start with a byte-order mark, and the BOM-less codec that follows it
_BOM_ENCODINGS = {
    "utf-16": (codecs.BOM_UTF16, "utf-16-le" if sys.byteorder == "little" else "utf-16-be"),
    "utf-32": (codecs.BOM_UTF32, "utf-32-le" if sys.byteorder == "little" else "utf-32-be"),
}


def _write_bom(writer: AtomicBufferedWriter, encoding: str) -> str:
    """Start a new text stream in ``encoding`` with its byte-order mark, as builtin ``open``
    does (``TextIOWrapper`` writes none over a writer that cannot seek); return the codec
    to encode the rest with."""
    bom = _BOM_ENCODINGS.get(codecs.lookup(encoding).name)
    if bom is None:
        return encoding
    writer.write(bom[0])
    return bom[1]


def text_reader(
    binary: Any,
    encoding: str | None = None,
    errors: str | None = None,
    newline: str | None = None,
) -> io.TextIOWrapper:
    """Decode a binary reader as text, with the arguments of builtin ``open``."""
    return io.TextIOWrapper(binary, encoding=encoding, errors=errors, newline=newline)


class MemoryReader(io.BytesIO):
    """A read-only in-memory file: ``BytesIO`` with a ``name``, ``peek`` and ``mode``."""

    mode = "rb"

    def __init__(self, data: bytes, name: str = "") -> None:
        super().__init__(data)
        self.name = name

    def writable(self) -> bool:
        return False

    def write(self, b: Any) -> int:
        raise io.UnsupportedOperation("write: file opened for reading")

    def truncate(self, size: int | None = None) -> int:
        raise io.UnsupportedOperation("truncate: file opened for reading")

    def peek(self, size: int = 0) -> bytes:
        """Return buffered bytes from the current position without moving it."""
        view = self.getbuffer()
        try:
            pos = self.tell()
            return bytes(view[pos:pos + max(size, 1)] if size > 0 else view[pos:])
        finally:
            view.release()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"
