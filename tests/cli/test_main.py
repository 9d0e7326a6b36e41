"""The ``pfio`` command as a whole: help of every command, the mem:// warning, stat of a
zip member, trace summary of a directory, the console script."""

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from pfio import trace
from pfio.cli import main
from pfio.fs.memory import MemoryFS

COMMANDS = ["ls", "cat", "stat", "head", "tail", "md5sum", "du", "cp", "sync", "pack", "rm",
            "mv", "mkdir", "touch", "mb"]


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines()
              if line.startswith("    ")}
    assert set(COMMANDS) | {"trace", "demo"} <= listed


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help_with_a_description_and_examples(capsys, command):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: pfio {command}")
    description = out.split("\n\n")[1]
    assert len(description.split()) > 8
    examples = out.split("examples:\n")[1].splitlines()
    assert examples and all(line.startswith(f"  pfio {command} ") or "pfio " + command in line
                            for line in examples)


@pytest.mark.parametrize("argv", [["rm"], ["mv", "one"], ["mkdir"], ["touch"], ["head"],
                                  ["du"], ["mb"], ["sync", "a"]])
def test_incomplete_command_lines_exit_2(capsys, argv):
    assert main(argv) == 2
    assert f"usage: pfio {argv[0]}" in capsys.readouterr().err


def test_an_unknown_option_exits_2(capsys):
    assert main(["rm", "--bogus", "x"]) == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_sync_workers_must_be_positive(capsys, tmp_path):
    assert main(["sync", "--workers", "0", str(tmp_path), str(tmp_path / "b")]) == 2
    assert "must be at least 1" in capsys.readouterr().err


# -- mem:// stores live in one process ----------------------------------------------------

def test_ls_of_a_mem_store_warns(capsys):
    assert main(["ls", "mem://cli-nothing-here/"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("pfio ls: warning: mem://cli-nothing-here/")
    assert "gone when it exits" in err and err.count("\n") == 1


def test_cp_to_mem_warns_once(tmp_path, capsys):
    (tmp_path / "a").write_bytes(b"a")
    assert main(["cp", str(tmp_path / "a"), "mem://cli-warn/a"]) == 0
    assert capsys.readouterr().err.count("warning") == 1
    assert MemoryFS("cli-warn").exists("a")  # this process still has it


def test_local_urls_do_not_warn(tmp_path, capsys):
    assert main(["ls", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""


# -- stat of a zip member -----------------------------------------------------------------

def test_stat_of_a_zip_member_shows_its_crc32(zip_path, lines, capsys):
    assert main(["stat", str(zip_path / "lines.txt")]) == 0
    fields = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert fields["crc32"] == f"{zlib.crc32(b''.join(lines)):08x}"
    assert int(fields["compressed_size"]) < int(fields["size"]) == len(b"".join(lines))
    assert "CRC" not in fields and "compress_size" not in fields  # PFIO 2.x's other names


def test_stat_json_of_a_zip_member(zip_path, capsys):
    assert main(["stat", "--json", str(zip_path / "dir" / "raw.bin")]) == 0
    fields = json.loads(capsys.readouterr().out)
    assert fields["crc32"] == zlib.crc32(bytes(range(200)))
    assert fields["compress_type"] == 0  # stored
    assert fields["comment"] == ""


# -- trace summary of a directory ---------------------------------------------------------

@pytest.fixture
def trace_dir(tmp_path):
    """parts/ holding the traces of two processes (111 and 222, two 10-byte writes each
    to mem://) and a JSON file that is not a trace."""
    directory = tmp_path / "parts"
    directory.mkdir()
    trace.disable()
    try:
        for pid in (111, 222):
            trace.reset()
            trace.enable()
            with MemoryFS(f"cli-trace-{pid}").open("f", "wb") as f:
                f.write(b"z" * 10)
            path = directory / f"part.{pid}.json"
            trace.export_chrome_trace(path)
            trace.disable()
            doc = json.loads(path.read_text())
            doc["pfio"]["metrics"]["processes"] = [pid]
            path.write_text(json.dumps(doc))
    finally:
        trace.disable()
        trace.reset()
    (directory / "summary.json").write_text('{"epochs": 3}')
    return directory


def _written(metrics):
    return next(o for o in metrics["operations"] if o["operation"] == "write")


def test_trace_summary_of_a_directory(trace_dir, capsys):
    assert main(["trace", "summary", "--json", str(trace_dir)]) == 0
    captured = capsys.readouterr()
    metrics = json.loads(captured.out)
    assert (_written(metrics)["count"], _written(metrics)["bytes"]) == (2, 20)
    assert "skipping" in captured.err and "summary.json" in captured.err


def test_trace_summary_of_a_directory_with_its_merge_counts_once(trace_dir, capsys):
    assert main(["trace", "merge", str(trace_dir), "-o", str(trace_dir / "merged.json")]) == 0
    assert main(["trace", "summary", "--json", str(trace_dir)]) == 0
    assert _written(json.loads(capsys.readouterr().out))["bytes"] == 20


def test_trace_summary_of_a_directory_without_traces(tmp_path, capsys):
    (tmp_path / "other.json").write_text("[]")
    assert main(["trace", "summary", str(tmp_path)]) == 1
    assert "no pfio trace in the directory" in capsys.readouterr().err


def test_trace_summary_of_an_empty_directory(tmp_path, capsys):
    assert main(["trace", "summary", str(tmp_path)]) == 1
    assert "no trace files" in capsys.readouterr().err


# -- the console script --------------------------------------------------------------------

def test_the_console_script(tmp_path):
    script = Path(sys.executable).with_name("pfio")
    if not script.exists():
        pytest.skip("the pfio console script is not installed beside this Python")

    def pfio(*args):
        return subprocess.run([str(script), *args], capture_output=True, text=True,
                              timeout=60)

    made = pfio("mkdir", "-p", str(tmp_path / "a" / "b"))
    assert (made.returncode, made.stderr) == (0, "")
    assert pfio("touch", str(tmp_path / "a" / "b" / "f")).returncode == 0
    listed = pfio("ls", "-R", str(tmp_path / "a"))
    assert listed.stdout.splitlines() == ["b/", "b/f"]
    refused = pfio("rm", str(tmp_path / "a"))
    assert refused.returncode == 1 and refused.stderr.startswith("pfio rm: ")
    assert pfio("mv", "one-argument").returncode == 2
    forgotten = pfio("ls", "mem://cli-script/")  # a new process: the store is empty
    assert forgotten.returncode == 0 and forgotten.stdout == ""
    assert "mem://" in forgotten.stderr
