"""Petastorm's codec classes, each standing for one of pfio's Parquet codecs.

A :class:`~pfio.integrations.petastorm.UnischemaField` names one of these, as in Petastorm;
readers decode with the pfio codec it maps to (:attr:`DataframeColumnCodec.pfio_codec`):

=========================================  ===================================================
Petastorm codec                            pfio codec and stored form
=========================================  ===================================================
``ScalarCodec(spark_type)``                ``"scalar"``: a native Parquet value
``NdarrayCodec()``                         ``"ndarray"``: ``numpy.save`` bytes (pfio's own
                                           writer stores fixed shapes as Arrow lists)
``CompressedNdarrayCodec()``               ``"npz"``: ``numpy.savez_compressed`` bytes
``CompressedImageCodec("png" | "jpeg")``   ``"png"`` / ``"jpeg"``: OpenCV-encoded images, RGB
=========================================  ===================================================

The spark type of a :class:`ScalarCodec` is kept as given (a ``pyspark.sql.types`` instance,
or :class:`SparkType` when read from a stored schema); pfio does not need pyspark.
"""

from __future__ import annotations

from typing import Any


class DataframeColumnCodec:
    """Base of the codec classes: what pfio codec a field of this codec decodes with."""

    #: the name of the pfio codec (see :mod:`pfio.integrations.parquet.codecs`)
    pfio_codec = ""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.pfio_codec))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a codec from a stored schema: only the attributes this class has, of
        plain types (a stored schema is data, never code)."""
        expected = set(vars(type(self)()))
        unknown = set(state) - expected
        if unknown:
            raise ValueError(f"{type(self).__name__}: unexpected stored attributes "
                             f"{sorted(unknown)}")
        for key, value in state.items():
            if not isinstance(value, (str, int, float, bool, SparkType)) and value is not None:
                raise ValueError(f"{type(self).__name__}.{key}: unexpected stored value "
                                 f"of type {type(value).__name__}")
            setattr(self, key, value)


class ScalarCodec(DataframeColumnCodec):
    """A scalar stored as a native Parquet value (``spark_type``: the Spark SQL type)."""

    pfio_codec = "scalar"

    def __init__(self, spark_type: Any = None) -> None:
        self._spark_type = spark_type

    def spark_dtype(self) -> Any:
        """The Spark SQL type given."""
        return self._spark_type

    def __repr__(self) -> str:
        spark_type = self._spark_type
        return (f"ScalarCodec({spark_type!r})" if isinstance(spark_type, SparkType)
                else f"ScalarCodec({type(spark_type).__name__}())")


class NdarrayCodec(DataframeColumnCodec):
    """An array stored as ``numpy.save`` bytes."""

    pfio_codec = "ndarray"


class CompressedNdarrayCodec(DataframeColumnCodec):
    """An array stored as ``numpy.savez_compressed`` bytes."""

    pfio_codec = "npz"


class CompressedImageCodec(DataframeColumnCodec):
    """A uint8 image (HxW or HxWx3, RGB) stored as PNG or JPEG bytes.

    Args:
        image_codec: ``"png"`` or ``"jpeg"``.
        quality: JPEG quality (kept for Petastorm's signature; pfio's JPEG writer uses
            OpenCV's default).
    """

    def __init__(self, image_codec: str = "png", quality: int = 80) -> None:
        self._image_codec = "." + image_codec
        self._quality = quality

    @property
    def image_codec(self) -> str:
        """``"png"`` or ``"jpeg"``."""
        return self._image_codec[1:]

    @property
    # (a property where the other codecs have a class attribute: read the same way)
    def pfio_codec(self) -> str:  # type: ignore[override]
        name = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg"}.get(self.image_codec.lower())
        if name is None:
            raise ValueError(f"CompressedImageCodec({self.image_codec!r}): pfio reads png "
                             "and jpeg images")
        return name

    def __repr__(self) -> str:
        return f"CompressedImageCodec({self.image_codec!r}, {self._quality})"


class SparkType:
    """A ``pyspark.sql.types`` type read from a stored Petastorm schema, by name and plain
    parameters only (pfio reads Petastorm datasets without pyspark).
    ``SparkType("IntegerType")`` prints as ``IntegerType()``."""

    name = ""
    params: dict[str, Any] = {}  # noqa: RUF012 - never mutated: replaced per instance

    def __init__(self, name: str | None = None, **params: Any) -> None:
        if name is not None:
            self.name = name
        self.params = params

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Keep the plain parameters of a stored type (``precision``, ``collation``...)."""
        self.params = {str(k): v for k, v in state.items()
                       if isinstance(v, (str, int, float, bool)) or v is None}

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SparkType) and other.name == self.name
                and other.params == self.params)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"{self.name}()"


def spark_type_class(name: str) -> type[SparkType]:
    """A subclass of :class:`SparkType` standing for ``pyspark.sql.types.<name>`` when a
    stored schema is unpickled (pickles make instances of classes)."""
    return _SPARK_TYPES.setdefault(name, type(name, (SparkType,), {"name": name}))


_SPARK_TYPES: dict[str, type[SparkType]] = {}
