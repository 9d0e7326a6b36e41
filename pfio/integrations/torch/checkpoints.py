"""Atomic PyTorch checkpoints on any pfio URL, and a manager that keeps the last N and resumes
from the latest.

Atomicity comes from pfio's writers: a checkpoint object appears whole when its writer closes
(a rename on local disk and HDFS, a single PUT or a completed multipart upload on S3) and not at
all if saving raised or the process was killed. The latest checkpoint is the highest step among
complete ones, so a crash mid-write leaves the previous checkpoint as the latest.

A background save (``blocking=False``) is finished before the interpreter exits: its thread is
not a daemon (and the S3 threads that upload its parts keep working while the interpreter
exits: :mod:`pfio.fs.s3.threads`), and an error nobody collected with
:meth:`CheckpointManager.wait` is logged at exit. On SIGTERM (see
:meth:`CheckpointManager.save`) a save in flight is given ``sigterm_grace`` seconds to finish,
then discarded (nothing is published, its upload is aborted); which of the two happened is
logged as a warning (on standard error unless logging is configured otherwise) before the
process ends as SIGTERM would have ended it.
"""

from __future__ import annotations

import atexit
import logging
import os
import posixpath
import re
import signal
import threading
from typing import Any

import torch

from ...api import from_url, open_url
from ...trace.redact import redact
from .save_stream import SaveDiscarded, SaveStream
from .stale_uploads import STALE_UPLOAD_AGE, abort_stale_uploads

logger = logging.getLogger(__name__)

#: managers with a background save running or an error not yet raised by ``wait``
_unfinished: set[CheckpointManager] = set()
#: (reentrant: the SIGTERM handler may run in a thread that holds it)
_unfinished_lock = threading.RLock()
#: the SIGTERM handler pfio's replaced (None while pfio's is not installed)
_sigterm_previous: Any = None


def save(obj: Any, url: str, **kwargs: Any) -> None:
    """``torch.save(obj)`` to ``url`` atomically (the object appears whole or not at all).

    Raises:
        OSError: writing failed (the storage's own error, e.g. S3's, not torch's
            ``unexpected pos``); nothing was published.
    """
    _save_to(obj, url, None, **kwargs)


def _save_to(obj: Any, url: str, discard: threading.Event | None, **kwargs: Any) -> None:
    with open_url(url, "wb") as f:
        stream = SaveStream(f, url, discard)
        try:
            torch.save(obj, stream, **kwargs)
        except Exception as exc:
            stream.reraise(exc)
            raise


def load(url: str, map_location: Any = None, **kwargs: Any) -> Any:
    """``torch.load`` from ``url`` (``weights_only`` and other arguments as for torch.load)."""
    with open_url(url, "rb") as f:
        return torch.load(f, map_location=map_location, **kwargs)


