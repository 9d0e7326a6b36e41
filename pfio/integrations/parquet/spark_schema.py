"""pfio fields carried in Spark's column metadata, and read back from files Spark wrote.

Spark keeps a DataFrame's schema, each column's metadata included, in the key-value
metadata of every Parquet file it writes, under :data:`SPARK_ROW_METADATA`: a JSON
``StructType`` whose fields have a ``"metadata"`` object. A column whose metadata holds
:data:`FIELD_KEY` (made by :func:`field_metadata`, or by
``pfio.integrations.spark.column_metadata``) is a pfio :class:`~.schema.Field`, so
``df.write.parquet(...)`` on any cluster writes datasets that pfio's readers decode. Spark's
own arrays (``array<float>``, nested for more dimensions) then read as fixed-shape arrays of
the field's shape.

This module needs no Spark: it only reads and writes JSON.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .schema import Field

#: the key of Spark's schema in the key-value metadata of the Parquet files it writes
SPARK_ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"
#: the key, in a Spark column's metadata, of the pfio field it holds (a JSON string)
FIELD_KEY = "pfio"


def field_metadata(field: Field) -> dict[str, Any]:
    """The Spark column metadata that carries ``field`` (its name is the column's)."""
    described = field.to_json()
    del described["name"]
    return {FIELD_KEY: json.dumps(described)}


def field_arguments(name: str, metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The keyword arguments of :class:`~.schema.Field` for the Spark column ``name``
    whose metadata is ``metadata``, or None when it carries no pfio field. Malformed pfio
    metadata is a ValueError naming the column."""
    stored = metadata.get(FIELD_KEY)
    if stored is None:
        return None
    try:
        described = json.loads(stored) if isinstance(stored, str) else stored
        return {"name": name, "dtype": described["dtype"], "shape": tuple(described["shape"]),
                "codec": described["codec"], "nullable": bool(described.get("nullable", False))}
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"column {name!r}: malformed pfio metadata {stored!r}: {exc}") from None


def spark_fields(metadata: dict[bytes, bytes]) -> list[dict[str, Any]]:
    """The keyword arguments of the pfio fields in the Spark schema stored in a Parquet
    file's key-value ``metadata`` (empty when Spark did not write it or no column carries
    a pfio field)."""
    stored = metadata.get(SPARK_ROW_METADATA)
    if stored is None:
        return []
    try:
        struct = json.loads(stored)
        columns = struct["fields"]
    except (ValueError, TypeError, KeyError):
        return []  # not a schema this module understands: the file reads as foreign
    fields = []
    for column in columns:
        arguments = field_arguments(column.get("name", ""), column.get("metadata") or {})
        if arguments is not None:
            fields.append(arguments)
    return fields

