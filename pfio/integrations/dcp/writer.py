"""``PfioWriter``: a DCP ``StorageWriter`` whose checkpoints are atomic on every backend.

Every save writes its data files under names of its own (``__<rank>_<save>_<n>.distcp``,
``<save>`` a random token of this save), so an overwrite never touches the files of the
checkpoint already there; then the coordinator writes ``.metadata``, which names them, in
one atomic write that replaces the old one (a rename on local disk and HDFS, a PUT on S3);
then it removes the data files the new metadata does not name. A crash before the metadata
is written leaves the old checkpoint whole (and unnamed new files the next save removes); a
crash after it leaves the new one whole: a load never sees a mix.
"""

from __future__ import annotations

import dataclasses
import logging
import pickle
import queue
import secrets
from concurrent.futures import Future
from typing import Any

from torch.distributed.checkpoint.filesystem import (
    CURRENT_DCP_VERSION,
    DEFAULT_SUFFIX,
    FileSystemWriter,
    _split_by_size_and_type,
    _StoragePrefix,
)
from torch.distributed.checkpoint.metadata import Metadata
from torch.distributed.checkpoint.planner import SavePlan, SavePlanner
from torch.distributed.checkpoint.storage import WriteResult

from ...trace.redact import redact
from .prefixes import PrefixStrategy, strategy
from .storage import PfioFileSystem

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class _DataNames(_StoragePrefix):
    """How one rank names its data files in one save (``prefix`` + ``n`` + suffix)."""

    rank: int = 0


class PfioWriter(FileSystemWriter):
    """A DCP ``StorageWriter`` writing to a pfio URL; see the module documentation.

    Arguments as ``FileSystemWriter``'s, and:

    Args:
        prefix_strategy: spread the data files over sub-directories of the checkpoint
            (``"round-robin"``, ``"hashed"``, or a :mod:`pfio.integrations.dcp.prefixes`
            strategy); ``PfioReader`` reads them without options.
        sync_files: False by default: pfio's writers sync a local file before publishing it,
            and on object stores DCP's sync would fall back to a global ``os.sync``.
    """

    def __init__(self, path: str, *args: Any, prefix_strategy: PrefixStrategy | str | None
                 = None, sync_files: bool = False, **kwargs: Any) -> None:
        super().__init__(path, *args, sync_files=sync_files, **kwargs)
        self.fs = PfioFileSystem()
        self.path = self.fs.init_path(path)
        self.prefix_strategy = strategy(prefix_strategy)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: Any) -> bool:
        return PfioFileSystem.validate_checkpoint_id(checkpoint_id)

    def prepare_local_plan(self, plan: SavePlan) -> SavePlan:
        plan = super().prepare_local_plan(plan)
        if plan.storage_data is not None:  # each rank its own metadata (no collectives)
            plan = dataclasses.replace(plan, storage_data=_names(self.rank or 0, _token()))
        return plan

    def prepare_global_plan(self, plans: list[SavePlan]) -> list[SavePlan]:
        token = _token()
        return [dataclasses.replace(plan, storage_data=_names(rank, token))
                for rank, plan in enumerate(plans)]

    def write_data(self, plan: SavePlan, planner: SavePlanner) -> Future[list[WriteResult]]:
        names: _DataNames = plan.storage_data
        if self.single_file_per_rank:
            groups = _split_by_size_and_type(self.thread_count, plan.items)
        else:
            groups = [[item] for item in plan.items]
        files: queue.Queue = queue.Queue()
        made: set[str] = set()
        for index, items in enumerate(groups):
            name = f"{names.prefix}{index}{DEFAULT_SUFFIX}"
            if self.prefix_strategy is not None:
                directory = self.prefix_strategy.prefix(names.rank, index, name).strip("/")
                if directory:
                    if directory not in made:
                        self.fs.mkdir(self.fs.concat_path(self.path, directory))
                        made.add(directory)
                    name = f"{directory}/{name}"
            files.put((self.fs.concat_path(self.path, name), name, items))
        return self._write_data(planner, files)

    def finish(self, metadata: Metadata, results: list[list[WriteResult]]) -> None:
        """Publish the metadata (one atomic write), then remove the data files it does not
        name."""
        metadata.version = CURRENT_DCP_VERSION
        metadata.storage_data = {result.index: result.storage_data
                                 for rank_results in results for result in rank_results}
        metadata.storage_meta = self.storage_meta()
        own_metadata = not self.use_collectives and self.rank is not None
        path = self._get_metadata_path(self.rank if own_metadata else None)
        with self.fs.create_stream(path, "wb") as f:
            pickle.dump(metadata, f)
        if not own_metadata:  # (with one metadata per rank, others may still name files)
            self._remove_unnamed(metadata)

    def _remove_unnamed(self, metadata: Metadata) -> None:
        named = {info.relative_path for info in metadata.storage_data.values()}
        for name in list(self.fs.data_files(self.path)):
            if name not in named:
                try:
                    self.fs.rm_file(self.fs.concat_path(self.path, name))
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    logger.warning("could not remove the old data file %s: %s",
                                   redact(self.fs.concat_path(self.path, name)), exc)


def _token() -> str:
    return secrets.token_hex(4)


def _names(rank: int, token: str) -> _DataNames:
    return _DataNames(prefix=f"__{rank}_{token}_", rank=rank)
