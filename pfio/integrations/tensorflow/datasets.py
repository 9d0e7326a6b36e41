"""``make_dataset``: TFRecord files, webdataset shards and Parquet datasets on any pfio URL
as a ``tf.data.Dataset``.

The dataset is an interleave over files: ``num_parallel_reads`` files are read at once, one
sample (webdataset), or one chunk of records (TFRecord) or rows (Parquet), from each in
turn; ``deterministic=True`` keeps that
order whatever the timing. Chunks cross the interleave whole because it costs about as much
per element whatever the element's size: record by record it would cost more than the
reading.
Each file is read by pfio's own reader (:func:`pfio.integrations.tfrecord.iter_records`,
:func:`pfio.integrations.shards.iter_samples`,
:class:`pfio.integrations.parquet.BatchReader`) inside ``tf.data.Dataset.from_generator``,
so every scheme pfio knows works, with pfio's retries and checks, in the threads of
tf.data; TFRecord files that TensorFlow can open itself (local files, schemes registered
with it, as pfio's plugin registers them) may be read by ``tf.data.TFRecordDataset``
instead (``tfrecord_reader``).

An error while reading (a corrupt record, a missing file, an element that does not fit the
signature) comes out of the iteration as a ``tf.errors.OpError`` whose message holds
pfio's (``InvalidArgumentError`` for a ``ValueError``, ``UnknownError`` for most others).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import tensorflow as tf

from .readers import TFRECORD_READERS, Parquet, Reader, Shards, TFRecords
from .sources import FORMATS, InputContext, list_files, pipeline_files

logger = logging.getLogger(__name__)


def make_dataset(source: str | Iterable[str], *, format: str = "infer",
                 features: Mapping[str, Any] | None = None,
                 columns: Iterable[str] | None = None, decode: Any = None,
                 shuffle_files: bool = False, seed: int = 0,
                 num_parallel_reads: int = tf.data.AUTOTUNE, deterministic: bool = True,
                 input_context: InputContext | None = None, output_signature: Any = None,
                 batch_size: int | None = None, compression: str | None = "infer",
                 tfrecord_reader: str = "auto", **fs_options: Any) -> tf.data.Dataset:
    """A ``tf.data.Dataset`` of the records, samples or rows of ``source``.

    ==============  ===============================================================
    format          each element (before ``batch_size``)
    ==============  ===============================================================
    ``tfrecord``    a record as a ``tf.string`` scalar; with ``features``, the dict
                    of tensors ``tf.io.parse_single_example`` makes of it
    ``webdataset``  a sample as a dict of tensors: ``__key__``, ``__url__`` and each
                    field (bytes as ``tf.string``, values ``decode`` makes as numbers
                    and arrays; see :mod:`pfio.integrations.tensorflow.signature`)
    ``parquet``     a row as a dict of tensors, one per column (a fixed-shape
                    ndarray or image column gives tensors of that shape)
    ==============  ===============================================================

    Files: ``source`` is a URL, a brace pattern, a glob pattern or a list of them; a
    directory (or S3 prefix, or zip/tar container) stands for the files under it whose names
    show the format (``.tfrecord``, ``.tfrecord.gz``, ``x.tfrecord-00000-of-00010``,
    ``.tar``, ``.tar.gz``, ``.parquet``); see :mod:`pfio.integrations.tensorflow.sources`.

    Order: files are read ``num_parallel_reads`` at a time, taking in turn one sample of
    each (webdataset), or a chunk of records (TFRecord: 64 read by TensorFlow, up to 256
    and 4 MiB read by pfio) or of up to 1024 rows (Parquet). With ``deterministic=True``
    the order is the same on every run (for a ``seed``); with False elements come as they
    are ready (faster when reads vary in time). ``shuffle_files``
    shuffles the files with tf.data's ``shuffle(seed=seed)``, again on each pass over the
    dataset (``repeat()``, or a new iterator per epoch); the orders depend on ``seed`` and on
    TensorFlow's global seed (``tf.random.set_seed``). Elements within a file stay in order:
    shuffle elements with ``dataset.shuffle(n)``.

    Distribution: with an ``input_context`` (``tf.distribute.Strategy.
    distribute_datasets_from_function`` passes one), this input pipeline reads file ``i`` of
    the listing when ``i % num_input_pipelines == input_pipeline_id``: the pipelines read
    disjoint sets of whole files that together cover the source (before any shuffling, so
    every pipeline agrees). It needs at least as many files as pipelines. ``batch_size`` is
    this pipeline's (``input_context.get_per_replica_batch_size(global_batch_size)``).

    Args:
        source: URLs, a brace pattern (``"s3://b/train-{0000..0099}.tfrecord"``), a glob
            pattern, or a directory.
        format: ``"infer"`` (from the file names), ``"tfrecord"``, ``"webdataset"`` or
            ``"parquet"``.
        features: (tfrecord) a parse spec ``{name: tf.io.FixedLenFeature(...)}`` (any of
            tf.io's features), or pfio's (``{"label": "int64", "x": ("float", (4,))}``, see
            :func:`~pfio.integrations.tensorflow.readers.tf_features`); None yields the
            records as bytes.
        columns: (parquet) the columns to read (default: all, or those of
            ``output_signature``).
        decode: (webdataset) how fields are decoded, as
            :func:`~pfio.integrations.shards.make_decoder` takes it (``"numpy"`` for images
            as HWC uint8 arrays, ``"basic"``, ``{ext: f}``, ...); None leaves them bytes.
        shuffle_files: shuffle the order of the files (see Order).
        seed: the seed of ``shuffle_files``.
        num_parallel_reads: files read at once (``tf.data.AUTOTUNE``: as many as TensorFlow
            finds worth it); 1 reads the files one after the other.
        deterministic: keep the interleaved order whatever the timing of reads.
        input_context: this input pipeline's place among the pipelines (see Distribution).
        output_signature: (webdataset, parquet) the spec of one sample or row: a dict of
            ``tf.TensorSpec`` (None in a shape for a dimension that varies; other fields are
            dropped, dtypes cast within a kind). Default: inferred from the first sample, or
            the first rows, of the first file; a later element that does not fit raises
            ``ValueError`` naming it.
        batch_size: batch the elements (the last batch may be smaller); for TFRecords with
            ``features``, whole batches are parsed at once (``tf.io.parse_example``).
        compression: (tfrecord) ``None``, ``"gzip"``, ``"zlib"`` (any case), or ``"infer"``
            from the name (``.gz``, ``.zlib``).
        tfrecord_reader: (tfrecord) who reads the files: ``"pfio"`` (pfio's reader in
            ``from_generator``: any pfio URL, zip and tar members, ``fs_options``),
            ``"tensorflow"`` (``tf.data.TFRecordDataset``: local files, and the schemes
            registered with TensorFlow, as :func:`register_filesystem` registers pfio's),
            or ``"auto"``: TensorFlow's reader where it can read every file, else pfio's.
        fs_options: options of :func:`pfio.from_url` (``endpoint=...``), for listing and for
            reading TFRecords. Webdataset shards and Parquet files are read with the options
            pfio takes from the environment and its configuration.

    Raises:
        ValueError: an unknown format, files of several formats, options that do not apply
            to the format, fewer files than input pipelines, a first element that has no
            tensor form.
        FileNotFoundError: no files at ``source``.
    """
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    if num_parallel_reads != tf.data.AUTOTUNE and num_parallel_reads < 1:
        raise ValueError("num_parallel_reads must be at least 1, or tf.data.AUTOTUNE")
    options = {"features": features, "columns": columns, "decode": decode,
               "output_signature": output_signature, "compression": compression,
               "tfrecord_reader": tfrecord_reader}
    if format in FORMATS:  # known already: no listing before an error in the arguments
        _check_options(format, fs_options=fs_options, **options)
    fmt, files = list_files(source, format, **fs_options)
    files = pipeline_files(files, input_context)
    _check_options(fmt, fs_options=fs_options, **options)
    if fmt == "tfrecord":
        reader: Reader = TFRecords(files, compression, fs_options, features,
                                    tfrecord_reader)
    elif fmt == "webdataset":
        reader = Shards(files, decode, output_signature)
    else:
        reader = Parquet(files, columns, output_signature)
    logger.info("tf.data over %d %s files (%s)", len(files), fmt,
                "all" if input_context is None else
                f"pipeline {input_context.input_pipeline_id} of "
                f"{input_context.num_input_pipelines}")
    names = tf.data.Dataset.from_tensor_slices(files)
    if shuffle_files:
        names = names.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
    parallel = num_parallel_reads if num_parallel_reads == tf.data.AUTOTUNE else \
        min(num_parallel_reads, len(files))
    concurrent = {} if parallel == 1 else {"num_parallel_calls": parallel,
                                           "deterministic": deterministic}
    dataset = names.interleave(reader.file_dataset, cycle_length=parallel, block_length=1,
                               **concurrent)
    return reader.finish(dataset, batch_size, deterministic)


def _check_options(fmt: str, *, fs_options: dict[str, Any], **given: Any) -> None:
    """Options given that do not apply to ``fmt`` raise (rather than be ignored)."""
    applies = {"features": "tfrecord", "columns": "parquet", "decode": "webdataset",
               "compression": "tfrecord", "tfrecord_reader": "tfrecord"}
    defaults = {"compression": "infer", "tfrecord_reader": "auto"}
    for name, value in given.items():
        if name == "output_signature":
            if value is not None and fmt == "tfrecord":
                raise ValueError("output_signature does not apply to TFRecords: records are "
                                 "bytes, or what features= parses them into")
            continue
        if value != defaults.get(name) and applies[name] != fmt:
            raise ValueError(f"{name}= applies to {applies[name]} sources; this one is {fmt}")
    if given["tfrecord_reader"] not in TFRECORD_READERS:
        raise ValueError(f"unknown tfrecord_reader {given['tfrecord_reader']!r}: use one of "
                         f"{TFRECORD_READERS}")
    if fs_options and fmt != "tfrecord":
        raise ValueError(f"filesystem options ({', '.join(sorted(fs_options))}) are not "
                         f"taken by pfio's {fmt} reader: configure the filesystem through "
                         "the environment or pfio's configuration file")
