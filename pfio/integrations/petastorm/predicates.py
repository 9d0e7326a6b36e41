"""Petastorm's row predicates (``from petastorm.predicates import ...``): pfio's own, which
take the same arguments and keep the same rows (``in_pseudorandom_split`` row for row).
See :mod:`pfio.integrations.parquet.predicates`."""

from ..parquet.predicates import (
    Predicate as PredicateBase,
)
from ..parquet.predicates import (
    in_intersection,
    in_lambda,
    in_negate,
    in_pseudorandom_split,
    in_reduce,
    in_set,
)

__all__ = ["PredicateBase", "in_intersection", "in_lambda", "in_negate",
           "in_pseudorandom_split", "in_reduce", "in_set"]
