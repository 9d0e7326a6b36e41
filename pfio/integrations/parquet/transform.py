"""TransformSpec: a function applied to each row or batch a reader yields, and the schema
edits it makes (in the style of Petastorm's ``TransformSpec``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .schema import Field, Schema


@dataclass(frozen=True)
class TransformSpec:
    """What a reader does to its output after decoding.

    Args:
        func: :class:`~pfio.integrations.parquet.RowReader` calls ``func(row) -> row`` on each
            row dict; :class:`~pfio.integrations.parquet.BatchReader` calls
            ``func(pandas.DataFrame) -> pandas.DataFrame`` on each batch (one row per row,
            array cells as NumPy arrays). None: no function.
        edit_fields: the fields ``func`` adds or changes, as :class:`Field`, Petastorm's
            ``(name, dtype, shape, nullable)`` tuples, or objects with a ``to_field()``
            method returning a :class:`Field` (such as
            :class:`pfio.integrations.petastorm.UnischemaField`); the reader's
            :attr:`output_schema` shows them.
        removed_fields: fields dropped from the output (after ``func``).
        selected_fields: if given, the output holds only these fields, in this order.
    """

    func: Callable[[Any], Any] | None = None
    edit_fields: Sequence[Field | tuple[Any, ...]] = ()
    removed_fields: Sequence[str] = ()
    selected_fields: Sequence[str] | None = None
    _edits: tuple[Field, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_edits", tuple(_as_field(f) for f in self.edit_fields or ()))
        if isinstance(self.removed_fields, str) or isinstance(self.selected_fields, str):
            raise TypeError("removed_fields and selected_fields are lists of names")

    def apply_schema(self, schema: Schema) -> Schema:
        """``schema`` as the transformed output has it."""
        fields = dict(schema.fields)
        fields.update((f.name, f) for f in self._edits)
        for name in self.removed_fields:
            fields.pop(name, None)
        if self.selected_fields is not None:
            missing = [n for n in self.selected_fields if n not in fields]
            if missing:
                raise ValueError(f"selected_fields {missing} are not fields of the "
                                 f"output: {sorted(fields)}")
            fields = {n: fields[n] for n in self.selected_fields}
        return Schema(list(fields.values()))

    def apply_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """The transformed row."""
        if self.func is not None:
            row = self.func(row)
            if not isinstance(row, dict):
                raise TypeError(f"TransformSpec.func must return a dict for a row, "
                                f"not {type(row).__name__}")
        return self._select(row)

    def apply_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        """The transformed batch (a dict of columns, as BatchReader yields)."""
        if self.func is not None:
            import pandas as pd

            frame = pd.DataFrame({name: _cells(values) for name, values in batch.items()})
            frame = self.func(frame)
            if not isinstance(frame, pd.DataFrame):
                raise TypeError(f"TransformSpec.func must return a pandas.DataFrame for a "
                                f"batch, not {type(frame).__name__}")
            batch = {str(name): _column(frame[name].to_numpy()) for name in frame.columns}
        return self._select(batch)

    def _select(self, values: dict[str, Any]) -> dict[str, Any]:
        for name in self.removed_fields:
            values.pop(name, None)
        if self.selected_fields is None:
            return values
        missing = [n for n in self.selected_fields if n not in values]
        if missing:
            raise KeyError(f"selected_fields {missing} are not in the output {sorted(values)}")
        return {name: values[name] for name in self.selected_fields}


def _as_field(spec: Field | tuple[Any, ...]) -> Field:
    if isinstance(spec, Field):
        return spec
    to_field = getattr(spec, "to_field", None)
    if callable(to_field):
        field: Field = to_field()
        return field
    name, dtype, shape, *rest = spec
    shape = tuple(shape or ())
    return Field(name, dtype, shape, "ndarray" if shape else "scalar",
                 bool(rest[0]) if rest else False)


def _cells(values: Any) -> Any:
    """A batch column as one DataFrame cell per row (arrays of several dimensions split)."""
    if isinstance(values, np.ndarray) and values.ndim > 1:
        return list(values)
    return values


def _column(values: np.ndarray) -> Any:
    """A DataFrame column as a batch column: array cells stacked when their shapes agree."""
    if values.dtype != object or not len(values):
        return values
    shapes = {getattr(v, "shape", None) for v in values}
    if len(shapes) == 1 and None not in shapes:
        return np.stack(list(values))
    return list(values)
