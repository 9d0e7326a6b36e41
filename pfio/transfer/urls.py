""":func:`copy` and :func:`sync`: from URLs to filesystems, plans and their outcome."""

from __future__ import annotations

import errno
import logging
import posixpath
import time

from .._uri import parse_uri
from ..fs import resolver
from ..fs.base import FS
from ..fs.stat import FileStat
from .plan import COMPARES, Item, Plan, Tree, list_tree, plan_sync, relative_inside
from .run import Runner, SyncResult, TransferError

logger = logging.getLogger("pfio.transfer")

#: threads of a transfer when both ends are local (or in memory), else
LOCAL_WORKERS, REMOTE_WORKERS = 8, 32


def copy(src_url: str, dst_url: str, *, recursive: bool = False, overwrite: bool = True,
         workers: int | None = None, progress: bool | None = None) -> SyncResult:
    """Copy a file, or with ``recursive`` a directory, between any two filesystems.

    A file goes to ``dst_url``, or into it under its own name when ``dst_url`` is an
    existing directory or ends with ``/`` (as ``cp`` does); the directory it goes to must
    exist (on filesystems that have directories). A directory is copied *as*
    ``dst_url`` (as ``shutil.copytree(src, dst, dirs_exist_ok=True)`` does: ``dst_url``
    holds ``src_url``'s files afterwards, never ``dst_url/<name of src>``), which is made
    when missing; every file is copied, changed or not (:func:`sync` copies only what
    changed). A URL naming a ``.zip``/``.tar`` file copies the archive itself; a member
    (``data.zip/img/1.jpg``) or a directory in it can be a source; an archive cannot be a
    destination (use ``pfio pack``).

    Each file appears at the destination only when it is complete. Between buckets of one
    S3 endpoint (with the same credentials) files are copied on the server; otherwise they
    are streamed in 8 MiB pieces by ``workers`` threads (default: 8 when both ends are
    local or in memory, else 32).

    Args:
        src_url, dst_url: pfio URLs (local paths, ``s3://``, ``hdfs://``, ``mem://``, ...).
        recursive: copy a directory and everything under it.
        overwrite: replace files that exist at the destination; when False, finding any
            raises ``FileExistsError`` before anything is copied.
        workers: threads copying at once.
        progress: a tqdm progress bar on standard error: None (the default) shows one when
            standard error is a terminal and tqdm is installed.

    Returns:
        a :class:`~pfio.transfer.SyncResult` (also logged at INFO on ``pfio.transfer``).

    Raises:
        FileNotFoundError: ``src_url`` does not exist (or a file's destination directory).
        IsADirectoryError: ``src_url`` is a directory and ``recursive`` is false.
        FileExistsError: ``overwrite`` is false and a destination file exists.
        ValueError: the source lists a name that would land outside the destination, or
            one of the two directories is inside the other; nothing is copied then.
        TransferError: some files of a directory failed (after the others were copied): an
            ``OSError`` carrying each failure and the result. A single file's copy raises
            its own error.
    """
    start = time.perf_counter()
    result = SyncResult(src_url, dst_url)
    source, name = resolver.locate(src_url, shared=False)
    with source:
        st = source.stat(name)
        if not st.isdir():
            _copy_file(source, name, st, dst_url, overwrite, result)
        elif not recursive:
            raise IsADirectoryError(errno.EISDIR, "is a directory (copy it with recursive=True)",
                                    src_url)
        else:
            _refuse_nesting(src_url, dst_url)
            tree = source.subfs(name) if name else source
            files = list_tree(tree, src_url, dst_url)  # names checked before anything is made
            owner, target = _open_tree(dst_url, create=True)
            with owner:
                there = _existing(target, src_url, dst_url) if not overwrite else Tree()
                clash = sorted(set(files.files) & set(there.files))
                if clash:
                    raise FileExistsError(
                        errno.EEXIST, f"{len(clash):,} file(s) exist already at the "
                        f"destination, e.g. {clash[0]!r} (overwrite=False)", dst_url)
                plan = Plan(items=[Item(n, s) for n, s in sorted(files.files.items())],
                            directories=sorted(files.directories))
                runner = Runner(tree, target, _workers(workers, tree, target), progress)
                runner.run(plan, result, "copy")
    return _finish(result, start, "copy")


