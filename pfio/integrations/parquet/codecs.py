"""The registry of the codecs that turn field values into stored Parquet cells and back.

A codec is an object with ``encode(field, value)`` (the stored form: ``bytes`` or an Arrow
scalar) and ``decode(field, stored)`` (the value again). Optional members:

* ``arrow_type(field) -> pyarrow.DataType``: the column type (default: binary);
* ``check(field)``: raise ValueError when a field cannot use this codec;
* ``takes_arrays``: when true, ``encode`` gets ``numpy.asarray(value, field.dtype)``,
  checked against ``field.shape`` first; when false (the default), the value as the row
  holds it, as Petastorm calls ``codec.encode(unischema_field, value)``.

A codec class written for Petastorm (``encode(unischema_field, value)``,
``decode(unischema_field, value)``) works unchanged: ``field`` is a
:class:`~pfio.integrations.parquet.Field`, which also has Petastorm's ``numpy_dtype``
besides ``name``, ``shape`` and ``nullable``.

:func:`register_codec` makes a codec name usable in :class:`~pfio.integrations.parquet.Field`
and in the schema of stored datasets, which then decode with it. The built-in ``scalar``,
``ndarray``, ``npz`` (arrays as compressed ``.npz`` bytes, Petastorm's
``CompressedNdarrayCodec``), ``png`` and ``jpeg`` are registered here the same way.
"""

from __future__ import annotations

import io
import threading
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from . import arrays


class Codec(Protocol):
    """What :func:`register_codec` takes (``field`` is a
    :class:`~pfio.integrations.parquet.Field`)."""

    def encode(self, field: Any, value: Any) -> Any:
        """The stored form of ``value`` (never None: nulls do not reach the codec)."""

    def decode(self, field: Any, stored: Any) -> Any:
        """The value of the stored cell ``stored`` (never None)."""


_lock = threading.Lock()
_codecs: dict[str, Codec] = {}


def register_codec(name: str, codec: Codec, replace: bool = False) -> None:
    """Make ``name`` a codec of fields. Registering a taken name is a ValueError unless
    ``replace`` (the built-in codecs cannot be replaced).

    ``codec.encode(field, value)`` gets each value as the row holds it (a ``str``, a list,
    an array...), unless ``codec.takes_arrays`` is true: then it gets the value as a NumPy
    array of the field's dtype whose shape was checked against the field's."""
    if not (callable(getattr(codec, "encode", None)) and callable(getattr(codec, "decode",
                                                                          None))):
        raise TypeError(f"codec {codec!r} needs encode(field, value) and decode(field, stored)")
    with _lock:
        if name in BUILTIN and name in _codecs:
            raise ValueError(f"codec {name!r} is built in and cannot be replaced")
        if name in _codecs and not replace:
            raise ValueError(f"codec {name!r} is registered already; pass replace=True")
        _codecs[name] = codec


def unregister_codec(name: str) -> None:
    """Forget the codec ``name`` (a KeyError if none is registered; built-ins stay)."""
    with _lock:
        if name in BUILTIN:
            raise ValueError(f"codec {name!r} is built in and cannot be unregistered")
        del _codecs[name]


def get_codec(name: str) -> Codec:
    """The codec registered as ``name``; ValueError listing the known ones if none is."""
    codec = _codecs.get(name)
    if codec is None:
        raise ValueError(f"unknown codec {name!r}; known codecs: {known_codecs()} "
                         "(add one with pfio.integrations.parquet.register_codec)")
    return codec


def known_codecs() -> list[str]:
    """The registered codec names, sorted."""
    return sorted(_codecs)


class ScalarCodec:
    """Plain Arrow values (numbers, bools, strings), stored natively."""

    takes_arrays = False

    def check(self, field: Any) -> None:
        if field.shape:
            raise ValueError(f"field {field.name!r}: a scalar has shape (), not {field.shape}")

    def arrow_type(self, field: Any) -> pa.DataType:
        return pa.string() if field.dtype.kind in "UO" else pa.from_numpy_dtype(field.dtype)

    def encode(self, field: Any, value: Any) -> Any:
        return value.item() if isinstance(value, np.generic) else value

    def decode(self, field: Any, stored: Any) -> Any:
        return stored


class NdarrayCodec:
    """Arrays: Arrow fixed-size lists when ``field.fixed_shape``, else ``.npy`` bytes."""

    takes_arrays = True

    def arrow_type(self, field: Any) -> pa.DataType:
        return arrays.tensor_type(field.dtype, field.shape) if field.fixed_shape else pa.binary()

    def encode(self, field: Any, value: np.ndarray) -> Any:
        if field.fixed_shape:
            return value
        buffer = io.BytesIO()
        np.save(buffer, value, allow_pickle=False)
        return buffer.getvalue()

    def decode(self, field: Any, stored: Any) -> np.ndarray:
        if not isinstance(stored, bytes):
            return np.asarray(stored, dtype=field.dtype)  # a row of an Arrow list column
        array: np.ndarray = np.load(io.BytesIO(stored), allow_pickle=False)
        return array


class CompressedNdarrayCodec:
    """Arrays of any shape as ``numpy.savez_compressed`` bytes holding one array, ``arr``
    (Petastorm's ``CompressedNdarrayCodec`` layout): smaller, slower to decode."""

    takes_arrays = True

    def encode(self, field: Any, value: np.ndarray) -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, arr=value)
        return buffer.getvalue()

    def decode(self, field: Any, stored: bytes) -> np.ndarray:
        with np.load(io.BytesIO(stored), allow_pickle=False) as archive:
            if "arr" not in archive.files:
                raise ValueError(f"field {field.name!r}: the stored .npz holds "
                                 f"{archive.files}, not 'arr'")
            array: np.ndarray = archive["arr"]
            return array


class ImageCodec:
    """uint8 images (HxW or HxWxC with C in 1, 3, 4, RGB order) encoded by OpenCV."""

    takes_arrays = True

    def __init__(self, extension: str) -> None:
        self.extension = extension

    def check(self, field: Any) -> None:
        if field.dtype != np.uint8:
            raise ValueError(f"field {field.name!r}: {field.codec} images must be uint8")

    def encode(self, field: Any, value: np.ndarray) -> bytes:
        import cv2

        if value.ndim == 3 and value.shape[2] in (3, 4):
            value = cv2.cvtColor(value, cv2.COLOR_RGB2BGR if value.shape[2] == 3
                                 else cv2.COLOR_RGBA2BGRA)
        ok, encoded = cv2.imencode(self.extension, value)
        if not ok:
            raise ValueError(f"field {field.name!r}: OpenCV could not encode the image as "
                             f"{field.codec}")
        return encoded.tobytes()

    def decode(self, field: Any, stored: bytes) -> np.ndarray:
        import cv2

        image = cv2.imdecode(np.frombuffer(stored, np.uint8), cv2.IMREAD_UNCHANGED)
        if image is None:
            raise ValueError(f"field {field.name!r}: cannot decode the stored {field.codec}")
        if image.ndim == 3:
            image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB if image.shape[2] == 3
                                 else cv2.COLOR_BGRA2RGBA)
        return image


#: the codecs every process has
BUILTIN = ("scalar", "ndarray", "npz", "png", "jpeg")
register_codec("scalar", ScalarCodec())
register_codec("ndarray", NdarrayCodec())
register_codec("npz", CompressedNdarrayCodec())
register_codec("png", ImageCodec(".png"))
register_codec("jpeg", ImageCodec(".jpg"))
