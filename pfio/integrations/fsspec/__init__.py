"""A two-way bridge between pfio and fsspec.

(a) :class:`PfioFileSystem`, an fsspec filesystem (protocol ``pfio``) over any pfio URL, so that
pandas, pyarrow and Dask read and write through pfio (its S3 client, containers, codecs,
cache and tracer)::

    pandas.read_parquet("pfio://s3/bucket/table.parquet")   # = s3://bucket/table.parquet
    pandas.read_csv("pfio://mem/store/x.csv")                # = mem://store/x.csv
    pandas.read_csv("pfio://file/abs/path/x.csv")            # = /abs/path/x.csv

    The first component after ``pfio://`` is the pfio scheme; the rest is that URL's
    netloc and path. The protocol is registered with fsspec through an entry point, so
    ``pfio://`` works without importing pfio first.

(b) :class:`FsspecFS`, a pfio filesystem over any installed fsspec implementation, so
``pfio.from_url("gs://...")``, ``"https://..."``, ``"memory://..."`` work through pfio's API and
error classes. pfio uses it for schemes it has no backend of its own for (see
:func:`pfio.registry.resolve`). It is a backend like the others, :mod:`pfio.fs.fsspec`;
it is re-exported here, where it was first published.
"""

from ...fs.fsspec import FsspecFS
from .bridge import PfioFileSystem, pfio_url

__all__ = ["FsspecFS", "PfioFileSystem", "pfio_url"]
