"""``pfio.integrations.parquet.torch``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.parquet`, and this one re-exports the same
objects."""

from ..torch.parquet import ParquetBatchDataset, ParquetRowDataset

__all__ = ["ParquetBatchDataset", "ParquetRowDataset"]
