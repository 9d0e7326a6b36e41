"""Tensor specs of Python values, and values made to fit a spec: what ``from_generator``
needs to turn pfio's records, samples and rows into tensors.

Values become tensors as follows: ``bytes`` and ``str`` (UTF-8) are ``tf.string`` scalars;
``bool``, ``int`` and ``float`` are ``tf.bool``, ``tf.int64`` and ``tf.float64`` scalars;
NumPy arrays and scalars (and anything ``np.asarray`` takes: PIL images, CPU torch tensors,
lists of numbers or strings) keep their dtype and shape; a dict is a dict of tensors and a
tuple a tuple of them (a decoded ``.npz`` field, a ``(samples, rate)`` audio field). An array
of arrays (a Parquet list column, decoded images) is stacked when the shapes agree. ``None``,
ragged lists and other objects have no tensor form and raise ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tensorflow as tf

#: the NumPy kinds that map to TensorFlow dtypes (bool, ints, unsigned, floats, complex)
_NUMERIC_KINDS = "biufc"


def to_array(value: Any, where: str) -> np.ndarray:
    """``value`` as an array of a numeric dtype, or of ``object`` holding ``bytes`` (for
    ``tf.string``); ``where`` names the value in errors.

    Raises:
        TypeError: a value with no tensor form.
    """
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _object_scalar(bytes(value))
    if isinstance(value, str):
        return _object_scalar(value.encode("utf-8"))
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"{where}: a {type(value).__name__} with no tensor form ({exc}); "
                        "decode it to numbers, arrays or bytes") from None
    kind = array.dtype.kind
    if kind in _NUMERIC_KINDS:
        return array
    if kind == "U":
        return np.char.encode(array, "utf-8").astype(object)
    if kind == "S":
        return array.astype(object)
    if kind == "O":
        return _objects(array, where)
    raise TypeError(f"{where}: values of dtype {array.dtype} have no tensor form")


def _object_scalar(data: bytes) -> np.ndarray:
    array = np.empty((), dtype=object)
    array[()] = data
    return array


def _objects(array: np.ndarray, where: str) -> np.ndarray:
    """An object array of strings, or of arrays of one shape (stacked)."""
    items = array.ravel().tolist()
    if all(isinstance(x, bytes) for x in items):
        return array
    if all(isinstance(x, str) for x in items):
        return np.array([x.encode("utf-8") for x in items], dtype=object).reshape(array.shape)
    if items and all(isinstance(x, (np.ndarray, list)) for x in items):
        parts = [to_array(x, where) for x in items]
        if len({(p.shape, p.dtype) for p in parts}) == 1:
            return np.stack(parts).reshape(array.shape + parts[0].shape)
        shapes = sorted({p.shape for p in parts})[:3]
        raise TypeError(f"{where}: arrays of different shapes ({shapes}, ...) do not make one "
                        "tensor")
    kinds = sorted({type(x).__name__ for x in items})
    raise TypeError(f"{where}: values of types {kinds} have no tensor form (None, mixed or "
                    "ragged values)")


def _dtype(array: np.ndarray) -> tf.DType:
    return tf.string if array.dtype == object else tf.as_dtype(array.dtype)


def infer_spec(value: Any, where: str) -> Any:
    """The spec (a ``tf.TensorSpec``, or a dict or tuple of them) of ``value``.

    Raises:
        TypeError: a value with no tensor form.
    """
    if isinstance(value, Mapping):
        return {str(k): infer_spec(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(infer_spec(v, f"{where}[{i}]") for i, v in enumerate(value))
    array = to_array(value, where)
    return tf.TensorSpec(array.shape, _dtype(array))


def infer_batch_spec(columns: Mapping[str, Any], where: str) -> dict[str, tf.TensorSpec]:
    """The spec of one row of a batch of ``columns`` (each with the rows first)."""
    spec = {}
    for name, column in columns.items():
        array = to_array(column, f"{where}: column {name!r}")
        spec[name] = tf.TensorSpec(array.shape[1:], _dtype(array))
    return spec


def batched(spec: Any) -> Any:
    """``spec`` with a leading dimension of unknown size (a batch of such values)."""
    return tf.nest.map_structure(lambda s: tf.TensorSpec([None, *s.shape], s.dtype), spec)


def conform(value: Any, spec: Any, where: str) -> Any:
    """``value`` as arrays laid out as ``spec`` says: the fields the spec names (others are
    dropped), each cast to the spec's dtype where NumPy casts within a kind
    (``"same_kind"``: int64 to int32, float64 to float32).

    Raises:
        ValueError: a field the spec names is missing, a dtype that does not cast, or a shape
            that does not fit.
        TypeError: a value with no tensor form, or a spec that is not made of
            ``tf.TensorSpec``, dicts and tuples.
    """
    if isinstance(spec, Mapping):
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: a {type(value).__name__} where the signature has a "
                             "dict")
        missing = [k for k in spec if k not in value]
        if missing:
            raise ValueError(f"{where}: no field {missing[0]!r} (it has {sorted(value)}); "
                             "give an output_signature without it for data where it is "
                             "optional")
        return {k: conform(value[k], s, f"{where}[{k!r}]") for k, s in spec.items()}
    if isinstance(spec, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            raise ValueError(f"{where}: {value!r:.60} where the signature has a tuple of "
                             f"{len(spec)}")
        return tuple(conform(v, s, f"{where}[{i}]")
                     for i, (v, s) in enumerate(zip(value, spec, strict=True)))
    if not isinstance(spec, tf.TensorSpec):
        raise TypeError(f"{where}: output signatures are made of tf.TensorSpec, dicts and "
                        f"tuples, not {type(spec).__name__}")
    array = _cast(to_array(value, where), spec.dtype, where)
    if not spec.shape.is_compatible_with(array.shape):
        raise ValueError(f"{where}: shape {array.shape} does not fit {spec.shape}; give an "
                         "output_signature with None for the dimensions that vary")
    return array


def _cast(array: np.ndarray, dtype: tf.DType, where: str) -> np.ndarray:
    if dtype == tf.string:
        if array.dtype != object:
            raise ValueError(f"{where}: {array.dtype} values where the signature has "
                             "tf.string")
        return array
    target = np.dtype(dtype.as_numpy_dtype)
    if array.dtype == target:
        return array
    if array.dtype == object or not np.can_cast(array.dtype, target, "same_kind"):
        shown = "strings" if array.dtype == object else f"{array.dtype} values"
        raise ValueError(f"{where}: {shown} do not cast to {dtype.name}")
    return array.astype(target)
