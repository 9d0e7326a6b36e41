"""TFRecord files on any pfio URL, without TensorFlow (``pip install 'pfio[tfrecord]'``).

    from pfio.integrations.tfrecord import TFRecordWriter, iter_records, make_example, \\
        parse_example

    with TFRecordWriter("s3://bucket/train-00000.tfrecord") as writer:   # published on close
        writer.write(make_example({"image": jpeg_bytes, "label": 3}))

    for record in iter_records("s3://bucket/train-00000.tfrecord"):     # one GET on S3
        example = parse_example(record, {"image": "bytes", "label": "int64"})

* :mod:`.reader`: :func:`iter_records` and :func:`iter_records_with_offsets` (for
  resuming): sequential large reads, every record's CRCs checked, :class:`TFRecordError`
  naming the file and the record's byte offset for a corrupt or truncated record;
* :mod:`.writer`: :class:`TFRecordWriter`, the bytes ``tf.io.TFRecordWriter`` writes,
  published atomically;
* :mod:`.files`: compression (``"gzip"``, ``"zlib"``, ``"infer"``) and opening on any URL;
* :mod:`.framing`: the record format and its masked CRC-32C (``google-crc32c``);
* :mod:`.example` and :mod:`.example_proto`: ``tf.train.Example`` as protobuf classes
  built here (:class:`Example`, :class:`Features`, :class:`Feature`, :class:`BytesList`,
  :class:`FloatList`, :class:`Int64List`), :func:`parse_example` and :func:`make_example`
  (they need ``protobuf`` and ``numpy``, imported when first used).

``pfio.integrations.torch.PfioTFRecordDataset`` reads TFRecord shards as a PyTorch dataset.
"""

from __future__ import annotations

import importlib
from typing import Any

from .files import compression_of
from .framing import TFRecordError, masked_crc
from .reader import iter_records, iter_records_with_offsets
from .writer import TFRecordWriter

_LAZY = {
    "parse_example": "example", "make_example": "example", "check_features": "example",
    "FeatureSpec": "example", "parse_feature_spec": "example", "NO_DEFAULT": "example",
    "Example": "example_proto", "Features": "example_proto", "Feature": "example_proto",
    "BytesList": "example_proto", "FloatList": "example_proto",
    "Int64List": "example_proto",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["NO_DEFAULT", "BytesList", "Example", "Feature", "FeatureSpec", "Features",
           "FloatList", "Int64List", "TFRecordError", "TFRecordWriter", "check_features",
           "compression_of", "iter_records", "iter_records_with_offsets", "make_example",
           "masked_crc", "parse_example", "parse_feature_spec"]
