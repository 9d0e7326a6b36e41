"""Names given to ``pfio.v2`` filesystems as PFIO 2.10 code gives them: a list file of
absolute paths read through a filesystem rooted above them, as PFIO 2.10 read it (its
``Local`` and ``S3`` joined a name to their root with ``os.path.join``, so an absolute path
was that file). A name outside the root is refused, where PFIO 2.10 opened it."""

from __future__ import annotations

import pytest

from pfio.v2 import Local, from_url, open_url


def test_local_opens_the_absolute_paths_of_a_list_file_inside_its_root(tmp_path):
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.jpg").write_bytes(b"a")
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "train.txt").write_text(f"{tmp_path / 'imgs' / 'a.jpg'} 0\n")
    with Local(str(tmp_path)) as fs:
        with fs.open("lists/train.txt") as f:
            [path] = [line.split()[0] for line in f]
        with fs.open(path, "rb") as f:
            assert f.read() == b"a"


def test_local_refuses_an_absolute_path_outside_its_root(tmp_path):
    (tmp_path / "secret").write_bytes(b"s")
    (tmp_path / "root").mkdir()
    with Local(str(tmp_path / "root")) as fs, pytest.raises(PermissionError):
        fs.open(str(tmp_path / "secret"), "rb")


def test_s3_opens_an_absolute_key_inside_its_prefix(s3_env, s3_bucket):
    with open_url(f"s3://{s3_bucket}/base/imgs/a.jpg", "wb") as f:
        f.write(b"a")
    with from_url(f"s3://{s3_bucket}/base") as fs:
        with fs.open("/base/imgs/a.jpg", "rb") as f:
            assert f.read() == b"a"
        with pytest.raises(PermissionError, match="'/imgs/a.jpg'"):
            fs.open("/imgs/a.jpg", "rb")
        with pytest.raises(PermissionError, match="'../x'"):
            fs.open("../x", "wb")
    with from_url(f"s3://{s3_bucket}") as top:
        assert sorted(top.list(recursive=True)) == ["base/imgs/a.jpg"]
