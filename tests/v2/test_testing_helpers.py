"""PFIO 2.10's ``pfio.testing`` helpers that are new here: ``patch_subprocess`` (the HTTP
server helper is tested with the HTTP caches)."""

from __future__ import annotations

import subprocess

import pytest

from pfio.testing import patch_subprocess


def test_patch_subprocess_fakes_run_while_the_function_runs():
    original = subprocess.run

    @patch_subprocess(b"out", b"err")
    def uses_run(arg):
        completed = subprocess.run(["hdfs", "classpath"], capture_output=True)
        subprocess.run.assert_called_once_with(["hdfs", "classpath"], capture_output=True)
        return arg, completed.returncode, completed.stdout, completed.stderr

    assert uses_run("a") == ("a", 0, b"out", b"err")
    assert subprocess.run is original


def test_patch_subprocess_restores_run_when_the_function_raises():
    original = subprocess.run

    @patch_subprocess("text")
    def fails():
        assert subprocess.run([]).stdout == "text"
        raise KeyError("boom")

    with pytest.raises(KeyError):
        fails()
    assert subprocess.run is original


def test_patch_subprocess_keeps_the_function_name():
    @patch_subprocess(b"")
    def named():
        """doc"""

    assert (named.__name__, named.__doc__) == ("named", "doc")
