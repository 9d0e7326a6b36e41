"""Decoding a sample's fields by extension (framework-free; PyTorch only for ``"torch"``).

The field ``"seg.png"`` is decoded as its last extension says (``png``). Decoders:

=====================================  ===============================================
extension                              value
=====================================  ===============================================
``cls`` ``cls2`` ``index`` ``id``      ``int``
``txt`` ``text``                       ``str`` (UTF-8)
``json`` ``jsn``                       the JSON object
``npy``                                a NumPy array; ``npz``: a dict of arrays
images (``jpg jpeg png ppm pgm pbm     a PIL RGB image (``"pil"``), an HWC uint8 array
bmp webp tif tiff``)                   (``"numpy"``) or a CHW uint8 tensor (``"torch"``);
                                       left as bytes by ``"basic"``
``wav`` ``flac``                       ``(samples array, sample rate)`` via soundfile
``pth``                                ``torch.load(..., weights_only=True)``
``pyd`` ``pickle`` ``pkl``             refused unless ``allow_pickle=True``: unpickling
                                       bytes from a shard runs any code they hold
=====================================  ===============================================

Other extensions stay bytes; so do the ``__key__``/``__url__`` fields.
"""

from __future__ import annotations

import io
import json
import pickle
from collections.abc import Callable, Mapping
from typing import Any

from ..image_items import decode_image

#: extensions decoded as images
IMAGE_EXTENSIONS = frozenset("jpg jpeg png ppm pgm pbm bmp webp tif tiff".split())
#: extensions decoded by unpickling (only with ``allow_pickle=True``)
PICKLE_EXTENSIONS = frozenset(("pyd", "pickle", "pkl"))
IMAGE_MODES = ("pil", "numpy", "torch")

FieldDecoder = Callable[[str, bytes], Any]


def _int(data: bytes) -> int:
    return int(data)


def _text(data: bytes) -> str:
    return data.decode("utf-8")


def _json(data: bytes) -> Any:
    return json.loads(data)


def _npy(data: bytes) -> Any:
    import numpy as np

    return np.load(io.BytesIO(data), allow_pickle=False)


def _npz(data: bytes) -> dict[str, Any]:
    import numpy as np

    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return dict(archive)


def _audio(data: bytes) -> tuple[Any, int]:
    try:
        import soundfile
    except ImportError:
        raise ModuleNotFoundError("decoding .wav/.flac fields needs soundfile: "
                                  "pip install 'pfio[audio]'") from None
    samples_and_rate: tuple[Any, int] = soundfile.read(io.BytesIO(data))
    return samples_and_rate


def _pth(data: bytes) -> Any:
    import torch

    return torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")


_BASIC: dict[str, Callable[[bytes], Any]] = {
    **dict.fromkeys(("cls", "cls2", "index", "id"), _int),
    **dict.fromkeys(("txt", "text"), _text),
    **dict.fromkeys(("json", "jsn"), _json),
    "npy": _npy, "npz": _npz, "wav": _audio, "flac": _audio, "pth": _pth,
}


