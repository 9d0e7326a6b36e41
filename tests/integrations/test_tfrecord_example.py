"""tf.train.Example without TensorFlow: the message classes' wire format, make_example's
encoding of Python and NumPy values, and parse_example with and without a features spec."""

import numpy as np
import pytest

pytest.importorskip("google.protobuf")

from pfio.integrations.tfrecord import (  # noqa: E402
    Example,
    Feature,
    Int64List,
    check_features,
    make_example,
    parse_example,
)


def test_an_example_has_tensorflows_field_numbers_and_packed_lists():
    # Example.features(1) -> Features.feature(1) map entry {key(1): "a", value(2): Feature
    # {int64_list(3): Int64List {value(1), packed: [1]}}}
    wire = bytes.fromhex("0a0c" "0a0a" "0a0161" "1205" "1a03" "0a0101")
    assert make_example({"a": 1}) == wire
    parsed = Example.FromString(wire)
    assert list(parsed.features.feature["a"].int64_list.value) == [1]


def test_float_and_bytes_lists_use_fields_2_and_1():
    assert Feature(float_list={"value": [1.0]}).SerializeToString() == \
        bytes.fromhex("1206" "0a04") + np.float32(1.0).tobytes()
    assert Feature(bytes_list={"value": [b"xy"]}).SerializeToString() == \
        bytes.fromhex("0a04" "0a02") + b"xy"
    assert Int64List(value=[-1]).SerializeToString() == bytes.fromhex("0a0a" + "ff" * 9 + "01")


def test_values_are_encoded_by_their_python_and_numpy_types():
    parsed = parse_example(make_example({
        "bytes": b"\x00\xff", "text": "héllo", "int": 7, "bool": True, "float": 0.5,
        "ints": [1, -2, 3], "mixed": [1, 2.5], "texts": ["a", b"b"],
        "array": np.arange(6, dtype=np.uint8).reshape(2, 3),
        "floats": np.array([[0.25, 1.5]], dtype=np.float64), "np_int": np.int16(-4),
        "np_float": np.float32(2.0), "byte_array": np.array([b"p", b"q"]), "empty": [],
    }))
    assert parsed["bytes"] == [b"\x00\xff"] and parsed["text"] == ["héllo".encode()]
    assert parsed["texts"] == [b"a", b"b"] and parsed["byte_array"] == [b"p", b"q"]
    assert parsed["int"].dtype == np.int64 and parsed["int"].tolist() == [7]
    assert parsed["bool"].tolist() == [1] and parsed["np_int"].tolist() == [-4]
    assert parsed["ints"].tolist() == [1, -2, 3] and parsed["array"].tolist() == list(range(6))
    assert parsed["float"].dtype == np.float32 and parsed["float"].tolist() == [0.5]
    assert parsed["mixed"].tolist() == [1.0, 2.5] and parsed["np_float"].tolist() == [2.0]
    assert parsed["floats"].tolist() == [0.25, 1.5]
    assert parsed["empty"] == []


def test_the_same_features_give_the_same_bytes_in_any_order():
    assert make_example({"a": 1, "b": b"x", "c": 2.0}) == \
        make_example({"c": 2.0, "b": b"x", "a": 1})


@pytest.mark.parametrize(("value", "problem"), [([1, b"x"], "mixes"), (object(), "object"),
                                               ({"a": 1}, "dict"), ([None], "NoneType"),
                                               (np.array([1j]), "complex")])
def test_values_of_other_types_are_type_errors_naming_the_feature(value, problem):
    with pytest.raises(TypeError, match=f"'bad'.*{problem}|{problem}.*'bad'"):
        make_example({"bad": value})


SPEC = {"image": "bytes", "label": "int64", "x": ("float", (2, 2)), "tags": ("bytes", None),
        "boxes": ("float", None), "pair": ("bytes", (2,))}


def test_a_spec_gives_scalars_fixed_shapes_and_variable_lengths():
    record = make_example({"image": b"jpeg", "label": 3, "x": [1.0, 2, 3, 4], "tags": [],
                           "boxes": [0.5] * 6, "pair": [b"l", b"r"], "unused": 1})
    parsed = parse_example(record, SPEC)
    assert set(parsed) == set(SPEC)
    assert parsed["image"] == b"jpeg"
    assert parsed["label"].shape == () and parsed["label"].dtype == np.int64
    assert int(parsed["label"]) == 3
    assert parsed["x"].dtype == np.float32 and parsed["x"].tolist() == [[1, 2], [3, 4]]
    assert parsed["tags"] == [] and parsed["pair"] == [b"l", b"r"]
    assert parsed["boxes"].shape == (6,) and parsed["boxes"].dtype == np.float32


def test_a_default_stands_in_for_a_missing_feature():
    parsed = parse_example(make_example({}), {"w": ("float", (), 1.5), "ids": ("int64", (2,),
                                                                              [4, 5]),
                                              "name": ("bytes", (), "none")})
    assert parsed["w"].tolist() == 1.5 and parsed["ids"].tolist() == [4, 5]
    assert parsed["name"] == b"none"


def test_a_missing_feature_without_default_is_an_error():
    with pytest.raises(ValueError, match="'label' is not in the example"):
        parse_example(make_example({"image": b""}), {"label": "int64"})


def test_a_feature_of_another_kind_is_an_error():
    with pytest.raises(ValueError, match="'label' holds float values.*int64"):
        parse_example(make_example({"label": 1.0}), {"label": "int64"})


def test_a_feature_with_another_number_of_values_is_an_error():
    with pytest.raises(ValueError, match=r"'x' has 3 values, its shape \(2, 2\) holds 4"):
        parse_example(make_example({"x": [1.0, 2.0, 3.0]}), {"x": ("float", (2, 2))})


@pytest.mark.parametrize("spec", ["int32", ("float", 4), ("bytes", (2, 2)), ("float", (-1,)),
                                  (), ("int64", (), 0, "extra"), 5])
def test_a_malformed_spec_is_an_error_naming_the_feature(spec):
    with pytest.raises(ValueError, match="feature 'f'"):
        check_features({"f": spec})


def test_bytes_that_are_not_an_example_are_a_value_error():
    with pytest.raises(ValueError, match="not a serialized tf.train.Example"):
        parse_example(b"\xff\xff\xff")
