"""``pfio.v2.s3``: the S3 filesystem and its stat classes."""

from ..fs.s3 import S3
from ..fs.s3.faces import S3RawReader
from ..fs.s3.reader import ReadOptions
from ..fs.s3.stat import S3ObjectStat, S3PrefixStat

#: the size of a reader's blocks when ``buffering`` is not given (16 MiB, as in PFIO 2.x)
DEFAULT_MAX_BUFFER_SIZE = ReadOptions.block_size

#: PFIO 2.x's name of the raw reader that ``open(path, "rb", buffering=0)`` returns (also a
#: zip's ``fileobj`` with ``buffering=0``), which PFIO 2.x's tests check with isinstance
_ObjectReader = S3RawReader

__all__ = ["DEFAULT_MAX_BUFFER_SIZE", "S3", "S3ObjectStat", "S3PrefixStat"]
