"""A custom codec written as Petastorm users write them (no pfio import), for the tests that
run it both in the real Petastorm (``.venv-petastorm``) and in pfio: UTF-8 text stored as
bytes. ``received`` keeps the type name of each value ``encode`` was handed."""

import numpy as np


class TextCodec:
    """Petastorm's codec interface: ``encode``/``decode`` of ``(unischema_field, value)``,
    ``spark_dtype``."""

    def __init__(self):
        self.received = []

    def encode(self, unischema_field, value):
        self.received.append(type(value).__name__)
        return value.encode("utf-8")

    def decode(self, unischema_field, value):
        return unischema_field.numpy_dtype(value.decode("utf-8"))

    def spark_dtype(self):
        from pyspark.sql.types import BinaryType

        return BinaryType()


FIELD = ("caption", np.str_, ())
CAPTIONS = ["a cat", "ein Hund", "\u9ce5", ""]
