"""Compile pfio's TensorFlow filesystem plugin (``pfio_tf_filesystem.cc``) for the installed
TensorFlow and Python.

The library is kept in ``$XDG_CACHE_HOME/pfio/tf-plugin/<key>/libpfio_tf_filesystem.so``
(``~/.cache/pfio/...``), ``<key>`` naming the TensorFlow version, the Python version and a
digest of the source and the compiler flags, so that a new TensorFlow, Python or pfio builds
a library of its own. :func:`pfio.integrations.tensorflow.plugin.register` builds it on first
use (a few seconds); to build it ahead (a Docker image, CI)::

    python -m pfio.integrations.tensorflow.plugin.build

It needs a C++ compiler (``g++``, or ``$CXX``) and Python's headers (``Python.h``, from the
``python3-dev`` package of Linux distributions); TensorFlow's headers come with its wheel.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from ....cache.base import default_cache_dir

logger = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("pfio_tf_filesystem.cc")
LIBRARY_NAME = "libpfio_tf_filesystem.so"


class BuildError(RuntimeError):
    """The plugin could not be compiled (no compiler, no headers, a compiler error)."""


def _tensorflow() -> Any:
    try:
        import tensorflow as tf
    except ImportError as exc:
        raise BuildError("pfio's TensorFlow plugin needs TensorFlow: pip install "
                         "tensorflow (or tensorflow-cpu)") from exc
    return tf


def _flags(tf: Any) -> list[str]:
    """The compiler's and linker's flags: TensorFlow's (headers, C++ ABI) and Python's
    headers. libpython is not linked (the symbols come from the Python process that loads
    the plugin). TensorFlow's framework library is, for the few C API functions the plugin
    calls (``TF_SetStatus``, ...): TensorFlow 2.21 makes them visible to the libraries it
    loads anyway, but another release need not. No run path: the library is only ever
    loaded by TensorFlow, whose framework library is loaded already (found by its name)."""
    include = sysconfig.get_paths()["include"]
    return ["-shared", "-fPIC", "-O2", "-fvisibility=hidden", *tf.sysconfig.get_compile_flags(),
            f"-I{include}", *tf.sysconfig.get_link_flags()]


def library_path(tf: Any | None = None) -> Path:
    """Where the library for this TensorFlow, this Python and this source is (built or
    not)."""
    tf = tf or _tensorflow()
    digest = hashlib.sha256(SOURCE.read_bytes())
    digest.update("\0".join(_flags(tf)).encode())
    key = (f"tf{tf.__version__}-py{sys.version_info.major}{sys.version_info.minor}-"
           f"{digest.hexdigest()[:16]}")
    return Path(default_cache_dir()) / "tf-plugin" / key / LIBRARY_NAME


def build(force: bool = False) -> str:
    """Compile the plugin unless it is built already (``force``: again); return the
    library's path. The library appears whole (compiled beside its name, then renamed), so
    processes building at once do not see a half-written one.

    Raises:
        BuildError: TensorFlow is not installed, there is no C++ compiler (install ``g++``
            or set ``$CXX``) or no ``Python.h`` (install Python's development headers), or
            the compiler failed (the message ends with its output).
    """
    tf = _tensorflow()
    target = library_path(tf)
    if target.exists() and not force:
        return str(target)
    compiler = os.environ.get("CXX") or "g++"
    if shutil.which(compiler) is None:
        raise BuildError(
            f"no C++ compiler ({compiler!r}) to build pfio's TensorFlow plugin: install one "
            "(apt-get install g++) or set $CXX, then run "
            "`python -m pfio.integrations.tensorflow.plugin.build`")
    if not Path(sysconfig.get_paths()["include"], "Python.h").exists():
        raise BuildError(
            f"no Python.h in {sysconfig.get_paths()['include']} to build pfio's TensorFlow "
            f"plugin: install Python's development headers (apt-get install "
            f"python{sys.version_info.major}.{sys.version_info.minor}-dev)")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=f".{LIBRARY_NAME}.", dir=target.parent)
    os.close(fd)
    try:
        command = [compiler, str(SOURCE), "-o", scratch, *_flags(tf)]
        logger.info("building pfio's TensorFlow plugin: %s", " ".join(command))
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"compiling {SOURCE} failed ({compiler} exited with "
                             f"{done.returncode}):\n{done.stderr[-4000:]}")
        os.replace(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
    return str(target)


def main(argv: list[str] | None = None) -> int:
    """``python -m pfio.integrations.tensorflow.plugin.build``: build the plugin and write
    its path."""
    parser = argparse.ArgumentParser(prog="python -m pfio.integrations.tensorflow.plugin.build",
                                     description="Build pfio's TensorFlow filesystem plugin.")
    parser.add_argument("--force", action="store_true", help="build again even if built")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        path = build(force=args.force)
    except BuildError as exc:
        logger.error("%s", exc)
        return 1
    sys.stdout.write(path + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
