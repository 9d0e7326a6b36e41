"""pfio rm, mv, mkdir and touch: local files, mem://, S3 and archives."""

import os

import pytest

import pfio
from pfio.cli import main


def _write(fs, name, data):
    with fs.open(name, "wb") as f:
        f.write(data)


def _read(fs, name):
    with fs.open(name, "rb") as f:
        return f.read()


# -- rm -----------------------------------------------------------------------------------

def test_rm_removes_a_file(tree):
    assert main(["rm", str(tree / "a.txt")]) == 0
    assert not (tree / "a.txt").exists()


def test_rm_of_a_missing_file_fails(tree, capsys):
    assert main(["rm", str(tree / "missing")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio rm: No such file or directory") and "missing" in err


def test_rm_f_ignores_a_missing_file(tree, capsys):
    assert main(["rm", "-f", str(tree / "missing")]) == 0
    assert capsys.readouterr().err == ""


def test_rm_of_a_directory_needs_r(tree, capsys):
    assert main(["rm", str(tree / "sub")]) == 1
    assert "use rm -r" in capsys.readouterr().err
    assert (tree / "sub" / "b.bin").exists()


def test_rm_of_an_empty_directory_needs_r_too(tree, capsys):
    assert main(["rm", str(tree / "empty")]) == 1
    assert (tree / "empty").is_dir()


def test_rm_r_removes_a_directory(tree):
    assert main(["rm", "-r", str(tree / "sub")]) == 0
    assert not (tree / "sub").exists()
    assert (tree / "a.txt").exists()


def test_rm_goes_on_after_a_failure(tree, capsys):
    assert main(["rm", str(tree / "missing"), str(tree / "a.txt")]) == 1
    assert not (tree / "a.txt").exists()
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("url", ["mem://cli-rm-root/", ".", "..", "some/dir/.."])
def test_rm_refuses_a_root_and_dot_paths(tree, monkeypatch, capsys, url):
    monkeypatch.chdir(tree / "sub")
    assert main(["rm", "-r", url]) == 1
    assert "refusing to remove" in capsys.readouterr().err
    assert (tree / "sub" / "b.bin").exists()


def test_rm_r_on_mem(mem):
    _write(mem, "d/x", b"1")
    _write(mem, "keep", b"2")
    assert main(["rm", "-r", f"mem://{mem.name}/d"]) == 0
    assert not mem.exists("d") and mem.exists("keep")


def test_rm_of_a_zip_member_fails_cleanly(zip_path, capsys):
    assert main(["rm", str(zip_path / "dir" / "x.txt")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio rm: ") and err.count("\n") == 1 and "Traceback" not in err


def test_rm_on_s3(s3_env, s3_bucket, capsys):
    base = f"s3://{s3_bucket}"
    with pfio.from_url(base) as fs:
        for name in ("one", "run/a", "run/sub/b"):
            _write(fs, name, b"x")
        assert main(["rm", f"{base}/run"]) == 1
        assert "use rm -r" in capsys.readouterr().err
        assert main(["rm", f"{base}/one"]) == 0
        assert main(["rm", "-r", f"{base}/run/"]) == 0
        assert list(fs.list("")) == []


def test_rm_of_a_missing_s3_key(s3_env, s3_bucket, capsys):
    assert main(["rm", f"s3://{s3_bucket}/nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio rm: ") and "nope" in err


# -- mv -----------------------------------------------------------------------------------

def test_mv_renames_a_file(tree, tmp_path):
    assert main(["mv", str(tree / "a.txt"), str(tmp_path / "b.txt")]) == 0
    assert (tmp_path / "b.txt").read_bytes() == b"alpha\n"
    assert not (tree / "a.txt").exists()


def test_mv_into_an_existing_directory(tree):
    assert main(["mv", str(tree / "a.txt"), str(tree / "sub")]) == 0
    assert (tree / "sub" / "a.txt").read_bytes() == b"alpha\n"


def test_mv_refuses_to_replace_a_file(tree, capsys):
    assert main(["mv", str(tree / "a.txt"), str(tree / "sub" / "b.bin")]) == 1
    assert "use --force" in capsys.readouterr().err
    assert (tree / "a.txt").exists()
    assert (tree / "sub" / "b.bin").stat().st_size == 10240


def test_mv_force_replaces_a_file(tree):
    assert main(["mv", "--force", str(tree / "a.txt"), str(tree / "sub" / "b.bin")]) == 0
    assert (tree / "sub" / "b.bin").read_bytes() == b"alpha\n"
    assert not (tree / "a.txt").exists()


def test_mv_never_replaces_a_directory(tree, capsys):
    (tree / "dst" / "sub").mkdir(parents=True)
    assert main(["mv", "-f", str(tree / "sub"), str(tree / "dst")]) == 1
    assert "never replaced" in capsys.readouterr().err
    assert (tree / "sub" / "b.bin").exists()


def test_mv_a_directory_into_itself_is_refused(tree, capsys):
    assert main(["mv", str(tree / "sub"), str(tree / "sub" / "deeper")]) == 1
    assert "into itself" in capsys.readouterr().err
    assert (tree / "sub" / "deeper" / "c.txt").exists()


def test_mv_of_a_missing_source(tree, capsys):
    assert main(["mv", str(tree / "missing"), str(tree / "x")]) == 1
    assert capsys.readouterr().err.startswith("pfio mv: No such file or directory")


def test_mv_a_file_to_another_filesystem_copies_then_removes(tree, mem):
    assert main(["mv", str(tree / "a.txt"), f"mem://{mem.name}/moved.txt"]) == 0
    assert _read(mem, "moved.txt") == b"alpha\n"
    assert not (tree / "a.txt").exists()


def test_mv_a_directory_to_another_filesystem(tree, mem):
    mem.makedirs("into")
    assert main(["mv", "-q", str(tree / "sub"), f"mem://{mem.name}/into"]) == 0
    assert _read(mem, "into/sub/deeper/c.txt") == b"gamma"
    assert _read(mem, "into/sub/b.bin") == bytes(range(256)) * 40
    assert not (tree / "sub").exists()


def test_mv_out_of_a_zip_cannot_remove_the_member(zip_path, tmp_path, capsys):
    assert main(["mv", str(zip_path / "dir" / "x.txt"), str(tmp_path / "x.txt")]) == 1
    assert capsys.readouterr().err.startswith("pfio mv: ")
    assert (tmp_path / "x.txt").read_bytes() == b"xyz"  # copied; the archive is read-only


def test_mv_within_a_mem_store(mem):
    _write(mem, "a/one", b"1")
    assert main(["mv", f"mem://{mem.name}/a", f"mem://{mem.name}/b"]) == 0
    assert _read(mem, "b/one") == b"1" and not mem.exists("a")


def test_mv_on_s3_renames_a_prefix(s3_env, s3_bucket):
    base = f"s3://{s3_bucket}"
    with pfio.from_url(base) as fs:
        _write(fs, "run/a", b"A")
        _write(fs, "run/sub/b", b"B")
        assert main(["mv", f"{base}/run", f"{base}/done"]) == 0
        assert sorted(fs.list("", recursive=True)) == ["done/a", "done/sub/b"]
        assert _read(fs, "done/sub/b") == b"B"


def test_mv_on_s3_refuses_to_replace_an_object(s3_env, s3_bucket, capsys):
    base = f"s3://{s3_bucket}"
    with pfio.from_url(base) as fs:
        _write(fs, "a", b"new")
        _write(fs, "b", b"old")
        assert main(["mv", f"{base}/a", f"{base}/b"]) == 1
        assert "use --force" in capsys.readouterr().err
        assert main(["mv", f"{base}/b", f"{base}/b"]) == 1
        assert _read(fs, "b") == b"old"
        assert main(["mv", "-f", f"{base}/a", f"{base}/b"]) == 0
        assert _read(fs, "b") == b"new" and not fs.exists("a")


# -- mkdir --------------------------------------------------------------------------------

def test_mkdir_makes_a_directory(tmp_path):
    assert main(["mkdir", str(tmp_path / "new")]) == 0
    assert (tmp_path / "new").is_dir()


def test_mkdir_of_an_existing_directory_fails(tmp_path, capsys):
    assert main(["mkdir", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("pfio mkdir: File exists")


def test_mkdir_needs_the_parent(tmp_path, capsys):
    assert main(["mkdir", str(tmp_path / "a" / "b")]) == 1
    assert capsys.readouterr().err.startswith("pfio mkdir: No such file or directory")
    assert not (tmp_path / "a").exists()


def test_mkdir_p_makes_the_parents_and_accepts_an_existing_directory(tmp_path):
    assert main(["mkdir", "-p", str(tmp_path / "a" / "b" / "c"), str(tmp_path)]) == 0
    assert (tmp_path / "a" / "b" / "c").is_dir()


def test_mkdir_p_over_a_file_fails(tree, capsys):
    assert main(["mkdir", "-p", str(tree / "a.txt" / "x")]) == 1
    assert capsys.readouterr().err.startswith("pfio mkdir: ")


def test_mkdir_p_on_mem(mem):
    assert main(["mkdir", "-p", f"mem://{mem.name}/x/y"]) == 0
    assert mem.isdir("x/y")


def test_mkdir_on_s3_needs_nothing(s3_env, s3_bucket):
    assert main(["mkdir", "-p", f"s3://{s3_bucket}/prefix/below"]) == 0


# -- touch --------------------------------------------------------------------------------

def test_touch_makes_an_empty_file(tmp_path):
    assert main(["touch", str(tmp_path / "f")]) == 0
    assert (tmp_path / "f").read_bytes() == b""


def test_touch_keeps_an_existing_file_and_updates_its_time(tree):
    os.utime(tree / "a.txt", (1000, 1000))
    assert main(["touch", str(tree / "a.txt")]) == 0
    assert (tree / "a.txt").read_bytes() == b"alpha\n"
    assert (tree / "a.txt").stat().st_mtime > 1000


def test_touch_in_a_missing_local_directory_fails(tmp_path, capsys):
    assert main(["touch", str(tmp_path / "no" / "f")]) == 1
    assert capsys.readouterr().err.startswith("pfio touch: ")


def test_touch_on_mem(mem):
    assert main(["touch", f"mem://{mem.name}/d/f"]) == 0
    assert _read(mem, "d/f") == b""


def test_touch_on_s3(s3_env, s3_bucket):
    base = f"s3://{s3_bucket}"
    with pfio.from_url(base) as fs:
        _write(fs, "kept", b"data")
        assert main(["touch", f"{base}/run/_SUCCESS", f"{base}/kept"]) == 0
        assert _read(fs, "run/_SUCCESS") == b""
        assert _read(fs, "kept") == b"data"