class _Image:
    """Image bytes to a PIL RGB image, an HWC uint8 array or a CHW uint8 tensor."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self, data: bytes) -> Any:
        image = decode_image(data, "pil")
        if self.mode == "pil":
            return image
        import numpy as np

        array = np.asarray(image)
        if self.mode == "numpy":
            return array
        import torch

        return torch.from_numpy(array.transpose(2, 0, 1).copy())


class Decoder:
    """Decodes a sample's fields by extension (see the module docstring).

    Args:
        images: ``"pil"``, ``"numpy"``, ``"torch"``, or None to leave images as bytes (the
            other known extensions are decoded either way).
        handlers: extension -> ``f(bytes)``, used before the built-in decoders (an entry
            for ``"jpg"`` replaces the image decoder for ``.jpg`` fields).
        allow_pickle: decode ``pyd``/``pickle``/``pkl`` fields with :mod:`pickle`. Only for
            shards you trust: unpickling runs code the bytes name.
    """

    def __init__(self, images: str | None = "pil",
                 handlers: Mapping[str, Callable[[bytes], Any]] | None = None,
                 allow_pickle: bool = False) -> None:
        if images is not None and images not in IMAGE_MODES:
            raise ValueError(f"unknown image decoding {images!r}: use one of {IMAGE_MODES} "
                             "or None")
        self.images = images
        self.allow_pickle = allow_pickle
        table: dict[str, Callable[[bytes], Any]] = dict(_BASIC)
        if images is not None:
            table.update(dict.fromkeys(IMAGE_EXTENSIONS, _Image(images)))
        if allow_pickle:
            table.update(dict.fromkeys(PICKLE_EXTENSIONS, pickle.loads))
        table.update(handlers or {})
        self._table = table

    def field(self, ext: str, data: bytes) -> Any:
        """The value of the field ``ext`` (``"jpg"``, ``"seg.png"``) holding ``data``."""
        last = ext.rpartition(".")[2]
        decode = self._table.get(last)
        if decode is not None:
            return decode(data)
        if last in PICKLE_EXTENSIONS:
            raise ValueError(f"refusing to unpickle the {ext!r} field: unpickling bytes runs "
                             "any code they hold; pass allow_pickle=True (a "
                             "Decoder(..., allow_pickle=True)) for shards you trust")
        return data

    def __call__(self, sample: dict[str, Any]) -> dict[str, Any]:
        """The sample with every field decoded."""
        return decode_sample(sample, self.field)


def decode_sample(sample: dict[str, Any], field: FieldDecoder) -> dict[str, Any]:
    """``sample`` with ``field(ext, bytes)`` applied to each field but ``__key__``-like ones.

    Raises:
        ValueError: a field that does not decode, naming the shard, key and field.
    """
    out: dict[str, Any] = {}
    for ext, value in sample.items():
        if ext.startswith("__"):
            out[ext] = value
            continue
        try:
            out[ext] = field(ext, value)
        except (ValueError, TypeError, UnicodeDecodeError, OSError, pickle.UnpicklingError,
                EOFError, ModuleNotFoundError) as exc:
            kind = ModuleNotFoundError if isinstance(exc, ModuleNotFoundError) else ValueError
            raise kind(f"{sample.get('__url__')}: cannot decode field {ext!r} of sample "
                       f"{sample.get('__key__')!r}: {exc}") from exc
    return out


class _ByTable:
    """Fields whose extension is in ``table`` decoded by its function; others stay bytes."""

    def __init__(self, table: Mapping[str, Callable[[bytes], Any]]) -> None:
        self.table = {ext.lower().lstrip("."): f for ext, f in table.items()}

    def field(self, ext: str, data: bytes) -> Any:
        f = self.table.get(ext) or self.table.get(ext.rpartition(".")[2])
        return f(data) if f is not None else data

    def __call__(self, sample: dict[str, Any]) -> dict[str, Any]:
        return decode_sample(sample, self.field)


class _ByField:
    """``f(ext, bytes)`` applied to every field."""

    def __init__(self, f: FieldDecoder) -> None:
        self.f = f

    def __call__(self, sample: dict[str, Any]) -> dict[str, Any]:
        return decode_sample(sample, self.f)


def make_decoder(decode: Any) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """The sample decoder that a ``decode=`` argument names (picklable when the functions
    given are):

    * None: fields stay bytes (no decoder);
    * ``"pil"``, ``"numpy"``, ``"torch"``: images to that, other known extensions decoded;
      ``"basic"``: the known non-image extensions decoded, images left as bytes;
    * a :class:`Decoder`;
    * a callable ``f(ext, bytes) -> value``, applied to every field;
    * a dict ``{ext: f(bytes)}``: those extensions decoded by their function, the others
      left as bytes.

    Raises:
        ValueError: none of these.
    """
    if decode is None:
        return None
    if isinstance(decode, str):
        return Decoder(None if decode == "basic" else decode)
    if isinstance(decode, Decoder):
        return decode
    if isinstance(decode, Mapping):
        return _ByTable(decode)
    if callable(decode):
        return _ByField(decode)
    raise ValueError(f"decode must be None, 'pil', 'numpy', 'torch', 'basic', a Decoder, a "
                     f"callable or a dict, not {decode!r}")
