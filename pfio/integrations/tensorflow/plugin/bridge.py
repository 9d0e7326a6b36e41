"""The Python half of pfio's TensorFlow filesystem plugin: the functions that each operation
of ``pfio_tf_filesystem.cc`` calls, with the GIL, from TensorFlow's threads.

TensorFlow hands every operation the URL as it was written. ``pfio://`` URLs are spelt as
pfio's fsspec protocol spells them (``pfio://s3/bucket/key`` is ``s3://bucket/key``,
``pfio://file/abs/path`` is ``/abs/path``: :func:`pfio.integrations.fsspec.pfio_url`); the
other schemes the plugin serves (``s3://``, ...) are pfio URLs as they are. A container on
the way is read through (``pfio://s3/bucket/data.zip/x.tfrecord``), opened once per process
(:func:`pfio.fs.resolver.descend`).

The filesystem at the top of each bucket, store or root directory is made once per process
(on first use, from the environment and pfio's configuration, as :func:`pfio.from_url` makes
it) and kept: :func:`reset` forgets them, e.g. after the S3 endpoint in the environment
changed.

Errors are raised as pfio raises them (builtin exceptions); :func:`status_of` gives the C++
side TensorFlow's status code for each, so that a missing file is a
``tf.errors.NotFoundError`` and so on.
"""

from __future__ import annotations

import errno
import io
import logging
import posixpath
import threading
from typing import Any

from ...._uri import URI, container_kind, parse_uri
from ....api import from_url
from ....fs.base import FS, stream_copy
from ....fs.globbing import has_magic
from ....fs.resolver import descend, forget
from ....trace.redact import redact
from .files import Reader, Writer

logger = logging.getLogger(__name__)

# TensorFlow's status codes (TF_Code in tensorflow/c/tf_status.h)
TF_UNKNOWN = 2
TF_INVALID_ARGUMENT = 3
TF_DEADLINE_EXCEEDED = 4
TF_NOT_FOUND = 5
TF_ALREADY_EXISTS = 6
TF_PERMISSION_DENIED = 7
TF_FAILED_PRECONDITION = 9
TF_UNIMPLEMENTED = 12
TF_INTERNAL = 13
TF_UNAVAILABLE = 14

#: exception classes and their codes, the first that matches wins (``io.UnsupportedOperation``
#: is an ``OSError`` and a ``ValueError``: it comes first)
_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (io.UnsupportedOperation, TF_UNIMPLEMENTED),
    (FileNotFoundError, TF_NOT_FOUND),
    (FileExistsError, TF_ALREADY_EXISTS),
    (PermissionError, TF_PERMISSION_DENIED),
    (IsADirectoryError, TF_FAILED_PRECONDITION),
    (NotADirectoryError, TF_FAILED_PRECONDITION),
    (TimeoutError, TF_DEADLINE_EXCEEDED),
    (ConnectionError, TF_UNAVAILABLE),
    (ValueError, TF_INVALID_ARGUMENT),  # a malformed URL, an unknown scheme
    (OSError, TF_UNKNOWN),
)

_lock = threading.Lock()
_tops: dict[tuple[str, str], FS] = {}
_pending: list[str] = []


def status_of(exc: BaseException) -> tuple[int, str]:
    """TensorFlow's status code for ``exc`` and its message (pfio's messages name URLs
    without secrets). A non-empty directory (``ENOTEMPTY``) is a failed precondition, as
    TensorFlow's ``DeleteDir`` wants it."""
    code = next((c for cls, c in _CODES if isinstance(exc, cls)), TF_INTERNAL)
    if isinstance(exc, OSError) and exc.errno == errno.ENOTEMPTY:
        code = TF_FAILED_PRECONDITION
    return code, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# -- the schemes to register (pfio.integrations.tensorflow.plugin.register) ----------------

def offer_schemes(schemes: list[str]) -> None:
    """Let the next ``TF_InitPlugin`` register ``schemes``."""
    with _lock:
        _pending[:] = schemes


def take_schemes() -> list[str]:
    """The schemes offered by :func:`offer_schemes`, once (``TF_InitPlugin`` asks)."""
    with _lock:
        schemes = list(_pending)
        _pending.clear()
    return schemes


