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
import threading
from typing import Any

from torch.distributed.checkpoint.filesystem import (
    CURRENT_DCP_VERSION,
    DEFAULT_SUFFIX,
    FileSystemWriter,
    _split_by_size_and_type,
    _StoragePrefix,
    _write_files_from_queue,
)
from torch.distributed.checkpoint.metadata import Metadata
from torch.distributed.checkpoint.planner import SavePlan, SavePlanner
from torch.distributed.checkpoint.storage import WriteResult
from torch.futures import Future

from ....trace.redact import redact
from ..stale_uploads import STALE_UPLOAD_AGE, abort_stale_uploads
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
            (``"round-robin"``, ``"hashed"``, or a :mod:`pfio.integrations.torch.dcp.prefixes`
            strategy); ``PfioReader`` reads them without options.
        sync_files: False by default: pfio's writers sync a local file before publishing it,
            and on object stores DCP's sync would fall back to a global ``os.sync``.
        storage_options: options of the file system (``from_url(path, **options)``).
        stale_upload_age: on S3, the coordinator aborts the multipart uploads under the
            checkpoint started more than this many seconds ago (a killed save's; default
            a day; None: never) when a save starts.

    With ``thread_count`` > 1, the first error of a writing thread is raised (DCP's own
    writer lets a failing thread die and goes on without its results), and the threads
    start no new file after it.
    """

    #: the checkpoint's file system and its path in it (DCP's base class declares
    #: a plain ``FileSystemBase`` and a path that may be a ``PathLike``)
    fs: PfioFileSystem  # type: ignore[assignment]  # DCP uses only FileSystemBase's methods
    path: str

    def __init__(self, path: str, single_file_per_rank: bool = True, sync_files: bool = False,
                 *args: Any, prefix_strategy: PrefixStrategy | str | None = None,
                 storage_options: dict[str, Any] | None = None,
                 stale_upload_age: float | None = STALE_UPLOAD_AGE, **kwargs: Any) -> None:
        super().__init__(path, single_file_per_rank, sync_files, *args, **kwargs)
        self.fs = PfioFileSystem(storage_options)
        self.stale_upload_age = stale_upload_age
        self.path = self.fs.init_path(path)
        self.prefix_strategy = strategy(prefix_strategy)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: Any) -> bool:
        return PfioFileSystem.validate_checkpoint_id(checkpoint_id)

    def set_up_storage_writer(self, is_coordinator: bool, *args: Any, **kwargs: Any) -> None:
        super().set_up_storage_writer(is_coordinator, *args, **kwargs)
        if is_coordinator:
            abort_stale_uploads(self.path, self.stale_upload_age, self.fs.options)

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
        files: queue.Queue[tuple[str, str, list[Any]]] = queue.Queue()
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

    def _write_data(self, planner: SavePlanner,
                    file_queue: queue.Queue[tuple[str, str, list[Any]]]
                    ) -> Future[list[WriteResult]]:
        results: queue.Queue[list[WriteResult]] = queue.Queue()
        errors: list[BaseException] = []

        def work() -> None:
            try:
                _write_files_from_queue(
                    create_stream=self.fs.create_stream, file_queue=file_queue,
                    result_queue=results, planner=planner, transforms=self.transforms,
                    inflight_threshhold=self.per_thread_copy_ahead,
                    use_fsync=self.sync_files, thread_count=self.thread_count,
                    serialization_format=self.serialization_format)
            except BaseException as exc:  # noqa: BLE001 - raised below, in the caller
                errors.append(exc)
                while True:  # the other threads start no new file
                    try:
                        file_queue.get_nowait()
                    except queue.Empty:
                        break

        threads = [threading.Thread(target=work, name=f"pfio-dcp-write-{i}")
                   for i in range(1, self.thread_count)]
        for thread in threads:
            thread.start()
        work()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        written: list[WriteResult] = []
        while not results.empty():
            written += results.get_nowait()
        done: Future[list[WriteResult]] = Future()
        done.set_result(written)
        return done

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
