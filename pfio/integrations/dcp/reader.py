"""``PfioReader``: a DCP ``StorageReader`` reading from a pfio URL."""

from __future__ import annotations

import os

from torch.distributed.checkpoint.filesystem import FileSystemReader

from .storage import PfioFileSystem


class PfioReader(FileSystemReader):
    """A DCP ``StorageReader`` reading from a pfio URL."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.fs = PfioFileSystem()
        self.path = self.fs.init_path(path)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        return PfioFileSystem.validate_checkpoint_id(checkpoint_id)

