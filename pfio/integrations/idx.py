"""IDX files (the MNIST format) on any pfio URL, read item by item; no framework needed.

    from pfio.integrations.idx import IDXDataset

    train = IDXDataset("s3://bucket/mnist/train-images-idx3-ubyte.gz",
                       "s3://bucket/mnist/train-labels-idx1-ubyte.gz")
    image, label = train[0]          # (28, 28) uint8 array, int

An IDX file is a 4-byte magic (two zero bytes, a type byte, the number of dimensions), the
dimensions as big-endian 32-bit integers, then the items in C order; item ``i`` is one slice
along the first dimension. Uncompressed files are read by ranges (one seek and read, or
``read_at``, per item). Compressed files (gzip, bz2, xz, zstd: noticed by their magic bytes)
are decompressed once into a local cache file, published by an atomic rename and named after
the URL, size and modification time of the source, then read by ranges from there.

Objects pickle without open files: each process opens the files again on first use.
"""

from __future__ import annotations

import logging
import os
import shutil
import struct
import tempfile
import threading
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from .._uri import parse_uri
from ..api import from_url
from ..compression.codecs import MAGIC_SIZE, by_magic
from ..digests import sha256_hex
from ..fs.base import FS
from ..trace.redact import redact

logger = logging.getLogger(__name__)

#: IDX type byte -> NumPy dtype (multi-byte types are big-endian)
DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}

