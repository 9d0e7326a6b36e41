"""``Unischema`` and ``UnischemaField``: Petastorm's schema classes, on pfio's schema.

A :class:`Unischema` is an ordered set of :class:`UnischemaField` (name, NumPy dtype, shape,
codec, nullable). Readers turn it into pfio's :class:`~pfio.integrations.parquet.Schema`
(:meth:`Unischema.to_pfio`) to decode, and make the rows they yield with
:meth:`Unischema.make_namedtuple`. Fields are also attributes: ``schema.image`` is the
field named ``image``.
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from ..parquet import Field, Schema
from .codecs import (
    CompressedImageCodec,
    CompressedNdarrayCodec,
    DataframeColumnCodec,
    NdarrayCodec,
    ScalarCodec,
)


class UnischemaField(NamedTuple):
    """One field: ``name``, ``numpy_dtype`` (a NumPy scalar type such as ``np.int32`` or
    ``np.str_``, or ``decimal.Decimal``), ``shape`` (``()`` for scalars, ``None`` for a
    variable dimension), ``codec`` (one of :mod:`~pfio.integrations.petastorm.codecs`, or
    None for a plain Parquet column) and ``nullable``."""

    name: str
    numpy_dtype: Any
    shape: tuple[int | None, ...]
    codec: DataframeColumnCodec | None = None
    nullable: bool = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, tuple) and _comparable(self) == _comparable(other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.name, str(np.dtype(self.numpy_dtype)), tuple(self.shape)))

    def to_field(self) -> Field:
        """This field as pfio's :class:`~pfio.integrations.parquet.Field`."""
        codec = self.codec.pfio_codec if self.codec is not None else (
            "scalar" if not self.shape else "ndarray")
        return Field(self.name, self.numpy_dtype, tuple(self.shape or ()), codec,
                     bool(self.nullable))

    def decode_scalar(self, value: Any) -> Any:
        """A stored scalar as Petastorm's readers return it: of ``numpy_dtype``."""
        if value is None or self.shape or not isinstance(self.numpy_dtype, type):
            return value
        return self.numpy_dtype(value)


def _comparable(field: tuple[Any, ...]) -> tuple[Any, ...]:
    name, dtype, shape, codec, nullable = (tuple(field) + (None, False))[:5]
    return name, str(np.dtype(dtype)), tuple(shape or ()), repr(codec), bool(nullable)


