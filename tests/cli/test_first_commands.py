import io
import json
import stat
import subprocess
import sys
import zipfile

import pytest

from pfio.cli import main
from pfio.testing import ZipForTest


def _files(fs, top=""):
    """{relative path: bytes} of every file under ``top``."""
    sub = fs.subfs(top) if top else fs
    return {name: sub.open(name, "rb").read()
            for name in sub.list(recursive=True) if not name.endswith("/")}


# -- help and usage -----------------------------------------------------------------------

def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("ls", "cat", "stat", "cp", "pack"):
        assert command in out
    assert "examples:" in out


@pytest.mark.parametrize("command", ["ls", "cat", "stat", "cp", "pack"])
def test_each_command_has_help_with_an_example(capsys, command):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"usage: pfio {command}" in out
    assert f"pfio {command} " in out.split("examples:")[1]


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage: pfio" in capsys.readouterr().err


def test_usage_error_exits_2(capsys):
    assert main(["ls", "--bogus"]) == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_python_dash_m_pfio_help():
    result = subprocess.run([sys.executable, "-m", "pfio", "--help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0
    assert "usage: pfio" in result.stdout and "pack" in result.stdout


def test_version(capsys):
    import pfio

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"pfio {pfio.__version__}"


# -- ls -----------------------------------------------------------------------------------

def test_ls_prints_sorted_names_with_slash_on_directories(tree, capsys):
    assert main(["ls", str(tree)]) == 0
    assert capsys.readouterr().out.splitlines() == ["a.txt", "empty/", "sub/"]


def test_ls_recursive(tree, capsys):
    assert main(["ls", "-R", str(tree)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "a.txt", "empty/", "sub/", "sub/b.bin", "sub/deeper/", "sub/deeper/c.txt"]


def test_ls_long_shows_mode_size_time_name(tree, capsys):
    assert main(["ls", "-l", str(tree / "sub")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    mode, size, day, clock, name = lines[0].split()
    assert (mode[0], size, name) == ("-", "10240", "b.bin")
    assert len(day) == 10 and len(clock) == 8
    assert lines[1].startswith("d") and lines[1].endswith(" deeper/")


def test_ls_of_a_file_lists_the_file(tree, capsys):
    assert main(["ls", str(tree / "a.txt")]) == 0
    assert capsys.readouterr().out == "a.txt\n"


def test_ls_of_a_mem_file_lists_the_file(mem, capsys):
    with mem.open("f.bin", "wb") as f:
        f.write(b"123")
    assert main(["ls", "-l", f"mem://{mem.name}/f.bin"]) == 0
    assert capsys.readouterr().out.split()[1:2] == ["3"]


def test_ls_inside_a_zip(tmp_path, capsys):
    pytest.importorskip("pfio.containers.zip")
    ZipForTest(tmp_path / "t.zip")
    assert main(["ls", "-R", str(tmp_path / "t.zip")]) == 0
    assert capsys.readouterr().out.splitlines() == ["dir/", "dir/f", "file"]


def test_ls_missing_directory_is_one_line_on_stderr(tmp_path, capsys):
    assert main(["ls", str(tmp_path / "missing")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("pfio ls: ") and "missing" in captured.err
    assert "Traceback" not in captured.err


def test_ls_unknown_scheme(capsys):
    assert main(["ls", "nosuchscheme://x/y"]) == 1
    assert "unknown URL scheme 'nosuchscheme'" in capsys.readouterr().err


# -- cat ----------------------------------------------------------------------------------

def test_cat_writes_bytes(tree, capsysbinary):
    assert main(["cat", str(tree / "sub" / "b.bin"), str(tree / "a.txt")]) == 0
    assert capsysbinary.readouterr().out == bytes(range(256)) * 40 + b"alpha\n"


def test_cat_a_zip_member(tmp_path, capsysbinary):
    pytest.importorskip("pfio.containers.zip")
    ZipForTest(tmp_path / "t.zip")
    assert main(["cat", str(tmp_path / "t.zip" / "dir" / "f")]) == 0
    assert capsysbinary.readouterr().out == b"bar"


def test_cat_reports_a_missing_file_and_goes_on(tree, capsysbinary):
    assert main(["cat", str(tree / "missing"), str(tree / "a.txt")]) == 1
    captured = capsysbinary.readouterr()
    assert captured.out == b"alpha\n"
    assert captured.err.startswith(b"pfio cat: No such file or directory")


def test_cat_a_directory_fails(tree, capsysbinary):
    assert main(["cat", str(tree / "sub")]) == 1
    assert b"Is a directory" in capsysbinary.readouterr().err


# -- stat ---------------------------------------------------------------------------------

def test_stat_prints_the_filestat_fields(tree, capsys):
    assert main(["stat", str(tree / "a.txt")]) == 0
    fields = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert fields["size"] == "6"
    assert fields["isdir"] == "False"
    assert fields["mode"].startswith("-rw")
    assert fields["filename"].endswith("a.txt")
    assert "last_modified" in fields


def test_stat_json(tree, capsys):
    assert main(["stat", "--json", str(tree / "sub")]) == 0
    fields = json.loads(capsys.readouterr().out)
    assert fields["isdir"] is True
    assert stat.S_ISDIR(fields["mode"])


def test_stat_missing(tree, capsys):
    assert main(["stat", str(tree / "missing")]) == 1
    assert capsys.readouterr().err.startswith("pfio stat: No such file or directory")


# -- cp -----------------------------------------------------------------------------------

def test_cp_file_local_to_mem(tree, mem):
    assert main(["cp", str(tree / "sub" / "b.bin"), f"mem://{mem.name}/out/b.bin"]) == 0
    assert mem.open("out/b.bin", "rb").read() == bytes(range(256)) * 40


def test_cp_file_into_an_existing_directory(tree, tmp_path):
    (tmp_path / "dst").mkdir()
    assert main(["cp", str(tree / "a.txt"), str(tmp_path / "dst")]) == 0
    assert (tmp_path / "dst" / "a.txt").read_bytes() == b"alpha\n"


def test_cp_replaces_an_existing_file(tree, tmp_path):
    (tmp_path / "old").write_bytes(b"old contents")
    assert main(["cp", str(tree / "a.txt"), str(tmp_path / "old")]) == 0
    assert (tmp_path / "old").read_bytes() == b"alpha\n"


def test_cp_directory_needs_r(tree, tmp_path, capsys):
    assert main(["cp", str(tree), str(tmp_path / "dst")]) == 1
    assert "use cp -r" in capsys.readouterr().err
    assert not (tmp_path / "dst").exists()


def test_cp_r_to_a_new_directory(tree, mem):
    assert main(["cp", "-r", str(tree), f"mem://{mem.name}/copy"]) == 0
    assert _files(mem, "copy") == {"a.txt": b"alpha\n", "sub/b.bin": bytes(range(256)) * 40,
                                   "sub/deeper/c.txt": b"gamma"}
    assert mem.isdir("copy/empty")


def test_cp_r_into_an_existing_directory(tree, tmp_path):
    (tmp_path / "dst").mkdir()
    assert main(["cp", "-r", str(tree / "sub"), str(tmp_path / "dst")]) == 0
    assert (tmp_path / "dst" / "sub" / "deeper" / "c.txt").read_bytes() == b"gamma"


def test_cp_r_mem_to_local(mem, tmp_path):
    with mem.open("d/x/y.txt", "wb") as f:
        f.write(b"from memory")
    assert main(["cp", "-r", f"mem://{mem.name}/d", str(tmp_path / "back")]) == 0
    assert (tmp_path / "back" / "x" / "y.txt").read_bytes() == b"from memory"


def test_cp_from_a_zip_member(tmp_path):
    pytest.importorskip("pfio.containers.zip")
    ZipForTest(tmp_path / "t.zip")
    assert main(["cp", str(tmp_path / "t.zip" / "file"), str(tmp_path / "out")]) == 0
    assert (tmp_path / "out").read_bytes() == b"foo"


def test_cp_missing_source(tmp_path, capsys):
    assert main(["cp", str(tmp_path / "missing"), str(tmp_path / "dst")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio cp: No such file or directory") and "missing" in err


def test_cp_to_a_missing_directory(tree, tmp_path, capsys):
    assert main(["cp", str(tree / "a.txt"), str(tmp_path / "no" / "such" / "f")]) == 1
    assert capsys.readouterr().err.startswith("pfio cp: ")


# -- pack ---------------------------------------------------------------------------------

def test_pack_zip_holds_every_file_and_directory_in_sorted_order(tree, tmp_path):
    pytest.importorskip("pfio.containers.zip")
    out = tmp_path / "out.zip"
    assert main(["pack", str(tree), str(out)]) == 0
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == ["a.txt", "empty/", "sub/", "sub/b.bin", "sub/deeper/",
                                "sub/deeper/c.txt"]
        assert z.read("sub/b.bin") == bytes(range(256)) * 40
        assert z.testzip() is None


def test_pack_is_deterministic_in_names(tree, tmp_path):
    pytest.importorskip("pfio.containers.zip")
    for name in ("one.zip", "two.zip"):
        assert main(["pack", "-q", str(tree), str(tmp_path / name)]) == 0
    with zipfile.ZipFile(tmp_path / "one.zip") as a, zipfile.ZipFile(tmp_path / "two.zip") as b:
        assert a.namelist() == b.namelist()


def test_pack_stored(tree, tmp_path):
    pytest.importorskip("pfio.containers.zip")
    out = tmp_path / "out.zip"
    assert main(["pack", "--compression", "stored", str(tree), str(out)]) == 0
    with zipfile.ZipFile(out) as z:
        assert z.getinfo("sub/b.bin").compress_type == zipfile.ZIP_STORED


def test_pack_from_and_to_mem(tree, mem):
    pytest.importorskip("pfio.containers.zip")
    assert main(["cp", "-r", str(tree), f"mem://{mem.name}/src"]) == 0
    assert main(["pack", f"mem://{mem.name}/src", f"mem://{mem.name}/packed.zip"]) == 0
    data = mem.open("packed.zip", "rb").read()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.read("sub/deeper/c.txt") == b"gamma"


def test_pack_into_the_directory_it_packs_skips_itself(tree):
    pytest.importorskip("pfio.containers.zip")
    assert main(["pack", str(tree), str(tree / "self.zip")]) == 0
    assert main(["pack", "--force", str(tree), str(tree / "self.zip")]) == 0
    with zipfile.ZipFile(tree / "self.zip") as z:
        assert "self.zip" not in z.namelist()


def test_pack_tar(tree, tmp_path):
    pytest.importorskip("pfio.containers.tar")
    import tarfile

    out = tmp_path / "out.tar"
    assert main(["pack", str(tree), str(out)]) == 0
    with tarfile.open(out) as t:
        names = [m.name.rstrip("/") for m in t.getmembers()]
        assert names == ["a.txt", "empty", "sub", "sub/b.bin", "sub/deeper",
                         "sub/deeper/c.txt"]
        assert t.extractfile("sub/deeper/c.txt").read() == b"gamma"


def test_pack_needs_an_archive_name(tree, tmp_path, capsys):
    assert main(["pack", str(tree), str(tmp_path / "out.rar")]) == 2
    assert "must end in .zip or .tar" in capsys.readouterr().err
    assert not (tmp_path / "out.rar").exists()


def test_pack_compression_is_for_zip_only(tree, tmp_path, capsys):
    assert main(["pack", "--compression", "stored", str(tree), str(tmp_path / "o.tar")]) == 2
    assert "zip archives only" in capsys.readouterr().err


def test_pack_source_must_be_a_directory(tree, tmp_path, capsys):
    assert main(["pack", str(tree / "a.txt"), str(tmp_path / "o.zip")]) == 1
    assert capsys.readouterr().err.startswith("pfio pack: ")
    assert not (tmp_path / "o.zip").exists()


def test_pack_missing_source(tmp_path, capsys):
    assert main(["pack", str(tmp_path / "missing"), str(tmp_path / "o.zip")]) == 1
    assert "missing" in capsys.readouterr().err


def test_pack_failure_publishes_no_archive(tree, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pfio.containers.zip")
    from pfio.cli import common

    real = common.copy_file
    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(5, "Input/output error", "sub/b.bin")
        return real(*args, **kwargs)

    monkeypatch.setattr("pfio.cli.copying.copy_file", failing)
    assert main(["pack", str(tree), str(tmp_path / "o.zip")]) == 1
    assert capsys.readouterr().err == "pfio pack: Input/output error: sub/b.bin\n"
    assert list(tmp_path.glob("*o.zip*")) == []


def test_pack_progress_bar_only_on_a_terminal(tree, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pfio.containers.zip")
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["pack", str(tree), str(tmp_path / "bar.zip")]) == 0
    assert "pack: 100%" in capsys.readouterr().err
    assert main(["pack", "--quiet", str(tree), str(tmp_path / "quiet.zip")]) == 0
    assert capsys.readouterr().err == ""


def test_pack_no_progress_bar_when_not_a_terminal(tree, tmp_path, capsys):
    pytest.importorskip("pfio.containers.zip")
    assert main(["pack", str(tree), str(tmp_path / "o.zip")]) == 0
    assert capsys.readouterr().err == ""


def test_ls_defaults_to_the_working_directory(tree, monkeypatch, capsys):
    monkeypatch.chdir(tree / "sub")
    assert main(["ls"]) == 0
    assert capsys.readouterr().out.splitlines() == ["b.bin", "deeper/"]


def test_cat_missing_zip_member_names_the_archive(tmp_path, capsysbinary):
    pytest.importorskip("pfio.containers.zip")
    ZipForTest(tmp_path / "t.zip")
    assert main(["cat", str(tmp_path / "t.zip" / "nope")]) == 1
    err = capsysbinary.readouterr().err.decode()
    assert err.startswith("pfio cat: ") and "nope" in err and "t.zip" in err


def test_cp_to_the_working_directory(mem, tmp_path, monkeypatch):
    with mem.open("x/remote.txt", "wb") as f:
        f.write(b"r")
    monkeypatch.chdir(tmp_path)
    assert main(["cp", f"mem://{mem.name}/x/remote.txt", "."]) == 0
    assert (tmp_path / "remote.txt").read_bytes() == b"r"


def test_cat_into_a_closed_pipe_stops_quietly(tmp_path):
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * (4 << 20))
    proc = subprocess.Popen([sys.executable, "-m", "pfio", "cat", str(big)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(10) == b"x" * 10
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 1
    assert stderr == b""


# -- S3 (a moto server over real HTTP) ----------------------------------------------------

def test_cp_pack_ls_cat_on_s3(tree, tmp_path, s3_env, s3_bucket, capsysbinary):
    pytest.importorskip("pfio.containers.zip")
    base = f"s3://{s3_bucket}"
    assert main(["cp", "-r", str(tree), f"{base}/data"]) == 0
    assert main(["ls", "-R", f"{base}/data"]) == 0
    listed = capsysbinary.readouterr().out.decode().splitlines()
    assert {"a.txt", "sub/b.bin", "sub/deeper/c.txt"} <= set(listed)
    assert main(["pack", f"{base}/data", f"{base}/data.zip"]) == 0
    assert main(["cat", f"{base}/data.zip/sub/deeper/c.txt"]) == 0
    assert capsysbinary.readouterr().out == b"gamma"
    assert main(["cp", f"{base}/data.zip", str(tmp_path / "local.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "local.zip") as z:
        assert z.read("a.txt") == b"alpha\n"


def test_stat_missing_s3_key(s3_env, s3_bucket, capsys):
    assert main(["stat", f"s3://{s3_bucket}/nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pfio stat: ") and "nope" in err and "Traceback" not in err
