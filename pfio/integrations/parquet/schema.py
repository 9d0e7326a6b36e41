"""The schema of a pfio Parquet dataset: fields with dtypes, shapes and codecs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from . import arrays, spark_schema
from .codecs import get_codec

#: key of the schema in the Parquet file's key-value metadata
METADATA_KEY = b"pfio.schema"


@dataclass(frozen=True)
class Field:
    """One column.

    Args:
        name: the column name.
        dtype: the NumPy dtype of the values (of the elements, for arrays and images).
        shape: ``()`` for scalars; for arrays and images a tuple whose ``None`` entries are
            variable dimensions.
        codec: the name of a registered codec (see :mod:`~pfio.integrations.parquet.codecs`):
            ``"scalar"`` (stored as an Arrow value), ``"ndarray"``, ``"png"`` or ``"jpeg"``
            (encoded images: uint8, HxW or HxWxC with C in 1, 3, 4), or one added with
            :func:`~pfio.integrations.parquet.register_codec`. An ndarray of a fixed
            shape (no ``None``, at least one element) and a numeric or bool dtype is stored as
            nested Arrow fixed-size lists (see :attr:`fixed_shape`), which batch readers
            decode a column at a time; other ndarrays are stored as ``.npy`` bytes.
        nullable: whether values may be None.

    An unregistered codec is a ValueError naming the known ones.
    """

    name: str
    dtype: Any
    shape: tuple[int | None, ...] = ()
    codec: str = "scalar"
    nullable: bool = False

    def __post_init__(self) -> None:
        try:
            codec = get_codec(self.codec)
        except ValueError as exc:
            raise ValueError(f"field {self.name!r}: {exc}") from None
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        object.__setattr__(self, "shape", tuple(self.shape))
        check = getattr(codec, "check", None)
        if check is not None:
            check(self)

    @property
    def fixed_shape(self) -> bool:
        """Whether values are stored as Arrow fixed-size lists rather than ``.npy`` bytes:
        fixed-shape, non-empty ndarrays of numbers or bools in native byte order. (Arrow
        cannot hold fixed-size lists of size 0, so empty shapes stay bytes.)"""
        known = self.known_shape
        return (self.codec == "ndarray" and self.dtype.kind in "biuf" and self.dtype.isnative
                and known is not None and int(np.prod(known)) > 0)

    @property
    def known_shape(self) -> tuple[int, ...] | None:
        """:attr:`shape` when none of its entries is ``None``, else None."""
        if any(d is None for d in self.shape):
            return None
        return tuple(d for d in self.shape if d is not None)

    @property
    def numpy_dtype(self) -> type:
        """The NumPy scalar type of the values (``np.int32``...), as Petastorm's
        ``UnischemaField.numpy_dtype``, for codecs written for Petastorm."""
        scalar_type: type = self.dtype.type
        return scalar_type

    def arrow_type(self) -> pa.DataType:
        """The Arrow type of the stored column (the codec's ``arrow_type``, else binary)."""
        arrow_type = getattr(get_codec(self.codec), "arrow_type", None)
        return arrow_type(self) if arrow_type is not None else pa.binary()

    def encode(self, value: Any) -> Any:
        """The stored form of ``value``."""
        if value is None:
            if not self.nullable:
                raise ValueError(f"field {self.name!r} is not nullable")
            return None
        codec = get_codec(self.codec)
        if getattr(codec, "takes_arrays", False):
            value = np.asarray(value, dtype=self.dtype)
            self._check_shape(value)
        return codec.encode(self, value)

    def decode(self, stored: Any) -> Any:
        """The value of a stored cell (``.npy`` bytes, nested lists of numbers, an image...)."""
        if stored is None:
            return None
        return get_codec(self.codec).decode(self, stored)

    def _check_shape(self, array: np.ndarray) -> None:
        if len(array.shape) != len(self.shape) or any(
                want is not None and want != got for want, got in zip(self.shape, array.shape,
                                                                        strict=True)):
            raise ValueError(
                f"field {self.name!r}: shape {array.shape} does not match {self.shape}")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype.str, "shape": list(self.shape),
                "codec": self.codec, "nullable": self.nullable}


class Schema:
    """An ordered set of :class:`Field`."""

    def __init__(self, fields: list[Field]) -> None:
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in {names}")
        self.fields = {f.name: f for f in fields}

    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema, carrying this schema in its metadata."""
        return pa.schema(
            [pa.field(f.name, f.arrow_type(), nullable=f.nullable) for f in self.fields.values()],
            metadata={METADATA_KEY: json.dumps([f.to_json() for f in self.fields.values()])})

    def encode_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """The stored form of ``row`` (a dict of every non-nullable field)."""
        missing = set(self.fields) - set(row)
        extra = set(row) - set(self.fields)
        if extra or (missing and any(not self.fields[m].nullable for m in missing)):
            raise ValueError(f"row fields {sorted(row)} do not match the schema "
                             f"{sorted(self.fields)}")
        return {name: field.encode(row.get(name)) for name, field in self.fields.items()}

    def to_table(self, rows: list[dict[str, Any]]) -> pa.Table:
        """An Arrow table of ``rows`` encoded by :meth:`encode_row`."""
        columns = []
        for name, field in self.fields.items():
            values = [row[name] for row in rows]
            known = field.known_shape if field.fixed_shape else None
            columns.append(arrays.to_arrow(values, field.dtype, known) if known is not None
                           else pa.array(values, field.arrow_type()))
        return pa.Table.from_arrays(columns, schema=self.arrow_schema())

    @classmethod
    def from_arrow(cls, schema: pa.Schema) -> Schema | None:
        """The schema stored in ``schema``'s metadata, or None for a foreign file.

        pfio's own schema comes first; else the fields of columns that Spark wrote with
        pfio field metadata (see :mod:`~pfio.integrations.parquet.spark_schema`), which
        then name only those columns (the others read as foreign columns)."""
        metadata = schema.metadata or {}
        if METADATA_KEY not in metadata:
            fields = spark_schema.spark_fields(metadata)
            return cls([Field(**f) for f in fields]) if fields else None
        return cls([Field(d["name"], d["dtype"], tuple(d["shape"]), d["codec"], d["nullable"])
                    for d in json.loads(metadata[METADATA_KEY])])
