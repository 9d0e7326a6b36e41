"""Copying and syncing between any two filesystems: :func:`pfio.copy` and
:func:`pfio.sync`.

* :mod:`.plan`: the files under a source and a destination, and which to copy, leave or
  delete (names checked so that none lands outside the destination);
* :mod:`.run`: a plan carried out by a thread pool (server-side S3 copies where the two
  ends allow, streams otherwise), with a progress bar, :class:`SyncResult` and
  :class:`TransferError`;
* :mod:`.urls`: :func:`copy` and :func:`sync`, from URLs.
"""

from __future__ import annotations

from .plan import COMPARES, check_names
from .run import SyncResult, TransferError
from .urls import copy, sync

__all__ = ["COMPARES", "SyncResult", "TransferError", "check_names", "copy", "sync"]