_COPY_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class IDXHeader:
    """What an IDX header says: the item type, the full shape, where the data starts."""

    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def offset(self) -> int:
        """Bytes before the first item (magic and dimensions)."""
        return 4 + 4 * len(self.shape)

    @property
    def count(self) -> int:
        """Number of items (the first dimension)."""
        return self.shape[0]

    @property
    def item_shape(self) -> tuple[int, ...]:
        return self.shape[1:]

    @property
    def item_size(self) -> int:
        """Bytes per item."""
        return int(np.prod(self.item_shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def data_size(self) -> int:
        return self.count * self.item_size


def is_idx_magic(head: bytes) -> bool:
    """True when ``head`` starts like an uncompressed IDX file."""
    return len(head) >= 4 and head[:2] == b"\0\0" and head[2] in DTYPES and head[3] > 0


def parse_header(f: IO[bytes], name: str) -> IDXHeader:
    """Read the header at the start of ``f``.

    Raises:
        ValueError: ``f`` does not start with an IDX header.
    """
    magic = f.read(4)
    if not is_idx_magic(magic):
        raise ValueError(f"{name}: not an IDX file (magic {magic.hex() or 'missing'})")
    ndim = magic[3]
    dims = f.read(4 * ndim)
    if len(dims) != 4 * ndim:
        raise ValueError(f"{name}: truncated IDX header")
    return IDXHeader(DTYPES[magic[2]], struct.unpack(f">{ndim}I", dims))


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/pfio/idx`` (``~/.cache/pfio/idx`` when the variable is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pfio", "idx")


class IDXFile:
    """One IDX file at ``url``, its items read by index.

    Args:
        url: any pfio URL (a member of a zip/tar container included).
        cache_dir: where decompressed copies of compressed files go (default
            :func:`default_cache_dir`, or a directory under the system's temporary directory
            when that one cannot be created).
        options: options of the filesystem (as for :func:`pfio.from_url`).

    Raises:
        FileNotFoundError: no file at ``url``.
        ValueError: the file is not IDX data, or shorter than its header says.
    """

    def __init__(self, url: str, cache_dir: str | None = None, **options: Any) -> None:
        self.url = url
        self.cache_dir = cache_dir
        self._options = options
        parent, self._name = parse_uri(url).split()
        self._parent = str(parent)
        self._local: str | None = None  # the decompressed copy, for a compressed source
        self._reset()
        with self._fs().open(self._name, "rb") as f:
            compressed = by_magic(f.read(MAGIC_SIZE)) is not None  # IDX data starts with 0
            if not compressed:
                f.seek(0)
                self.header = parse_header(f, url)
                size = self._fs().stat(self._name).size
        if compressed:
            self._local = self._decompressed_copy()
            with open(self._local, "rb") as f:
                self.header = parse_header(f, url)
            size = os.path.getsize(self._local)
        if size < self.header.offset + self.header.data_size:
            raise ValueError(f"{url}: truncated IDX file ({size} bytes, the header promises "
                             f"{self.header.offset + self.header.data_size})")

    def _reset(self) -> None:
        self._fs_obj: FS | None = None
        self._file: Any = None
        self._fd: int | None = None
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def _fs(self) -> FS:
        if self._fs_obj is None:
            self._fs_obj = from_url(self._parent, **self._options)
        return self._fs_obj

    def __len__(self) -> int:
        return self.header.count

    def read(self, index: int) -> np.ndarray:
        """Item ``index`` (negative counts from the end) as an array of the item shape.

        Raises:
            IndexError: ``index`` is out of range.
        """
        count = self.header.count
        if not -count <= index < count:
            raise IndexError(f"index {index} out of range for {count} items")
        index %= count
        size = self.header.item_size
        data = self._read_range(self.header.offset + index * size, size)
        return np.frombuffer(data, self.header.dtype).reshape(self.header.item_shape)

    def read_all(self) -> np.ndarray:
        """All items as one array of the full shape (one read)."""
        data = self._read_range(self.header.offset, self.header.data_size)
        return np.frombuffer(data, self.header.dtype).reshape(self.header.shape)

    def _read_range(self, offset: int, size: int) -> bytes:
        if self._pid != os.getpid():
            self._reset()  # a forked child: the parent's files are not ours
        if self._local is not None:
            if self._fd is None:
                self._fd = os.open(self._local, os.O_RDONLY)
            return os.pread(self._fd, size, offset)
        if self._file is None:
            self._file = self._fs().open(self._name, "rb")
        read_at = getattr(self._file, "read_at", None)
        if read_at is not None:
            data: bytes = read_at(offset, size)
            return data
        with self._lock:
            self._file.seek(offset)
            data = self._file.read(size)
            return data

    def _decompressed_copy(self) -> str:
        """The path of the cached decompressed copy, made now when it is missing."""
        stat = self._fs().stat(self._name)
        key = f"{self.url}\0{stat.size}\0{stat.last_modified}"
        directory = self._cache_directory()
        path = os.path.join(directory, sha256_hex(key.encode())[:32] + ".idx")
        if os.path.exists(path):
            return path
        logger.info("decompressing %s into %s", redact(self.url), path)
        fd, temp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out, \
                    self._fs().open(self._name, "rb", compression="infer") as src:
                shutil.copyfileobj(src, out, _COPY_CHUNK)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
        return path

    def _cache_directory(self) -> str:
        if self.cache_dir is not None:
            os.makedirs(self.cache_dir, exist_ok=True)
            return self.cache_dir
        try:
            directory = default_cache_dir()
            os.makedirs(directory, exist_ok=True)
        except OSError:
            directory = os.path.join(tempfile.gettempdir(), f"pfio-idx-{os.getuid()}")
            os.makedirs(directory, exist_ok=True)
        return directory

    def close(self) -> None:
        """Close the files this process opened (they reopen on the next read)."""
        if self._fd is not None:
            os.close(self._fd)
        if self._file is not None:
            self._file.close()
        if self._fs_obj is not None:
            self._fs_obj.close()
        self._reset()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in ("_fs_obj", "_file", "_fd", "_pid", "_lock"):
            del state[key]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    def __repr__(self) -> str:
        return f"<IDXFile {self.url!r} {self.header.dtype} {self.header.shape}>"


class IDXDataset:
    """A map-style dataset of (item, label) pairs from an IDX images file and an IDX labels
    file (MNIST, Fashion-MNIST, EMNIST, ...), gzipped or not, on any URLs.

    ``dataset[i]`` is ``(array, label)``: the array of the item shape and dtype (a read-only
    view of the bytes read: copy it to modify it) and the label an ``int``. The labels file
    (one small number per item) is read whole on first use; the images file by ranges.

    Args:
        images_url: the IDX file of the items.
        labels_url: the IDX file of the labels (one dimension, as many as items).
        cache_dir: where decompressed copies of compressed files go (see :class:`IDXFile`).
        options: filesystem options (as for :func:`pfio.from_url`).

    Raises:
        ValueError: a file is not IDX data, or the two files disagree on the number of items.
    """

    def __init__(self, images_url: str, labels_url: str, cache_dir: str | None = None,
                 **options: Any) -> None:
        self.images = IDXFile(images_url, cache_dir, **options)
        self.labels = IDXFile(labels_url, cache_dir, **options)
        if len(self.images) != len(self.labels):
            raise ValueError(f"{images_url} has {len(self.images)} items but {labels_url} has "
                             f"{len(self.labels)} labels")
        if self.labels.header.item_shape:
            raise ValueError(f"{labels_url}: labels must be one-dimensional, not of shape "
                             f"{self.labels.header.shape}")
        self._label_values: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        image = self.images.read(index)
        if self._label_values is None:
            self._label_values = self.labels.read_all()
        return image, int(self._label_values[index])

    def close(self) -> None:
        """Close the files this process opened."""
        self.images.close()
        self.labels.close()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_label_values": None}
