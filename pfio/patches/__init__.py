"""Patches: path-only APIs accept remote URIs.

Much training code hands path strings to libraries that open files themselves (OpenCV and HDF5
open paths in C). One call at the start of a script makes that code read and write
``s3://``, ``hdfs://``, ``mem://`` URLs and archive members (``s3://b/train.zip/img/1.jpg``),
and make, copy, rename and remove files and directories there::

    import pfio
    pfio.patch_all()
    img = cv2.imread("s3://bucket/train/0001.jpg")

Targets: ``builtins`` (``open``/``io.open``, and the copies of ``open`` that ``tarfile`` and
``bz2`` keep, so ``tarfile``, ``gzip``, ``bz2``, ``lzma`` and ``zipfile`` open URLs),
``os`` (``stat``, ``lstat``, ``access``, ``listdir``, ``scandir``, and so ``walk``;
``remove``/``unlink``, ``rmdir``, ``mkdir``, ``makedirs``, ``rename``/``replace`` and
``os.path.samefile``), ``os.path`` (``exists``, ``lexists``, ``isfile``, ``isdir``,
``islink``, ``getsize``, ``getmtime``, ``abspath``), ``glob`` (``glob``, ``iglob``),
``shutil`` (``copyfile``, ``copy``, ``copy2``, ``copytree``, ``rmtree``, ``move``; it brings
``builtins``, ``os`` and ``os.path`` with it, see :data:`REQUIRES`), ``cv2``, ``pandas``
(HDF5; the readers ``read_csv``, ``read_json``, ``read_parquet``, ... through pfio's fsspec
protocol; the writers ``to_csv``, ``to_json``, ``to_pickle``, ``to_parquet``, ``to_feather``),
``PIL`` (``Image.open``, ``Image.save``), ``numpy``, ``torch`` (``load``, ``save``,
``jit.load``, ``jit.save``), ``h5py`` (``File``), ``soundfile`` (``SoundFile``, and so
``read``, ``write``, ``info``), ``chainer`` and ``pytorch_pfn_extras`` (their snapshot
extensions, see :mod:`pfio.patches.snapshots`).
An ``os.PathLike`` whose path is a URL (an entry of the patched ``os.scandir``) is taken as
the URL, wherever the patched call takes its path (``torch.save(obj, path)``,
``np.save(file=path)``). A dataset class written for local disk (``os.scandir`` of a root,
``os.walk`` of class folders, ``PIL.Image.open`` of files) thus runs unchanged on
``s3://b/train``, ``s3://b/train.zip`` or ``mem://store``. Patches apply whether the library
is imported before or after ``patch_all()``; patching twice is harmless; ``unpatch_all``
restores the original objects exactly. Arguments that are not remote URIs go to the original
function untouched; a URL of a scheme nothing serves is passed on too, with a warning logged
once per scheme.

With ``patch_all(cache=True)`` files that patches stream (``open``, PIL, numpy, torch, h5py,
soundfile) are read through the default object cache, so a second epoch reads local disk.

Processes started by spawn or forkserver (DataLoader workers) re-apply the parent's patches
at startup, whatever their modules import: the parent exports them in the ``PFIO_PATCHES``
environment variable, and the ``pfio-patches.pth`` startup hook installed with pfio applies
them in the processes that ``multiprocessing`` starts by spawn and in its forkserver (it
costs a dictionary lookup when the variable is unset). Other Python processes, such as a
tool the script runs with ``subprocess``, ignore the variable and start unpatched: they
call ``pfio.patch_all()`` themselves if they want patches. A forkserver
keeps the environment of its start, so call ``patch_all()`` before the first DataLoader or
Pool that uses one (pfio logs a warning otherwise).

A URL written through a patch (``cv2.imwrite``, ``numpy.save``, ``open(url, "w")``, ...), or
removed or renamed through one (``os.remove``, ``os.rename``, ``shutil.rmtree``, ...), is
fetched anew by the next spooled read of it in the same process, whatever the object cache's
validation policy.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator

from . import locate, machinery

#: every target and the modules that declare its patches
TARGETS: dict[str, tuple[str, ...]] = {
    "builtins": ("pfio.patches.builtin_open",),
    "os": ("pfio.patches.os_dirs", "pfio.patches.os_write"),
    "os.path": ("pfio.patches.os_path",),
    "glob": ("pfio.patches.glob_patterns",),
    "shutil": ("pfio.patches.shutil_ops",),
    "cv2": ("pfio.patches.opencv",),
    "pandas": ("pfio.patches.pandas_hdf", "pfio.patches.pandas_readers",
               "pfio.patches.pandas_writers"),
    "PIL": ("pfio.patches.pillow", "pfio.patches.pillow_save"),
    "numpy": ("pfio.patches.numpy_io",),
    "torch": ("pfio.patches.torch_io",),
    "h5py": ("pfio.patches.h5py_file",),
    "soundfile": ("pfio.patches.soundfile_io",),
    "chainer": ("pfio.patches.snapshots",),
    "pytorch_pfn_extras": ("pfio.patches.snapshots",),
}

#: targets that patching a target brings with it: ``shutil`` works through the patched
#: ``open``, ``os`` and ``os.path`` (``shutil.copyfile`` opens both files with ``open``,
#: ``shutil.move`` renames with ``os.rename``, ...)
REQUIRES: dict[str, tuple[str, ...]] = {
    "shutil": ("builtins", "os", "os.path"),
    "chainer": ("builtins", "os", "os.path", "shutil"),
    "pytorch_pfn_extras": ("builtins", "os", "os.path", "shutil"),
}


def _names(targets: Iterable[str] | str | None, with_required: bool = False) -> list[str]:
    names = list(TARGETS) if targets is None else \
        [targets] if isinstance(targets, str) else list(targets)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise ValueError(f"unknown patch targets {unknown}: choose from {sorted(TARGETS)}")
    if with_required:
        names += [r for n in names for r in REQUIRES.get(n, ()) if r not in names]
    machinery.load_target_modules(names, TARGETS)
    return names


def patch_all(targets: Iterable[str] | str | None = None, *,
              cache: bool | None = None) -> list[str]:
    """Patch ``targets`` (default: all of them) and the targets they require
    (:data:`REQUIRES`); return the targets active afterwards.

    ``cache=True`` reads the files that patches stream through the default object cache
    (:func:`pfio.cache.object_cache.default_object_cache`), ``False`` straight from their
    filesystems; None keeps the current choice (off unless inherited from the parent).
    """
    names = _names(targets, with_required=True)
    if cache is not None:
        locate.set_cache(cache)
    machinery.apply(names)
    return machinery.active_targets()


def unpatch_all(targets: Iterable[str] | str | None = None) -> list[str]:
    """Remove the patches of ``targets`` (default: all); return the targets still active.
    The targets a target brought with it (:data:`REQUIRES`) stay, unless named too."""
    machinery.remove(_names(targets))
    return machinery.active_targets()


@contextlib.contextmanager
def patched(targets: Iterable[str] | str | None = None, *,
            cache: bool | None = None) -> Iterator[list[str]]:
    """Patch ``targets`` inside a ``with`` block (``cache`` as for :func:`patch_all`); on
    exit remove only what it added and put the cache choice back."""
    names = _names(targets, with_required=True)
    added = [n for n in names if n not in machinery.active_targets()]
    cached_before = locate.cache_on()
    patch_all(names, cache=cache)
    try:
        yield machinery.active_targets()
    finally:
        unpatch_all(added)
        locate.set_cache(cached_before)


def reapply_inherited() -> list[str]:
    """Apply the targets that ``PFIO_PATCHES`` names when this process inherits them: when
    ``multiprocessing`` started it by spawn, or it is the forkserver (see
    :func:`~.machinery.started_by_multiprocessing`); return the targets applied (none
    otherwise). ``import pfio`` calls it."""
    names = [n for n in os.environ.get(machinery.ENV_VAR, "").split(",") if n]
    if not names or not machinery.started_by_multiprocessing():
        return []
    return patch_all(names)


def active_patches() -> list[str]:
    """The targets patched now."""
    return machinery.active_targets()


def patched_functions() -> list[str]:
    """The attributes wrapped now, as dotted names (``cv2.imread``, ...)."""
    return machinery.installed_attributes()


__all__ = ["REQUIRES", "TARGETS", "active_patches", "patch_all", "patched", "patched_functions",
           "reapply_inherited", "unpatch_all"]
