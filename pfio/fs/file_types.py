"""The static type of the file objects that ``open`` returns."""

from __future__ import annotations

import io
from typing import IO, cast


def as_binary_io(f: io.IOBase) -> IO[bytes]:
    """``f`` as the type checker's ``typing.IO[bytes]``, unchanged at run time.

    pfio's binary files (and ``gzip.GzipFile`` and the like) are ``io`` classes with every
    method of ``IO[bytes]``, but typeshed declares only a few of io's own classes
    (``BufferedReader``, ``FileIO``, ...) as ``BinaryIO``: this is the one place that says so
    for the others.
    """
    return cast(IO[bytes], f)


def read_into(f: IO[bytes], buffer: memoryview | bytearray) -> int | None:
    """``f.readinto(buffer)``: the bytes read (0 at the end; None when a non-blocking raw
    file has none now). Every binary file of io and of pfio has ``readinto``; typing.IO
    declares none."""
    return cast(io.BufferedIOBase, f).readinto(buffer)
