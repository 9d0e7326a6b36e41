"""``NGram``: windows of consecutive rows, as Petastorm's ``make_reader(schema_fields=NGram(...))``.

An n-gram is a dict ``{offset: row}`` of consecutive rows of one row group (rows never join
across row groups), ordered by ``timestamp_field``, where each step from one row to the next
is at most ``delta_threshold``. Each row of an n-gram is a namedtuple of the fields asked for
at its offset. With ``timestamp_overlap=False`` a row belongs to one n-gram at most.

Unlike Petastorm, which refuses a row group whose rows are not in timestamp order, pfio sorts
each row group's rows by the timestamp first (a stable sort: same result on sorted data).
"""

from __future__ import annotations

import numbers
from typing import Any

from .unischema import Unischema, UnischemaField, match_field_names


class NGram:
    """What n-grams to read.

    Args:
        fields: ``{offset: [fields]}`` with consecutive integer offsets; each list holds
            :class:`~pfio.integrations.petastorm.UnischemaField` and regular expressions
            that field names match whole.
        delta_threshold: the largest step of ``timestamp_field`` between consecutive rows.
        timestamp_field: the field (or a regular expression matching one) ordering rows.
        timestamp_overlap: whether n-grams may share rows.
    """

    def __init__(self, fields: dict[int, list[UnischemaField | str]], delta_threshold: Any,
                 timestamp_field: UnischemaField | str, timestamp_overlap: bool = True) -> None:
        if not isinstance(fields, dict) or not fields:
            raise ValueError("NGram fields must be a non-empty dict {offset: [fields]}")
        offsets = sorted(fields)
        if offsets != list(range(offsets[0], offsets[0] + len(offsets))):
            raise ValueError(f"NGram offsets must be consecutive integers, not {offsets}")
        for offset, items in fields.items():
            if not isinstance(items, list) or not all(
                    isinstance(i, (str, tuple)) for i in items):
                raise ValueError(f"NGram fields[{offset}] must be a list of UnischemaField "
                                 "or regular expressions")
        if not isinstance(delta_threshold, numbers.Number):
            raise ValueError("NGram delta_threshold must be a number")
        if not isinstance(timestamp_field, (str, tuple)):
            raise ValueError("NGram timestamp_field must be a UnischemaField or a regular "
                             "expression")
        self._fields = dict(fields)
        self.delta_threshold = delta_threshold
        self._timestamp = timestamp_field
        self.timestamp_overlap = timestamp_overlap
        self._names: dict[int, list[str]] | None = None
        self._timestamp_name: str | None = None

    @property
    def length(self) -> int:
        """The number of rows in each n-gram."""
        return max(self._fields) - min(self._fields) + 1

    @property
    def fields(self) -> dict[int, list[UnischemaField | str]]:
        """The fields of each offset, as given."""
        return self._fields

    def resolve(self, schema: Unischema) -> None:
        """Resolve the regular expressions and fields against ``schema``.

        Raises:
            ValueError: a field is not in ``schema``, or the timestamp names no single field.
        """
        self._names = {offset: list(schema.create_schema_view(items).fields)
                       for offset, items in self._fields.items()}
        stamp = self._timestamp
        names = (match_field_names(schema, [stamp]) if isinstance(stamp, str)
                 else list(schema.create_schema_view([stamp]).fields))
        if len(names) != 1:
            raise ValueError(f"NGram timestamp_field {stamp!r} matches {names}, not one field")
        self._timestamp_name = names[0]

    def field_names(self) -> list[str]:
        """The fields to read: those of every offset, and the timestamp."""
        names = self._resolved()
        wanted = {n for offset_names in names.values() for n in offset_names}
        wanted.add(str(self._timestamp_name))
        return sorted(wanted)

    def form(self, rows: list[dict[str, Any]], schema: Unischema) -> list[dict[int, Any]]:
        """The n-grams of ``rows`` (one row group's rows, as dicts), each ``{offset:
        namedtuple}`` with the fields of that offset."""
        names = self._resolved()
        stamp = str(self._timestamp_name)
        rows = sorted(rows, key=lambda row: row[stamp])
        views = {offset: schema.create_schema_view(offset_names)
                 for offset, offset_names in names.items()}
        first = min(names)
        result: list[dict[int, Any]] = []
        last_end = None
        for start in range(len(rows) - self.length + 1):
            window = rows[start:start + self.length]
            if not self.timestamp_overlap and last_end is not None and \
                    window[0][stamp] <= last_end:
                continue
            if any(b[stamp] - a[stamp] > self.delta_threshold
                   for a, b in zip(window[:-1], window[1:], strict=True)):
                continue
            result.append({first + i: views[first + i].make_namedtuple(
                **{n: row[n] for n in names[first + i]}) for i, row in enumerate(window)})
            if not self.timestamp_overlap:
                last_end = window[-1][stamp]
        return result

    def _resolved(self) -> dict[int, list[str]]:
        if self._names is None:
            raise RuntimeError("NGram.resolve(schema) was not called")
        return self._names
