"""The file datasets of each format: a ``tf.data.Dataset`` per file, made by pfio's readers
in ``from_generator`` (or ``tf.data.TFRecordDataset``), and what follows the interleave of
them (parsing, cutting chunks into elements or batches). :func:`.datasets.make_dataset`
assembles them."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from ..._uri import parse_uri, split_container_path
from ..shards import iter_samples, make_decoder
from ..tfrecord import compression_of, iter_records
from ..tfrecord.example import NO_DEFAULT, parse_feature_spec
from .signature import batched, conform, infer_batch_spec, infer_spec

logger = logging.getLogger(__name__)

#: records of a TFRecord file handed to TensorFlow at once by pfio's reader (one Python call
#: per chunk), and the bytes they may hold at most
RECORD_CHUNK = 256
CHUNK_BYTES = 4 << 20
#: records of a TFRecord file in a chunk when ``tf.data.TFRecordDataset`` reads it (smaller:
#: its chunks cannot be bounded in bytes; a chunk of 64 costs the interleave 4x less than
#: single records, 256 about 5x, measured on 1 KiB records)
NATIVE_CHUNK = 64
#: bytes ``tf.data.TFRecordDataset`` asks for at a time of a file not on local disk: left
#: to itself, TensorFlow 2.21 asks a filesystem plugin for up to 128 MiB at once, so reads a
#: whole file before it parses a record of it; 8 MiB reads let parsing overlap the reading
#: (local files keep TensorFlow's default, faster there)
REMOTE_BUFFER = 8 << 20
#: rows of a Parquet file handed to TensorFlow at once, at most
PARQUET_CHUNK = 1024
#: values of ``tfrecord_reader``
TFRECORD_READERS = ("auto", "pfio", "tensorflow")
#: TensorFlow's names of the compressions
_TF_COMPRESSION = {None: "", "gzip": "GZIP", "zlib": "ZLIB"}


class Reader(ABC):
    """One format: a dataset per file, and what follows the interleave.

    A *chunked* reader's file datasets yield chunks of elements (a leading dimension of any
    size), which cross the interleave whole (the interleave costs about as much per element
    whatever its size) and are cut into elements, or batches, after it.
    """

    chunked = False

    @abstractmethod
    def file_dataset(self, url: tf.Tensor) -> tf.data.Dataset:
        """The elements (or chunks) of the file at ``url`` (a string tensor)."""

    def finish(self, dataset: tf.data.Dataset, batch_size: int | None,
               deterministic: bool) -> tf.data.Dataset:
        """The interleaved elements, batched."""
        if not self.chunked:
            return dataset if batch_size is None else dataset.batch(batch_size)
        return dataset.unbatch() if batch_size is None else dataset.rebatch(batch_size)


class TFRecords(Reader):
    """Records (``tf.string``), parsed by ``features`` when given; chunks of records cross
    the interleave, and are parsed as one."""

    chunked = True

    def __init__(self, files: list[str], compression: str | None,
                 fs_options: dict[str, Any], features: Mapping[str, Any] | None,
                 reader: str) -> None:
        self.compression = compression
        self.fs_options = fs_options
        self.features = None if features is None else tf_features(features)
        codecs = {compression_of(url, compression) for url in files}
        self.native = _use_tensorflow(reader, files, codecs, fs_options)
        self.compression_type = _TF_COMPRESSION[codecs.pop()] if self.native else ""
        self.buffer_size = (REMOTE_BUFFER if any(parse_uri(url).scheme != "file"
                                                 for url in files) else None)
        logger.debug("TFRecords read by %s", "tf.data.TFRecordDataset" if self.native
                     else "pfio")

    def chunks(self, url: bytes) -> Iterator[np.ndarray]:
        """The records of one file, up to :data:`RECORD_CHUNK` records and
        :data:`CHUNK_BYTES` bytes at a time."""
        chunk: list[bytes] = []
        size = 0
        for record in iter_records(url.decode(), compression=self.compression,
                                   **self.fs_options):
            chunk.append(record)
            size += len(record)
            if len(chunk) == RECORD_CHUNK or size >= CHUNK_BYTES:
                yield _strings(chunk)
                chunk, size = [], 0
        if chunk:
            yield _strings(chunk)

    def file_dataset(self, url: tf.Tensor) -> tf.data.Dataset:
        if self.native:
            records = tf.data.TFRecordDataset(url, compression_type=self.compression_type,
                                              buffer_size=self.buffer_size)
            return records.batch(NATIVE_CHUNK)
        return tf.data.Dataset.from_generator(
            self.chunks, args=(url,), output_signature=tf.TensorSpec([None], tf.string))

    def finish(self, dataset: tf.data.Dataset, batch_size: int | None,
               deterministic: bool) -> tf.data.Dataset:
        if self.features is not None:
            spec = self.features
            dataset = dataset.map(lambda chunk: tf.io.parse_example(chunk, spec),
                                  num_parallel_calls=tf.data.AUTOTUNE,
                                  deterministic=deterministic)
        return super().finish(dataset, batch_size, deterministic)


def _use_tensorflow(reader: str, files: list[str], codecs: set[str | None],
                    fs_options: dict[str, Any]) -> bool:
    """Whether ``tf.data.TFRecordDataset`` reads the files (see ``tfrecord_reader``).

    Raises:
        ValueError: ``"tensorflow"`` for files it cannot read that way.
    """
    if reader == "pfio":
        return False
    schemes = set(tf.io.gfile.get_registered_schemes())
    unreadable = next((url for url in files if not _tensorflow_opens(url, schemes)), None)
    why = None
    if fs_options:
        why = "filesystem options are given (TensorFlow cannot take them)"
    elif unreadable is not None:
        why = (f"TensorFlow has no filesystem for {unreadable} (register pfio's: "
               "pfio.integrations.tensorflow.register_filesystem())")
    elif len(codecs) > 1:
        why = "the files are compressed in different ways"
    if why is None:
        return True
    if reader == "tensorflow":
        raise ValueError(f"tfrecord_reader='tensorflow' cannot read these files: {why}")
    return False


def _tensorflow_opens(url: str, schemes: set[str]) -> bool:
    """Whether TensorFlow's own filesystems (or plugins registered) open ``url``."""
    uri = parse_uri(url)
    if uri.scheme == "file":
        return not split_container_path(uri.path)[1]  # not a member of a zip or tar
    return uri.scheme in schemes


