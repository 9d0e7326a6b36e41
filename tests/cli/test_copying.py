"""pfio pack (refusing to replace an archive) and pfio sync (the command line of
:func:`pfio.cli.copying.sync_command`)."""

import zipfile

import pytest

import pfio
from pfio.cli import main


def _files(fs):
    """{name: bytes} of every file of ``fs``."""
    out = {}
    for st in fs.list("", recursive=True, detail=True):
        if not st.isdir():
            with fs.open(st.filename, "rb") as f:
                out[st.filename] = f.read()
    return out


# -- pack ---------------------------------------------------------------------------------

def test_pack_refuses_to_replace_an_archive(tree, tmp_path, capsys):
    out = tmp_path / "out.zip"
    out.write_bytes(b"precious")
    assert main(["pack", str(tree), str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio pack: ") and "--force" in err and str(out) in err
    assert out.read_bytes() == b"precious"


def test_pack_force_replaces_an_archive(tree, tmp_path):
    out = tmp_path / "out.zip"
    out.write_bytes(b"old")
    assert main(["pack", "--force", str(tree), str(out)]) == 0
    with zipfile.ZipFile(out) as z:
        assert z.read("sub/deeper/c.txt") == b"gamma"


def test_pack_refuses_to_replace_an_archive_on_mem(tree, mem, capsys):
    with mem.open("a.tar", "wb") as f:
        f.write(b"old tar")
    assert main(["pack", str(tree), f"mem://{mem.name}/a.tar"]) == 1
    assert "already exists" in capsys.readouterr().err
    with mem.open("a.tar", "rb") as f:
        assert f.read() == b"old tar"


def test_pack_refuses_to_replace_an_archive_on_s3(tree, s3_env, s3_bucket, capsys):
    url = f"s3://{s3_bucket}/data.zip"
    assert main(["pack", str(tree), url]) == 0
    assert main(["pack", str(tree), url]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["pack", "-f", str(tree), url]) == 0


# -- cp -----------------------------------------------------------------------------------

def test_cp_no_clobber_keeps_an_existing_file(tree, tmp_path, capsys):
    (tmp_path / "kept").write_bytes(b"kept")
    assert main(["cp", "-n", str(tree / "a.txt"), str(tmp_path / "kept")]) == 1
    assert capsys.readouterr().err.startswith("pfio cp: ")
    assert (tmp_path / "kept").read_bytes() == b"kept"


def test_cp_r_with_workers(tree, mem):
    assert main(["cp", "-r", "-q", "--workers", "2", str(tree), f"mem://{mem.name}/c"]) == 0
    with mem.open("c/sub/deeper/c.txt", "rb") as f:
        assert f.read() == b"gamma"


# -- sync ---------------------------------------------------------------------------------

def test_sync_compare_size_skips_a_file_of_the_same_size(tree, tmp_path):
    dst = tmp_path / "dst"
    assert main(["sync", "-q", "--workers", "2", str(tree), str(dst)]) == 0
    (dst / "a.txt").write_bytes(b"x" * (tree / "a.txt").stat().st_size)  # newer, same size
    assert main(["sync", "-q", "--compare", "size", str(tree), str(dst)]) == 0
    assert (dst / "a.txt").read_bytes() != (tree / "a.txt").read_bytes()
    assert main(["sync", "-q", "--compare", "checksum", str(tree), str(dst)]) == 0
    assert (dst / "a.txt").read_bytes() == (tree / "a.txt").read_bytes()


def test_sync_copies_what_the_destination_lacks(tree, tmp_path):
    dst = tmp_path / "dst"
    dst.mkdir()
    (dst / "extra.txt").write_bytes(b"only here")
    assert main(["sync", "-q", str(tree), str(dst)]) == 0
    with pfio.from_url(str(tree)) as src_fs, pfio.from_url(str(dst)) as dst_fs:
        assert _files(dst_fs) == {**_files(src_fs), "extra.txt": b"only here"}


def test_sync_delete_removes_what_the_source_lacks(tree, tmp_path):
    dst = tmp_path / "dst"
    dst.mkdir()
    (dst / "extra.txt").write_bytes(b"only here")
    assert main(["sync", "-q", "--delete", str(tree), str(dst)]) == 0
    assert not (dst / "extra.txt").exists()
    assert (dst / "sub" / "deeper" / "c.txt").read_bytes() == b"gamma"


def test_sync_dry_run_changes_nothing(tree, tmp_path):
    dst = tmp_path / "dst"
    dst.mkdir()
    (dst / "extra.txt").write_bytes(b"only here")
    assert main(["sync", "--dry-run", "--delete", str(tree), str(dst)]) == 0
    assert [p.name for p in dst.iterdir()] == ["extra.txt"]


def test_sync_of_a_missing_source_fails_with_one_line(tmp_path, capsys):
    assert main(["sync", str(tmp_path / "missing"), str(tmp_path / "dst")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio sync: ") and err.count("\n") == 1


def test_sync_to_s3(tree, s3_env, s3_bucket):
    url = f"s3://{s3_bucket}/mirror"
    assert main(["sync", "-q", "--workers", "2", str(tree), url]) == 0
    with pfio.from_url(str(tree)) as src_fs, pfio.from_url(url) as dst_fs:
        assert _files(dst_fs) == _files(src_fs)


@pytest.mark.parametrize("flag", ["--delete", "--dry-run"])
def test_sync_help_describes(capsys, flag):
    assert main(["sync", "--help"]) == 0
    assert flag in capsys.readouterr().out
