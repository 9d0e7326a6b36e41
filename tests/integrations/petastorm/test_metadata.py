"""Reading Petastorm's pickled Unischema without trusting it: what the restricted unpickler
admits, what it refuses, and that a refused pickle runs nothing."""

from __future__ import annotations

import os
import pickle
from collections import OrderedDict

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pfio.integrations.petastorm import (
    CompressedImageCodec,
    NdarrayCodec,
    Unischema,
    UnischemaField,
    UnsafePickleError,
    make_reader,
)
from pfio.integrations.petastorm.metadata import UNISCHEMA_KEY, load_unischema, safe_loads


def _global(module: str, name: str) -> bytes:
    """Protocol-0 opcodes pushing the global ``module.name``."""
    return f"c{module}\n{name}\n".encode()


def _call(module: str, name: str, arg: str) -> bytes:
    """A pickle that calls ``module.name(arg)`` when loaded."""
    return _global(module, name) + f"(V{arg}\ntR.".encode()


def test_a_schema_of_every_codec_round_trips():
    schema = Unischema("S", [UnischemaField("a", np.int32, (), None, False),
                             UnischemaField("b", np.float32, (None, 2), NdarrayCodec(), True),
                             UnischemaField("c", np.uint8, (4, 4, 3),
                                            CompressedImageCodec("jpeg", 90), False)])
    loaded = safe_loads(pickle.dumps(schema))
    assert loaded == schema
    assert loaded.c.codec.image_codec == "jpeg"


@pytest.mark.parametrize("module, name", [("os", "system"), ("builtins", "eval"),
                                          ("subprocess", "check_call"),
                                          ("numpy", "load"), ("posix", "system")])
def test_a_call_of_anything_else_is_refused_and_never_runs(tmp_path, module, name):
    marker = tmp_path / "ran"
    payload = _call(module, name, f"touch {marker}")
    with pytest.raises(UnsafePickleError, match=rf"{module}\.{name}"):
        safe_loads(payload)
    assert not marker.exists()


def test_petastorm_names_cannot_reach_other_petastorm_globals():
    with pytest.raises(UnsafePickleError, match="petastorm.utils.run_in_subprocess"):
        safe_loads(_call("petastorm.utils", "run_in_subprocess", "x"))


def test_a_pickle_of_something_else_than_a_unischema_is_refused():
    with pytest.raises(pickle.UnpicklingError, match="not a Unischema"):
        safe_loads(pickle.dumps(OrderedDict(a=1)))


def test_unexpected_state_in_an_admitted_class_is_refused():
    codec = NdarrayCodec()
    codec.__dict__["hook"] = [1]
    with pytest.raises(pickle.UnpicklingError, match="unexpected stored attributes"):
        safe_loads(pickle.dumps(Unischema("S", [UnischemaField("v", np.int8, (2,), codec)])))


def test_the_refusal_is_an_unpickling_error():
    assert issubclass(UnsafePickleError, pickle.UnpicklingError)


def _store_with_metadata(path, pickled: bytes) -> str:
    os.makedirs(path)
    table = pa.table({"id": pa.array([1, 2], pa.int32())})
    pq.write_table(table, os.path.join(path, "part-0.parquet"))
    schema = table.schema.with_metadata({UNISCHEMA_KEY: pickled})
    pq.write_metadata(schema, os.path.join(path, "_common_metadata"))
    return str(path)


def test_a_store_with_a_malicious_schema_is_refused_before_anything_runs(tmp_path):
    marker = tmp_path / "ran"
    url = _store_with_metadata(tmp_path / "store", _call("os", "system", f"touch {marker}"))
    with pytest.raises(UnsafePickleError, match=r"os\.system"):
        make_reader(url)
    assert not marker.exists()


def test_a_store_without_common_metadata_has_no_stored_schema(tmp_path):
    path = tmp_path / "plain"
    os.makedirs(path)
    pq.write_table(pa.table({"id": [1]}), os.path.join(path, "part-0.parquet"))
    assert load_unischema(str(path)) is None


def test_a_stored_schema_decodes_the_store(tmp_path):
    schema = Unischema("S", [UnischemaField("id", np.int32, (), None, False)])
    url = _store_with_metadata(tmp_path / "store", pickle.dumps(schema))
    assert load_unischema(url) == schema
    with make_reader(url, shuffle_row_groups=False) as reader:
        assert reader.schema.name == "S"
        assert [row.id for row in reader] == [1, 2]


@pytest.mark.petastorm
def test_the_schema_petastorm_pickled_loads(petastorm_data):
    metadata = pq.read_metadata(petastorm_data / "codecs" / "_common_metadata").metadata
    schema = safe_loads(metadata[UNISCHEMA_KEY])
    assert schema.name == "CodecsSchema" and len(schema.fields) == 8