def sync(src_url: str, dst_url: str, *, delete: bool = False, workers: int | None = None,
         dry_run: bool = False, progress: bool | None = None,
         compare: str = "size_mtime") -> SyncResult:
    """Make the directory ``dst_url`` hold the files of the directory ``src_url``, copying
    only those that are missing or changed, as ``aws s3 sync`` does, between any two
    filesystems.

    ``dst_url`` mirrors ``src_url``: ``src_url/a/b.txt`` goes to ``dst_url/a/b.txt``
    (never ``dst_url/<name of src>/...``), and ``dst_url`` is made when missing. Running
    the same sync twice copies nothing the second time.

    Which files are copied (``compare``):

    * ``"size_mtime"`` (the default): those missing at the destination, of another size,
      or older there than in the source (modification times in whole seconds, as S3 keeps
      them). A file copied to a local destination gets its source's modification time,
      and an object uploaded to S3 is newer than its source, so the next sync leaves both.
      Clocks matter: an S3 server whose clock is behind this machine's makes uploads look
      older than their sources.
    * ``"size"``: those missing or of another size.
    * ``"etag"``: those missing, of another size, or whose ETags differ (S3's ETag; a file
      on another filesystem is read and its MD5 taken, which equals the ETag of an object
      sent in one PUT, not that of a multipart upload).
    * ``"checksum"``: those missing, of another size, or whose bytes' MD5 differ (taken
      from an S3 ETag when it is an MD5, else computed by reading the file).

    Args:
        src_url, dst_url: directories (pfio URLs; a ``.zip``/``.tar`` source is read as the
            directory it holds).
        delete: also delete the destination's files that are not in the source (the
            directories left empty stay, where the filesystem has directories).
        workers: threads copying at once (default: 8 when both ends are local or in
            memory, else 32).
        dry_run: change nothing; the result lists what would be copied and deleted.
        progress: a tqdm progress bar on standard error: None (the default) shows one when
            standard error is a terminal and tqdm is installed.
        compare: ``"size_mtime"``, ``"size"``, ``"etag"`` or ``"checksum"``.

    Returns:
        a :class:`~pfio.transfer.SyncResult` (also logged at INFO on ``pfio.transfer``).

    Raises:
        FileNotFoundError: ``src_url`` does not exist.
        NotADirectoryError: ``src_url`` or ``dst_url`` is a file.
        ValueError: an unknown ``compare``; a listed name that would land outside the
            destination (or delete outside it); one directory inside the other. Nothing is
            changed then.
        TransferError: some files failed (after the others were done): an ``OSError``
            carrying each failure and the result.
    """
    if compare not in COMPARES:
        raise ValueError(f"unknown compare {compare!r}; known: {', '.join(COMPARES)}")
    start = time.perf_counter()
    result = SyncResult(src_url, dst_url, dry_run=dry_run)
    _refuse_nesting(src_url, dst_url)
    owner, tree = _open_tree(src_url)
    with owner:
        files = list_tree(tree, src_url, dst_url)
        if not files.files and not files.directories and not tree.isdir(""):
            raise FileNotFoundError(errno.ENOENT, "no such directory", src_url)
        try:
            target_owner, target = _open_tree(dst_url, create=not dry_run)
        except FileNotFoundError:
            if not dry_run:
                raise
            # a dry run to a directory not made yet: every file would be copied
            plan = plan_sync(files, Tree(), compare, delete)
            result.copied = [item.name for item in plan.items]
            result.bytes = sum(item.source.size for item in plan.items)
            return _finish(result, start, "sync")
        with target_owner:
            plan = plan_sync(files, _existing(target, src_url, dst_url), compare, delete)
            runner = Runner(tree, target, _workers(workers, tree, target), progress,
                            keep_times=True, dry_run=dry_run)
            runner.run(plan, result, "sync", compare)
    return _finish(result, start, "sync")


def _copy_file(source: FS, name: str, st: FileStat, dst_url: str, overwrite: bool,
               result: SyncResult) -> None:
    """Copy the file ``name`` of ``source`` to (or into) ``dst_url``."""
    target, destination = resolver.locate(dst_url, shared=False)
    with target:
        base = posixpath.basename(name)
        if dst_url.endswith("/") or target.isdir(destination):
            destination = posixpath.join(destination, base)
            result.destination = posixpath.join(dst_url, base)
        if not overwrite and target.exists(destination):
            raise FileExistsError(errno.EEXIST, "file exists (overwrite=False)",
                                  result.destination)
        result.bytes = Runner(source, target, 1, False).copy(name, destination, st)
        result.copied.append(base)


def _open_tree(url: str, create: bool = False) -> tuple[FS, FS]:
    """The filesystem that ``url`` opens (the caller closes it) and a view of it rooted at
    the directory ``url`` names (a ``.zip``/``.tar`` entered). With ``create``, a missing
    directory is made (with its parents).

    Raises:
        FileNotFoundError: ``url`` does not exist (and ``create`` is false).
        NotADirectoryError: ``url`` is a file.
    """
    uri = parse_uri(url)
    try:
        owner, inner = resolver.open_directory(uri, shared=False)
    except FileNotFoundError:
        if not create:
            raise
        owner, inner = resolver.open_directory(uri, shared=False, create=True)
    return owner, owner.subfs(inner) if inner else owner


def _existing(target: FS, src_url: str, dst_url: str) -> Tree:
    """What is under the root of ``target`` (nothing when it does not exist yet)."""
    try:
        return list_tree(target, src_url, dst_url)
    except FileNotFoundError:
        return Tree()


def _refuse_nesting(src_url: str, dst_url: str) -> None:
    """Refuse a transfer between a directory and one inside it (or itself).

    Raises:
        ValueError: saying which is inside which.
    """
    src, dst = parse_uri(src_url), parse_uri(dst_url)
    if relative_inside(dst, src) is not None or relative_inside(src, dst) is not None:
        raise ValueError(f"refusing to transfer between {src_url} and {dst_url}: one is "
                         "the other or inside it")


def _workers(workers: int | None, *filesystems: FS) -> int:
    if workers is not None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        return workers
    local = all(fs.scheme in ("", "file", "mem") for fs in filesystems)
    return LOCAL_WORKERS if local else REMOTE_WORKERS


def _finish(result: SyncResult, start: float, label: str) -> SyncResult:
    """Time ``result``, log it, and raise its errors together."""
    result.seconds = time.perf_counter() - start
    logger.info("%s %s", label, result)
    if result.errors:
        raise TransferError(result) from result.errors[0][1]
    return result
