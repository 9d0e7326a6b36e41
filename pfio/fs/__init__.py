"""Filesystems: the base API (:class:`FS`, :class:`FileStat`) and the backends."""

from .base import FS
from .stat import FileStat

__all__ = ["FS", "FileStat"]
