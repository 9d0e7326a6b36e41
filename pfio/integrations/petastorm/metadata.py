"""Reading the Unischema a Petastorm store keeps, without trusting its pickle.

Petastorm pickles its :class:`~pfio.integrations.petastorm.Unischema` into the key-value
metadata of the store's ``_common_metadata`` file, under ``dataset-toolkit.unischema.v1``.
Unpickling runs whatever callables the bytes name, so a store from elsewhere could run code
on the reader's machine. :func:`safe_loads` unpickles with :class:`SchemaUnpickler`, which
admits only the globals a schema is made of, each mapped onto a harmless class of pfio's:

* ``petastorm.unischema.Unischema`` / ``UnischemaField`` and the four codec classes of
  ``petastorm.codecs`` (also under Petastorm's legacy package names, and pfio's own):
  pfio's;
* ``pyspark.sql.types.<X>Type``: :class:`~pfio.integrations.petastorm.codecs.SparkType`;
* NumPy's scalar types (``numpy.int32``, ``numpy.str_``...) and ``numpy.dtype``;
* ``collections.OrderedDict``, ``decimal.Decimal``, and ``copyreg._reconstructor`` with
  ``builtins.object`` (older pickle protocols).

Any other global is refused with :class:`UnsafePickleError`, naming it, before anything runs.
"""

from __future__ import annotations

import copyreg
import decimal
import io
import logging
import pickle
import posixpath
from collections import OrderedDict
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...api import open_url
from . import codecs
from .unischema import Unischema, UnischemaField

logger = logging.getLogger(__name__)

#: the key of the pickled Unischema in ``_common_metadata``
UNISCHEMA_KEY = b"dataset-toolkit.unischema.v1"
#: the file holding it, at the store's root
COMMON_METADATA = "_common_metadata"


class UnsafePickleError(pickle.UnpicklingError):
    """A pickled schema names a global that a Unischema is not made of (``module.name``
    in the message); nothing of it was run."""


_PETASTORM = {
    "unischema.Unischema": Unischema,
    "unischema.UnischemaField": UnischemaField,
    "codecs.ScalarCodec": codecs.ScalarCodec,
    "codecs.NdarrayCodec": codecs.NdarrayCodec,
    "codecs.CompressedNdarrayCodec": codecs.CompressedNdarrayCodec,
    "codecs.CompressedImageCodec": codecs.CompressedImageCodec,
}
#: Petastorm's package, the names it had before (its own unpickler renames them), and
#: this package (pfio's classes pickle under their own names)
_PETASTORM_PACKAGES = ("petastorm", "av.experimental.deepdrive.dataset_toolkit",
                       "av.ml.dataset_toolkit", "pfio.integrations.petastorm")
_NUMPY_TYPES = {"bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "float32", "float64", "longdouble", "complex64",
                "complex128", "str_", "unicode_", "bytes_", "string_", "object_",
                "datetime64", "timedelta64", "dtype"}
_SPARK_TYPES = {"NullType", "StringType", "BinaryType", "BooleanType", "DateType",
                "TimestampType", "TimestampNTZType", "DecimalType", "DoubleType", "FloatType",
                "ByteType", "IntegerType", "LongType", "ShortType", "CharType",
                "VarcharType"}
_OTHERS = {("collections", "OrderedDict"): OrderedDict,
           ("decimal", "Decimal"): decimal.Decimal,
           ("copyreg", "_reconstructor"): vars(copyreg)["_reconstructor"],  # (not in typeshed)
           ("copy_reg", "_reconstructor"): vars(copyreg)["_reconstructor"],
           ("builtins", "object"): object,
           ("__builtin__", "object"): object}


class SchemaUnpickler(pickle.Unpickler):
    """An unpickler that builds Unischemas and nothing else (see the module's docs)."""

    def find_class(self, module: str, name: str) -> Any:
        for package in _PETASTORM_PACKAGES:
            if module.startswith(package + "."):
                found = _PETASTORM.get(f"{module[len(package) + 1:]}.{name}")
                if found is not None:
                    return found
        if module == "numpy" and name in _NUMPY_TYPES:
            return getattr(np, {"unicode_": "str_", "string_": "bytes_"}.get(name, name))
        if module == "pyspark.sql.types" and name in _SPARK_TYPES:
            return codecs.spark_type_class(name)
        found = _OTHERS.get((module, name))
        if found is not None:
            return found
        raise UnsafePickleError(f"the stored schema names {module}.{name}, which a Petastorm "
                                "Unischema is not made of: refused (nothing was run)")

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("the stored schema holds persistent references: refused")


def safe_loads(data: bytes) -> Unischema:
    """The Unischema pickled in ``data``, unpickled by :class:`SchemaUnpickler`.

    Raises:
        UnsafePickleError: ``data`` names a global outside the admitted ones.
        pickle.UnpicklingError: ``data`` is not a pickled Unischema.
    """
    try:
        schema = SchemaUnpickler(io.BytesIO(data)).load()
    except pickle.UnpicklingError:
        raise
    except Exception as exc:  # malformed or unexpected state: say so, as one error kind
        raise pickle.UnpicklingError(f"the stored schema cannot be read: {exc}") from exc
    if not isinstance(schema, Unischema):
        raise pickle.UnpicklingError(f"the stored schema is a {type(schema).__name__}, not "
                                     "a Unischema")
    for field in schema.fields.values():
        if not (isinstance(field.codec, codecs.DataframeColumnCodec) or field.codec is None):
            raise pickle.UnpicklingError(f"field {field.name!r}: codec {field.codec!r} is "
                                         "not one of Petastorm's")
    return schema


def load_unischema(url: str) -> Unischema | None:
    """The Unischema of the Petastorm store at ``url`` (a directory on any pfio URL), or
    None when it has no ``_common_metadata`` or that file holds none."""
    root = posixpath.dirname(url) if url.endswith(".parquet") else url.rstrip("/")
    try:
        with open_url(posixpath.join(root, COMMON_METADATA), "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    metadata = pq.read_metadata(pa.BufferReader(data)).metadata or {}
    pickled = metadata.get(UNISCHEMA_KEY)
    if pickled is None:
        return None
    schema = safe_loads(pickled)
    logger.debug("%s: Petastorm schema %s", url, schema.name)
    return schema
