"""``pfio.v2.hdfs``: the HDFS filesystem and its :class:`HdfsFileStat`."""

from ..fs.hdfs import Hdfs, HdfsFileStat

__all__ = ["Hdfs", "HdfsFileStat"]
