"""``pfio.v2.pathlib``: :class:`Path` and :class:`PurePath`, and PFIO 2.x's :func:`copy`
and :func:`unlink` helpers for whole trees."""

from __future__ import annotations

import shutil

from ..fs.base import FS
from ..fs.s3 import S3
from .path import Path, PurePath


def _has_directory_feature(fs: FS) -> bool:
    """Whether directories on ``fs`` exist of their own (PFIO 2.x's helper, which its tests
    import): everywhere but on S3, where a prefix exists while keys are under it."""
    return not isinstance(fs, S3)


def copy(src: Path, dst: Path, *, chunk_size: int = 16 * (2 ** 20)) -> None:
    """Copy the file ``src`` to ``dst``, or the tree under the directory ``src`` into the
    directory ``dst``; the two may be on different filesystems.

    Args:
        src: a file or a directory.
        dst: where to copy to (made, with its parents, for a tree).
        chunk_size: bytes read and written at a time.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        IsADirectoryError: ``src`` is a file and ``dst`` a directory.
        NotADirectoryError: ``src`` is a directory and ``dst`` a file.
    """
    if src.is_dir():
        if dst.is_file():
            raise NotADirectoryError(f"cannot copy the directory {src} over the file {dst}")
        for entry in src.rglob("*"):
            if entry.is_dir():
                continue
            target = dst / entry.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_file(entry, target, chunk_size)
    elif src.is_file():
        if dst.is_dir():
            raise IsADirectoryError(f"cannot copy the file {src} over the directory {dst}")
        _copy_file(src, dst, chunk_size)
    else:
        raise FileNotFoundError(f"no such file or directory to copy: {src}")


def _copy_file(src: Path, dst: Path, chunk_size: int) -> None:
    with src.open("rb") as reader, dst.open("wb") as writer:
        shutil.copyfileobj(reader, writer, chunk_size)


def unlink(target: Path) -> None:
    """Remove the file ``target``, or the directory ``target`` with everything under it.

    Raises:
        FileNotFoundError: ``target`` does not exist.
    """
    target.fs.remove(str(target), recursive=target.is_dir())


__all__ = ["Path", "PurePath", "copy", "unlink"]
