"""Petastorm's ``petastorm.pytorch``: the loaders are pfio's PyTorch face of the Petastorm
readers (:mod:`pfio.integrations.torch.petastorm`), re-exported at Petastorm's path, so that
``from petastorm.pytorch import DataLoader`` becomes
``from pfio.integrations.petastorm.pytorch import DataLoader``."""

from ..torch.petastorm import (
    BatchedDataLoader,
    DataLoader,
    InMemBatchedDataLoader,
    LoaderBase,
    decimal_friendly_collate,
    sanitize,
)

__all__ = ["BatchedDataLoader", "DataLoader", "InMemBatchedDataLoader", "LoaderBase",
           "decimal_friendly_collate", "sanitize"]
