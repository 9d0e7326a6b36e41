"""pandas writers accept remote URIs: ``DataFrame``/``Series`` ``to_csv``, ``to_json``,
``to_pickle``, and ``DataFrame.to_parquet``, ``to_feather`` (``to_hdf`` is in
:mod:`pfio.patches.pandas_hdf`).

pandas hands a URL to fsspec, which needs a package per scheme (``s3fs`` for ``s3://``)
configured apart from pfio, knows no ``mem://`` and no pfio INI scheme, and publishes what
was written when a write fails half-way. So a URL that pfio serves is written by pfio: pandas
writes a local temporary file that keeps the URL's extension (so ``compression="infer"``
infers from it, ``x.csv.gz`` is gzipped), uploaded when the call returns and dropped when it
raises: the object appears whole or not at all. A call that passes ``storage_options`` is
meant for fsspec and goes to pandas untouched, as do local paths and file objects.
``to_parquet(partition_cols=...)`` writes a directory of files: it goes to pandas with the
URL in the spelling of pfio's fsspec protocol (see :mod:`pfio.patches.pandas_readers`), each
file published whole as it is closed.
``mode="a"`` (``to_csv``, ``to_json(lines=True)``) first copies the existing object.
"""

from __future__ import annotations

from typing import Any

from .machinery import PatchSpec, define_target
from .pandas_readers import fsspec_path
from .targets import is_remote, upload_on_success


def _writer(parameter: str) -> Any:
    """The wrapper of a pandas writer whose path argument is ``parameter`` (first
    positional, or by name)."""

    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        url = args[0] if args else kwargs.get(parameter)
        if not is_remote(url) or kwargs.get("storage_options") is not None:
            return wrapped(*args, **kwargs)
        kwargs = {k: v for k, v in kwargs.items() if k != parameter}
        if kwargs.get("partition_cols"):
            return wrapped(fsspec_path(url), *args[1:], **kwargs)
        appending = "a" in str(kwargs.get("mode", "w"))
        with upload_on_success(url, download_first=appending) as path:
            return wrapped(path, *args[1:], **kwargs)

    return wrapper


#: the writers: (name, owner, path parameter)
WRITERS = [
    ("to_csv", "core.generic.NDFrame", "path_or_buf"),
    ("to_json", "core.generic.NDFrame", "path_or_buf"),
    ("to_pickle", "core.generic.NDFrame", "path"),
    ("to_parquet", "core.frame.DataFrame", "path"),
    ("to_feather", "core.frame.DataFrame", "path"),
]

define_target("pandas", [PatchSpec("pandas", name, _writer(parameter), owner=owner,
                                   path=(0, parameter))
                         for name, owner, parameter in WRITERS])
