"""pandas readers and writers on ``s3://`` after ``pfio.patch_all()``, pandas' own calls
unchanged, on the moto server: compression from the suffix, Parquet files and partitioned
directories, archive members, chunked reads, errors."""

from __future__ import annotations

import gzip
import importlib.util
import io
import os
import tarfile
import zipfile

import pytest

pd = pytest.importorskip("pandas")
fsspec = pytest.importorskip("fsspec")
pytest.importorskip("pyarrow")

import pfio  # noqa: E402

from .path_like import PathLike  # noqa: E402

FRAME = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})

#: the first bytes of each codec's streams
MAGIC = {"gz": b"\x1f\x8b", "bz2": b"BZh", "xz": b"\xfd7zXZ", "zip": b"PK",
         "zst": b"\x28\xb5\x2f\xfd"}


@pytest.fixture(autouse=True)
def patched():
    with pfio.patched():
        yield


@pytest.fixture
def s3(s3_env, s3_bucket):
    return f"s3://{s3_bucket}"


def stored(url: str) -> bytes:
    with pfio.open_url(url, "rb") as f:
        return f.read()


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz", ".zip", ".zst"])
def test_csv_round_trip_with_compression_from_the_suffix(s3, suffix):
    url = f"{s3}/t.csv{suffix}"
    FRAME.to_csv(url, index=False)
    if suffix:
        assert stored(url).startswith(MAGIC[suffix[1:]])
    pd.testing.assert_frame_equal(pd.read_csv(url), FRAME)


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
def test_json_round_trip_with_compression_from_the_suffix(s3, suffix):
    url = f"{s3}/t.json{suffix}"
    FRAME.to_json(url, orient="records", lines=True)
    if suffix:
        assert stored(url).startswith(MAGIC[suffix[1:]])
    pd.testing.assert_frame_equal(pd.read_json(url, orient="records", lines=True), FRAME)


def test_read_csv_takes_its_path_by_keyword_and_reads_in_chunks(s3):
    FRAME.to_csv(f"{s3}/c.csv", index=False)
    chunks = list(pd.read_csv(filepath_or_buffer=f"{s3}/c.csv", chunksize=2))
    assert [len(c) for c in chunks] == [2, 1]


def test_parquet_round_trip_with_columns(s3):
    FRAME.to_parquet(f"{s3}/t.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(f"{s3}/t.parquet", columns=["b"]),
                                  FRAME[["b"]])


def test_parquet_partitioned_directory_round_trip(s3):
    FRAME.to_parquet(f"{s3}/table", partition_cols=["b"])
    assert sorted(pfio.from_url(f"{s3}/table").list()) == ["b=x/", "b=y/", "b=z/"]
    back = pd.read_parquet(f"{s3}/table")
    assert sorted(back["a"].tolist()) == [1, 2, 3]


def test_feather_and_pickle_round_trip(s3):
    FRAME.to_feather(f"{s3}/t.feather")
    FRAME.to_pickle(f"{s3}/t.pkl.xz")
    pd.testing.assert_frame_equal(pd.read_feather(f"{s3}/t.feather"), FRAME)
    pd.testing.assert_frame_equal(pd.read_pickle(f"{s3}/t.pkl.xz"), FRAME)


@pytest.mark.parametrize("reader, name, kwargs", [
    ("read_orc", "t.orc", {}), ("read_xml", "t.xml", {"parser": "etree"}),
    ("read_stata", "t.dta", {}), ("read_table", "t.tsv", {}), ("read_fwf", "t.txt", {})])
