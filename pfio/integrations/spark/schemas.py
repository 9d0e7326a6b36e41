"""Schemas between pfio, Arrow and Spark: column metadata, and the types Spark accepts.

:func:`column_metadata` puts a pfio :class:`~pfio.integrations.parquet.Field` into a Spark
column's metadata; Spark writes it into every Parquet file (``df.write.parquet`` or
``format("pfio")``) and pfio's readers decode the column by it. The other functions map
Arrow schemas (with pfio's stored schema) to Spark's ``StructType`` and back.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import StructField, StructType

from ..parquet import arrays
from ..parquet.schema import METADATA_KEY, Field, Schema
from ..parquet.spark_schema import SPARK_ROW_METADATA, field_arguments, field_metadata

#: Arrow types Spark has no type for, and the wider signed types that hold their values
_WIDER = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
          pa.uint64(): pa.int64(), pa.float16(): pa.float32()}


def column_metadata(field: Field) -> dict[str, Any]:
    """The metadata of a Spark column that holds the values of ``field``.

    Attach it with ``F.col(name).alias(name, metadata=column_metadata(field))``: Parquet
    files Spark then writes carry the field, and pfio's readers decode the column as
    ``field`` says (arrays of its shape and dtype from Spark's ``array<float>``, nested once
    per dimension; images and ``.npy`` from binary columns). The column's name is the
    field's wherever it is attached.
    """
    return field_metadata(field)


def spark_arrow_type(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` as Spark reads it: unsigned integers widened to signed ones, half
    floats to floats, fixed-size and large lists to lists, dictionaries to their values,
    large strings and binaries to plain ones."""
    if pa.types.is_dictionary(arrow_type):
        return spark_arrow_type(arrow_type.value_type)
    if arrays.is_list_type(arrow_type):
        return pa.list_(spark_arrow_type(arrow_type.value_type))
    if pa.types.is_large_string(arrow_type):
        return pa.string()
    if pa.types.is_large_binary(arrow_type):
        return pa.binary()
    if pa.types.is_struct(arrow_type):
        return pa.struct([f.with_type(spark_arrow_type(f.type)) for f in arrow_type])
    return _WIDER.get(arrow_type, arrow_type)


def spark_arrow_schema(arrow_schema: pa.Schema) -> pa.Schema:
    """``arrow_schema`` with each type as :func:`spark_arrow_type` maps it (no metadata)."""
    return pa.schema([f.with_type(spark_arrow_type(f.type)) for f in arrow_schema])


def to_spark_schema(arrow_schema: pa.Schema, schema: Schema | None = None) -> StructType:
    """The Spark schema of a dataset whose files have ``arrow_schema``: each column's type
    as Spark reads it, with the metadata of its pfio field (``schema``, default: the one
    stored in ``arrow_schema``)."""
    schema = schema if schema is not None else Schema.from_arrow(arrow_schema)
    fields = schema.fields if schema is not None else {}
    return StructType([
        StructField(f.name, from_arrow_type(spark_arrow_type(f.type)), nullable=True,
                    metadata=column_metadata(fields[f.name]) if f.name in fields else {})
        for f in arrow_schema])


def pfio_schema(struct: StructType) -> Schema | None:
    """The pfio fields of the Spark columns that carry :func:`column_metadata` (None when
    none does)."""
    fields = []
    for column in struct.fields:
        arguments = field_arguments(column.name, column.metadata or {})
        if arguments is not None:
            fields.append(Field(**arguments))
    return Schema(fields) if fields else None


def storage_schema(struct: StructType, arrow_schema: pa.Schema) -> pa.Schema:
    """The Arrow schema pfio stores Spark rows of ``struct`` (arriving as ``arrow_schema``)
    with: columns of pfio fields in the fields' own types (fixed-shape arrays as pfio's
    fixed-size lists, ``uint8`` scalars as ``uint8`` again; a value that does not fit is an
    error when the rows are cast), the pfio fields and Spark's own schema in the metadata,
    so pfio and Spark both read the files back with it."""
    schema = pfio_schema(struct)
    fields = schema.fields if schema is not None else {}
    stored = []
    for arrow_field in arrow_schema:
        field = fields.get(arrow_field.name)
        if field is not None:
            arrow_field = arrow_field.with_type(field.arrow_type())
        stored.append(arrow_field)
    metadata = {SPARK_ROW_METADATA: struct.json().encode()}
    if schema is not None:
        metadata[METADATA_KEY] = json.dumps([f.to_json() for f in fields.values()]).encode()
    return pa.schema(stored, metadata=metadata)
