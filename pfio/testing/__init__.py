"""Helpers for tests that use pfio, with the names PFIO 2.x's ``pfio.testing`` had.

* :class:`ZipForTest` writes a zip file from a nested dict (and removes it when used as a
  context manager);
* :func:`make_zip` zips a directory tree;
* :func:`randstring` and :func:`make_random_str` make random alphanumeric strings;
* :func:`patch_subprocess` makes ``subprocess.run`` return a given output while a test runs;
* :func:`make_http_server` runs an in-memory HTTP server on loopback (for the HTTP caches).

This module imports only the standard library; the test servers live in submodules.
"""

from __future__ import annotations

import functools
import os
import random
import string
import subprocess
import zipfile
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar, Union, cast
from unittest import mock

from .http_server import OnMemoryHTTPServerForTest, make_http_server

#: a tree of files: name -> bytes (a file) or another tree (a directory)
Tree = dict[str, Union[bytes, str, "Tree"]]

_ALPHANUMERIC = string.ascii_letters + string.digits


class ZipForTest:
    """A zip file at ``destfile`` holding the files of ``data``.

    ``data`` maps names to contents (``bytes``, or ``str`` written as UTF-8) or to nested
    dicts for directories; the default is ``{"file": b"foo", "dir": {"f": b"bar"}}``.
    Directories are implied by their members' names (no directory entries), except empty
    ones, which get an entry so that they exist in the archive.

    Used as a context manager, the zip file is removed on exit.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.zip")
    >>> with ZipForTest(path) as z:
    ...     z.content("dir/f")
    b'bar'
    >>> os.path.exists(path)
    False
    """

    def __init__(self, destfile: str | os.PathLike[str], data: Tree | None = None) -> None:
        self.destfile = os.fspath(destfile)
        self.data: Tree = {"file": b"foo", "dir": {"f": b"bar"}} if data is None else data
        with zipfile.ZipFile(self.destfile, "w") as archive:
            _write_tree(archive, "", self.data)

    def content(self, path: str) -> Any:
        """What ``data`` holds at ``path`` (``/``-separated): the bytes of a file, the dict of
        a directory, or None when there is nothing there."""
        node: Any = self.data
        for part in path.strip("/").split("/"):
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        return node

    def __enter__(self) -> ZipForTest:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            os.remove(self.destfile)
        except FileNotFoundError:
            pass


def _write_tree(archive: zipfile.ZipFile, prefix: str, tree: Tree) -> None:
    if prefix and not tree:
        archive.writestr(prefix, b"")
    for name, value in tree.items():
        if isinstance(value, dict):
            _write_tree(archive, f"{prefix}{name}/", value)
        else:
            data = value.encode("utf-8") if isinstance(value, str) else value
            archive.writestr(prefix + name, data)


def make_zip(zipfilename: str | os.PathLike[str], root_dir: str | os.PathLike[str],
             base_dir: str | os.PathLike[str]) -> None:
    """Zip the tree ``root_dir/base_dir`` into ``zipfilename``, directories included.

    Member names are relative to ``root_dir`` (so they start with ``base_dir``), as
    ``shutil.make_archive`` names them; the order is sorted, so the archive is the same
    for the same tree.

    Raises:
        FileNotFoundError: ``root_dir/base_dir`` does not exist.
    """
    root = os.fspath(root_dir)
    top = os.path.join(root, base_dir)
    if not os.path.exists(top):
        raise FileNotFoundError(f"no such directory to zip: {top}")
    with zipfile.ZipFile(zipfilename, "w") as archive:
        for directory, dirs, files in os.walk(top):
            dirs.sort()
            for name in dirs + sorted(files):
                full = os.path.join(directory, name)
                archive.write(full, os.path.normpath(os.path.relpath(full, root)))


def randstring(length: int = 16) -> str:
    """A random string of ``length`` ASCII letters and digits."""
    return "".join(random.choices(_ALPHANUMERIC, k=length))


def make_random_str(n: int) -> str:
    """A random string of ``n`` ASCII letters and digits (the same as :func:`randstring`)."""
    return randstring(n)


_F = TypeVar("_F", bound=Callable[..., Any])


def patch_subprocess(stdout: bytes | str, stderr: bytes | str = b"") -> Callable[[_F], _F]:
    """A decorator: while the decorated function runs, ``subprocess.run`` returns a
    successful ``CompletedProcess`` with ``stdout`` and ``stderr`` instead of running
    anything (it is an autospec mock, so a test can inspect its calls through
    ``subprocess.run``)."""

    def decorator(function: _F) -> _F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            completed = subprocess.CompletedProcess(args=[], returncode=0, stdout=stdout,
                                                    stderr=stderr)
            fake = mock.create_autospec(subprocess.run, return_value=completed)
            with mock.patch.object(subprocess, "run", fake):
                return function(*args, **kwargs)

        return cast(_F, wrapper)  # functools.wraps keeps function's signature

    return decorator


__all__ = ["OnMemoryHTTPServerForTest", "ZipForTest", "make_http_server", "make_random_str",
           "make_zip", "patch_subprocess", "randstring"]
