"""Record the public surface of an installed PFIO (``pfio==2.10.0``) as JSON.

Run it with the interpreter of a scratch virtualenv that has PFIO 2.10 installed, outside
this repository (so that ``import pfio`` finds that PFIO and not ours)::

    python3 -m venv /tmp/pfio210 && /tmp/pfio210/bin/pip install pfio==2.10.0
    cd /tmp && /tmp/pfio210/bin/python /path/to/tests/v2/walk_surface.py > pfio210_surface.json

The output maps each public module to its public names; each name records its kind
(``module``, ``class``, ``function``, ``value``) and, for callables, the parameters of its
signature (name, kind, default). Classes also record their public methods and properties.
Only names, kinds and signatures are recorded: no code and no docstrings.

``test_surface.py`` compares the recorded surface with pfio's.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from typing import Any, TypeVar

#: PFIO 2.10's public modules, the ones users import
MODULES = [
    "pfio",
    "pfio.v2",
    "pfio.v2.fs",
    "pfio.v2.local",
    "pfio.v2.s3",
    "pfio.v2.zip",
    "pfio.v2.hdfs",
    "pfio.v2.pathlib",
    "pfio.v2.config",
    "pfio.v2.http_cache",
    "pfio.cache",
    "pfio.cache.file_cache",
    "pfio.cache.multiprocess_file_cache",
    "pfio.cache.mmap_file_cache",
    "pfio.cache.naive",
    "pfio.cache.http_cache",
    "pfio.testing",
]

#: modules that re-export their submodules' names
PACKAGES = {"pfio", "pfio.v2", "pfio.cache"}

_MISSING = "<no default>"


def default_of(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return _MISSING
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def parameters(obj: Any) -> list[dict[str, Any]] | None:
    """The parameters of ``obj``'s signature, or None when it has none we can read."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [{"name": p.name, "kind": p.kind.name, "default": default_of(p.default)}
            for p in signature.parameters.values()]


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__version__"


def _members(cls: type) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for name, raw in sorted(vars(cls).items()):
        if not _public(name) and name != "__init__":
            continue
        if isinstance(raw, property):
            members[name] = {"kind": "property"}
        elif isinstance(raw, (staticmethod, classmethod)):
            members[name] = {"kind": type(raw).__name__,
                             "parameters": parameters(getattr(cls, name))}
        elif inspect.isfunction(raw):
            members[name] = {"kind": "method", "parameters": parameters(raw)}
    return members


def describe(value: Any) -> dict[str, Any]:
    """Kind and signature of one public object."""
    if isinstance(value, types.ModuleType):
        return {"kind": "module"}
    if inspect.isclass(value):
        return {"kind": "class", "bases": [b.__name__ for b in value.__bases__],
                "members": _members(value)}
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return {"kind": "function", "parameters": parameters(value)}
    return {"kind": "value", "type": type(value).__name__}


def _defined_here(module: types.ModuleType, name: str, value: Any) -> bool:
    """Whether a module-level name belongs to the module's API.

    A package (``pfio``, ``pfio.v2``, ``pfio.cache``) owns everything it exposes from pfio;
    another module owns what it defines (its classes, functions and constants), not what it
    imports, which is recorded at its home module.
    """
    if isinstance(value, TypeVar):
        return False
    if isinstance(value, types.ModuleType):
        return module.__name__ in PACKAGES and value.__name__.startswith("pfio.")
    origin = getattr(value, "__module__", None)
    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return origin is None or str(origin).startswith("pfio")
    if str(origin).startswith("pfio._"):  # PFIO's private helpers (its profiler)
        return False
    if module.__name__ in PACKAGES:
        return str(origin).startswith("pfio")
    return origin == module.__name__


def walk(module_name: str) -> dict[str, Any]:
    """The public names of one module."""
    module = importlib.import_module(module_name)
    surface = {}
    for name, value in sorted(vars(module).items()):
        if _public(name) and _defined_here(module, name, value):
            surface[name] = describe(value)
    return surface


def main() -> None:
    import pfio

    surface = {"__pfio_version__": pfio.__version__}
    surface.update({name: walk(name) for name in MODULES})
    json.dump(surface, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
