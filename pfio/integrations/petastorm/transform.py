"""Petastorm's ``petastorm.transform``: :class:`TransformSpec` is pfio's
(:class:`pfio.integrations.parquet.TransformSpec`), which takes the same arguments
(``func``, ``edit_fields``, ``removed_fields``, ``selected_fields``)."""

from ..parquet.transform import TransformSpec

__all__ = ["TransformSpec"]
