"""Outputs written to URLs: ``PIL.Image.Image.save`` and the pandas writers (``to_csv``,
``to_json``, ``to_pickle``, ``to_parquet``, ``to_feather``), on ``mem://`` and S3 (moto
server): whole objects on success, none on failure."""

import gzip
import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import pfio
from pfio.patches import patch_all, unpatch_all


def _read_bytes(fs, name):
    with fs.open(name, "rb") as f:
        return f.read()


def _image():
    image = Image.new("RGB", (8, 6), (10, 20, 30))
    image.putpixel((0, 0), (250, 0, 0))
    return image


def test_save_png_to_a_url(remote):
    url, fs = remote
    patch_all("PIL")
    _image().save(f"{url}/out/a.png")
    with Image.open(io.BytesIO(_read_bytes(fs, "out/a.png"))) as saved:
        assert saved.format == "PNG"
        assert saved.tobytes() == _image().tobytes()


def test_save_takes_the_format_from_an_upper_case_extension(remote):
    url, fs = remote
    patch_all("PIL")
    _image().save(f"{url}/a.JPG", quality=95)
    with Image.open(io.BytesIO(_read_bytes(fs, "a.JPG"))) as saved:
        assert saved.format == "JPEG" and saved.size == (8, 6)


def test_save_with_a_format_and_no_extension(remote):
    url, fs = remote
    patch_all("PIL")
    _image().save(f"{url}/noext", format="PNG")
    assert _read_bytes(fs, "noext")[:8] == b"\x89PNG\r\n\x1a\n"


def test_save_with_an_unknown_extension_raises_and_leaves_nothing(remote):
    url, fs = remote
    patch_all("PIL")
    with pytest.raises(ValueError, match="unknown file extension"):
        _image().save(f"{url}/a.unknown")
    assert not fs.exists("a.unknown")


def test_save_failing_half_way_leaves_the_object_as_it_was(remote):
    url, fs = remote
    patch_all("PIL")
    _image().save(f"{url}/anim.gif")
    before = _read_bytes(fs, "anim.gif")

    def frames():
        yield Image.new("RGB", (8, 6), (0, 0, 255))
        raise RuntimeError("frame source failed")

    with pytest.raises(RuntimeError, match="frame source failed"):
        _image().save(f"{url}/anim.gif", save_all=True, append_images=frames())
    assert _read_bytes(fs, "anim.gif") == before  # a local file would be left truncated
    with pytest.raises(RuntimeError):
        _image().save(f"{url}/new.gif", save_all=True, append_images=frames())
    assert not fs.exists("new.gif")


def test_save_append_adds_pages_to_an_existing_tiff(remote):
    url, fs = remote
    patch_all("PIL")
    _image().save(f"{url}/pages.tiff")
    green = Image.new("RGB", (8, 6), (0, 255, 0))
    green.save(f"{url}/pages.tiff", save_all=True, append=True, append_images=[green])
    with Image.open(io.BytesIO(_read_bytes(fs, "pages.tiff"))) as saved:
        assert saved.n_frames == 3


def test_save_to_a_local_path_or_file_object_is_untouched(tmp_path):
    patch_all("PIL")
    _image().save(tmp_path / "l.png")
    buffer = io.BytesIO()
    _image().save(buffer, format="PNG")
    assert (tmp_path / "l.png").read_bytes() == buffer.getvalue()


def test_unpatch_restores_save():
    original = Image.Image.save
    patch_all("PIL")
    assert Image.Image.save is not original
    unpatch_all("PIL")
    assert Image.Image.save is original


def _frame():
    return pd.DataFrame({"a": np.arange(4), "b": np.linspace(0, 1, 4), "c": list("wxyz")})


