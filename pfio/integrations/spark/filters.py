"""Spark's pushed filters (``pyspark.sql.datasource.Filter``) as pyarrow expressions.

A filter is taken when pyarrow evaluates it exactly as Spark would (a comparison or null
test on a top-level column of plain values, against a number, string, bytes or bool; ``Not``
of such a filter; prefix, suffix and substring tests on strings); Spark evaluates the others
after the scan. Null semantics agree: a comparison with a null is null, and a null drops
the row in both.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import datasource as ds

_LITERALS = (bool, int, float, str, bytes)
_COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    ds.EqualTo: operator.eq, ds.GreaterThan: operator.gt, ds.GreaterThanOrEqual: operator.ge,
    ds.LessThan: operator.lt, ds.LessThanOrEqual: operator.le}
_STRING_TESTS: dict[type, Callable[..., Any]] = {
    ds.StringStartsWith: pc.starts_with, ds.StringEndsWith: pc.ends_with,
    ds.StringContains: pc.match_substring}
#: the filters on one column (``attribute``); all of Spark's but ``Not``
_ON_A_COLUMN = (ds.EqualTo, ds.EqualNullSafe, ds.GreaterThan, ds.GreaterThanOrEqual,
                ds.LessThan, ds.LessThanOrEqual, ds.In, ds.IsNull, ds.IsNotNull,
                ds.StringStartsWith, ds.StringEndsWith, ds.StringContains)


def to_expression(spark_filter: ds.Filter, schema: pa.Schema) -> pc.Expression | None:
    """``spark_filter`` as a pyarrow expression over columns of ``schema``, or None when it
    is not one this module takes."""
    if isinstance(spark_filter, ds.Not):
        inner = to_expression(spark_filter.child, schema)
        return None if inner is None else ~inner
    if not isinstance(spark_filter, _ON_A_COLUMN):  # a filter this module does not know
        return None
    column = _column(spark_filter.attribute, schema)
    if column is None:
        return None
    field = pc.field(column.name)
    kind = type(spark_filter)
    if isinstance(spark_filter, (ds.IsNull, ds.IsNotNull)):
        return field.is_null() if kind is ds.IsNull else field.is_valid()
    value = spark_filter.value
    if kind in _COMPARISONS and _literal(value, column.type):
        return _COMPARISONS[kind](field, pc.scalar(value))
    if kind is ds.In and value and all(_literal(v, column.type) for v in value):
        if pa.types.is_integer(column.type) and not all(isinstance(v, int) for v in value):
            return None  # a value set of the column's type would truncate 1.5 to 1
        try:
            return field.isin(pa.array(list(value), column.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return None
    if (kind in _STRING_TESTS and isinstance(value, str)
            and pa.types.is_string(column.type)):
        return _STRING_TESTS[kind](field, pattern=value)
    return None


def split(filters: Iterable[ds.Filter], schema: pa.Schema
          ) -> tuple[pc.Expression | None, list[ds.Filter]]:
    """The AND of the filters this module takes, as one expression (None: none taken), and
    the filters left for Spark (the very objects it passed)."""
    taken, left = [], []
    for spark_filter in filters:
        expression = to_expression(spark_filter, schema)
        if expression is None:
            left.append(spark_filter)
        else:
            taken.append(expression)
    return (functools.reduce(operator.and_, taken) if taken else None), left


def _column(attribute: tuple[str, ...], schema: pa.Schema) -> pa.Field | None:
    if len(attribute) != 1 or attribute[0] not in schema.names:
        return None
    column = schema.field(attribute[0])
    plain = (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
             or pa.types.is_boolean(column.type) or pa.types.is_string(column.type)
             or pa.types.is_binary(column.type))
    return column if plain else None


def _literal(value: Any, arrow_type: pa.DataType) -> bool:
    """Whether ``value`` compares with values of ``arrow_type`` in pyarrow as in Spark."""
    if value is None or not isinstance(value, _LITERALS):
        return False
    if pa.types.is_boolean(arrow_type):
        return isinstance(value, bool)
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if pa.types.is_string(arrow_type):
        return isinstance(value, str)
    return isinstance(value, bytes)
