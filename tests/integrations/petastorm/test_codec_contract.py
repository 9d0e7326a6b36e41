"""A custom codec class runs unchanged in the real Petastorm and in pfio (issue 37): both
hand ``encode`` the value as the row holds it (a ``str``), store the same bytes and decode
them to the same values."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pfio.integrations.parquet import (
    Field,
    RowReader,
    Schema,
    register_codec,
    unregister_codec,
    write_dataset,
)

from .conftest import PETASTORM_PYTHON
from .text_codec import CAPTIONS, FIELD, TextCodec

pytestmark = pytest.mark.petastorm

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def in_petastorm() -> dict:
    """What the codec saw and made inside the real Petastorm."""
    if not PETASTORM_PYTHON.exists():
        pytest.skip(f"{PETASTORM_PYTHON} is missing: run scripts/petastorm-venv.sh")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    done = subprocess.run([str(PETASTORM_PYTHON), "-W", "ignore",
                           str(HERE / "codec_in_petastorm.py"), str(HERE)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture
def codec():
    codec = TextCodec()
    register_codec("text", codec)
    yield codec
    unregister_codec("text")


def test_the_codec_gets_what_petastorm_hands_it(in_petastorm, codec, tmp_path):
    name, dtype, shape = FIELD
    write_dataset(str(tmp_path / "ds"), Schema([Field(name, dtype, shape, "text")]),
                  ({name: text} for text in CAPTIONS))
    assert in_petastorm["received"] == ["str"] * len(CAPTIONS)
    assert codec.received == in_petastorm["received"]


def test_pfio_stores_and_decodes_as_petastorm(in_petastorm, codec, tmp_path):
    name, dtype, shape = FIELD
    url = str(tmp_path / "ds")
    write_dataset(url, Schema([Field(name, dtype, shape, "text")]),
                  ({name: text} for text in CAPTIONS))
    stored = [Field(name, dtype, shape, "text").encode(text).hex() for text in CAPTIONS]
    assert stored == in_petastorm["stored"]
    assert [row[name] for row in RowReader(url)] == in_petastorm["decoded"] == CAPTIONS
