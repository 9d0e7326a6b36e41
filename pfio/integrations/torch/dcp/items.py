"""The items of a DCP data file, decoded from bytes already in memory without copying them.

DCP's file-system writer stores each tensor with ``torch.save``: a small zip archive whose
``data.pkl`` says the tensor's dtype, size, strides and storage offset and whose ``data/0``
record is the storage's bytes. ``torch.load`` of such an item from bytes copies the storage
into memory of its own, which DCP then copies again into the state dict's tensor.
:class:`Items` reads the archive's description instead (``torch.load`` to the ``meta``
device, which reads no storage and tells where the storage starts) and returns a tensor
over the item's own bytes: the state dict's tensor is then filled by a single copy. What
it does not recognise (another byte order, a tensor subclass, a quantized or sparse
tensor, a storage outside the item) it leaves to ``torch.load``.

:func:`copy_into` makes that copy with one ``memmove`` (no lock held: the reading threads
go on) where both tensors are contiguous CPU tensors of one dtype: ``Tensor.copy_`` splits
a large copy over torch's intra-op threads, which on a machine whose cores are busy waits
for the slowest of them (measured: 10 to 100 times longer than one thread's copy).
"""

from __future__ import annotations

import ctypes
import io
import sys
import zipfile
from dataclasses import dataclass
from typing import IO, cast

import torch

from ....fs.positional import SeekableReader


class ViewFile(SeekableReader):
    """A read-only file over the bytes of ``view`` (no copy of them)."""

    def __init__(self, view: memoryview) -> None:
        super().__init__()
        self._view = view
        self._size = len(view)

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.closed:
            raise ValueError("read of closed file")
        with memoryview(b) as target, target.cast("B") as out:
            n = max(0, min(len(out), len(self._view) - self._pos))
            out[:n] = self._view[self._pos:self._pos + n]
        self._pos += n
        return n


@dataclass(frozen=True)
class Layout:
    """Where an item's tensor lies in the item: its storage's first byte and byte count,
    and the tensor's dtype, size, strides and offset (in elements) in that storage."""

    start: int
    nbytes: int
    dtype: torch.dtype
    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int

    def view(self, data: memoryview) -> torch.Tensor:
        """The tensor over ``data``'s bytes."""
        if self.nbytes == 0:
            return torch.empty_strided(self.size, self.stride, dtype=self.dtype)
        flat = torch.frombuffer(data, dtype=torch.uint8, count=self.nbytes,
                                offset=self.start)
        return flat.view(self.dtype).as_strided(self.size, self.stride, self.offset)


class Items:
    """Decodes the tensor items of one load (see the module documentation).

    Items of one dtype, size and strides are alike up to their storage (``torch.save``
    writes the same archive around different data): the layout read from one item serves
    every later item of the same length whose bytes before the storage are the same, and
    ``torch.load`` is not asked again.
    """

    #: at most this many storage starts are tried against the layouts already read
    STARTS = 8

    def __init__(self) -> None:
        self._layouts: dict[tuple[int, bytes], Layout] = {}
        self._starts: list[int] = []

    def tensor(self, data: memoryview) -> torch.Tensor:
        """The tensor ``torch.save`` wrote into ``data``: a view over ``data`` where
        :func:`layout_of` finds one, else what ``torch.load`` makes of a copy."""
        for start in self._starts:
            known = self._layouts.get((len(data), bytes(data[:start])))
            if known is not None:
                return known.view(data)
        layout = layout_of(data)
        if layout is None:
            loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
            if not isinstance(loaded, torch.Tensor):
                raise ValueError(f"a data item holds a {type(loaded).__name__}, not a "
                                 "tensor")
            return loaded
        self._layouts[(len(data), bytes(data[:layout.start]))] = layout
        if layout.start not in self._starts and len(self._starts) < self.STARTS:
            self._starts.append(layout.start)
        return layout.view(data)


def layout_of(data: memoryview) -> Layout | None:
    """The layout of the tensor ``torch.save`` wrote into ``data``, or None when the item is
    not a plain strided tensor of this machine's byte order whose storage lies inside
    ``data``."""
    try:
        # (first: torch 2.13 crashes on a meta load of the other byte order)
        if _byte_order(data) != sys.byteorder:
            return None
        meta = torch.load(cast("IO[bytes]", ViewFile(data)), map_location="meta",
                          weights_only=True)
    except Exception:  # noqa: BLE001 - what torch.load of the bytes makes of it is the answer
        return None
    if type(meta) is not torch.Tensor or meta.layout != torch.strided or meta.is_quantized:
        return None
    storage = meta.untyped_storage()
    start = getattr(storage, "_checkpoint_offset", None)
    nbytes = storage.nbytes()
    if not isinstance(start, int) or start < 0 or start + nbytes > len(data) or \
            nbytes % meta.element_size():
        return None
    return Layout(start, nbytes, meta.dtype, tuple(meta.size()), tuple(meta.stride()),
                  int(meta.storage_offset()))


def _byte_order(data: memoryview) -> str:
    """The byte order the item's ``byteorder`` record names ("little" without one, as
    ``torch.load`` assumes)."""
    with zipfile.ZipFile(cast("IO[bytes]", ViewFile(data))) as archive:
        for name in archive.namelist():
            if name.endswith("/byteorder"):
                return archive.read(name).decode("ascii", "replace")
    return "little"


def copy_into(target: torch.Tensor, source: torch.Tensor) -> None:
    """Copy ``source`` into ``target`` (tensors of one size; see the module documentation)."""
    if target.size() != source.size():
        raise ValueError(f"a copy of size {tuple(source.size())} into "
                         f"{tuple(target.size())}")
    if target.device.type == "cpu" and source.device.type == "cpu" and \
            target.dtype == source.dtype and target.is_contiguous() and \
            source.is_contiguous() and type(target) is torch.Tensor and \
            type(source) is torch.Tensor and not target.is_conj() and not source.is_conj() \
            and not target.is_neg() and not source.is_neg():
        if target.numel():
            ctypes.memmove(target.data_ptr(), source.data_ptr(),
                           target.numel() * target.element_size())
        return
    target.copy_(source)
