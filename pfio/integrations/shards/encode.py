"""Encoding a sample's values into member bytes by extension: the inverse of
:mod:`pfio.integrations.shards.decode`.

``bytes`` (and ``bytearray``/``memoryview``) are written as they are and ``str`` as UTF-8,
whatever the extension; other values are encoded as the field's last extension says:
``int`` for ``cls``/``cls2``/``index``/``id``; any JSON value for ``json``/``jsn``; an
array for ``npy``; a dict of arrays for ``npz``; a PIL image or an HWC (or HW) uint8 array
for image extensions; ``(samples, rate)`` for ``wav``/``flac`` (soundfile); any object for
``pyd``/``pickle``/``pkl`` and (with PyTorch) ``pth``. Encoding is deterministic: the same
values give the same bytes.
"""

from __future__ import annotations

import io
import json
import pickle
from collections.abc import Callable
from typing import Any

_IMAGE_FORMATS = {"jpg": "JPEG", "jpeg": "JPEG", "png": "PNG", "ppm": "PPM", "pgm": "PPM",
                  "pbm": "PPM", "bmp": "BMP", "webp": "WEBP", "tif": "TIFF", "tiff": "TIFF"}
_IMAGE_MODES = {"pgm": "L", "pbm": "1"}


def _int(value: Any) -> bytes:
    return str(int(value)).encode("ascii")


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True).encode("utf-8")


def _npy(value: Any) -> bytes:
    import numpy as np

    out = io.BytesIO()
    np.save(out, np.asarray(value), allow_pickle=False)
    return out.getvalue()


def _npz(value: Any) -> bytes:
    import numpy as np

    if not isinstance(value, dict):
        raise TypeError("an npz field takes a dict of arrays")
    out = io.BytesIO()
    arrays: dict[str, Any] = {str(k): np.asarray(v) for k, v in value.items()}
    np.savez(out, **arrays)
    return out.getvalue()


def _pickle(value: Any) -> bytes:
    return pickle.dumps(value, protocol=4)


def _pth(value: Any) -> bytes:
    import torch

    out = io.BytesIO()
    torch.save(value, out)
    return out.getvalue()


def _audio(ext: str) -> Callable[[Any], bytes]:
    def encode(value: Any) -> bytes:
        try:
            import soundfile
        except ImportError:
            raise ModuleNotFoundError("encoding .wav/.flac fields needs soundfile: "
                                      "pip install 'pfio[audio]'") from None
        samples, rate = value
        out = io.BytesIO()
        soundfile.write(out, samples, rate, format=ext.upper())
        return out.getvalue()
    return encode


def _image(ext: str) -> Callable[[Any], bytes]:
    def encode(value: Any) -> bytes:
        from PIL import Image

        image = value if isinstance(value, Image.Image) else Image.fromarray(value)
        mode = _IMAGE_MODES.get(ext)
        if mode is not None and image.mode != mode:
            image = image.convert(mode)
        out = io.BytesIO()
        options = {"quality": 95} if _IMAGE_FORMATS[ext] in ("JPEG", "WEBP") else {}
        image.save(out, _IMAGE_FORMATS[ext], **options)
        return out.getvalue()
    return encode


ENCODERS: dict[str, Callable[[Any], bytes]] = {
    **dict.fromkeys(("cls", "cls2", "index", "id"), _int),
    **dict.fromkeys(("json", "jsn"), _json),
    **dict.fromkeys(("pyd", "pickle", "pkl"), _pickle),
    **{ext: _image(ext) for ext in _IMAGE_FORMATS},
    "npy": _npy, "npz": _npz, "pth": _pth, "wav": _audio("wav"), "flac": _audio("flac"),
}


def encode_field(ext: str, value: Any) -> bytes:
    """The member bytes of field ``ext`` holding ``value``.

    Raises:
        ValueError: no encoder for this extension and value (say which).
    """
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    last = ext.rpartition(".")[2].lower()
    encode = ENCODERS.get(last)
    if encode is None:
        raise ValueError(f"no encoder for field {ext!r} of type {type(value).__name__}: give "
                         "bytes or str, or use a known extension")
    try:
        return encode(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot encode field {ext!r} ({type(value).__name__}): {exc}") \
            from exc
