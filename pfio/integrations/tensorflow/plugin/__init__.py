"""A TensorFlow filesystem plugin for pfio URLs: ``tf.io.gfile``, ``tf.data``, Keras and
SavedModel read and write through pfio.

::

    from pfio.integrations.tensorflow.plugin import register

    register()                                # pfio://, s3:// and hdfs://
    tf.io.gfile.listdir("s3://bucket/train")
    tf.data.TFRecordDataset(tf.io.gfile.glob("s3://bucket/train/*.tfrecord"))
    model.save("s3://bucket/models/m.keras")
    tf.saved_model.save(module, "pfio://s3/bucket/exported")
    tf.io.gfile.GFile("pfio://s3/bucket/data.zip/x.tfrecord", "rb")   # a member of a zip

``pfio://`` URLs are spelt as pfio's fsspec protocol spells them: ``pfio://s3/bucket/key``,
``pfio://mem/store/x``, ``pfio://file/abs/path``, ``pfio://hdfs/namenode/path``, and through
zip and tar containers (read-only). S3 settings (endpoint, credentials) come from the
environment and pfio's configuration, as for :func:`pfio.from_url`.

What TensorFlow sees is pfio's behaviour:

* a file written is published when TensorFlow closes it, whole (on S3, one PUT or a
  multipart upload completed on close); ``flush`` makes nothing visible before. A file
  dropped without ``close`` publishes nothing. TensorFlow's ``GFile`` closes its file when
  its ``with`` block ends, by an exception too (TensorFlow does not tell the plugin), so
  what was written until then is published;
* append (``GFile(url, "a")``) works where the backend appends (local files, ``mem://``,
  HDFS), and S3 refuses it (``tf.errors.UnimplementedError``);
* S3 has no directories: ``makedirs`` does nothing there and a prefix is a directory
  while objects are under it;
* errors are TensorFlow's: a missing file is a ``tf.errors.NotFoundError``, an existing one
  ``AlreadyExistsError``, a denied one ``PermissionDeniedError``, a directory where a file
  is wanted (or the reverse) ``FailedPreconditionError``, an unsupported mode
  ``UnimplementedError``.

The plugin is a small C++ library that TensorFlow loads into this Python process; each
operation calls :mod:`.bridge`, which does it with pfio. It is compiled for the installed
TensorFlow and Python on first use (see :mod:`.build`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from . import bridge

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_registered: set[str] = set()


#: what :func:`register` registers by default, those TensorFlow has no filesystem for
#: (TensorFlow 2.21 has none for any of them: it dropped ``s3://`` in 2.6 and ``hdfs://``
#: later; tensorflow-io registers its own when imported)
DEFAULT_SCHEMES = ("pfio", "s3", "hdfs")


def register(schemes: Iterable[str] | None = None) -> str:
    """Make TensorFlow read and write URLs of ``schemes`` through pfio, in this process;
    return the path of the plugin library.

    By default: ``pfio://`` (every pfio URL, as ``pfio://scheme/...``), ``s3://`` and
    ``hdfs://``, each unless TensorFlow serves it already. Any scheme pfio serves may be
    given (``"mem"``, ...). Calling it again is harmless: schemes already registered are
    left as they are, new ones are added.

    Raises:
        .build.BuildError: the plugin is not built and cannot be (no compiler, see
            :mod:`.build`), or TensorFlow is not installed.
        ValueError: TensorFlow already has a filesystem of its own for one of
            ``schemes`` (a scheme has one filesystem per process).
    """
    from .build import build  # not at import: `python -m ...plugin.build` runs it as __main__

    with _lock:
        path = build()  # BuildError when TensorFlow is missing too
        import tensorflow as tf

        served = set(tf.io.gfile.get_registered_schemes())
        if schemes is None:
            schemes = [s for s in DEFAULT_SCHEMES if s in _registered or s not in served]
        wanted = [s for s in dict.fromkeys(schemes) if s not in _registered]
        if not wanted:
            return path
        taken = sorted(set(wanted) & served)
        if taken:
            raise ValueError(f"TensorFlow already has a filesystem for {', '.join(taken)}:// "
                             "(a scheme serves one filesystem per process); register the "
                             "others, or use pfio://SCHEME/... URLs")
        bridge.offer_schemes(wanted)
        try:
            tf.experimental.register_filesystem_plugin(path)
        finally:
            bridge.take_schemes()  # none left for a later load
        _registered.update(wanted)
        logger.info("TensorFlow reads %s through pfio",
                    ", ".join(f"{s}://" for s in wanted))
        return path


def registered_schemes() -> list[str]:
    """The schemes :func:`register` registered with TensorFlow in this process."""
    return sorted(_registered)


__all__ = ["DEFAULT_SCHEMES", "register", "registered_schemes"]
