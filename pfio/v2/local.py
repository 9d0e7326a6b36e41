"""``pfio.v2.local``: the local filesystem and its :class:`LocalFileStat`."""

from ..fs.local import Local, LocalFileStat

__all__ = ["Local", "LocalFileStat"]