class Unischema:
    """An ordered set of fields with a name.

    Args:
        name: the schema's name (names its row namedtuples).
        fields: the fields, in order.
    """

    def __init__(self, name: str, fields: Iterable[UnischemaField]) -> None:
        self._name = name
        self._fields: OrderedDict[str, UnischemaField] = OrderedDict()
        for field in fields:
            if not isinstance(field, UnischemaField):
                raise TypeError(f"Unischema {name!r}: {field!r} is not a UnischemaField")
            if field.name in self._fields:
                raise ValueError(f"Unischema {name!r}: duplicate field {field.name!r}")
            self._fields[field.name] = field
        self._namedtuple: Any = None

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a schema unpickled from a Petastorm store: ``_name``, ``_fields``, and
        each field again under its own name (Petastorm's field attributes)."""
        fields = state.get("_fields")
        if not isinstance(state.get("_name"), str) or not isinstance(fields, dict):
            raise ValueError(f"unexpected stored Unischema state {sorted(state)}")
        extra = {k: v for k, v in state.items() if k not in ("_name", "_fields")}
        if any(fields.get(k) is not v for k, v in extra.items()):
            raise ValueError(f"unexpected stored Unischema attributes {sorted(extra)}")
        # (the pickled class's own constructor, run again on the stored fields)
        self.__init__(state["_name"], list(fields.values()))  # type: ignore[misc]

    @property
    def name(self) -> str:
        """The schema's name."""
        return self._name

    @property
    def fields(self) -> OrderedDict[str, UnischemaField]:
        """The fields by name, in order."""
        return self._fields

    def __getattr__(self, name: str) -> UnischemaField:
        fields = self.__dict__.get("_fields")
        if fields is not None and name in fields:
            field: UnischemaField = fields[name]
            return field
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Unischema) and other._name == self._name
                and list(other._fields.values()) == list(self._fields.values()))

    __hash__ = None  # type: ignore[assignment]  # unhashable: it compares by its fields

    def __repr__(self) -> str:
        fields = ",\n".join(f"  {f!r}" for f in self._fields.values())
        return f"Unischema({self._name}, [\n{fields}\n])"

    def create_schema_view(self, fields: Iterable[UnischemaField | str]) -> Unischema:
        """A schema of some of these fields, in this schema's order: ``fields`` holds
        fields of this schema and regular expressions that field names match whole.

        Raises:
            ValueError: a field that is not in this schema.
        """
        wanted: set[str] = set()
        for item in fields:
            if isinstance(item, str):
                wanted.update(match_field_names(self, [item]))
            elif isinstance(item, tuple) and item[0] in self._fields:
                if self._fields[item[0]] != item:
                    raise ValueError(f"field {item[0]!r} differs from the schema's: "
                                     f"{item!r} != {self._fields[item[0]]!r}")
                wanted.add(item[0])
            else:
                raise ValueError(f"{item!r} is not a field of {self._name}: "
                                 f"{list(self._fields)}")
        return Unischema(f"{self._name}_view",
                         [f for name, f in self._fields.items() if name in wanted])

    def make_namedtuple(self, **values: Any) -> Any:
        """A row of this schema: a namedtuple of the field values (missing ones None)."""
        return self.namedtuple_class()(**{name: values.get(name) for name in self._fields})

    def namedtuple_class(self) -> Any:
        """The namedtuple class of this schema's rows (made once)."""
        if self._namedtuple is None:
            # (a name known at run time: mypy types only namedtuples named by literals)
            self._namedtuple = namedtuple(_identifier(self._name),  # type: ignore[misc]
                                          list(self._fields), rename=False)
        return self._namedtuple

    def to_pfio(self) -> Schema:
        """This schema as pfio's :class:`~pfio.integrations.parquet.Schema`."""
        return Schema([f.to_field() for f in self._fields.values()])

    @classmethod
    def from_pfio(cls, schema: Schema, name: str = "inferred_schema") -> Unischema:
        """The Unischema of pfio's ``schema`` (codecs mapped back; custom ones as None)."""
        codecs: dict[str, Any] = {
            "scalar": ScalarCodec, "ndarray": NdarrayCodec, "npz": CompressedNdarrayCodec,
            "png": lambda: CompressedImageCodec("png"),
            "jpeg": lambda: CompressedImageCodec("jpeg")}
        return cls(name, [UnischemaField(f.name, f.dtype.type, f.shape,
                                         codecs[f.codec]() if f.codec in codecs else None,
                                         f.nullable) for f in schema.fields.values()])

    @classmethod
    def from_arrow(cls, arrow_schema: pa.Schema, partitions: dict[str, pa.DataType],
                   name: str = "inferred_schema") -> Unischema:
        """The schema Petastorm infers for a plain Parquet store: partition keys first,
        then the columns; scalars and lists of scalars (shape ``(None,)``); other columns
        are left out, with a warning."""
        fields = [UnischemaField(key, _numpy_type(t), (), None, True)
                  for key, t in partitions.items()]
        for field in arrow_schema:
            shape: tuple[int | None, ...] = ()
            arrow_type = field.type
            if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or \
                    pa.types.is_fixed_size_list(arrow_type):
                arrow_type, shape = arrow_type.value_type, (None,)
            numpy_type = _numpy_type(arrow_type)
            if numpy_type is None:
                warnings.warn(f"column {field.name!r} of type {field.type} is left out: "
                              "Petastorm's readers take scalars and lists of scalars",
                              stacklevel=2)
                continue
            fields.append(UnischemaField(field.name, numpy_type, shape, None, field.nullable))
        return cls(name, fields)


def match_field_names(schema: Unischema, patterns: Iterable[str]) -> list[str]:
    """The names of ``schema``'s fields that one of the regular expressions ``patterns``
    matches whole, in the schema's order."""
    compiled = [re.compile(p) for p in patterns]
    return [name for name in schema.fields if any(p.fullmatch(name) for p in compiled)]


def _numpy_type(arrow_type: pa.DataType) -> Any:
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return np.str_
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return np.bytes_
    if pa.types.is_decimal(arrow_type):
        from decimal import Decimal

        return Decimal
    try:
        return arrow_type.to_pandas_dtype()
    except NotImplementedError:
        return None


def _identifier(name: str) -> str:
    cleaned = re.sub(r"\W", "_", name)
    return cleaned if cleaned.isidentifier() else f"Row_{cleaned}"
