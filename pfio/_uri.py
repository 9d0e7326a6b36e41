"""Parsing of the URLs that pfio accepts.

Three forms are understood:

* ``scheme://netloc/path`` (``s3://bucket/key``, ``hdfs://nameservice/dir``, ``mem://store/x``);
* ``file:///abs/path`` and ``file://localhost/abs/path``;
* a plain local path, relative or absolute (``data/train``, ``/mnt/data``), which is ``file``.

Unlike :func:`urllib.parse.urlparse`, the path is kept verbatim: ``?`` and ``#`` are legal in
object keys and are not split off as a query or a fragment.
"""

from __future__ import annotations

import errno
import posixpath
import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*$")

#: File name suffixes that :func:`pfio.from_url` opens as containers, and their kinds (the
#: names of container factories in :mod:`pfio.registry`); longer suffixes come first.
CONTAINER_SUFFIXES: tuple[tuple[str, str], ...] = (
    (".tar.gz", "tar"),
    (".zip", "zip"),
    (".tar", "tar"),
    (".tgz", "tar"),
)


def _markers(suffixes: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The fewest strings one of which a path holds when it holds any of ``suffixes``
    (``.tar`` covers ``.tar.gz``): the fast test of :func:`split_container_path`."""
    names = {s for s, _ in suffixes}
    return tuple(s for s in names if not any(o != s and o in s for o in names))


_MARKERS = _markers(CONTAINER_SUFFIXES)


def add_container_suffix(suffix: str, kind: str) -> None:
    """Open path components ending in ``suffix`` (case-insensitive) as containers of
    ``kind`` (see :func:`pfio.registry.register_container`)."""
    global CONTAINER_SUFFIXES
    suffix = suffix.lower()
    if not suffix.startswith(".") or "/" in suffix:
        raise ValueError(f"a container suffix starts with '.' and has no '/': {suffix!r}")
    kept = [(s, k) for s, k in CONTAINER_SUFFIXES if s != suffix]
    CONTAINER_SUFFIXES = tuple(sorted(kept + [(suffix, kind)], key=lambda sk: -len(sk[0])))
    _refresh_markers()


def remove_container_suffixes(kind: str) -> None:
    """Stop opening path components as containers of ``kind``."""
    global CONTAINER_SUFFIXES
    CONTAINER_SUFFIXES = tuple((s, k) for s, k in CONTAINER_SUFFIXES if k != kind)
    _refresh_markers()


def _refresh_markers() -> None:
    global _MARKERS
    _MARKERS = _markers(CONTAINER_SUFFIXES)


# ``scheme://`` then a netloc's ``user:password@`` (up to its last ``@``, as parsers split it)
_USERINFO_RE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^/\s]*@")


def without_userinfo(text: str) -> str:
    """``text`` (a URL, or a message quoting URLs) with the ``user:password@`` of every URL
    removed: the form of a URL that reprs, errors and log lines show.

    >>> without_userinfo("http://user:pass@127.0.0.1:9000/b")
    'http://127.0.0.1:9000/b'
    """
    if "@" not in text:
        return text
    return _USERINFO_RE.sub(r"\g<scheme>", text)


def netloc_host(netloc: str) -> str:
    """``netloc`` without its ``user:password@``: ``host[:port]`` (or a name).

    >>> netloc_host("user:p@ss@namenode:8020")
    'namenode:8020'
    """
    return netloc.rpartition("@")[2]


def netloc_user(netloc: str) -> str | None:
    """The user name of ``netloc``'s ``user:password@``, None when it has none."""
    userinfo, at, _ = netloc.rpartition("@")
    return userinfo.partition(":")[0] if at else None


class URI(NamedTuple):
    """A parsed URL: ``scheme://netloc/path`` (an immutable, cheap named tuple).

    For local paths ``scheme`` is ``"file"``, ``netloc`` is empty and ``path`` is the path as
    given (relative paths stay relative). ``str()`` gives the URL back whole; ``repr()`` leaves
    out the netloc's ``user:password@``, so that a URI in a log line or an error shows none.
    """

    scheme: str
    netloc: str
    path: str

    def __repr__(self) -> str:
        return (f"URI(scheme={self.scheme!r}, netloc={netloc_host(self.netloc)!r}, "
                f"path={self.path!r})")

    def __str__(self) -> str:
        if self.scheme == "file" and not self.netloc:
            return self.path
        return f"{self.scheme}://{self.netloc}{self._slashed_path()}"

    def _slashed_path(self) -> str:
        if not self.path or self.path.startswith("/"):
            return self.path
        return "/" + self.path

    def with_path(self, path: str) -> URI:
        """Return the same location with another path."""
        return self._replace(path=path)

    def split(self) -> tuple[URI, str]:
        """``(parent, name)``: the location of the directory holding this path, and the last
        path component (``""`` at the root). A relative local path's parent is ``"."``.

        >>> parse_uri("s3://bucket/dir/key").split()
        (URI(scheme='s3', netloc='bucket', path='/dir'), 'key')
        """
        path = self.path.rstrip("/") or self.path
        parent, name = posixpath.split(path)
        if not parent and self.scheme == "file" and not path.startswith("/"):
            parent = "."
        return self.with_path(parent), name


def parse_uri(url: str) -> URI:
    """Parse ``url`` into a :class:`URI`.

    Raises:
        TypeError: ``url`` is not a string or :class:`os.PathLike`.
        ValueError: the URL is empty, contains a NUL byte, has an invalid scheme, or is a
            ``file://`` URL naming a remote host.
    """
    if not isinstance(url, str):
        import os

        if isinstance(url, os.PathLike):
            url = os.fspath(url)
        if not isinstance(url, str):
            raise TypeError(f"a URL must be a str or os.PathLike, not {type(url).__name__}")
    if "://" not in url and not url.startswith("file:") and url and "\x00" not in url:
        return URI("file", "", url)  # a plain local path: the common case, made cheap
    if not url:
        raise ValueError("malformed URL: the URL is empty")
    if "\x00" in url:
        raise ValueError(f"malformed URL {without_userinfo(url)!r}: it contains a NUL byte")

    head, sep, rest = url.partition("://")
    if not sep:
        if url.startswith("file:"):
            return URI("file", "", _file_path(url, url[len("file:"):]))
        return URI("file", "", url)
    if not head:
        raise ValueError(
            f"malformed URL {without_userinfo(url)!r}: the scheme before '://' is empty")
    if not _SCHEME_RE.match(head):
        if "/" in head:
            # "dir/x://y" is a local path that happens to contain "://"
            return URI("file", "", url)
        raise ValueError(
            f"malformed URL {without_userinfo(url)!r}: scheme {head!r} must start with a letter "
            "and contain only letters, digits, '+', '-' and '.'"
        )
    scheme = head.lower()
    netloc, slash, path = rest.partition("/")
    path = slash + path
    if scheme == "file":
        if netloc not in ("", "localhost"):
            raise ValueError(
                f"malformed URL {without_userinfo(url)!r}: file:// URLs name local paths; "
                f"host {netloc_host(netloc)!r} is not supported (use file:///abs/path)"
            )
        return URI("file", "", _file_path(url, path))
    return URI(scheme, netloc, path)


def _file_path(url: str, path: str) -> str:
    if not path:
        raise ValueError(f"malformed URL {without_userinfo(url)!r}: no path after 'file:'")
    return path


def split_container_path(path: str) -> tuple[str, list[tuple[str, str]], str]:
    """Split ``path`` at the path components that name containers.

    Returns ``(outer, [(container_path, kind), ...], inner)``: ``outer`` is the directory that
    holds the first container, each container path is relative to the FS before it, and
    ``inner`` is what remains inside the last container. ``kind`` is ``"zip"``, ``"tar"`` or
    a registered kind (see :data:`CONTAINER_SUFFIXES`).

    >>> split_container_path("/data/train.zip/img/1.jpg")
    ('/data', [('train.zip', 'zip')], 'img/1.jpg')
    """
    lowered = path.lower()
    for marker in _MARKERS:
        if marker in lowered:
            break
    else:
        return path, [], ""  # fast path: no component can name a container
    parts = path.split("/")
    containers: list[tuple[str, str]] = []
    start = 0
    outer: str | None = None
    for i, part in enumerate(parts):
        kind = container_kind(part)
        if kind is None:
            continue
        if outer is None:
            outer = "/".join(parts[:i]) if i else ""
            if not outer and path.startswith("/"):
                outer = "/"
        containers.append(("/".join(parts[start:i + 1]) if containers else part, kind))
        start = i + 1
    if outer is None:
        return path, [], ""
    return outer, containers, "/".join(parts[start:])


def container_kind(name: str) -> str | None:
    """The kind of container (``"zip"``, ``"tar"``, or a registered one) that ``name``'s
    suffix names, else None."""
    lowered = name.lower()
    for suffix, kind in CONTAINER_SUFFIXES:
        if lowered.endswith(suffix) and len(lowered) > len(suffix):
            return kind
    return None


def is_relative_name(name: str) -> bool:
    """True when ``name`` is a relative path whose every component is a real name: not
    empty, not ``.`` or ``..``, no leading ``/`` (one trailing ``/`` may mark a directory).

    Such a name, joined to a directory, names a path inside that directory and nowhere
    else; it is also its own normal form, so every filesystem opens it as it is listed.

    >>> is_relative_name("img/0001.jpg"), is_relative_name("a//b"), is_relative_name("../x")
    (True, False, False)
    """
    body = name[:-1] if name.endswith("/") else name
    return bool(body) and all(part not in ("", ".", "..") for part in body.split("/"))


def confined_name(root: str, name: str, where: Callable[[], str] | None = None,
                  top: str | None = None) -> str:
    """``name`` as a path relative to the directory ``root`` (``""`` for ``root`` itself),
    or :class:`PermissionError` when it names something outside ``root``.

    A relative name is taken from ``root``: ``..`` may go back up inside it, never above
    it. An absolute name (a leading ``/``) is a path from the top of the store (the local
    filesystem, the bucket, the store of ``mem://``, the HDFS namespace, the archive):
    inside ``root`` it is that file, elsewhere it is refused. The root's absolute path is
    ``top`` when given (a local root relative to the working directory), else ``root``
    when it starts with ``/``, else ``/`` + ``root``. A name with no ``..`` component and
    no leading ``/`` is returned as it is; another is normalised (keeping a trailing
    ``/``). Symbolic links are not looked at: this is about names only.

    Raises:
        PermissionError: ``name`` climbs out of ``root`` (``..`` beyond it, or an
            absolute path outside it); the message names both, the root as ``where()``
            shows it (a URL) when given. Nothing was read or written.

    >>> confined_name("data", "a/../b"), confined_name("data", "/data/x/"), \\
    ...     confined_name("", "/x")
    ('b', 'x/', 'x')
    """
    if not name.startswith("/"):
        if ".." not in name:
            return name
        inside = posixpath.normpath(name)
        if inside == ".." or inside.startswith("../"):
            raise _outside(root, name, where)
        if inside == ".":
            return ""
    else:
        anchor = posixpath.normpath("/" + (top if top is not None else root).lstrip("/"))
        path = posixpath.normpath("/" + name.lstrip("/"))
        if path == anchor:
            return ""
        head = anchor.rstrip("/") + "/"
        if not path.startswith(head):
            raise _outside(root, name, where)
        inside = path[len(head):]
    return inside + "/" if name.endswith("/") else inside


def join_confined(root: str, name: str, where: Callable[[], str] | None = None,
                  top: str | None = None) -> str:
    """``name`` joined to the directory ``root``: the path below ``root`` that
    :func:`confined_name` gives, joined to it.

    Raises:
        PermissionError: ``name`` climbs out of ``root`` (see :func:`confined_name`).

    >>> join_confined("data", "a/../b"), join_confined("/srv/data", "/srv/data/x")
    ('data/b', '/srv/data/x')
    """
    if not name.startswith("/") and ".." not in name:  # the common case, made cheap
        return posixpath.join(root, name) if root else name
    inside = confined_name(root, name, where, top)
    if not root:
        return inside
    return posixpath.join(root, inside) if inside else root


def _outside(root: str, name: str, where: Callable[[], str] | None) -> PermissionError:
    shown = where() if where is not None else (root or "/")
    return PermissionError(
        errno.EACCES, f"{name!r} is outside the filesystem's root {shown!r}: a name may not "
        "climb out of its root ('..' beyond it, or an absolute path elsewhere)")


def parent_directories(names: Iterable[str]) -> set[str]:
    """Every directory above the ``/``-separated relative ``names``: what a listing that
    names only files (S3 keys, zip members) implies.

    >>> sorted(parent_directories(["a/b/c.txt", "a/d/", "e"]))
    ['a', 'a/b']
    """
    dirs: set[str] = set()
    for name in names:
        parent = posixpath.dirname(name.rstrip("/"))
        while parent and parent not in dirs:  # a directory's parents are in ``dirs`` already
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    return dirs


def place(url: str) -> tuple[str, str]:
    """``(top URL, name)``: the URL of the top of the filesystem that holds ``url`` (a
    bucket, a ``mem://`` store, an HDFS namenode's ``/``, an archive) and ``url``'s path in
    it. Two URLs are on one filesystem when their tops are equal.

    >>> place("s3://b/out/a.png"), place("s3://b/train.zip/img/1.png")
    (('s3://b/', 'out/a.png'), ('s3://b/train.zip', 'img/1.png'))
    """
    uri = parse_uri(url)
    parent, name = uri.split()
    _, containers, inner = split_container_path(parent.path)
    if containers:
        top = parent.path[:len(parent.path) - len(inner)].rstrip("/")
    else:
        top, inner = "/", parent.path
    path = posixpath.normpath(posixpath.join("/", inner, name)).lstrip("/")
    return str(uri.with_path(top)), path
