"""``tf.train.Example`` records without TensorFlow: :func:`parse_example` and
:func:`make_example`.

A *features spec* says which features to take and how, as ``tf.io.FixedLenFeature`` and
``tf.io.VarLenFeature`` do::

    {"image": "bytes",                # one value: bytes
     "label": "int64",                # one value: a 0-d np.int64 array
     "x": ("float", (4,)),            # exactly 4 values: a float32 array of shape (4,)
     "boxes": ("float", None),        # any number of values: a 1-d float32 array
     "weight": ("float", (), 1.0)}    # a default for examples without the feature

A kind is ``"int64"`` (np.int64 arrays), ``"float"`` (np.float32 arrays) or ``"bytes"``
(``bytes`` for one value, else a list of ``bytes``; its shape is ``()``, ``(n,)`` or None).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from .example_proto import Example

#: a feature's spec: a kind, ``(kind,)``, ``(kind, shape)`` or ``(kind, shape, default)``
FeatureSpec = str | tuple[Any, ...]

_KINDS = {"int64": "int64", "int": "int64", "float": "float", "float32": "float",
          "bytes": "bytes", "string": "bytes"}
_FIELD = {"int64": "int64_list", "float": "float_list", "bytes": "bytes_list"}
_KIND_OF_FIELD = {field: kind for kind, field in _FIELD.items()}
_DTYPE = {"int64": np.int64, "float": np.float32}
#: the default of a feature spec without one (the feature must be in every example)
NO_DEFAULT: Any = object()


def parse_example(record: bytes, features: Mapping[str, FeatureSpec] | None = None,
                  ) -> dict[str, Any]:
    """The features of a serialized ``tf.train.Example``.

    Args:
        record: the serialized example (a TFRecord's bytes).
        features: a features spec (see the module documentation); None takes every
            feature as it is stored: ``int64`` as a 1-d np.int64 array, ``float`` as a
            1-d np.float32 array, ``bytes`` as a list of ``bytes``, a feature with no
            values of any kind as ``[]``.

    Raises:
        ValueError: ``record`` is not an Example; a feature of the spec is missing (and has
            no default), is of another kind, or has a number of values other than its
            shape holds; a malformed spec. The message names the feature.
    """
    try:
        example = Example.FromString(record)
    except DecodeError as exc:
        raise ValueError(f"not a serialized tf.train.Example ({exc})") from None
    found = example.features.feature
    if features is None:
        return {name: _as_stored(found[name]) for name in found}
    out: dict[str, Any] = {}
    for name, spec in features.items():
        kind, shape, default = parse_feature_spec(name, spec)
        if name in found:
            stored, values = _values(found[name])
            if stored is not None and stored != kind:
                raise ValueError(f"feature {name!r} holds {stored} values, the spec asks "
                                 f"for {kind}")
        elif default is NO_DEFAULT:
            raise ValueError(f"feature {name!r} is not in the example (features: "
                             f"{sorted(found)[:10]}) and its spec has no default")
        else:
            values = default if isinstance(default, (list, tuple, np.ndarray)) else [default]
        out[name] = _shaped(name, kind, shape, values)
    return out


def check_features(features: Mapping[str, FeatureSpec]) -> None:
    """Check a features spec before any record is read.

    Raises:
        ValueError: a malformed spec (the message names the feature).
    """
    for name, spec in features.items():
        parse_feature_spec(name, spec)


def parse_feature_spec(name: str, spec: Any) -> tuple[str, tuple[int, ...] | None, Any]:
    """``(kind, shape, default)`` of feature ``name``'s spec: kind ``"int64"``, ``"float"``
    or ``"bytes"`` (aliases resolved), shape a tuple (None: any number of values), default
    :data:`NO_DEFAULT` when the spec gives none.

    Raises:
        ValueError: a malformed spec (the message names the feature).
    """
    fields = (spec,) if isinstance(spec, str) else tuple(spec) if isinstance(
        spec, (tuple, list)) else ()
    if not 1 <= len(fields) <= 3 or not isinstance(fields[0], str) or fields[0] not in _KINDS:
        raise ValueError(f"feature {name!r}: spec {spec!r} is not a kind "
                         f"({', '.join(map(repr, _KINDS))}), (kind, shape) or "
                         "(kind, shape, default)")
    kind = _KINDS[fields[0]]
    shape = fields[1] if len(fields) > 1 else ()
    if shape is not None:
        if not isinstance(shape, (tuple, list)) or \
                not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"feature {name!r}: shape {shape!r} is not a tuple of sizes")
        shape = tuple(shape)
        if kind == "bytes" and len(shape) > 1:
            raise ValueError(f"feature {name!r}: bytes features have the shape (), (n,) or "
                             f"None, not {shape}")
    return kind, shape, fields[2] if len(fields) > 2 else NO_DEFAULT




def _values(feature: Any) -> tuple[str | None, Any]:
    """``(kind, values)`` of a stored feature (kind None when none is set)."""
    field = feature.WhichOneof("kind")
    if field is None:
        return None, ()
    return _KIND_OF_FIELD[field], getattr(feature, field).value


def _as_stored(feature: Any) -> Any:
    kind, values = _values(feature)
    if kind is None or kind == "bytes":
        return list(values)
    return np.array(values, dtype=_DTYPE[kind])


def _shaped(name: str, kind: str, shape: tuple[int, ...] | None, values: Any) -> Any:
    if shape is not None:
        size = math.prod(shape)
        if len(values) != size:
            raise ValueError(f"feature {name!r} has {len(values)} values, its shape "
                             f"{shape} holds {size}")
    if kind == "bytes":
        return _scalar(kind, values[0]) if shape == () else [_scalar(kind, v) for v in values]
    array = np.array(values, dtype=_DTYPE[kind])
    return array.reshape(shape) if shape is not None else array


def make_example(features: Mapping[str, Any]) -> bytes:
    """A serialized ``tf.train.Example`` of ``features`` (names to values), which
    ``tf.io.parse_single_example`` and :func:`parse_example` read.

    Values: ``bytes`` and ``str`` (UTF-8) become a BytesList; ``int``, ``bool`` and NumPy
    integers an Int64List; ``float`` and NumPy floats a FloatList (float32); a list or
    tuple of one of those kinds (ints mixed with floats make a FloatList) or a NumPy array
    (flattened) the list of its values; an empty list a feature with no values. Map keys
    are written in sorted order, so the same features give the same bytes.

    Raises:
        TypeError: a value of another type, or a list mixing kinds (the message names the
            feature).
    """
    example = Example()
    stored = example.features.feature
    for name, value in features.items():
        if not isinstance(name, str):
            raise TypeError(f"feature names must be str, got {name!r}")
        kind, values = _encode(name, value)
        feature = stored[name]
        if kind is not None:
            getattr(feature, _FIELD[kind]).value.extend(values)
    data: bytes = example.SerializeToString(deterministic=True)
    return data


def _encode(name: str, value: Any) -> tuple[str | None, list[Any]]:
    """``(kind, values)`` for a feature's value (kind None: an empty list)."""
    if isinstance(value, np.ndarray):
        return _encode_array(name, value)
    if isinstance(value, (list, tuple)):
        if not value:
            return None, []
        kinds = {_scalar_kind(name, v) for v in value}
        if len(kinds) == 1:
            kind = kinds.pop()
        elif kinds == {"int64", "float"}:
            kind = "float"
        else:
            raise TypeError(f"feature {name!r} mixes {' and '.join(sorted(kinds))} values")
        return kind, [_scalar(kind, v) for v in value]
    kind = _scalar_kind(name, value)
    return kind, [_scalar(kind, value)]


def _scalar_kind(name: str, value: Any) -> str:
    if isinstance(value, (bytes, bytearray, memoryview, str, np.bytes_, np.str_)):
        return "bytes"
    if isinstance(value, (numbers.Integral, np.bool_)):
        return "int64"
    if isinstance(value, numbers.Real):
        return "float"
    raise TypeError(f"feature {name!r}: cannot encode a {type(value).__name__}; give bytes, "
                    "str, int, float, a list of one of them, or a NumPy array")


def _scalar(kind: str, value: Any) -> Any:
    if kind == "bytes":
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, numbers.Number):  # bytes(3) would be three zero bytes
            raise TypeError(f"{value!r} is not bytes or str")
        return bytes(value)
    return int(value) if kind == "int64" else float(value)


def _encode_array(name: str, array: np.ndarray) -> tuple[str | None, list[Any]]:
    flat = array.ravel()
    if array.dtype.kind in "iub":
        return "int64", flat.astype(np.int64).tolist()
    if array.dtype.kind == "f":
        return "float", flat.astype(np.float32).tolist()
    if array.dtype.kind in "SUO":
        return _encode(name, flat.tolist())
    raise TypeError(f"feature {name!r}: cannot encode an array of {array.dtype}")