def test_other_readers(s3, reader, name, kwargs):
    buffer = io.BytesIO()
    {"t.orc": lambda: FRAME.to_orc(buffer),
     "t.xml": lambda: buffer.write(FRAME.to_xml(parser="etree", index=False).encode()),
     "t.dta": lambda: FRAME.to_stata(buffer, write_index=False),
     "t.tsv": lambda: buffer.write(FRAME.to_csv(sep="\t", index=False).encode()),
     "t.txt": lambda: buffer.write(b"a b\n1 x\n2 y\n3 z\n")}[name]()
    with pfio.open_url(f"{s3}/{name}", "wb") as f:
        f.write(buffer.getvalue())
    back = getattr(pd, reader)(f"{s3}/{name}", **kwargs)
    assert back["a"].tolist() == [1, 2, 3] and back["b"].tolist() == ["x", "y", "z"]


def test_to_csv_appends_to_an_object(s3):
    FRAME.to_csv(f"{s3}/log.csv", index=False)
    FRAME.to_csv(f"{s3}/log.csv", index=False, header=False, mode="a")
    assert len(pd.read_csv(f"{s3}/log.csv")) == 6


def test_members_of_a_zip_on_s3(s3):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("data/t.csv", FRAME.to_csv(index=False))
        z.writestr("data/t.json.gz", gzip.compress(FRAME.to_json(orient="records").encode()))
    with pfio.open_url(f"{s3}/archive.zip", "wb") as f:
        f.write(buffer.getvalue())
    pd.testing.assert_frame_equal(pd.read_csv(f"{s3}/archive.zip/data/t.csv"), FRAME)
    pd.testing.assert_frame_equal(pd.read_json(f"{s3}/archive.zip/data/t.json.gz"), FRAME)


def test_members_of_a_tar_on_s3(s3):
    FRAME.to_parquet(f"{s3}/t.parquet")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as t:
        data = stored(f"{s3}/t.parquet")
        info = tarfile.TarInfo("t.parquet")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    with pfio.open_url(f"{s3}/archive.tar", "wb") as f:
        f.write(buffer.getvalue())
    pd.testing.assert_frame_equal(pd.read_parquet(f"{s3}/archive.tar/t.parquet"), FRAME)


def test_mem_urls_too():
    url = "mem://pandas-client/t.csv.gz"
    FRAME.to_csv(url, index=False)
    pd.testing.assert_frame_equal(pd.read_csv(url), FRAME)


def test_path_objects_by_keyword(s3, tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # a path object taken as local would land in ./s3:
    FRAME.to_csv(path_or_buf=PathLike(f"{s3}/k.csv.gz"), index=False)
    FRAME.to_parquet(path=PathLike(f"{s3}/k.parquet"))
    assert stored(f"{s3}/k.csv.gz")[:2] == MAGIC["gz"]
    pd.testing.assert_frame_equal(
        pd.read_csv(filepath_or_buffer=PathLike(f"{s3}/k.csv.gz")), FRAME)
    pd.testing.assert_frame_equal(pd.read_parquet(path=PathLike(f"{s3}/k.parquet")), FRAME)
    assert os.listdir(tmp_path / "cwd") == []


def test_a_missing_object_names_its_url(s3):
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        pd.read_csv(f"{s3}/missing.csv")


def test_storage_options_mean_fsspec_and_go_to_pandas_untouched(s3):
    if importlib.util.find_spec("s3fs") is not None:
        pytest.skip("s3fs is installed: pandas would use it")
    with pytest.raises(ImportError, match="s3fs"):
        pd.read_csv(f"{s3}/t.csv", storage_options={"anon": True})


def test_local_paths_go_to_pandas(tmp_path):
    FRAME.to_csv(tmp_path / "t.csv", index=False)
    pd.testing.assert_frame_equal(pd.read_csv(str(tmp_path / "t.csv")), FRAME)




def test_pfio_urls_go_to_pandas_as_they_are(request, monkeypatch):
    url = f"pfio://mem/pandas-{request.node.name}/t.csv"
    FRAME.to_csv(url, index=False)
    opened = []
    fsspec_open = fsspec.open
    monkeypatch.setattr(fsspec, "open", lambda path, *a, **k: (
        opened.append(path), fsspec_open(path, *a, **k))[1])
    pd.testing.assert_frame_equal(pd.read_csv(url), FRAME)
    assert opened == [url]
