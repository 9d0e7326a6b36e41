"""Row predicates in the style of Petastorm: keep the rows whose values a Python test accepts.

A predicate is any object with ``get_fields() -> set[str]`` (the columns it looks at) and
``do_include(values: dict) -> bool`` (whether to keep the row whose values of those fields
are ``values``, decoded as the row reader returns them). Pass one as ``predicate=`` to
:class:`~pfio.integrations.parquet.RowReader` or :class:`~pfio.integrations.parquet.BatchReader`.
The predicates of this module also test a whole row group at once (:meth:`Predicate.mask`):
:func:`in_set` on a scalar column with pyarrow compute, the others row by row on their own
fields only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...digests import md5_digest


class Columns(Protocol):
    """The columns of one row group, as a reader offers them to :meth:`Predicate.mask`."""

    table: pa.Table

    def values(self, name: str) -> list[Any]:
        """The decoded values of column ``name``, one per row."""

    def is_plain(self, name: str) -> bool:
        """Whether column ``name`` holds plain scalars (its Arrow values are its values)."""


class Predicate:
    """Base of this module's predicates: :meth:`mask` tests every row by :meth:`do_include`."""

    def get_fields(self) -> set[str]:
        """The names of the fields :meth:`do_include` reads."""
        raise NotImplementedError(f"{type(self).__name__} must define get_fields")

    def do_include(self, values: dict[str, Any]) -> bool:
        """Whether to keep the row whose values (of :meth:`get_fields`) are ``values``."""
        raise NotImplementedError(f"{type(self).__name__} must define do_include")

    def mask(self, columns: Columns) -> np.ndarray:
        """One bool per row of ``columns.table``: whether to keep it."""
        return row_by_row(self, columns)


def row_by_row(predicate: Any, columns: Columns) -> np.ndarray:
    """The mask of any Petastorm-style predicate, calling ``do_include`` once per row with
    the decoded values of its fields only."""
    fields = sorted(predicate.get_fields())
    values = {name: columns.values(name) for name in fields}
    return np.fromiter((bool(predicate.do_include({n: values[n][i] for n in fields}))
                        for i in range(columns.table.num_rows)),
                       dtype=bool, count=columns.table.num_rows)


def mask(predicate: Any, columns: Columns) -> np.ndarray:
    """The mask of ``predicate`` on ``columns``: vectorised for this module's predicates, row
    by row for other objects with ``get_fields`` and ``do_include``."""
    if isinstance(predicate, Predicate):
        return predicate.mask(columns)
    return row_by_row(predicate, columns)


def check(predicate: Any) -> None:
    """Raise TypeError unless ``predicate`` looks like a predicate."""
    if not (callable(getattr(predicate, "get_fields", None))
            and callable(getattr(predicate, "do_include", None))):
        raise TypeError(f"predicate {predicate!r} needs get_fields() and do_include(values) "
                        "methods; see pfio.integrations.parquet.predicates")


class in_lambda(Predicate):  # noqa: N801 - Petastorm's name
    """Keep rows for which ``fn(value_of_field_1, value_of_field_2, ...)`` is true.

    Args:
        fields: the fields whose values ``fn`` takes, in this order.
        fn: the test.
        state_arg: when not None, passed to ``fn`` after the values (state the test keeps).
    """

    def __init__(self, fields: Sequence[str], fn: Callable[..., Any],
                 state_arg: Any = None) -> None:
        if isinstance(fields, str):
            raise TypeError("in_lambda takes a list of field names, not one string")
        self.fields = list(fields)
        self.fn = fn
        self.state_arg = state_arg

    def get_fields(self) -> set[str]:
        return set(self.fields)

    def do_include(self, values: dict[str, Any]) -> bool:
        args = [values[name] for name in self.fields]
        if self.state_arg is not None:
            args.append(self.state_arg)
        return bool(self.fn(*args))