class CheckpointManager:
    """Numbered checkpoints under a directory URL: ``save(state, step)``, ``load_latest()``.

    Checkpoints are named ``{prefix}-{step:09d}{suffix}`` (``ckpt-000001000.pt``). After each
    save only the ``keep_last`` newest are kept (``None`` keeps all). ``save(...,
    blocking=False)`` copies tensors to CPU memory, then serialises and uploads in a background
    thread so training goes on; :meth:`wait` waits for it and re-raises its error. The process
    does not exit before that thread is done; an error it met that no :meth:`wait` raised is
    logged at exit.

    SIGTERM while a background save runs (a background save started from the main thread
    installs pfio's handler, unless SIGTERM is ignored): the save is given ``sigterm_grace``
    seconds to finish, else it is discarded (nothing is published, its upload is aborted);
    a warning says which. Then the handler that was there before runs (the default one ends
    the process as SIGTERM would have).

    Args:
        url: the directory (``s3://bucket/run1/checkpoints``, a local path, ...).
        keep_last: how many checkpoints to keep.
        prefix, suffix: the file name around the step number.
        sigterm_grace: seconds a background save may take to finish after SIGTERM (20:
            within Kubernetes' 30 s before SIGKILL).
        stale_upload_age: on S3, the first save aborts the multipart uploads under ``url``
            started more than this many seconds ago (a killed save's; default a day,
            ``STALE_UPLOAD_AGE``; None: never).
    """

    def __init__(self, url: str, keep_last: int | None = 3, prefix: str = "ckpt",
                 suffix: str = ".pt", sigterm_grace: float = 20.0,
                 stale_upload_age: float | None = STALE_UPLOAD_AGE) -> None:
        if keep_last is not None and keep_last < 1:
            raise ValueError("keep_last must be at least 1 (or None to keep all)")
        if sigterm_grace < 0:
            raise ValueError("sigterm_grace must be at least 0")
        self.sigterm_grace = sigterm_grace
        self.stale_upload_age = stale_upload_age
        self._discard = threading.Event()
        self._step: int | None = None
        self.url = url.rstrip("/")
        self.keep_last = keep_last
        self.prefix = prefix
        self.suffix = suffix
        self._pattern = re.compile(re.escape(prefix) + r"-(\d+)" + re.escape(suffix) + "$")
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._directory_ready = False

    def path(self, step: int) -> str:
        """The URL of the checkpoint of ``step``."""
        return posixpath.join(self.url, f"{self.prefix}-{step:09d}{self.suffix}")

    def steps(self) -> list[int]:
        """Steps of the complete checkpoints, ascending."""
        try:
            with from_url(self.url) as fs:
                names = list(fs.list())
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for m in map(self._pattern.match, names) if m)

    def latest_step(self) -> int | None:
        """The step of the newest complete checkpoint, or None when there is none."""
        steps = self.steps()
        return steps[-1] if steps else None

    def save(self, state: Any, step: int, blocking: bool = True) -> None:
        """Save ``state`` as the checkpoint of ``step``, then drop old ones beyond ``keep_last``."""
        self.wait()
        if blocking:
            self._save(state, step)
            return
        snapshot = _to_cpu(state)
        _watch_sigterm()
        self._discard.clear()
        self._step = step
        # not a daemon: the interpreter joins it before exiting instead of killing it mid-write
        self._thread = threading.Thread(target=self._save_in_background, args=(snapshot, step),
                                        name=f"pfio-checkpoint-{step}")
        with _unfinished_lock:
            _unfinished.add(self)
        self._thread.start()

    def wait(self) -> None:
        """Wait for a background save; raise the error it met, if any."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with _unfinished_lock:
            _unfinished.discard(self)
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def load_latest(self, map_location: Any = None, **kwargs: Any) -> Any:
        """The state of the newest checkpoint, or None when there is none."""
        self.wait()
        step = self.latest_step()
        return None if step is None else load(self.path(step), map_location, **kwargs)

    def _save(self, state: Any, step: int, discard: threading.Event | None = None) -> None:
        if not self._directory_ready:
            from_url(self.url, create=True).close()
            abort_stale_uploads(self.url, self.stale_upload_age)
            self._directory_ready = True
        _save_to(state, self.path(step), discard)
        logger.info("checkpoint saved: %s", redact(self.path(step)))
        self._prune()

    def _save_in_background(self, state: Any, step: int) -> None:
        try:
            self._save(state, step, self._discard)
        except BaseException as exc:  # re-raised by wait()
            self._error = exc

    def _finish_or_discard(self) -> None:
        """On SIGTERM: give the background save ``sigterm_grace`` seconds, then discard it;
        log which happened."""
        thread, path = self._thread, redact(self.path(self._step or 0))
        if thread is None:
            return
        thread.join(self.sigterm_grace)
        if thread.is_alive():
            self._discard.set()  # its next write raises: the upload is aborted
            thread.join()
        error = self._error
        if error is None:
            logger.warning("SIGTERM: finished the background checkpoint save of %s", path)
        elif isinstance(error, SaveDiscarded):
            logger.warning("SIGTERM: discarded the background checkpoint save of %s (not "
                           "finished within %g s): nothing was published", path,
                           self.sigterm_grace)
        else:
            logger.warning("SIGTERM: the background checkpoint save of %s failed: %s", path,
                           error)

    def _prune(self) -> None:
        if self.keep_last is None:
            return
        old = self.steps()[:-self.keep_last]
        if not old:
            return
        with from_url(self.url) as fs:
            for step in old:
                fs.remove(posixpath.basename(self.path(step)))


@atexit.register
def _finish_at_exit() -> None:
    """Wait for the background saves still running and log the errors nobody collected."""
    with _unfinished_lock:
        managers = list(_unfinished)
    for manager in managers:
        try:
            manager.wait()
        except BaseException:
            logger.exception("a background checkpoint save to %s failed", manager.url)


def _watch_sigterm() -> None:
    """Install :func:`_on_sigterm` (once, from the main thread, unless SIGTERM is
    ignored)."""
    global _sigterm_previous
    if _sigterm_previous is not None or threading.current_thread() is not \
            threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous in (signal.SIG_IGN, None):
        return
    _sigterm_previous = previous
    signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: Any) -> None:
    """Finish or discard the background saves in flight, then do what SIGTERM did before."""
    with _unfinished_lock:
        managers = [m for m in _unfinished if m._thread is not None]
    for manager in managers:
        manager._finish_or_discard()
    previous = _sigterm_previous
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)  # end as SIGTERM ends a process
    os.kill(os.getpid(), signum)


def _to_cpu(state: Any) -> Any:
    """A copy of ``state`` whose tensors are detached CPU copies (safe to save in a thread)."""
    if isinstance(state, torch.Tensor):
        return state.detach().to("cpu", copy=True)
    if isinstance(state, dict):
        return type(state)((k, _to_cpu(v)) for k, v in state.items())
    if isinstance(state, (list, tuple)):
        return type(state)(_to_cpu(v) for v in state)
    return state
