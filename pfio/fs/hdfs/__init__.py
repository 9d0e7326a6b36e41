"""HDFS: a filesystem over a cluster, through ``hdfs-native`` (no JVM) or pyarrow.

The package, bottom to top:

* :mod:`.config`: the Hadoop configuration (``$HADOOP_CONF_DIR``: name services, name node
  addresses, the user and the home directory);
* :mod:`.client`: which cluster to talk to (:class:`~.client.HdfsTarget`), the
  ``hdfs-native`` client factory, the reachability check, errors as builtin exceptions;
  :mod:`.pyarrow_client`: the same client methods over ``pyarrow.fs.HadoopFileSystem``;
* :mod:`.files`: the file objects (a positional reader, an atomic writer, an appender);
* :mod:`.filesystem`: the :class:`Hdfs` class.
"""

from .filesystem import CLIENTS, Hdfs, HdfsFileStat, file_stat

__all__ = ["CLIENTS", "Hdfs", "HdfsFileStat", "file_stat"]
