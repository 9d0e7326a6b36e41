"""Cache directories other users cannot tamper with.

A cache directory holds files that pfio serves as the bytes of remote objects, so a directory
another user can write to (or owns) would let that user choose what this one reads. The
directory and the parents pfio creates for it are made mode 0700; an existing one must belong
to this user and be writable by nobody else. Files inside are opened with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import errno
import os
import stat

#: add to the flags of every ``os.open`` of a file in a cache directory
NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def make_private_dir(path: str) -> None:
    """Create the directory ``path`` and the missing parents with mode 0700, or check that
    the existing one is private.

    Raises:
        PermissionError: ``path`` belongs to another user, or others may write to it.
        NotADirectoryError: ``path`` is not a directory.
    """
    parent = os.path.dirname(path)
    if parent and parent != path and not os.path.isdir(parent):
        make_private_dir(parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    check_private_dir(path)


def check_private_dir(path: str) -> None:
    """Raise unless ``path`` is a directory owned by this user that no one else may write to
    (read access for others is the owner's choice)."""
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "the cache directory is not a directory", path)
    if st.st_uid != os.geteuid():
        raise PermissionError(
            errno.EPERM, f"the cache directory belongs to another user (uid {st.st_uid}); "
            "use a directory of your own", path)
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(
            errno.EPERM, f"the cache directory is writable by other users (mode "
            f"{stat.S_IMODE(st.st_mode):o}); make it private with chmod 700", path)