# -- from a URL to a filesystem --------------------------------------------------------

def reset() -> None:
    """Forget the filesystems made so far: the next operation makes them again, from the
    environment and configuration of then. (They are not closed: files TensorFlow has open
    on them read and write on.)"""
    with _lock:
        _tops.clear()


def _parse(url: str) -> URI:
    if not url.startswith("pfio://"):
        return parse_uri(url)
    # imported here: the fsspec package needs fsspec, which s3:// URLs can do without
    from ...fsspec.bridge import pfio_url

    return parse_uri(pfio_url(url))


def _top(uri: URI) -> FS:
    """The filesystem at the top of ``uri``'s bucket, store or root directory."""
    key = (uri.scheme, uri.netloc)
    fs = _tops.get(key)
    if fs is None:
        made = from_url(str(uri.with_path("/")))
        with _lock:
            fs = _tops.setdefault(key, made)
        if fs is not made:  # another thread made one meanwhile
            made.close()
    return fs


def _directory(uri: URI) -> tuple[FS, str]:
    """The filesystem holding the directory ``uri`` (archives on the way opened) and the
    directory's path there."""
    return descend(_top(uri), uri.path.strip("/"))


def _locate(url: str) -> tuple[FS, str]:
    """The filesystem holding ``url`` and its path there."""
    parent, name = _parse(url).split()
    fs, inner = _directory(parent)
    return fs, posixpath.join(inner, name) if inner else name


# -- inspecting --------------------------------------------------------------------------

def stat(url: str) -> tuple[int, int, bool]:
    """``(size, mtime in ns, is_directory)`` of ``url`` (0 when the time is unknown)."""
    fs, name = _locate(url)
    st = fs.stat(name)
    mtime = st.last_modified
    return (0 if st.isdir() else int(st.size or 0),
            int(mtime * 1e9) if mtime is not None else 0, st.isdir())


def path_exists(url: str) -> None:
    """Raises ``FileNotFoundError`` unless ``url`` exists (a file or a directory)."""
    fs, name = _locate(url)
    if not fs.exists(name):
        raise FileNotFoundError(errno.ENOENT, "no such file or directory", redact(url))


def is_directory(url: str) -> None:
    """Raises ``NotADirectoryError`` (a file) or ``FileNotFoundError`` unless ``url`` is a
    directory (on S3: a prefix with objects under it)."""
    fs, name = _locate(url)
    if fs.isdir(name):
        return
    if fs.exists(name):
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", redact(url))
    raise FileNotFoundError(errno.ENOENT, "no such file or directory", redact(url))


def file_size(url: str) -> int:
    """The size of the file ``url``.

    Raises:
        IsADirectoryError: ``url`` is a directory.
    """
    size, _, is_dir = stat(url)
    if is_dir:
        raise IsADirectoryError(errno.EISDIR, "is a directory", redact(url))
    return size


def children(url: str) -> list[str]:
    """The names in the directory ``url``."""
    fs, name = _locate(url)
    return [st.filename.rstrip("/") for st in fs.list(name, detail=True)]


def matching_paths(pattern: str) -> list[str]:
    """The files and directories matching the glob ``pattern`` (``*``, ``?``, ``[...]`` in
    one component), spelt as ``pattern`` is, sorted. The directory before the first
    wildcard is listed once (one recursive listing on S3, see :meth:`FS.glob`); a zip or
    tar there is listed inside."""
    uri = _parse(pattern)
    path = uri.path
    magic = next((i for i, c in enumerate(path) if has_magic(c)), None)
    if magic is None:
        try:
            path_exists(pattern)
        except FileNotFoundError:
            return []
        return [pattern]
    start = path.rfind("/", 0, magic) + 1  # of the first component with a wildcard
    base = pattern[:len(pattern) - len(path) + start].rstrip("/")
    fs, inner = _directory(uri.with_path(path[:start]))
    matches = fs.glob(posixpath.join(inner, path[start:]) if inner else path[start:])
    cut = len(inner) + 1 if inner else 0
    return [f"{base}/{match[cut:]}" for match in matches]