class in_set(Predicate):  # noqa: N801 - Petastorm's name
    """Keep rows whose ``field`` is one of ``values``."""

    def __init__(self, values: Iterable[Any], field: str) -> None:
        self.values = set(values)
        self.field = field

    def get_fields(self) -> set[str]:
        return {self.field}

    def do_include(self, values: dict[str, Any]) -> bool:
        return values[self.field] in self.values

    def mask(self, columns: Columns) -> np.ndarray:
        if not columns.is_plain(self.field):
            return super().mask(columns)
        column = columns.table.column(self.field)
        try:
            wanted = pa.array(list(self.values), type=column.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return super().mask(columns)  # values of other types: compare in Python
        mask: np.ndarray = pc.is_in(column, value_set=wanted).to_numpy(zero_copy_only=False)
        return mask


class in_negate(Predicate):  # noqa: N801 - Petastorm's name
    """Keep the rows ``predicate`` drops."""

    def __init__(self, predicate: Any) -> None:
        check(predicate)
        self.predicate = predicate

    def get_fields(self) -> set[str]:
        return set(self.predicate.get_fields())

    def do_include(self, values: dict[str, Any]) -> bool:
        return not self.predicate.do_include(values)

    def mask(self, columns: Columns) -> np.ndarray:
        return ~mask(self.predicate, columns)


class in_reduce(Predicate):  # noqa: N801 - Petastorm's name
    """Keep rows for which ``reduce_func([p.do_include(values) for p in predicates])`` is true
    (``all`` and ``any`` are the usual reductions; those two run vectorised)."""

    def __init__(self, predicates: Sequence[Any], reduce_func: Callable[[list[bool]], Any]
                 ) -> None:
        if not predicates:
            raise ValueError("in_reduce needs at least one predicate")
        for predicate in predicates:
            check(predicate)
        self.predicates = list(predicates)
        self.reduce_func = reduce_func

    def get_fields(self) -> set[str]:
        return set().union(*(p.get_fields() for p in self.predicates))

    def do_include(self, values: dict[str, Any]) -> bool:
        return bool(self.reduce_func([p.do_include(values) for p in self.predicates]))

    def mask(self, columns: Columns) -> np.ndarray:
        if self.reduce_func not in (all, any):
            return super().mask(columns)
        masks = np.stack([mask(p, columns) for p in self.predicates])
        return np.asarray(masks.all(axis=0) if self.reduce_func is all else masks.any(axis=0))


class in_intersection(Predicate):  # noqa: N801 - Petastorm's name
    """Keep rows whose field ``predicate_field`` (an array or list) holds at least one of
    ``inclusion_values`` (Petastorm's ``in_intersection``).

    Called with a list of predicates alone, ``in_intersection(predicates)`` keeps the rows
    every one of them keeps: it returns ``in_reduce(predicates, all)``.

    Raises:
        ValueError: (when testing) a value of the field is not a sequence.
    """

    def __new__(cls, inclusion_values: Iterable[Any],
                predicate_field: str | None = None) -> Any:
        if predicate_field is None:
            return in_reduce(list(inclusion_values), all)
        return super().__new__(cls)

    def __init__(self, inclusion_values: Iterable[Any],
                 predicate_field: str | None = None) -> None:
        assert predicate_field is not None  # __new__ made another predicate for None
        self.values = list(inclusion_values)
        self.field = predicate_field

    def get_fields(self) -> set[str]:
        return {str(self.field)}

    def do_include(self, values: dict[str, Any]) -> bool:
        value = values[self.field]
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ValueError(f"in_intersection: field {self.field!r} holds {value!r}, not a "
                             "sequence")
        return bool(np.isin(np.asarray(value), self.values).any())


class in_pseudorandom_split(Predicate):  # noqa: N801 - Petastorm's name
    """Keep the rows of subset ``subset_index`` of a deterministic split by ``fraction_list``.

    Each row goes to a subset by the MD5 digest of ``str(value)`` (UTF-8) of its
    ``predicate_field``: the digest, as an integer, modulo ``2**63 - 1`` is the row's bucket
    (:func:`split_bucket`), and subset ``i`` takes the buckets from
    ``sum(fraction_list[:i]) * (2**63 - 2)`` up to, not including,
    ``sum(fraction_list[:i + 1]) * (2**63 - 2)``. This is Petastorm's split (with its
    ``sys.maxsize`` of 64-bit machines), row for row. Rows with equal values go to the same
    subset, and the split is the same on every run and machine.

    Args:
        fraction_list: the size of each subset; they sum to at most 1.
        subset_index: which subset to keep.
        predicate_field: the field to hash.
    """

    def __init__(self, fraction_list: Sequence[float], subset_index: int,
                 predicate_field: str) -> None:
        if any(f < 0 for f in fraction_list) or sum(fraction_list) > 1 + 1e-9:
            raise ValueError(f"fractions {list(fraction_list)} must be >= 0 and sum to <= 1")
        if not 0 <= subset_index < len(fraction_list):
            raise ValueError(f"subset_index {subset_index} is not in "
                             f"[0, {len(fraction_list)})")
        # Petastorm's borders: float products, compared with integer buckets
        self.low = float(sum(fraction_list[:subset_index])) * (SPLIT_BUCKETS - 1)
        self.high = float(sum(fraction_list[:subset_index + 1])) * (SPLIT_BUCKETS - 1)
        self.field = predicate_field

    def get_fields(self) -> set[str]:
        return {self.field}

    def do_include(self, values: dict[str, Any]) -> bool:
        return self.low <= split_bucket(values[self.field]) < self.high


#: the number of buckets of :class:`in_pseudorandom_split` (``sys.maxsize`` on 64 bits)
SPLIT_BUCKETS = 2**63 - 1


def split_bucket(value: Any) -> int:
    """The bucket of ``value`` for :class:`in_pseudorandom_split`, in
    ``[0, SPLIT_BUCKETS)``."""
    digest = md5_digest(str(value).encode("utf-8"))
    return int.from_bytes(digest, "big") % SPLIT_BUCKETS
