"""The few exception classes pfio adds; each is also a builtin class users already catch."""

from __future__ import annotations

import errno


class MemberNotFoundError(FileNotFoundError, KeyError):
    """A path that is not in a zip or tar archive.

    It is a ``FileNotFoundError`` like a missing file on any filesystem, and a ``KeyError``
    as PFIO 2.x and :mod:`zipfile` raised.
    """

    def __init__(self, archive: str, member: str) -> None:
        super().__init__(errno.ENOENT, "no such member in archive", f"{archive}/{member}")
        self.archive = archive
        self.member = member

    def __str__(self) -> str:
        return f"no member {self.member!r} in archive {self.archive!r}"


class ArchiveError(OSError):
    """A zip or tar archive that is truncated, corrupt or of an unsupported kind.

    The message names the archive and says what is wrong.
    """


def os_error_args(exc: OSError) -> tuple[object, ...]:
    """The arguments that make another ``OSError`` like ``exc`` (its errno, message and file
    name), for re-raising it as a class that is also another builtin error."""
    if exc.errno is None:
        return exc.args
    return (exc.errno, exc.strerror, exc.filename)
