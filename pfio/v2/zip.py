"""``pfio.v2.zip``: the zip container and its :class:`ZipFileStat`."""

from ..containers.zip import Zip, ZipFileStat

__all__ = ["Zip", "ZipFileStat"]
