"""``pfio.fs.writers.discard``: what a writer's ``abort()`` does, for a file typed ``IO``."""

from __future__ import annotations

import io

import pytest

from pfio.fs.memory import MemoryFS
from pfio.fs.writers import discard


@pytest.mark.parametrize("mode", ["wb", "w"])
def test_a_discarded_writer_publishes_nothing(mode: str) -> None:
    fs = MemoryFS()
    f = fs.open("x", mode)
    f.write(b"data" if "b" in mode else "data")
    discard(f)
    f.close()
    assert not fs.exists("x")


def test_a_file_written_in_place_cannot_discard() -> None:
    with pytest.raises(io.UnsupportedOperation, match="in place"):
        discard(io.BytesIO())
