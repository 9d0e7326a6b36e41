"""Decoding the stored columns of a pfio Parquet dataset in Ray's blocks.

A block (an Arrow table) keeps its scalar columns as they are; each array or image field of
the pfio :class:`~pfio.integrations.parquet.Schema` becomes a column of Ray's tensor type,
so that ``iter_batches(batch_format="numpy")`` and ``iter_torch_batches`` give one
``(N, *shape)`` array per batch. Fixed-shape arrays (stored as Arrow fixed-size lists) are
decoded a column at a time, by a reshape of the column's values; ``.npy`` bytes and images
are decoded per row and stacked (rows of different shapes: Ray's variable-shaped tensors).
A column with nulls in it becomes a column of Python objects (arrays and None).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ..parquet import Schema
from ..parquet.arrays import dense, fit, is_list_type
from ..parquet.schema import Field


def decode_block(table: pa.Table, schema: Schema) -> pa.Table:
    """``table`` with every array and image field of ``schema`` decoded (see the module
    doc); columns the schema does not know, and scalars, are kept."""
    from ray.data.extensions import ArrowPythonObjectArray, ArrowTensorArray

    for index, name in enumerate(table.column_names):
        field = schema.fields.get(name)
        if field is None or field.codec == "scalar":
            continue
        column = table.column(name)
        values = _decoded(field, column)
        if isinstance(values, list):  # nulls among the rows
            array: pa.Array = ArrowPythonObjectArray.from_objects(values)
        else:
            array = ArrowTensorArray.from_numpy(values, column_name=name)
        table = table.set_column(index, name, array)
    return table


def _decoded(field: Field, column: pa.ChunkedArray) -> np.ndarray | list[Any]:
    """The rows of ``column`` decoded: one ``(N, *shape)`` array, an object array of arrays
    of different shapes, or (nulls among them) a list of arrays and None."""
    if field.codec == "ndarray" and is_list_type(column.type):
        values = dense(column)
        known = field.known_shape
        if values is not None:
            return values if known is None else fit(values, field.name, field.dtype, known)
    rows = [field.decode(v) for v in column.to_pylist()]
    if any(row is None for row in rows):
        return rows
    shapes = {row.shape for row in rows}
    if len(shapes) == 1:
        return np.stack(rows)
    if not rows:
        shape = field.known_shape
        return np.zeros((0, *shape) if shape is not None else (0,), field.dtype)
    ragged = np.empty(len(rows), dtype=object)
    ragged[:] = rows
    return ragged
