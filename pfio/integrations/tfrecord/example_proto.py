"""``tf.train.Example`` and its parts as protobuf message classes, without TensorFlow.

The classes are built when this module is imported, from a ``FileDescriptorProto`` written
here: the messages, field names and numbers of TensorFlow's public ``example.proto`` and
``feature.proto`` (proto3, package ``tensorflow``), so their bytes are wire-compatible with
TensorFlow's:

* ``Example``: ``Features features = 1``;
* ``Features``: ``map<string, Feature> feature = 1``;
* ``Feature``: ``oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
  Int64List int64_list = 3; }``;
* ``BytesList``: ``repeated bytes value = 1``; ``FloatList``: ``repeated float value = 1``
  (packed); ``Int64List``: ``repeated int64 value = 1`` (packed).

They live in a descriptor pool of their own, so importing TensorFlow in the same process
(which registers its own ``tensorflow.Example``) conflicts with nothing.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_FIELD = descriptor_pb2.FieldDescriptorProto
_PACKAGE = "tensorflow"


def _message(file: Any, name: str, *fields: tuple[str, int, int, int, str]) -> Any:
    """Add message ``name`` with ``(name, number, type, label, type_name)`` fields."""
    message = file.message_type.add(name=name)
    for field_name, number, kind, label, type_name in fields:
        field = message.field.add(name=field_name, number=number, type=kind, label=label,
                                  json_name=_json_name(field_name))
        if type_name:
            field.type_name = type_name
    return message


def _json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name="pfio/integrations/tfrecord/example.proto", package=_PACKAGE, syntax="proto3")
    repeated, optional = _FIELD.LABEL_REPEATED, _FIELD.LABEL_OPTIONAL
    message = _FIELD.TYPE_MESSAGE
    _message(file, "BytesList", ("value", 1, _FIELD.TYPE_BYTES, repeated, ""))
    _message(file, "FloatList", ("value", 1, _FIELD.TYPE_FLOAT, repeated, ""))
    _message(file, "Int64List", ("value", 1, _FIELD.TYPE_INT64, repeated, ""))
    feature = _message(file, "Feature",
                       ("bytes_list", 1, message, optional, f".{_PACKAGE}.BytesList"),
                       ("float_list", 2, message, optional, f".{_PACKAGE}.FloatList"),
                       ("int64_list", 3, message, optional, f".{_PACKAGE}.Int64List"))
    feature.oneof_decl.add(name="kind")
    for field in feature.field:
        field.oneof_index = 0
    features = _message(file, "Features", ("feature", 1, message, repeated,
                                           f".{_PACKAGE}.Features.FeatureEntry"))
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=_FIELD.TYPE_STRING, label=optional,
                    json_name="key")
    entry.field.add(name="value", number=2, type=message, label=optional,
                    type_name=f".{_PACKAGE}.Feature", json_name="value")
    _message(file, "Example", ("features", 1, message, optional, f".{_PACKAGE}.Features"))
    return file


def _classes() -> dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(_file().SerializeToString())
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(
        f"{_PACKAGE}.{name}")) for name in
        ("BytesList", "FloatList", "Int64List", "Feature", "Features", "Example")}


_CLASSES = _classes()
#: ``tf.train.BytesList``
BytesList = _CLASSES["BytesList"]
#: ``tf.train.FloatList``
FloatList = _CLASSES["FloatList"]
#: ``tf.train.Int64List``
Int64List = _CLASSES["Int64List"]
#: ``tf.train.Feature``
Feature = _CLASSES["Feature"]
#: ``tf.train.Features``
Features = _CLASSES["Features"]
#: ``tf.train.Example``
Example = _CLASSES["Example"]

__all__ = ["BytesList", "Example", "Feature", "Features", "FloatList", "Int64List"]
