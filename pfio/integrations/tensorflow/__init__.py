"""pfio for TensorFlow: ``tf.data`` datasets over pfio URLs, and a filesystem plugin for
``tf.io.gfile``/``tf.data``/Keras.

    from pfio.integrations.tensorflow import make_dataset, register_filesystem

    dataset = make_dataset("s3://bucket/train-{0000..0099}.tfrecord",
                           features={"label": tf.io.FixedLenFeature([], tf.int64)},
                           shuffle_files=True, batch_size=256)
    register_filesystem()               # tf.io.gfile, TFRecordDataset, Keras on s3:// too

* :func:`make_dataset`: TFRecord files, webdataset shards or Parquet datasets as a
  ``tf.data.Dataset``, files interleaved in parallel, deterministic, split between
  ``tf.distribute`` input pipelines (:mod:`.datasets`; files listed by :mod:`.sources`,
  read per format by :mod:`.readers`, elements made tensors by :mod:`.signature`);
* :func:`register_filesystem`: :func:`pfio.integrations.tensorflow.plugin.register`, imported
  when first used (the plugin needs ``fsspec`` and a C++ compiler, the datasets neither).
"""

from __future__ import annotations

import importlib
from typing import Any

from .datasets import make_dataset


def __getattr__(name: str) -> Any:
    if name != "register_filesystem":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    register = importlib.import_module(".plugin", __name__).register
    globals()[name] = register
    return register


__all__ = ["make_dataset", "register_filesystem"]