# -- changing ----------------------------------------------------------------------------

def create_dir(url: str) -> None:
    """Create the directory ``url``, whose parent exists (nothing to do on S3)."""
    fs, name = _locate(url)
    fs.mkdir(name)


def create_dirs(url: str) -> None:
    """Create the directory ``url`` and the missing ones above it (nothing to do on S3).

    Raises:
        NotADirectoryError: a file is there.
    """
    fs, name = _locate(url)
    try:
        fs.makedirs(name, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, "a file is there", redact(url)) from None


def delete_file(url: str) -> None:
    """Remove the file ``url``.

    Raises:
        IsADirectoryError: ``url`` is a directory.
    """
    fs, name = _locate(url)
    if fs.stat(name).isdir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", redact(url))
    fs.remove(name)


def delete_dir(url: str) -> None:
    """Remove the empty directory ``url``.

    Raises:
        NotADirectoryError: ``url`` is a file.
        OSError: ``ENOTEMPTY``.
    """
    fs, name = _locate(url)
    if not fs.stat(name).isdir():
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", redact(url))
    fs.remove(name)


def delete_recursively(url: str) -> None:
    """Remove ``url`` and everything under it (on S3: batched deletes of the keys)."""
    fs, name = _locate(url)
    fs.remove(name, recursive=True)


def rename(src: str, dst: str) -> None:
    """Rename ``src`` to ``dst``, replacing a file there: on one filesystem, its rename (a
    server-side copy and a delete on S3); else a copy and a remove."""
    (sfs, sname), (dfs, dname) = _locate(src), _locate(dst)
    if sfs is dfs:
        sfs.rename(sname, dname)
    else:
        _copy(sfs, sname, dfs, dname)
        sfs.remove(sname)
    _forget_archive(dst)


def copy(src: str, dst: str) -> None:
    """Copy the file ``src`` to ``dst`` (server-side on S3 where both ends allow it); the
    copy appears whole or not at all."""
    (sfs, sname), (dfs, dname) = _locate(src), _locate(dst)
    _copy(sfs, sname, dfs, dname)
    _forget_archive(dst)


def _copy(sfs: FS, sname: str, dfs: FS, dname: str) -> None:
    if sfs is dfs:
        sfs.copy(sname, dname)
    elif not dfs._copy_from(sfs, sname, dname):
        stream_copy(sfs, sname, dfs, dname)


def _forget_archive(url: str) -> None:
    """``url`` was just written: if it is an archive, the next read opens it again."""
    uri = _parse(url)
    if container_kind(uri.split()[1]):
        forget(uri)


# -- files -------------------------------------------------------------------------------

def open_reader(url: str) -> Reader:
    """Open the file ``url`` for reading at offsets."""
    fs, name = _locate(url)
    return Reader(fs.open(name, "rb"))


def read_into(reader: Reader, offset: int, buffer: Any) -> int:
    """Fill ``buffer`` from ``offset`` of ``reader``'s file; the number of bytes read (fewer
    at the end of the file)."""
    return reader.read_into(offset, memoryview(buffer))


def close_reader(reader: Reader) -> None:
    """Close ``reader`` (TensorFlow is done with the file)."""
    reader.close()


def open_writer(url: str, append: int) -> Writer:
    """Open ``url`` for writing (with ``append``, to add to what is there, where the backend
    can: S3 cannot). Nothing is visible under ``url`` before :func:`close_writer`."""
    fs, name = _locate(url)
    return Writer(fs.open(name, "ab" if append else "wb"), redact(url),
                  on_publish=lambda: _forget_archive(url))


def write(writer: Writer, data: bytes) -> None:
    """Append ``data`` to ``writer``'s file."""
    writer.write(data)


def tell(writer: Writer) -> int:
    """The number of bytes in ``writer``'s file so far."""
    return writer.tell()


def close_writer(writer: Writer) -> None:
    """Publish ``writer``'s file (all of it, at once)."""
    writer.close()


def discard_writer(writer: Writer) -> None:
    """TensorFlow dropped ``writer`` without closing it: publish nothing."""
    writer.discard()
