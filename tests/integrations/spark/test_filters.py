"""Spark's pushed filters as pyarrow expressions: taken when pyarrow agrees with Spark."""

from __future__ import annotations

import pytest

ds = pytest.importorskip("pyspark.sql.datasource")

import pyarrow as pa  # noqa: E402

from pfio.integrations.spark.filters import split, to_expression  # noqa: E402

TABLE = pa.table({"n": pa.array([1, 2, 3, None], pa.int64()),
                  "s": pa.array(["apple", "banana", "cherry", None]),
                  "v": pa.array([[1.0], [2.0], [3.0], [4.0]])})


def _keep(spark_filter: ds.Filter) -> list:
    expression = to_expression(spark_filter, TABLE.schema)
    assert expression is not None
    return TABLE.filter(expression).column("n").to_pylist()


@pytest.mark.parametrize(("spark_filter", "rows"), [
    (ds.EqualTo(("n",), 2), [2]),
    (ds.GreaterThan(("n",), 1), [2, 3]),
    (ds.GreaterThanOrEqual(("n",), 2), [2, 3]),
    (ds.LessThan(("n",), 2), [1]),
    (ds.LessThanOrEqual(("n",), 2.5), [1, 2]),
    (ds.In(("n",), (1, 3)), [1, 3]),
    (ds.IsNull(("n",)), [None]),
    (ds.IsNotNull(("n",)), [1, 2, 3]),
    (ds.Not(ds.EqualTo(("n",), 2)), [1, 3]),  # a null compares to null: dropped, as in Spark
    (ds.StringStartsWith(("s",), "ba"), [2]),
    (ds.StringEndsWith(("s",), "rry"), [3]),
    (ds.StringContains(("s",), "pp"), [1]),
])
def test_taken_filters_keep_the_rows_spark_keeps(spark_filter, rows):
    assert _keep(spark_filter) == rows


@pytest.mark.parametrize("spark_filter", [
    ds.EqualTo(("v",), [1.0]),          # an array column
    ds.EqualTo(("missing",), 1),        # not a column of the files
    ds.EqualTo(("a", "b"), 1),          # a nested field
    ds.EqualTo(("n",), "2"),            # a string against numbers: Spark casts, pyarrow not
    ds.In(("n",), (1.5, 2)),            # not integers
    ds.StringStartsWith(("n",), "1"),   # a string test of a number
    ds.Not(ds.EqualTo(("v",), [1.0])),  # Not of a filter not taken
])
def test_other_filters_are_left_to_spark(spark_filter):
    assert to_expression(spark_filter, TABLE.schema) is None


def test_split_returns_the_filters_left_by_identity():
    taken, left_over = ds.EqualTo(("n",), 1), ds.EqualTo(("v",), [1.0])
    expression, left = split([taken, left_over], TABLE.schema)
    assert left == [left_over] and left[0] is left_over
    assert TABLE.filter(expression).column("n").to_pylist() == [1]


def test_split_of_nothing_taken_is_none():
    assert split([], TABLE.schema) == (None, [])


def test_a_filter_of_an_unknown_class_is_left_to_spark():
    """A Filter subclass that names no column (as a future Spark's might) is not taken."""

    class Unknown(ds.Filter):
        pass

    assert to_expression(Unknown(), TABLE.schema) is None
