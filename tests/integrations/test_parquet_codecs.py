"""``register_codec`` keeps Petastorm's codec contract: ``codec.encode(field, value)`` gets
the value as the row holds it, unless the codec asks for arrays (``takes_arrays = True``),
so a codec class written for Petastorm runs unchanged (issue 37)."""

from __future__ import annotations

import numpy as np
import pytest

from pfio.integrations.parquet import (
    BatchReader,
    Field,
    RowReader,
    Schema,
    register_codec,
    unregister_codec,
    write_dataset,
)

from .petastorm.text_codec import TextCodec


class Seen:
    """Records what ``encode`` was handed."""

    def __init__(self) -> None:
        self.values: list[object] = []

    def encode(self, field, value):
        self.values.append(value)
        return repr(value).encode()

    def decode(self, field, stored):
        return stored.decode()


@pytest.fixture
def text_codec():
    register_codec("text", TextCodec())
    yield "text"
    unregister_codec("text")


def test_a_petastorm_style_codec_round_trips_text(tmp_path, text_codec):
    schema = Schema([Field("id", np.int64), Field("caption", np.str_, (), text_codec)])
    url = str(tmp_path / "ds")
    captions = ["a cat", "ein Hund", "鳥", ""]
    write_dataset(url, schema, ({"id": i, "caption": c} for i, c in enumerate(captions)))
    rows = sorted(RowReader(url), key=lambda row: row["id"])
    assert [row["caption"] for row in rows] == captions
    assert type(rows[2]["caption"]) is np.str_
    batch = next(iter(BatchReader(url, batch_size=4)))
    assert list(batch["caption"]) == captions


def test_a_codec_gets_the_value_as_the_row_holds_it():
    seen = Seen()
    register_codec("seen", seen)
    try:
        given = [1, 2, 3]
        Field("values", np.int64, (None,), "seen").encode(given)
        Field("word", np.str_, (), "seen").encode("abc")
    finally:
        unregister_codec("seen")
    assert seen.values[0] is given and seen.values[1] == "abc"
    assert type(seen.values[1]) is str


def test_a_codec_that_takes_arrays_gets_a_checked_array():
    seen = Seen()
    seen.takes_arrays = True
    register_codec("seen", seen)
    try:
        Field("values", np.int16, (3,), "seen").encode([1, 2, 3])
        with pytest.raises(ValueError, match="does not match"):
            Field("values", np.int16, (3,), "seen").encode([1, 2])
    finally:
        unregister_codec("seen")
    assert isinstance(seen.values[0], np.ndarray) and seen.values[0].dtype == np.int16
    assert len(seen.values) == 1


def test_fields_have_petastorms_numpy_dtype():
    assert Field("x", np.float32, (2,), "ndarray").numpy_dtype is np.float32
    assert Field("s", np.str_).numpy_dtype is np.str_
