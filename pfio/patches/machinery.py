"""How patches are applied and removed: wrapt wrappers installed by post-import hooks.

A *target* (``"cv2"``, ``"builtins"``, ...) is a list of :class:`PatchSpec`: an attribute of a
module to wrap with a wrapt wrapper function (or, for the hottest ones, to replace with a
plain function built from the original). Applying a target registers a post-import hook for
each module it touches, so the patch lands whether the library is imported before or after
``patch_all()``. Each attribute is wrapped at most once; removing a target puts back the very
object that was there before.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

logger = logging.getLogger(__name__)

#: environment variable through which processes started by spawn or forkserver learn the
#: active targets (``import pfio`` re-applies them, in such processes only: see
#: :func:`started_by_multiprocessing`)
ENV_VAR = "PFIO_PATCHES"

#: how the command line of a process that ``multiprocessing`` started by spawn, or of its
#: forkserver, is recognised (``--multiprocessing-fork`` is spawn's last argument; the
#: forkserver runs ``-c "from multiprocessing.forkserver import main; ..."``); the startup
#: hook ``pfio-patches.pth`` checks the same two marks
SPAWN_MARK = "--multiprocessing-fork"
FORKSERVER_MARK = "from multiprocessing.forkserver import"


def started_by_multiprocessing() -> bool:
    """True in a process that ``multiprocessing`` started by spawn, and in its forkserver
    (whose forked children, DataLoader workers, keep what it applied): the processes that
    inherit the parent's patches through :data:`ENV_VAR`. Any other Python process started
    with the variable set (a ``subprocess.run([sys.executable, "tool.py"])`` of a patched
    script, or of one of its workers) ignores it."""
    return any(arg == SPAWN_MARK or arg.startswith(FORKSERVER_MARK)
               for arg in getattr(sys, "orig_argv", ()))


Wrapper = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]


@dataclass(frozen=True)
class PatchSpec:
    """Wrap ``module.owner.name`` (``owner`` is a dotted path inside the module, or empty)
    with ``wrapper`` (a wrapt wrapper function), or replace it with ``replace(original)``:
    a plain function costs less on every call than a wrapt wrapper (0.1 us against 0.4 us),
    which counts for ``builtins.open``, called all over a process.

    ``path`` is where the wrapped function takes its path: ``(position, keyword)``, the
    first positional argument by default (``torch.save``'s is ``(1, "f")``). The wrapper
    sees an ``os.PathLike`` naming a URL there, given by position or by keyword, as the URL
    string."""

    module: str
    name: str
    wrapper: Wrapper | None = None
    owner: str = ""
    replace: Callable[[Any], Any] | None = None
    path: tuple[int, str] = (0, "")

    def __post_init__(self) -> None:
        if (self.wrapper is None) == (self.replace is None):
            raise ValueError(f"patch of {self.module}.{self.name}: give a wrapper or a "
                             "replacement, one of them")

    def patched(self, original: Any) -> Any:
        """What stands in for ``original`` while the patch is on."""
        import wrapt

        if self.replace is not None:
            return self.replace(original)
        assert self.wrapper is not None  # one of them is given (__post_init__)
        return wrapt.FunctionWrapper(original, _url_as_str(self.wrapper, *self.path))


def _url_as_str(wrapper: Wrapper, position: int, keyword: str) -> Wrapper:
    """``wrapper`` seeing the path argument (at ``position``, or by ``keyword``) that is an
    ``os.PathLike`` naming a URL (an entry of the patched ``os.scandir``, a path object of
    another library) as the URL string, as wrappers test for."""
    from .targets import remote_path

    def wrap(wrapped: Callable[..., Any], instance: Any,
             args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len(args) > position:
            if type(args[position]) is not str:
                url = remote_path(args[position])
                if url is not None:
                    args = (*args[:position], url, *args[position + 1:])
        elif keyword and type(kwargs.get(keyword, "")) is not str:
            url = remote_path(kwargs[keyword])
            if url is not None:
                kwargs = {**kwargs, keyword: url}
        return wrapper(wrapped, instance, args, kwargs)

    return wrap


class _Installed:
    __slots__ = ("owner", "name", "original")

    def __init__(self, owner: Any, name: str, original: Any) -> None:
        self.owner, self.name, self.original = owner, name, original


_lock = threading.RLock()
_targets: dict[str, list[PatchSpec]] = {}
_active: set[str] = set()
_installed: dict[tuple[str, str, str], _Installed] = {}
_hooked_modules: set[str] = set()


def define_target(name: str, specs: list[PatchSpec]) -> None:
    """Declare specs of target ``name`` (done by each patch module at import). Several
    modules may declare specs of one target (``os``: listings in one module, removals and
    renames in another); a spec of an attribute declared again replaces the earlier one."""
    declared = {(s.module, s.owner, s.name): s for s in _targets.get(name, ())}
    declared.update({(s.module, s.owner, s.name): s for s in specs})
    _targets[name] = list(declared.values())


def active_targets() -> list[str]:
    """The targets patched now, sorted."""
    return sorted(_active)


def installed_attributes() -> list[str]:
    """Dotted names of the attributes currently wrapped (``cv2.imread``, ...)."""
    return sorted(".".join(p for p in key if p) for key in _installed)


def apply(names: list[str]) -> None:
    """Activate ``names`` and install their wrappers now or when their modules are imported."""
    import wrapt

    with _lock:
        for name in names:
            if name in _active:
                continue
            _active.add(name)
            for spec in _targets[name]:
                if spec.module not in _hooked_modules:
                    _hooked_modules.add(spec.module)
                    wrapt.register_post_import_hook(functools.partial(_on_import, spec.module),
                                                    spec.module)
                elif spec.module in sys.modules:
                    _install_module(spec.module, sys.modules[spec.module])
        _export_env()


def remove(names: list[str]) -> None:
    """Deactivate ``names`` and put their original attributes back."""
    with _lock:
        for name in names:
            if name not in _active:
                continue
            _active.discard(name)
            for spec in _targets[name]:
                installed = _installed.pop((spec.module, spec.owner, spec.name), None)
                if installed is not None:
                    setattr(installed.owner, installed.name, installed.original)
        _export_env()


def _on_import(name: str, module: ModuleType) -> None:
    with _lock:
        _hooked_modules.discard(name)  # wrapt fires a hook once
        _install_module(name, module)


def _install_module(name: str, module: ModuleType) -> None:
    """Install the active specs of module ``name`` (``os.path`` is ``posixpath`` by name)."""
    for target in _active:
        for spec in _targets[target]:
            if spec.module == name:
                _install(module, spec)


def _install(module: ModuleType, spec: PatchSpec) -> None:
    key = (spec.module, spec.owner, spec.name)
    if key in _installed:
        return
    owner: Any = module
    for part in filter(None, spec.owner.split(".")):
        owner = getattr(owner, part)
    original = getattr(owner, spec.name, None)
    if original is None:
        logger.debug("pfio patch: %s has no attribute %s; skipped", spec.module, spec.name)
        return
    setattr(owner, spec.name, spec.patched(original))
    _installed[key] = _Installed(owner, spec.name, original)


def _export_env() -> None:
    value = ",".join(sorted(_active))
    if os.environ.get(ENV_VAR, "") == value:
        return
    if value:
        os.environ[ENV_VAR] = value
    else:
        os.environ.pop(ENV_VAR, None)
    if _forkserver_running():
        logger.warning(
            "pfio patches are now %r, but this process started its multiprocessing "
            "forkserver earlier: the processes it starts keep the patches of that moment. "
            "Call pfio.patch_all() before the first DataLoader or Pool that uses forkserver.",
            value or "none")


def _forkserver_running() -> bool:
    """True when this process has started the forkserver of ``multiprocessing`` (whose
    children inherit the environment of its start, not the current one)."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    server = getattr(forkserver, "_forkserver", None)
    return getattr(server, "_forkserver_pid", None) is not None


def load_target_modules(names: list[str], modules: dict[str, tuple[str, ...]]) -> None:
    """Import the patch modules that define ``names`` (``modules``: target -> the paths of
    the modules declaring its specs)."""
    for name in names:
        for path in modules[name]:
            importlib.import_module(path)  # waits for an import another thread is making