def tf_features(features: Mapping[str, Any]) -> dict[str, Any]:
    """A TensorFlow parse spec of ``features``: ``tf.io.FixedLenFeature``,
    ``VarLenFeature``, ``RaggedFeature``... as they are, and pfio's feature specs
    (:func:`pfio.integrations.tfrecord.parse_example`'s: ``"int64"``, ``("float", (4,))``,
    ``("float", None)``, ``("bytes", (), b"")``) as the features that parse the same values:
    a shape as a ``FixedLenFeature`` of that shape (with the default), None as a
    ``RaggedFeature`` (any number of values).

    Raises:
        ValueError: a malformed pfio spec (the message names the feature).
    """
    dtypes = {"int64": tf.int64, "float": tf.float32, "bytes": tf.string}
    out: dict[str, Any] = {}
    for name, spec in features.items():
        if not isinstance(spec, str) and type(spec) not in (tuple, list):
            out[name] = spec  # one of tf.io's features (named tuples)
            continue
        kind, shape, default = parse_feature_spec(name, spec)
        if shape is None:
            out[name] = tf.io.RaggedFeature(dtypes[kind])
        else:
            out[name] = tf.io.FixedLenFeature(
                shape, dtypes[kind], default_value=None if default is NO_DEFAULT else default)
    return out


def _strings(items: list[bytes]) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


class Shards(Reader):
    """Samples of webdataset shards as dicts of tensors."""

    def __init__(self, files: list[str], decode: Any, signature: Any) -> None:
        self.decoder = make_decoder(decode)
        self.signature = signature if signature is not None else self._infer(files)

    def _decoded(self, url: str) -> Generator[dict[str, Any], None, None]:
        for _, sample in iter_samples(url):
            yield self.decoder(sample) if self.decoder is not None else sample

    def _infer(self, files: list[str]) -> Any:
        for url in files:
            samples = self._decoded(url)
            try:
                first = next(samples, None)
            finally:
                samples.close()
            if first is not None:
                return infer_spec(first, f"{url}: sample {first['__key__']!r}")
        raise ValueError(f"no samples in any of the {len(files)} shards ({files[0]}, ...) to "
                         "infer the output_signature from")

    def samples(self, url: bytes) -> Iterator[Any]:
        """The samples of one shard, laid out as the signature says."""
        where = url.decode()
        for sample in self._decoded(where):
            yield conform(sample, self.signature, f"{where}: sample {sample['__key__']!r}")

    def file_dataset(self, url: tf.Tensor) -> tf.data.Dataset:
        return tf.data.Dataset.from_generator(self.samples, args=(url,),
                                              output_signature=self.signature)


class Parquet(Reader):
    """Rows of Parquet files as dicts of tensors, read (and interleaved) a chunk of up to
    :data:`PARQUET_CHUNK` rows at a time."""

    chunked = True

    def __init__(self, files: list[str], columns: Iterable[str] | None,
                 signature: Mapping[str, Any] | None) -> None:
        if columns is not None:
            self.columns: list[str] | None = list(columns)
        else:
            self.columns = list(signature) if signature is not None else None
        row = signature if signature is not None else self._infer(files)
        if not isinstance(row, Mapping):
            raise TypeError("a Parquet output_signature is a dict {column: tf.TensorSpec}")
        self.signature = batched(dict(row))

    def _batches(self, url: str) -> Iterator[dict[str, Any]]:
        from ..parquet import BatchReader  # pyarrow: only for Parquet sources

        reader = BatchReader(url, batch_size=PARQUET_CHUNK, columns=self.columns, rank=0,
                             world_size=1)
        return iter(reader)

    def _infer(self, files: list[str]) -> dict[str, tf.TensorSpec]:
        for url in files:
            batches = self._batches(url)
            try:
                batch = next(batches, None)
            finally:
                # BatchReader.__iter__ is a generator: close() ends it (and its file)
                batches.close()  # type: ignore[attr-defined]
            if batch is not None:
                return infer_batch_spec(batch, url)
        raise ValueError(f"no rows in any of the {len(files)} Parquet files ({files[0]}, "
                         "...) to infer the output_signature from")

    def batches(self, url: bytes) -> Iterator[Any]:
        """The rows of one file, a batch of columns at a time."""
        where = url.decode()
        for batch in self._batches(where):
            yield conform(batch, self.signature, where)

    def file_dataset(self, url: tf.Tensor) -> tf.data.Dataset:
        return tf.data.Dataset.from_generator(self.batches, args=(url,),
                                              output_signature=self.signature)

