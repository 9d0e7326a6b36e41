"""The layers of ARCHITECTURE.md ("Layers", "The S3 stack", "Integrations") hold: no import
cycle inside ``pfio/`` and no import pointing up the layer order, counting imports inside
functions (only ``if TYPE_CHECKING:`` imports are free); inside the S3 package, no import
crosses its seams upwards (wire, transport, IO); inside the integrations, no framework-free
source imports a framework's face (or a framework, at its top), and nothing imports a former
module path. Loading by import path (the registry's entries) is not an
import. ARCHITECTURE.md's tables are the lists checked here, and every file and module it
names exists."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pfio"

#: bottom to top; a module may import its own layer and the layers below it
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("pfio._uri", "pfio.errors", "pfio.registry", "pfio.config", "pfio.trace",
              "pfio.version", "pfio.checksums", "pfio.digests")),
    # the file objects' parts that codecs wrap: modes, atomic sinks, text readers, skips
    ("files", ("pfio.fs.modes", "pfio.fs.writers", "pfio.fs.skipping")),
    ("codecs", ("pfio.compression",)),  # FS.open(compression=) calls them
    ("fs", ("pfio.fs",)),
    ("containers", ("pfio.containers",)),
    ("cache", ("pfio.cache",)),
    ("api", ("pfio.api", "pfio.transfer")),  # from_url/open_url (the resolver plus the
    # cache= option), copy/sync: what takes URLs
    ("patches", ("pfio.patches",)),
    ("top", ("pfio", "pfio.__main__", "pfio.cli", "pfio.demo", "pfio.integrations",
             "pfio.v2", "pfio.testing")),
]

def _modules() -> dict[str, tuple[Path, str]]:
    """Every module of the package: name -> (file, the package its relative imports use)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            name = package = ".".join(parts)
        else:
            name = ".".join(parts)
            package = ".".join(parts[:-1])
        found[name] = (path, package)
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imported(tree: ast.AST, package: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` this module imports (at any depth, except under
    ``TYPE_CHECKING``). ``from package import name`` imports the module ``package.name``
    when there is one, else ``package`` itself."""
    names: set[str] = set()

    def add(name: str) -> None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            names.add(name)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for stmt in child.orelse:
                    visit_one(stmt)
            else:
                visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[:len(parts) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                add(submodule if submodule in modules else module)
        visit(node)

    visit(tree)
    return names


def _graph() -> dict[str, set[str]]:
    """module -> the pfio modules it imports."""
    modules = _modules()
    return {name: _imported(ast.parse(path.read_text()), package, set(modules)) - {name}
            for name, (path, package) in modules.items()}


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".") and prefix != "pfio") \
                    and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return _graph()


def test_every_module_has_a_layer(graph):
    assert [m for m in graph if _layer(m) < 0] == []


def test_no_import_cycles(graph):
    # (fs/s3.py and its reader/writer helpers import each other only for type hints: the
    # S3 coupling through private attributes that #15 removes is not an import cycle)
    assert [sorted(c) for c in _cycles(graph)] == []


def test_no_import_points_up_the_layers(graph):
    upward = sorted(
        f"{source} ({LAYERS[_layer(source)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for source, targets in graph.items() for target in targets
        if _layer(target) > _layer(source))
    assert upward == []


#: the seams inside the S3 package (ARCHITECTURE.md, "The S3 stack"), bottom to top
S3_LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("wire", ("sigv4", "errors", "engine", "settings", "wire", "listing", "integrity",
              "http1_syntax")),
    ("transport", ("credentials", "botocore_client", "retry", "threads", "connection",
                   "http1", "http_pool", "http_engine", "boto3_engine")),
    ("io", ("get", "reader", "faces", "writer", "stat", "operations", "uploads",
            "filesystem")),
]


def _s3_layer(module: str) -> int:
    name = module.removeprefix("pfio.fs.s3.")
    return next((rank for rank, (_, names) in enumerate(S3_LAYERS) if name in names), -1)


def test_every_s3_module_has_a_seam(graph):
    assert [m for m in graph if m.startswith("pfio.fs.s3.") and _s3_layer(m) < 0] == []


def test_no_s3_import_crosses_a_seam_upwards(graph):
    upward = sorted(
        f"{source} ({S3_LAYERS[_s3_layer(source)][0]}) imports {target} "
        f"({S3_LAYERS[_s3_layer(target)][0]})"
        for source, targets in graph.items() if source.startswith("pfio.fs.s3.")
        for target in targets if target.startswith("pfio.fs.s3.")
        if _s3_layer(target) > _s3_layer(source))
    assert upward == []


def test_the_s3_wire_layer_does_no_io():
    io_modules = {"socket", "ssl", "select", "threading", "http.client", "urllib.request"}
    for name in S3_LAYERS[0][1]:
        tree = ast.parse(_modules()[f"pfio.fs.s3.{name}"][0].read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names}
        imported |= {node.module for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module}
        assert imported & io_modules == set(), name


def test_the_base_filesystem_imports_no_backend_and_no_container(graph):
    assert {t for t in graph["pfio.fs.base"]
            if t.startswith(("pfio.containers", "pfio.fs.s3", "pfio.fs.local",
                             "pfio.fs.hdfs", "pfio.fs.memory"))} == set()


#: the tiers inside ``pfio.integrations`` (ARCHITECTURE.md, "Integrations"), bottom to top,
#: as names under ``pfio.integrations`` (the longest that fits a module is its tier)
INTEGRATION_TIERS: list[tuple[str, tuple[str, ...]]] = [
    ("sources", ("shards", "tfrecord", "parquet", "objects", "image_items", "image_reader",
                 "dataset_io", "idx", "shard_cache", "fsspec")),
    ("faces", ("torch", "chainer", "tensorflow", "petastorm", "spark", "ray")),
    ("former paths", ("torch_datasets", "torch_indexed", "torch_mixing", "torch_objects",
                      "torch_tfrecord", "torch_webdataset", "checkpoints", "save_stream",
                      "stale_uploads", "ppe", "dcp", "parquet.torch", "chainer_compat",
                      "petastorm.pytorch")),
]

#: what a framework-free source may not import at its top (lazily, for one format, it may:
#: ``.pth`` fields are torch's)
FRAMEWORKS = ("torch", "torchdata", "tensorflow", "chainer", "pytorch_pfn_extras", "ray",
              "pyspark", "petastorm")


def _integration_tier(module: str) -> int:
    if module == "pfio.integrations":  # the package's __init__ imports nothing
        return 0
    name = module.removeprefix("pfio.integrations.")
    best, best_len = -1, -1
    for rank, (_, names) in enumerate(INTEGRATION_TIERS):
        for prefix in names:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def _integrations(graph: dict[str, set[str]]) -> list[str]:
    return [m for m in graph if m == "pfio.integrations" or m.startswith("pfio.integrations.")]


def test_every_integration_module_has_a_tier(graph):
    assert [m for m in _integrations(graph) if _integration_tier(m) < 0] == []


def test_no_integration_import_points_up_the_tiers(graph):
    upward = sorted(
        f"{source} ({INTEGRATION_TIERS[_integration_tier(source)][0]}) imports {target} "
        f"({INTEGRATION_TIERS[_integration_tier(target)][0]})"
        for source in _integrations(graph) for target in graph[source]
        if target.startswith("pfio.integrations")
        and _integration_tier(target) > _integration_tier(source))
    assert upward == []


def test_the_sources_import_no_framework_at_their_top(graph):
    modules = _modules()
    found = []
    for name in _integrations(graph):
        if _integration_tier(name) != 0:
            continue
        for node in ast.parse(modules[name][0].read_text()).body:
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                roots = [node.module.split(".")[0]]
            else:
                continue
            found += [f"{name} imports {root}" for root in roots if root in FRAMEWORKS]
    assert found == []


# -- the checker itself ------------------------------------------------------------------------

def test_the_checker_sees_imports_inside_functions_but_not_type_checking_ones():
    tree = ast.parse("from typing import TYPE_CHECKING\n"
                     "if TYPE_CHECKING:\n    from ..cache import x\n"
                     "def f():\n    from ..containers import zip\n    import pfio.api\n")
    modules = {"pfio", "pfio.api", "pfio.cache", "pfio.cache.x", "pfio.containers",
               "pfio.containers.zip"}
    assert _imported(tree, "pfio.fs", modules) == {"pfio.containers.zip", "pfio.api"}


def test_the_checker_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        frozenset({"a", "b", "c"})]


# -- ARCHITECTURE.md holds what these tests check -----------------------------------------------

ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"


def _table(heading: str) -> list[list[str]]:
    """The rows of the first table after ``heading`` in ARCHITECTURE.md (past its head and
    rule), as lists of cells."""
    lines = ARCHITECTURE.read_text().split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _names(cell: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("`") for part in cell.split(","))


def test_the_layers_table_is_the_layers_checked():
    rows = _table("## Layers")
    documented = [(name, _names(packages)) for name, packages, *_ in rows]
    checked = [(name, tuple(p for p in prefixes if p != "pfio.__main__"))
               for name, prefixes in LAYERS]
    assert documented[:-1] == checked[:-1]
    top_name, top_packages = documented[-1]
    assert (top_name, set(top_packages)) == (checked[-1][0], set(checked[-1][1]))


def test_the_integrations_table_is_the_tiers_checked():
    rows = _table("## Integrations")
    documented = [(name, set(_names(modules))) for name, modules, *_ in rows]
    assert documented == [(name, set(names)) for name, names in INTEGRATION_TIERS]


def test_the_s3_table_is_the_seams_checked():
    rows = _table("## The S3 stack")
    documented = [(name.removesuffix(" (no IO)"), set(_names(modules)))
                  for name, modules, *_ in rows]
    assert documented == [(name.replace("io", "IO"), set(modules))
                          for name, modules in S3_LAYERS]


#: names in ARCHITECTURE.md that look like modules but are not (entry-point groups)
NOT_MODULES = {"pfio.filesystems"}


def test_architecture_names_only_files_and_modules_that_exist():
    import re

    modules = _modules()
    text = ARCHITECTURE.read_text()
    missing = []
    for quoted in sorted(set(re.findall(r"`([^`\s]+)`", text))):
        if quoted.startswith(("pfio/", "tests/")):
            if not (PACKAGE.parent / quoted).exists():
                missing.append(quoted)
        elif re.fullmatch(r"pfio(\.\w+)+", quoted) and quoted not in NOT_MODULES:
            module, rest = quoted, []
            while module not in modules:
                module, _, last = module.rpartition(".")
                rest.insert(0, last)
            source = modules[module][0].read_text()
            if rest and not re.search(rf"\b{rest[0]}\b", source):
                missing.append(quoted)
    assert missing == []
