"""Hugging Face datasets on ``pfio://s3/...`` through the fsspec bridge, its own calls
unchanged, on the moto server: ``load_dataset`` of CSV, JSON lines and Parquet data files
(globs, splits, archive members, streaming), ``Dataset.save_to_disk`` and
``load_from_disk``."""

from __future__ import annotations

import io
import zipfile

import pytest

datasets = pytest.importorskip("datasets")
pd = pytest.importorskip("pandas")

import pfio  # noqa: E402

FRAME = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
ROWS = FRAME.to_dict(orient="records")


@pytest.fixture(autouse=True)
def hf_home(tmp_path, monkeypatch):
    """Hugging Face's caches under ``tmp_path``; no telemetry."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf" / "datasets")


@pytest.fixture
def s3(s3_env, s3_bucket):
    """A new bucket, as a ``pfio://`` root; its data files as pandas writes them."""
    root = f"pfio://s3/{s3_bucket}"
    FRAME.to_csv(f"{root}/data/train.csv", index=False)
    FRAME.iloc[:1].to_csv(f"{root}/data/test.csv", index=False)
    FRAME.to_json(f"{root}/data/train.jsonl", orient="records", lines=True)
    FRAME.to_parquet(f"{root}/data/train.parquet")
    return root


@pytest.mark.parametrize("builder, name", [
    ("csv", "train.csv"), ("json", "train.jsonl"), ("parquet", "train.parquet")])
def test_load_dataset_of_a_data_file(s3, builder, name):
    ds = datasets.load_dataset(builder, data_files=f"{s3}/data/{name}", split="train")
    assert ds.to_list() == ROWS


def test_load_dataset_with_splits_and_a_glob(s3):
    dd = datasets.load_dataset("csv", data_files={"train": f"{s3}/data/tr*.csv",
                                                  "test": f"{s3}/data/test.csv"})
    assert dd["train"].num_rows == 3 and dd["test"].to_list() == ROWS[:1]


def test_load_dataset_streaming(s3):
    ds = datasets.load_dataset("json", data_files=f"{s3}/data/train.jsonl", split="train",
                               streaming=True)
    assert list(ds) == ROWS


def test_load_dataset_of_a_member_of_a_zip_on_s3(s3):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("inner/train.csv", FRAME.to_csv(index=False))
    with pfio.open_url(f"s3://{s3[10:]}/archive.zip", "wb") as f:
        f.write(buffer.getvalue())
    ds = datasets.load_dataset("csv", data_files=f"{s3}/archive.zip/inner/train.csv",
                               split="train")
    assert ds.to_list() == ROWS


@pytest.fixture
def images(s3):
    """Two classes of two PNG images under ``{s3}/img/train``."""
    from PIL import Image

    for label in ("cat", "dog"):
        for i in range(2):
            buffer = io.BytesIO()
            Image.new("RGB", (4, 4), (i, 0, 0)).save(buffer, "PNG")
            with pfio.open_url(f"s3://{s3[10:]}/img/train/{label}/{i}.png", "wb") as f:
                f.write(buffer.getvalue())
    return f"{s3}/img"


def test_imagefolder_of_data_files(images):
    ds = datasets.load_dataset("imagefolder", data_files={"train": f"{images}/train/**"},
                               split="train")
    assert ds.features["label"].names == ["cat", "dog"]
    assert sorted(ds["label"]) == [0, 0, 1, 1] and ds[0]["image"].size == (4, 4)


def test_imagefolder_data_dir_is_taken_for_a_local_path(images):
    """datasets' own limit (huggingface/datasets#6489): ``data_dir`` of a packaged builder
    is resolved as a local path; ``data_files`` (above) is the way."""
    with pytest.raises(datasets.data_files.EmptyDatasetError, match="pfio:"):
        datasets.load_dataset("imagefolder", data_dir=images, split="train")


@pytest.mark.parametrize("method, name", [
    ("to_csv", "out.csv"), ("to_json", "out.jsonl"), ("to_parquet", "out.parquet")])
def test_dataset_writers(s3, method, name):
    getattr(datasets.Dataset.from_pandas(FRAME), method)(f"{s3}/{name}")
    builder = {"out.csv": "csv", "out.jsonl": "json", "out.parquet": "parquet"}[name]
    back = datasets.load_dataset(builder, data_files=f"{s3}/{name}", split="train")
    assert back.to_list() == ROWS


def test_save_to_disk_and_load_from_disk(s3):
    ds = datasets.Dataset.from_pandas(FRAME)
    ds.save_to_disk(f"{s3}/saved")
    assert pfio.from_url(f"s3://{s3[10:]}/saved").exists("state.json")
    assert datasets.load_from_disk(f"{s3}/saved").to_list() == ROWS


def test_dataset_dict_save_and_load(s3):
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_pandas(FRAME),
                               "test": datasets.Dataset.from_pandas(FRAME.iloc[:1])})
    dd.save_to_disk(f"{s3}/dict")
    back = datasets.load_from_disk(f"{s3}/dict")
    assert back["train"].to_list() == ROWS and back["test"].num_rows == 1


def test_load_from_disk_of_a_missing_path_raises(s3):
    with pytest.raises(FileNotFoundError):
        datasets.load_from_disk(f"{s3}/nothing")
