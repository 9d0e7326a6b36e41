"""Ray Data over pfio: a fast pyarrow filesystem, and pfio Parquet datasets as Ray Datasets.

* :func:`filesystem` is a ``pyarrow.fs.FileSystem`` over every pfio URL for Ray's readers
  and writers (``read_parquet``, ``read_images``, ``write_parquet``, ...): paths are pfio
  URLs (``s3://bucket/prefix``, ``mem://store/x``) or local paths. Parquet reads fetch each
  column chunk with one ranged GET of pfio's S3 client::

      from pfio.integrations.ray import filesystem
      ds = ray.data.read_parquet("s3://bucket/table", filesystem=filesystem())

* :func:`read_dataset` reads a dataset pfio wrote (:mod:`pfio.integrations.parquet`) with
  its fields decoded from the schema stored in the files: fixed-shape arrays as one
  ``(N, *shape)`` array per batch, images and ``.npy`` arrays decoded::

      ds = read_dataset("s3://bucket/train", columns=["image", "label"])
      for batch in ds.iter_torch_batches(batch_size=64):
          batch["image"]  # a uint8 tensor (64, H, W, C)

* :func:`write_dataset` writes a Ray Dataset as a pfio dataset (the schema in every file,
  one flat ``part-NNNNN.parquet`` per write task, each published atomically), which pfio's
  readers, :func:`read_dataset` and ``spark.read.parquet`` read.

Ray's workers find S3 settings as pfio does everywhere: in ``filesystem(**options)``, or in
their environment (``ray.init(runtime_env={"env_vars": {...}})`` hands it to them).
"""

from .datasets import PartsSink, read_dataset, write_dataset
from .filesystem import PfioHandler, filesystem

__all__ = ["PartsSink", "PfioHandler", "filesystem", "read_dataset", "write_dataset"]
