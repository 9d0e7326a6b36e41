"""``os`` and ``os.path`` on S3 URLs after ``pfio.patch_all()``: the predicates and stats
that local code calls (``os.access``, ``os.path.lexists``, ``os.lstat``,
``os.path.islink``), and ``os.PathLike`` arguments (an ``os.DirEntry`` of the patched
``os.scandir``, any object with ``__fspath__``) wherever a ``str`` URL works."""

import os
import pathlib
import shutil

import pytest

import pfio

from .path_like import PathLike


@pytest.fixture
def tree(s3_url):
    with pfio.open_url(f"{s3_url}/d/a.txt", "w") as f:
        f.write("a")
    return s3_url


def test_access_of_a_file_a_directory_and_nothing(tree):
    assert os.access(f"{tree}/d/a.txt", os.F_OK)
    assert os.access(f"{tree}/d/a.txt", os.R_OK | os.W_OK)
    assert not os.access(f"{tree}/d/a.txt", os.X_OK)
    assert os.access(f"{tree}/d", os.R_OK | os.W_OK | os.X_OK)
    assert not os.access(f"{tree}/missing", os.F_OK)


def test_access_inside_an_archive_is_read_only(tree):
    with pfio.from_url(tree).open_zip("z.zip", "w") as archive:
        with archive.open("m.txt", "w") as f:
            f.write("m")
    assert os.access(f"{tree}/z.zip/m.txt", os.R_OK)
    assert not os.access(f"{tree}/z.zip/m.txt", os.W_OK)


def test_lexists_lstat_islink(tree):
    assert os.path.lexists(f"{tree}/d/a.txt") and not os.path.lexists(f"{tree}/nope")
    assert os.lstat(f"{tree}/d/a.txt").st_size == 1
    assert not os.path.islink(f"{tree}/d/a.txt") and not os.path.islink(f"{tree}/nope")
    with pytest.raises(FileNotFoundError):
        os.lstat(f"{tree}/nope")


def test_a_dir_entry_of_scandir_opens_and_stats(tree):
    [entry] = os.scandir(f"{tree}/d")
    with open(entry) as f:
        assert f.read() == "a"
    assert os.stat(entry).st_size == 1
    assert os.path.isfile(entry) and os.path.exists(entry) and os.path.getsize(entry) == 1


def test_path_like_urls_in_open_os_and_shutil(tree, tmp_path):
    with open(PathLike(f"{tree}/d/b.txt"), "w") as f:
        f.write("b")
    assert sorted(os.listdir(PathLike(f"{tree}/d"))) == ["a.txt", "b.txt"]
    shutil.copy(PathLike(f"{tree}/d/b.txt"), tmp_path / "b.txt")
    assert (tmp_path / "b.txt").read_text() == "b"
    os.remove(PathLike(f"{tree}/d/b.txt"))
    assert not os.path.exists(PathLike(f"{tree}/d/b.txt"))


def test_local_path_objects_are_untouched(tree, tmp_path):
    (tmp_path / "x").write_text("x")
    assert open(tmp_path / "x").read() == "x"
    assert os.path.exists(tmp_path / "x") and os.stat(tmp_path / "x").st_size == 1


def test_abspath_of_a_url_is_the_url(tree):
    assert os.path.abspath(f"{tree}/d/a.txt") == f"{tree}/d/a.txt"
    assert os.path.abspath("rel") == os.path.join(os.getcwd(), "rel")


def test_pathlib_collapses_the_scheme_so_use_str_urls_or_pfio_path(tree):
    local_looking = pathlib.Path(f"{tree}/d/a.txt")
    assert str(local_looking).startswith("s3:/") and "://" not in str(local_looking)
    with pytest.raises(FileNotFoundError):
        open(local_looking)  # a local path named s3:/...: not the object
    bucket, _, rest = tree[len("s3://"):].partition("/")
    path = pfio.v2.Path(rest, "d", "a.txt", fs=pfio.from_url(f"s3://{bucket}"))
    assert path.read_text() == "a"


def test_path_like_urls_in_library_calls(tree):
    import numpy as np
    from PIL import Image

    cv2 = pytest.importorskip("cv2")
    np.save(PathLike(f"{tree}/d/a.npy"), np.arange(3))
    Image.new("RGB", (2, 2), "red").save(PathLike(f"{tree}/d/red.png"))
    assert cv2.imwrite(PathLike(f"{tree}/d/blue.png"), np.full((2, 2, 3), (255, 0, 0), np.uint8))
    entries = {entry.name: entry for entry in os.scandir(f"{tree}/d")}
    np.testing.assert_array_equal(np.load(entries["a.npy"]), np.arange(3))
    assert Image.open(entries["red.png"]).getpixel((0, 0)) == (255, 0, 0)
    assert cv2.imread(entries["blue.png"])[0, 0].tolist() == [255, 0, 0]
