"""pandas readers accept remote URIs: ``read_csv``, ``read_table``, ``read_fwf``,
``read_json``, ``read_parquet``, ``read_feather``, ``read_pickle``, ``read_orc``,
``read_excel``, ``read_xml``, ``read_stata`` and ``read_sas`` (``read_hdf`` is in
:mod:`pfio.patches.pandas_hdf`).

pandas hands a URL to fsspec, which needs a package per scheme (``s3fs`` for ``s3://``)
configured apart from pfio, and ``read_parquet("s3://...")`` goes to pyarrow's own S3 client
(its own endpoint and credentials, no archives). So a URL that pfio serves is given to
pandas in the spelling of pfio's fsspec protocol (``s3://b/x.csv`` as ``pfio://s3/b/x.csv``,
see :mod:`pfio.integrations.fsspec`): pandas then reads through pfio (its S3 client and
settings, archive members such as ``s3://b/data.zip/x.csv``), and keeps every behaviour it
has for fsspec URLs: compression inferred from the suffix (``.csv.gz``, ``.json.bz2``,
``.zip``, ``.xz``, ``.zst``, ``.tar.gz`` ...), chunked and iterator reads, Parquet
directories (partitioned datasets) and column selection. This needs ``fsspec``
(``pip install 'pfio[fsspec]'``), as pandas needs it for any URL. A call that passes
``storage_options`` is meant for fsspec and goes to pandas untouched, as do local paths, file
objects and URLs of schemes that pfio serves only through fsspec (``pfio://``, ``gs://``,
``https://``, ...): pandas reads those itself, as without pfio.
"""

from __future__ import annotations

from typing import Any

from .. import config, registry
from .._uri import parse_uri
from .machinery import PatchSpec, define_target
from .targets import is_remote, local_path

#: the pandas readers and the name of their path parameter
READERS = {
    "read_csv": "filepath_or_buffer", "read_table": "filepath_or_buffer",
    "read_fwf": "filepath_or_buffer", "read_json": "path_or_buf", "read_parquet": "path",
    "read_feather": "path", "read_pickle": "filepath_or_buffer", "read_orc": "path",
    "read_excel": "io", "read_xml": "path_or_buffer", "read_stata": "filepath_or_buffer",
    "read_sas": "filepath_or_buffer",
}


def fsspec_path(url: str) -> str:
    """The ``pfio://`` spelling of the pfio URL ``url`` (``s3://b/k`` is
    ``pfio://s3/b/k``); a ``file://`` URL becomes its local path."""
    url = local_path(url)
    if "://" not in url:
        return url
    uri = parse_uri(url)
    return f"pfio://{uri.scheme}/{uri.netloc}{uri.path}"


def served_by_pfio(url: str) -> bool:
    """True when a backend of pfio's own (built-in, registered, or an INI custom scheme)
    serves the URL ``url``, not fsspec."""
    scheme = url.partition("://")[0].lower()
    return registry.is_registered(scheme) or config.get_custom_scheme(scheme) is not None


def _reader(parameter: str) -> Any:
    """The wrapper of a pandas reader whose path argument is ``parameter`` (first
    positional, or by name)."""

    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        url = args[0] if args else kwargs.get(parameter)
        if not is_remote(url) or kwargs.get("storage_options") is not None \
                or not served_by_pfio(url):
            return wrapped(*args, **kwargs)
        if args:
            return wrapped(fsspec_path(url), *args[1:], **kwargs)
        return wrapped(**{**kwargs, parameter: fsspec_path(url)})

    return wrapper


define_target("pandas", [PatchSpec("pandas", name, _reader(parameter), path=(0, parameter))
                         for name, parameter in READERS.items()])
