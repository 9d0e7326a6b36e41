"""The integrations' former module paths (before they were grouped by framework, PyTorch's
under ``pfio.integrations.torch``) import the same objects as their new homes, they only
re-export, and pickles that name a former path load."""

from __future__ import annotations

import ast
import base64
import importlib
import pickle
import re
from pathlib import Path
from types import ModuleType

import pytest

#: former path -> the modules its objects live in now
MOVED: dict[str, tuple[str, ...]] = {
    "pfio.integrations.torch_datasets": ("pfio.integrations.torch.images",
                                         "pfio.integrations.torch.shards",
                                         "pfio.integrations.torch.placement"),
    "pfio.integrations.torch_indexed": ("pfio.integrations.torch.indexed",),
    "pfio.integrations.torch_mixing": ("pfio.integrations.torch.mixing",),
    "pfio.integrations.torch_objects": ("pfio.integrations.torch.objects",),
    "pfio.integrations.torch_tfrecord": ("pfio.integrations.torch.tfrecord",),
    "pfio.integrations.torch_webdataset": ("pfio.integrations.torch.webdataset",),
    "pfio.integrations.checkpoints": ("pfio.integrations.torch.checkpoints",),
    "pfio.integrations.save_stream": ("pfio.integrations.torch.save_stream",),
    "pfio.integrations.stale_uploads": ("pfio.integrations.torch.stale_uploads",),
    "pfio.integrations.ppe": ("pfio.integrations.torch.ppe",),
    "pfio.integrations.dcp": ("pfio.integrations.torch.dcp",),
    "pfio.integrations.dcp.items": ("pfio.integrations.torch.dcp.items",),
    "pfio.integrations.dcp.prefixes": ("pfio.integrations.torch.dcp.prefixes",),
    "pfio.integrations.dcp.reader": ("pfio.integrations.torch.dcp.reader",),
    "pfio.integrations.dcp.storage": ("pfio.integrations.torch.dcp.storage",),
    "pfio.integrations.dcp.writer": ("pfio.integrations.torch.dcp.writer",),
    "pfio.integrations.parquet.torch": ("pfio.integrations.torch.parquet",),
    "pfio.integrations.chainer_compat": ("pfio.integrations.chainer.compat",),
    # (Petastorm's own path, which stays the one to import from)
    "pfio.integrations.petastorm.pytorch": ("pfio.integrations.torch.petastorm",),
}


def _tree(module: ModuleType) -> ast.Module:
    assert module.__file__ is not None
    return ast.parse(Path(module.__file__).read_text())


def _public_names(module: ModuleType) -> set[str]:
    """The module's own public names: its ``__all__`` if it is a package, else what it
    defines at the top (classes, functions, constants) but for names starting with ``_``."""
    if Path(module.__file__ or "").name == "__init__.py":
        return set(module.__all__)
    names: set[str] = set()
    for node in _tree(module).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_") and n != "logger"}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_former_path_exposes_the_objects_of_its_new_home(old):
    former = importlib.import_module(old)
    expected: set[str] = set()
    for home_name in MOVED[old]:
        home = importlib.import_module(home_name)
        names = _public_names(home)
        assert names, home_name
        for name in names:
            assert getattr(former, name) is getattr(home, name), f"{old}.{name}"
        expected |= names
    assert set(former.__all__) == expected


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_former_path_only_re_exports(old):
    body = _tree(importlib.import_module(old)).body
    kinds = {type(node).__name__ for node in body[1:]}
    assert isinstance(body[0], ast.Expr) and MOVED[old][0] in body[0].value.value  # docstring
    assert kinds <= {"ImportFrom", "Assign"}
    assert [t.id for node in body if isinstance(node, ast.Assign)
            for t in node.targets] == ["__all__"]


@pytest.mark.parametrize("home", sorted({h for homes in MOVED.values() for h in homes}))
def test_a_moved_class_names_its_new_home(home):
    module = importlib.import_module(home)
    classes = [getattr(module, n) for n in _public_names(module)
               if isinstance(getattr(module, n), type)]
    for cls in classes:
        if home.endswith(".dcp"):  # the package re-exports its modules' classes
            assert cls.__module__.startswith(home + "."), cls
        else:
            assert cls.__module__ == home, cls


def test_the_torch_package_exports_what_the_torch_module_did():
    import pfio.integrations.torch as face

    assert sorted(face.__all__) == [
        "CheckpointManager", "IDXDataset", "PfioImageDataset", "PfioMixedDataset",
        "PfioObjectDataset", "PfioObjectIterableDataset", "PfioShardDataset",
        "PfioTFRecordDataset", "PfioWebDataset", "load", "save"]
    for name in face.__all__:  # each from its own module, which a pickle names
        obj = getattr(face, name)
        home = importlib.import_module(obj.__module__)
        assert obj.__module__.startswith("pfio.integrations.torch."), name
        assert getattr(home, name) is obj


def test_the_chainer_package_exports_what_the_chainer_module_did():
    import pfio.integrations.chainer as face
    from pfio.integrations.chainer import datasets, snapshots

    assert face.PfioImageDataset is datasets.PfioImageDataset
    assert face.PfioImageDataset.__module__ == "pfio.integrations.chainer.datasets"
    assert face.PfioSnapshotWriter is snapshots.PfioSnapshotWriter
    assert face.PfioSnapshotWriter.__module__ == "pfio.integrations.chainer.snapshots"
    assert face.autoload is snapshots.autoload
    assert face.chainer.__name__ == "chainer"  # the module, imported after the NumPy 2 shim