def test_to_csv_to_a_url(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_csv(f"{url}/t.csv", index=False)
    pd.testing.assert_frame_equal(pd.read_csv(io.BytesIO(_read_bytes(fs, "t.csv"))), _frame())


def test_to_csv_infers_compression_from_the_url(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_csv(f"{url}/t.csv.gz", index=False)
    text = gzip.decompress(_read_bytes(fs, "t.csv.gz")).decode()
    assert text.splitlines()[0] == "a,b,c"


def test_to_csv_with_the_path_by_keyword(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_csv(path_or_buf=f"{url}/k.csv", index=False)
    assert fs.exists("k.csv")


def test_to_hdf_with_the_path_by_keyword(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_hdf(path_or_buf=f"{url}/k.h5", key="df", mode="w")
    assert pd.read_hdf(f"{url}/k.h5", "df").equals(_frame())


def test_to_csv_appends_to_an_existing_object(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_csv(f"{url}/log.csv", index=False)
    _frame().to_csv(f"{url}/log.csv", index=False, header=False, mode="a")
    assert len(pd.read_csv(io.BytesIO(_read_bytes(fs, "log.csv")))) == 8


def test_series_to_csv(remote):
    url, fs = remote
    patch_all("pandas")
    _frame()["a"].to_csv(f"{url}/s.csv", index=False)
    assert _read_bytes(fs, "s.csv").split() == [b"a", b"0", b"1", b"2", b"3"]


class _Unprintable:
    def __str__(self):
        raise RuntimeError("cell cannot be written")


def test_to_csv_failing_half_way_uploads_nothing(remote):
    url, fs = remote
    patch_all("pandas")
    frame = pd.DataFrame({"x": [1, 2, 3, _Unprintable()]})
    with pytest.raises(RuntimeError, match="cell cannot be written"):
        frame.to_csv(f"{url}/bad.csv", chunksize=1)
    assert not fs.exists("bad.csv")


def test_to_json_to_a_url(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_json(f"{url}/t.json", orient="records", lines=True)
    pd.testing.assert_frame_equal(
        pd.read_json(io.BytesIO(_read_bytes(fs, "t.json")), lines=True), _frame())


def test_to_pickle_to_a_url(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_pickle(f"{url}/t.pkl")
    pd.testing.assert_frame_equal(pd.read_pickle(io.BytesIO(_read_bytes(fs, "t.pkl"))),
                                  _frame())


def test_to_parquet_to_a_url(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_parquet(path=f"{url}/t.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(io.BytesIO(_read_bytes(fs, "t.parquet"))),
                                  _frame())


def test_to_feather_to_a_url(remote):
    url, fs = remote
    patch_all("pandas")
    _frame().to_feather(f"{url}/t.feather")
    pd.testing.assert_frame_equal(pd.read_feather(io.BytesIO(_read_bytes(fs, "t.feather"))),
                                  _frame())


def test_storage_options_send_the_call_to_fsspec():
    patch_all("pandas")
    with pytest.raises(ValueError, match="Protocol not known: mem"):  # fsspec's answer
        _frame().to_csv("mem://write-fsspec/x.csv", storage_options={})
    with pfio.from_url("mem://write-fsspec") as fs:
        assert not fs.exists("x.csv")


def test_local_paths_are_written_by_pandas_as_unpatched(tmp_path):
    _frame().to_csv(tmp_path / "plain.csv.gz", index=False)
    patch_all("pandas")
    _frame().to_csv(tmp_path / "patched.csv.gz", index=False)
    _frame().to_parquet(str(tmp_path / "p.parquet"))
    assert gzip.decompress((tmp_path / "plain.csv.gz").read_bytes()) == \
        gzip.decompress((tmp_path / "patched.csv.gz").read_bytes())
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "p.parquet"), _frame())
    assert _frame().to_csv(index=False).startswith("a,b,c")  # no path: a string


def test_unpatch_restores_the_writers():
    originals = [pd.DataFrame.to_csv, pd.DataFrame.to_parquet, pd.Series.to_pickle]
    patch_all("pandas")
    assert pd.DataFrame.to_csv is not originals[0]
    unpatch_all("pandas")
    assert [pd.DataFrame.to_csv, pd.DataFrame.to_parquet, pd.Series.to_pickle] == originals
