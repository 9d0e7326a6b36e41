"""pfio has PFIO 2.10's public surface: every module, name and keyword argument.

``pfio210_surface.json`` was recorded from ``pfio==2.10.0`` by ``walk_surface.py`` (see
its docstring). The names PFIO 2.10 exposed that pfio does not, and the arguments whose
default differs, are listed below with the reason; everything else must match.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pathlib
from typing import Any

import pytest

from .walk_surface import default_of

SURFACE = json.loads((pathlib.Path(__file__).parent / "pfio210_surface.json").read_text())
PFIO210_VERSION = SURFACE.pop("__pfio_version__")

_PROFILER = "PFIO's wrappers for pytorch-pfn-extras' profiler; pfio.trace replaces them"
_LOCKS = "FileCache's private locks; pfio's caches lock inside"

#: (module, name) -> why pfio does not have it
NOT_PROVIDED = {
    ("pfio.v2.local", "LocalProfileIOWrapper"): _PROFILER,
    ("pfio.v2.zip", "ZipProfileIOWrapper"): _PROFILER,
    ("pfio.v2.s3", "S3ProfileIOWrapper"): _PROFILER,
    ("pfio.v2.s3", "Boto3ProfileWrapper"): _PROFILER,
    ("pfio.cache.file_cache", "RWLock"): _LOCKS,
    ("pfio.cache.file_cache", "DummyLock"): _LOCKS,
    ("pfio.cache.file_cache", "LockContext"): _LOCKS,
    ("pfio.cache.http_cache", "CONNECTION_POOL"): "HTTPConnector keeps its own connections",
    ("pfio.v2.hdfs", "has_hdfs"): "Hdfs needs no optional import to be constructed",
    ("pfio.v2.pathlib", "python_version_info"): "sys.version_info, imported by PFIO",
}

#: (class, member) -> why pfio's class does not have it
MISSING_MEMBERS = {
    ("FS", "cwd"): "the root of a filesystem is given to its constructor; Local has cwd",
    ("FS", "is_traced"): "tracing is global (pfio.trace.enable), not per filesystem",
    ("Hdfs", "normpath"): "Hdfs resolves paths itself; no public normpath",
}

_OPEN_MODE = ("pfio's FS.open defaults to text ('r') on every filesystem, as builtin open and "
              "PFIO 2.10's Local, Zip and S3 do; PFIO 2.10's FS, Hdfs and HTTPCachedFS said 'rb'")
_ENGINE = "pfio's S3 engine chose its own values (pfio.fs.s3)"

#: (class.method, argument) -> why its default or its presence differs
ARGUMENT_DIFFERENCES = {
    ("FS.open", "mode"): _OPEN_MODE,
    ("Hdfs.open", "mode"): _OPEN_MODE,
    ("HTTPCachedFS.open", "mode"): _OPEN_MODE,
    ("S3.__init__", "prefix"): "'' and None both mean the bucket's top",
    ("S3.__init__", "mpu_chunksize"): _ENGINE,
    ("S3.__init__", "connect_timeout"): _ENGINE,
    ("S3.__init__", "read_timeout"): _ENGINE,
    ("PurePath.match", "case_sensitive"): "pathlib's default (None: case-sensitive on "
                                          "POSIX), not PFIO 2.10's False",
    ("ZipFileStat.__init__", "zip_info"): "made from pfio's own zip directory reader, not "
                                          "from a zipfile.ZipInfo",
    ("FS.__init__", "scheme"): "the scheme is a class attribute of each filesystem",
    ("FS.mkdir", "dir_fd"): "no filesystem of pfio takes a directory descriptor",
}

#: PFIO 2.10 named the path argument differently per class and method (``FS.exists(path)``
#: but ``Local.exists(file_path)``), so no code can pass it by keyword portably; pfio names
#: it ``path`` everywhere, in the same position
PATH_ARGUMENTS = {"file_path", "path", "path_or_prefix", "prefix", "rel_path"}


def _names() -> list[tuple[str, str]]:
    return [(module, name) for module, names in SURFACE.items() for name in names
            if (module, name) not in NOT_PROVIDED]


def _callables() -> list[tuple[str, str, list[dict[str, Any]]]]:
    found = []
    for module, names in SURFACE.items():
        for name, info in names.items():
            if (module, name) in NOT_PROVIDED:
                continue
            if info.get("parameters") is not None:
                found.append((module, name, info["parameters"]))
            for member, minfo in info.get("members", {}).items():
                if minfo.get("parameters") is not None and \
                        (name, member) not in MISSING_MEMBERS:
                    found.append((module, f"{name}.{member}", minfo["parameters"]))
    return found


def _resolve(module: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def test_surface_was_recorded_from_pfio_2_10():
    assert PFIO210_VERSION == "2.10.0"
    assert "pfio.v2.fs" in SURFACE and "pfio.cache" in SURFACE


@pytest.mark.parametrize("module, name", _names(), ids=lambda v: v if isinstance(v, str) else "")
def test_name_exists_with_its_kind(module, name):
    kind = SURFACE[module][name]["kind"]
    value = _resolve(module, name)
    if kind == "module":
        assert inspect.ismodule(value)
    elif kind == "class":
        assert inspect.isclass(value)
    elif kind == "function":
        assert callable(value) and not inspect.isclass(value)


@pytest.mark.parametrize("module, name", [(m, n) for m, n in _names()
                                          if SURFACE[m][n]["kind"] == "class"])
def test_class_has_every_public_member(module, name):
    info = SURFACE[module][name]
    cls = _resolve(module, name)
    missing = [member for member in info["members"] if not hasattr(cls, member)
               and (name, member) not in MISSING_MEMBERS]
    assert missing == []


@pytest.mark.parametrize("module, qualname, params", _callables(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_signature_takes_the_same_keywords_and_defaults(module, qualname, params):
    ours = list(inspect.signature(_resolve(module, qualname)).parameters.values())
    by_name = {p.name: p for p in ours}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ours)
    problems = []
    for position, param in enumerate(params):
        name = param["name"]
        if name not in _keyword_names(params) or (qualname, name) in ARGUMENT_DIFFERENCES:
            continue
        if name in PATH_ARGUMENTS and position == 1 and name not in by_name:
            if len(ours) < 2 or ours[1].name != "path":
                problems.append(f"{name!r} is not the path argument 'path' here")
            continue
        if name not in by_name:
            if not takes_any:
                problems.append(f"no argument {name!r}")
        elif param["default"] != "<no default>":
            default = default_of(by_name[name].default)
            if default != param["default"]:
                problems.append(f"{name}={default!r}, PFIO 2.10 has {param['default']!r}")
    assert problems == []


def _keyword_names(params: list[dict[str, Any]]) -> set[str]:
    """The arguments a caller can pass by keyword (not ``self``, ``*args``, ``**kwargs``,
    nor PFIO's private ``_``-prefixed ones)."""
    return {p["name"] for p in params
            if p["kind"] in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")
            and p["name"] not in ("self", "cls") and not p["name"].startswith("_")}


def test_every_documented_difference_is_still_one():
    """The lists above shrink when pfio gains what they excuse."""
    for module, name in NOT_PROVIDED:
        assert not hasattr(importlib.import_module(module), name), (module, name)
    classes = {name: (module, info) for module, names in SURFACE.items()
               for name, info in names.items() if info["kind"] == "class"}
    for cls_name, member in MISSING_MEMBERS:
        module, _ = classes[cls_name]
        assert not hasattr(_resolve(module, cls_name), member), (cls_name, member)
