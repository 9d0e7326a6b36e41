"""Fixed-shape arrays as Arrow list columns: built from NumPy rows, decoded a column at a time.

A fixed-shape array field of shape ``(d0, d1, ...)`` is stored as nested Arrow fixed-size
lists, ``fixed_size_list<fixed_size_list<dtype>[d1]>[d0]``: the shape is visible in the
Arrow type, so pandas, Spark and pyarrow read the column as nested arrays without pfio's
schema. Decoding a column (any slice of it) is a reshape of its flat values buffer, without
a Python loop over rows. Variable-size Arrow lists (Spark's ``array<float>``) decode the
same way when every row of the column has the same length, flat ones reshaped to a field's
shape of more dimensions in row-major order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa


def tensor_type(dtype: np.dtype, shape: tuple[int, ...]) -> pa.DataType:
    """The Arrow type of arrays of ``dtype`` and ``shape``: nested fixed-size lists."""
    arrow_type = pa.from_numpy_dtype(dtype)
    for dim in reversed(shape):
        arrow_type = pa.list_(arrow_type, dim)
    return arrow_type


def to_arrow(values: list[Any], dtype: np.dtype, shape: tuple[int, ...]) -> pa.Array:
    """One Arrow column of :func:`tensor_type` from ``values``: arrays of ``shape`` (already
    checked) or None for a null row."""
    nulls = np.fromiter((v is None for v in values), bool, len(values))
    filler = np.zeros(shape, dtype)
    rows = [filler if v is None else v for v in values]
    stacked = np.stack(rows).astype(dtype, copy=False) if rows else np.zeros((0, *shape), dtype)
    array: pa.Array = pa.array(stacked.reshape(-1))
    for depth, dim in enumerate(reversed(shape)):
        outermost = depth == len(shape) - 1
        array = pa.FixedSizeListArray.from_arrays(
            array, dim, mask=pa.array(nulls) if outermost and nulls.any() else None)
    return array


def is_list_type(arrow_type: pa.DataType) -> bool:
    """Whether columns of ``arrow_type`` may decode to a dense array (lists of any kind)."""
    return bool(pa.types.is_fixed_size_list(arrow_type) or pa.types.is_list(arrow_type)
                or pa.types.is_large_list(arrow_type))


def dense(column: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    """``column`` of lists (nested at any depth, over numbers) as one ``(N, *shape)`` array,
    or None when it has no single shape: rows of different lengths, nulls (of rows or of
    elements), or elements that are not numbers. Slices are honoured (their offsets)."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 0:
            return None
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return _dense(column)


def _dense(array: pa.Array) -> np.ndarray | None:
    if array.null_count:
        return None
    arrow_type = array.type
    # the values of this slice only: a slice shares its parent's values buffer
    if pa.types.is_fixed_size_list(arrow_type):
        width = arrow_type.list_size
        values = array.values.slice(array.offset * width, len(array) * width)
    elif pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        offsets = array.offsets.to_numpy()  # len(array) + 1 offsets of this slice
        lengths = np.diff(offsets)
        if len(lengths) and (lengths != lengths[0]).any():
            return None
        width = int(lengths[0]) if len(lengths) else 0
        values = array.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    elif (pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)
          or pa.types.is_boolean(arrow_type)):
        flat: np.ndarray = array.to_numpy(zero_copy_only=False)
        return flat
    else:
        return None
    inner = _dense(values)
    if inner is None:
        return None
    return inner.reshape((len(array), width, *inner.shape[1:]))


def fit(array: np.ndarray, name: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """``array`` (a decoded column) checked against the field's shape and cast to its dtype.

    Flat rows holding as many values as the shape are taken in row-major order (a Spark
    ``array<float>`` of 6 for a field of shape ``(2, 3)``).
    """
    if array.ndim == 2 and len(shape) > 1 and array.shape[1] == int(np.prod(shape)):
        array = array.reshape((len(array), *shape))
    if array.shape[1:] != shape:
        raise ValueError(f"field {name!r}: stored arrays of shape {array.shape[1:]} do not "
                         f"match the schema's {shape}")
    return array.astype(dtype, copy=False)
