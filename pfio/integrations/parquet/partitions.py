"""Hive partition columns: ``key=value`` directory names between a dataset's root and a file.

A store written with ``partition_cols`` (pyarrow, Spark, Petastorm) keeps those columns in
the paths, not in the files: ``root/part=a/n=3/xyz.parquet`` holds rows whose ``part`` is
``"a"`` and ``n`` is 3. Values are percent-decoded, ``__HIVE_DEFAULT_PARTITION__`` is null,
and a key is typed as pyarrow's hive partitioning infers it: int32 when every value of the
key parses as an int32, else string.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any
from urllib.parse import unquote

import pyarrow as pa

#: the directory value that stands for a null partition value
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_INT32 = (-(2**31), 2**31 - 1)
_INTEGER = re.compile(r"[+-]?[0-9]+")


class Partitions:
    """The hive partition columns of a dataset's files.

    Args:
        root: the dataset's URL (a directory, or a single file: no partitions).
        files: the URLs of its files, under ``root``.
    """

    def __init__(self, root: str, files: list[str]) -> None:
        raw: dict[str, dict[str, str | None]] = {}
        keys: dict[str, None] = {}  # in order of first appearance
        for url in files:
            inside = url[len(root) + 1:] if url.startswith(root + "/") else ""
            raw[url] = _parse(posixpath.dirname(inside))
            keys.update(dict.fromkeys(raw[url]))
        self.types: dict[str, pa.DataType] = {
            key: _infer([values.get(key) for values in raw.values()]) for key in keys}
        self._values = {url: {key: _convert(values.get(key), self.types[key])
                              for key in keys} for url, values in raw.items()}

    def check(self, file_columns: list[str]) -> None:
        """Raise ValueError if a partition key is also a column of the files."""
        clash = sorted(set(self.types) & set(file_columns))
        if clash:
            raise ValueError(f"hive partition keys {clash} are also columns of the Parquet "
                             "files: rename the directories or the columns")

    def append(self, table: pa.Table, url: str, columns: list[str] | None) -> pa.Table:
        """``table`` (rows of the file ``url``) with the partition columns among ``columns``
        (default: all) appended, in the order of ``columns``."""
        wanted = [c for c in (columns if columns is not None else self.types) if c in self.types]
        for key in wanted:
            value = pa.scalar(self._values[url][key], self.types[key])
            table = table.append_column(pa.field(key, self.types[key]),
                                        pa.repeat(value, table.num_rows))
        return table


def _parse(relative: str) -> dict[str, str | None]:
    values: dict[str, str | None] = {}
    for segment in relative.split("/"):
        key, sep, value = segment.partition("=")
        if sep and key:
            value = unquote(value)
            values[unquote(key)] = None if value == HIVE_NULL else value
    return values


def _infer(values: list[str | None]) -> pa.DataType:
    present = [v for v in values if v is not None]
    if present and all(_INTEGER.fullmatch(v) and _INT32[0] <= int(v) <= _INT32[1]
                       for v in present):
        return pa.int32()
    return pa.string()


def _convert(value: str | None, arrow_type: pa.DataType) -> Any:
    return int(value) if value is not None and pa.types.is_integer(arrow_type) else value