#: ``pickle.dumps(PfioImageDataset([("mem://b/a.png", 3), ("mem://b/c.png", 5)],
#: decoder="pil"))`` made by pfio before the move, when the class lived in
#: ``pfio.integrations.torch_datasets`` (a DataLoader worker's or a user's saved dataset)
OLD_IMAGE_DATASET = base64.b64decode(
    "gASVXwIAAAAAAACMIHBmaW8uaW50ZWdyYXRpb25zLnRvcmNoX2RhdGFzZXRzlIwQUGZpb0ltYWdlRGF0YXNldJST"
    "lCmBlH2UKIwGcmVhZGVylIwecGZpby5pbnRlZ3JhdGlvbnMuaW1hZ2VfcmVhZGVylIwLSW1hZ2VSZWFkZXKUk5Qp"
    "gZR9lCiMBWl0ZW1zlIwdcGZpby5pbnRlZ3JhdGlvbnMuaW1hZ2VfaXRlbXOUjApJbWFnZUl0ZW1zlJOUKYGUfZQo"
    "jAhiYXNlX3VybJSMAJSMB2NsYXNzZXOUXZSMBl9wYXRoc5RoDIwJTmFtZVRhYmxllJOUKYGUfZQojAVfYmxvYpRD"
    "G21lbTovL2IvYS5wbmcKbWVtOi8vYi9jLnBuZ5SMCF9vZmZzZXRzlIwWbnVtcHkuX2NvcmUubXVsdGlhcnJheZSM"
    "DF9yZWNvbnN0cnVjdJSTlIwFbnVtcHmUjAduZGFycmF5lJOUSwCFlEMBYpSHlFKUKEsBSwOFlGggjAVkdHlwZZST"
    "lIwCaTiUiYiHlFKUKEsDjAE8lE5OTkr/////Sv////9LAHSUYolDGAAAAAAAAAAADgAAAAAAAAAcAAAAAAAAAJR0"
    "lGJ1YowHX2xhYmVsc5RoH2giSwCFlGgkh5RSlChLAUsChZRoLIlDEAMAAAAAAAAABQAAAAAAAACUdJRidWKMB2Rl"
    "Y29kZXKUjANwaWyUjApjYWNoZV9raW5klE6MBl9jYWNoZZROjAxfZmlsZXN5c3RlbXOUTnVijAl0cmFuc2Zvcm2U"
    "TowQdGFyZ2V0X3RyYW5zZm9ybZROdWIu")


def test_a_dataset_pickled_under_its_former_path_loads_as_the_new_class():
    from pfio.integrations.torch import PfioImageDataset

    assert b"pfio.integrations.torch_datasets" in OLD_IMAGE_DATASET
    dataset = pickle.loads(OLD_IMAGE_DATASET)
    assert type(dataset) is PfioImageDataset
    assert len(dataset) == 2
    assert [dataset.reader.items.path(i) for i in range(2)] == ["mem://b/a.png", "mem://b/c.png"]
    assert [dataset.reader.items.label(i) for i in range(2)] == [3, 5]
    assert dataset.reader.decoder == "pil"


def test_a_dataset_pickled_now_names_its_new_home():
    from pfio.integrations.torch import PfioImageDataset

    data = pickle.dumps(PfioImageDataset([("mem://b/a.png", 3)]))
    assert b"pfio.integrations.torch.images" in data
    assert b"torch_datasets" not in data
    assert type(pickle.loads(data)) is PfioImageDataset


ROOT = Path(__file__).resolve().parents[2]

#: packages the grouping left in place, whose names are not checked here (importing them
#: needs TensorFlow, Ray, Spark: slow)
UNMOVED = ("tensorflow", "ray", "spark", "petastorm", "fsspec")


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 1, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("pfio.") and \
                    ".".join(parts[:i]).startswith(exc.name):
                continue  # not a module: an attribute
            raise
        for part in parts[i:]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    return False


def test_every_integrations_name_the_docs_and_the_code_cite_resolves():
    files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *(ROOT / "examples").glob("*.py"),
             *(ROOT / "benchmarks").glob("*.py"), *(ROOT / "pfio").rglob("*.py")]
    names = {m for f in files for m in re.findall(r"pfio\.integrations(?:\.\w+)+", f.read_text())}
    names = {n for n in names if n.split(".")[2] not in UNMOVED}
    assert len(names) > 30
    assert sorted(n for n in names if not _resolves(n)) == []


#: Petastorm's own path, the one its users import from (it is not a former path)
PETASTORM_PATH = "pfio.integrations.petastorm.pytorch"


def test_the_code_and_the_docs_cite_the_new_homes():
    shims = {Path(importlib.import_module(old).__file__ or "").resolve() for old in MOVED}
    files = [ROOT / "ARCHITECTURE.md", *(ROOT / "examples").glob("*.py"),
             *(ROOT / "benchmarks").glob("*.py"), *(ROOT / "pfio").rglob("*.py")]
    cited = {f"{f.relative_to(ROOT)}: {name}" for f in files if f.resolve() not in shims
             for name in re.findall(r"pfio\.integrations(?:\.\w+)+", f.read_text())
             if any(name == old or name.startswith(old + ".") for old in MOVED)
             and not name.startswith(PETASTORM_PATH)}
    assert sorted(cited) == []
