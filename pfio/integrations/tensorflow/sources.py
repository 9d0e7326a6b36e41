"""The files a dataset reads (framework-free): sources listed through pfio, their format told
by name, and the files of one input pipeline.

A source is a URL, a list of URLs or a brace pattern (``"s3://b/train-{0000..0011}.tar"``,
see :func:`~pfio.integrations.shards.expand_urls`). Each URL is

* a file, when its name shows a format (:func:`format_of`): taken as it is, without a request;
* a glob pattern (``*``, ``?``, ``[...]`` in its path, ``**`` for any depth): the matches
  whose names show a format;
* a directory, an S3 prefix or a zip/tar container (a URL ending in ``/``, or one that
  :meth:`~pfio.fs.base.FS.isdir` says is a directory): the files under it, recursively and
  sorted, whose names show a format (sidecars such as ``.count.json`` and ``_SUCCESS`` are
  skipped, and so are hidden names);
* any other file, when a format is given (``"train-00000-of-01024"`` with
  ``format="tfrecord"``); with ``format="infer"`` it is an error.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Iterable
from typing import Any, Protocol

from ..._uri import parse_uri
from ...api import from_url
from ..objects import list_prefix
from ..shards import expand_urls
from ..shards.plan import Place, reader_items

logger = logging.getLogger(__name__)

FORMATS = ("tfrecord", "webdataset", "parquet")

#: ``x.tfrecord``, ``x.tfrecords``, ``x.tfrec``, tfds' ``x.tfrecord-00000-of-00010``, each
#: optionally compressed (``.gz``, ``.zlib``)
_TFRECORD = re.compile(r"\.(tfrecords?|tfrec)(-\d+-of-\d+)?(\.gz|\.gzip|\.zlib|\.zz)?$")
_WEBDATASET = (".tar", ".tar.gz", ".tgz")
_PARQUET = (".parquet",)
_GLOB = re.compile(r"[*?\[]")


class InputContext(Protocol):
    """What :func:`pipeline_files` reads of a ``tf.distribute.InputContext``."""

    num_input_pipelines: int
    input_pipeline_id: int


def format_of(url: str) -> str | None:
    """The format a file's name shows (``"tfrecord"``, ``"webdataset"``, ``"parquet"``), or
    None. Hidden names (starting with ``.`` or ``_``) show none."""
    name = posixpath.basename(parse_uri(url).path.rstrip("/")).lower()
    if not name or name.startswith((".", "_")):
        return None
    if _TFRECORD.search(name):
        return "tfrecord"
    if name.endswith(_WEBDATASET):
        return "webdataset"
    if name.endswith(_PARQUET):
        return "parquet"
    return None


def list_files(source: str | Iterable[str], format: str = "infer",
               **fs_options: Any) -> tuple[str, list[str]]:
    """``(format, files)`` of ``source`` (see the module docstring), files in the order the
    source gives them (each directory or glob sorted).

    Args:
        source: a URL, a brace pattern, or URLs.
        format: ``"infer"`` (from the names) or one of :data:`FORMATS`.
        fs_options: options of :func:`pfio.from_url` for listing.

    Raises:
        ValueError: an unknown format, no source, files of several formats, a file named
            with another format than the one given, or (``"infer"``) a file whose name
            shows no format.
        FileNotFoundError: a directory, prefix or pattern with no files of the format.
    """
    if format != "infer" and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use 'infer' or one of {FORMATS}")
    urls = expand_urls(source)
    if not urls:
        raise ValueError("no source given: pass a URL, a brace pattern or a list of URLs")
    found: list[tuple[str, str]] = []
    for url in urls:
        found.extend(_files_at(url, format, fs_options))
    formats = sorted({fmt for _, fmt in found})
    if len(formats) > 1:
        examples = ", ".join(next(u for u, f in found if f == fmt) for fmt in formats)
        raise ValueError(f"the source holds files of several formats ({', '.join(formats)}: "
                         f"{examples}); one dataset reads one format: pass format=... or "
                         "a narrower source")
    logger.debug("%s: %d %s files", source, len(found), formats[0])
    return formats[0], [url for url, _ in found]


def _files_at(url: str, format: str, fs_options: dict[str, Any]) -> list[tuple[str, str]]:
    """``(url, format)`` of the files one URL of a source names."""
    named = format_of(url)
    uri = parse_uri(url)
    if _GLOB.search(uri.path):
        return _selected(_glob(url, fs_options), format, url)
    if named is not None:
        if format not in ("infer", named):
            raise ValueError(f"{url} is named as a {named} file, not {format}: pass "
                             f"format={named!r} or format='infer'")
        return [(url, named)]
    if url.endswith("/") or _is_directory(url, fs_options):
        return _selected(_listed(url, fs_options), format, url)
    if format == "infer":
        raise ValueError(f"cannot tell the format of {url} from its name (.tfrecord, .tar, "
                         f".parquet, ...): pass format= one of {FORMATS}")
    return [(url, format)]


def _selected(urls: list[str], format: str, where: str) -> list[tuple[str, str]]:
    """The files of ``urls`` whose names show ``format`` (any format for ``"infer"``)."""
    chosen = [(u, f) for u in urls
              if (f := format_of(u)) is not None and format in ("infer", f)]
    if not chosen:
        what = "tfrecord, webdataset or parquet" if format == "infer" else format
        raise FileNotFoundError(f"no {what} files at {where} (files are recognised by name: "
                                ".tfrecord, .tar, .tar.gz, .parquet, ...)")
    return chosen


def _is_directory(url: str, fs_options: dict[str, Any]) -> bool:
    parent, name = parse_uri(url).split()
    if not name:
        return True
    with from_url(str(parent), **fs_options) as fs:
        return fs.isdir(name)


def _listed(url: str, fs_options: dict[str, Any]) -> list[str]:
    try:
        objects = list_prefix(url, **fs_options)
    except ValueError:  # an empty directory
        return []
    return [objects.url(i) for i in range(len(objects))]


def _glob(url: str, fs_options: dict[str, Any]) -> list[str]:
    """The URLs a glob pattern matches: the directory before its first wildcard component
    is opened, the rest matched by :meth:`~pfio.fs.base.FS.glob`."""
    uri = parse_uri(url)
    parts = uri.path.split("/")
    first = next(i for i, part in enumerate(parts) if _GLOB.search(part))
    base = "/".join(parts[:first])
    if base:
        root = str(uri.with_path(base))
    elif uri.scheme == "file" and not uri.path.startswith("/"):
        root = "."  # a relative pattern: the working directory
    else:
        root = str(uri.with_path("/"))
    pattern = "/".join(parts[first:])
    with from_url(root, **fs_options) as fs:
        matches = fs.glob(pattern)
    return [posixpath.join(root, match) for match in matches]


def pipeline_files(files: list[str], input_context: InputContext | None) -> list[str]:
    """The files one input pipeline reads: all of them without an ``input_context``, else
    file ``i`` goes to pipeline ``i % num_input_pipelines`` (the files are split, not
    records: every pipeline reads whole files, each file is read by exactly one pipeline).

    Raises:
        ValueError: fewer files than input pipelines.
    """
    if input_context is None:
        return files
    count = input_context.num_input_pipelines
    place = Place(rank=input_context.input_pipeline_id, world_size=count)
    if len(files) < count:
        raise ValueError(f"{len(files)} files cannot be split over {count} input pipelines: "
                         "files are split between pipelines whole, so each needs one file at "
                         "least; write the data as more (smaller) files")
    return reader_items(files, place)
