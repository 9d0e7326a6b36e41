"""torch's own calls on ``s3://`` after ``pfio.patch_all()``, on the moto server:
``torch.save``/``torch.load`` (``mmap=True`` too), ``torch.jit.save``/``torch.jit.load``."""

from __future__ import annotations

import io
import os
import zipfile

import pytest

torch = pytest.importorskip("torch")

import pfio  # noqa: E402
from pfio.cache.object_cache import ObjectCache, set_default_object_cache  # noqa: E402

from .path_like import PathLike  # noqa: E402


@pytest.fixture(autouse=True)
def patched(tmp_path):
    set_default_object_cache(ObjectCache(str(tmp_path / "objects")))
    with pfio.patched("torch"):
        yield
    set_default_object_cache(None)


@pytest.fixture
def s3(s3_env, s3_bucket):
    return f"s3://{s3_bucket}"


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))


def test_save_and_load_a_state_dict(s3):
    state = model().state_dict()
    torch.save(state, f"{s3}/ckpt.pt")
    loaded = torch.load(f"{s3}/ckpt.pt")
    assert all(torch.equal(loaded[k], v) for k, v in state.items())


def test_save_and_load_by_keyword(s3):
    torch.save(obj={"x": torch.arange(3)}, f=f"{s3}/kw.pt")
    assert torch.equal(torch.load(f=f"{s3}/kw.pt")["x"], torch.arange(3))


def test_path_objects_in_the_second_position_and_by_keyword(s3, tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # a path object taken as local would land in ./s3:
    torch.save({"x": torch.arange(3)}, PathLike(f"{s3}/p.pt"))
    torch.save(obj={"y": torch.arange(2)}, f=PathLike(f"{s3}/k.pt"))
    assert torch.equal(torch.load(f=PathLike(f"{s3}/p.pt"))["x"], torch.arange(3))
    assert torch.equal(torch.load(PathLike(f"{s3}/k.pt"))["y"], torch.arange(2))
    assert pfio.from_url(s3).exists("p.pt") and os.listdir(tmp_path / "cwd") == []


def test_load_with_mmap_maps_a_local_copy(s3):  # torch maps only file paths
    state = model().state_dict()
    torch.save(state, f"{s3}/mapped.pt")
    loaded = torch.load(f"{s3}/mapped.pt", mmap=True)
    assert all(torch.equal(loaded[k], v) for k, v in state.items())


def test_a_mapped_load_survives_a_new_version_of_the_object(s3):
    url = f"{s3}/versions.pt"
    torch.save({"w": torch.zeros(4)}, url)
    first = torch.load(url, mmap=True)
    torch.save({"w": torch.ones(4)}, url)
    assert torch.equal(torch.load(url, mmap=True)["w"], torch.ones(4))
    assert torch.equal(first["w"], torch.zeros(4))


def test_members_of_a_zip_on_s3_load_mapped_and_streamed(s3):
    member = io.BytesIO()
    torch.save({"w": torch.arange(3)}, member)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("ckpt/model.pt", member.getvalue())
    with pfio.open_url(f"{s3}/run.zip", "wb") as f:
        f.write(archive.getvalue())
    for mmap in (False, True):
        loaded = torch.load(f"{s3}/run.zip/ckpt/model.pt", mmap=mmap)
        assert torch.equal(loaded["w"], torch.arange(3))


def test_mmap_load_of_a_missing_object_names_it(s3):
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        torch.load(f"{s3}/missing.pt", mmap=True)


def test_jit_save_and_load(s3):
    scripted = torch.jit.script(model())
    torch.jit.save(scripted, f"{s3}/model.ts")
    loaded = torch.jit.load(f"{s3}/model.ts")
    x = torch.ones(1, 4)
    assert torch.equal(loaded(x), scripted(x))


def test_jit_save_error_publishes_nothing(s3):
    with pytest.raises(AttributeError):
        torch.jit.save(object(), f"{s3}/broken.ts")
    assert not pfio.from_url(s3).exists("broken.ts")


def test_local_paths_go_to_torch(tmp_path):
    torch.jit.save(torch.jit.script(model()), str(tmp_path / "m.ts"))
    assert isinstance(torch.jit.load(str(tmp_path / "m.ts")), torch.jit.ScriptModule)
