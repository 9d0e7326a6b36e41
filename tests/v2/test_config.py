import os

import pytest

import pfio
import pfio.v2.config
from pfio import config
from pfio.fs.local import Local
from pfio.fs.memory import MemoryFS


class Typed(MemoryFS):
    """A filesystem whose options have types, to see INI values converted."""

    def __init__(self, name="", root="", retries: int = 3, verbose: bool = False,
                 ratio: float = 1.0, timeout: int | None = None, label: str = "",
                 **kwargs):
        super().__init__(name, root)
        self.options = dict(retries=retries, verbose=verbose, ratio=ratio, timeout=timeout,
                            label=label, **kwargs)


@pytest.fixture
def typed_scheme():
    pfio.register_filesystem("pfiotyped", Typed)
    yield "pfiotyped"
    pfio.unregister_filesystem("pfiotyped")


def test_config_path_prefers_pfio_config_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PFIO_CONFIG_PATH", str(tmp_path / "x.ini"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config.config_path() == str(tmp_path / "x.ini")


def test_config_path_falls_back_to_xdg_config_home(monkeypatch, tmp_path):
    monkeypatch.delenv("PFIO_CONFIG_PATH", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config.config_path() == str(tmp_path / "xdg" / "pfio.ini")


def test_config_path_falls_back_to_home_config(monkeypatch, tmp_path):
    monkeypatch.delenv("PFIO_CONFIG_PATH", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.config_path() == str(tmp_path / ".config" / "pfio.ini")


def test_custom_scheme_uses_the_base_filesystem(ini, tmp_path):
    ini("""
        [scratch]
        scheme = mem
    """)
    fs = pfio.from_url("scratch://cfgstore/dir")
    assert isinstance(fs, MemoryFS)
    assert (fs.name, fs.root) == ("cfgstore", "dir")


def test_custom_scheme_reads_xdg_config_home(tmp_path, monkeypatch):
    monkeypatch.delenv("PFIO_CONFIG_PATH", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "pfio.ini").write_text("[xdgscheme]\nscheme = mem\n")
    config.reload_config()
    try:
        assert isinstance(pfio.from_url("xdgscheme://s/d"), MemoryFS)
    finally:
        monkeypatch.undo()
        config.reload_config()


def test_custom_scheme_is_case_insensitive(ini):
    ini("""
        [MixedCase]
        scheme = MEM
    """)
    assert isinstance(pfio.from_url("mixedcase://s/x"), MemoryFS)


def test_custom_local_scheme(ini, tmp_path):
    ini("""
        [foobar]
        scheme = file
    """)
    fs = pfio.from_url(f"foobar://{tmp_path}")
    assert isinstance(fs, Local) and fs.cwd == str(tmp_path)


def test_options_are_typed_by_the_constructor(ini, typed_scheme):
    ini(f"""
        [typedalias]
        scheme = {typed_scheme}
        retries = 7
        verbose = yes
        ratio = 0.5
        timeout = 30
        label = 123
        extra = 42
    """)
    fs = pfio.from_url("typedalias://n/r")
    assert isinstance(fs, Typed)
    assert fs.options == dict(retries=7, verbose=True, ratio=0.5, timeout=30, label="123",
                              extra="42")


def test_options_given_to_from_url_win(ini, typed_scheme):
    ini(f"""
        [typedalias]
        scheme = {typed_scheme}
        retries = 7
    """)
    assert pfio.from_url("typedalias://n/r", retries=1).options["retries"] == 1


def test_option_of_the_wrong_type(ini, typed_scheme):
    ini(f"""
        [typedalias]
        scheme = {typed_scheme}
        verbose = maybe
    """)
    with pytest.raises(ValueError, match="option verbose='maybe' is not a bool"):
        pfio.from_url("typedalias://n/r")


def test_open_url_through_a_custom_scheme(ini):
    ini("""
        [memalias]
        scheme = mem
    """)
    with MemoryFS("cfgopen").open("d/f.txt", "w") as f:
        f.write("through the alias")
    with pfio.open_url("memalias://cfgopen/d/f.txt") as f:
        assert f.read() == "through the alias"


def test_section_without_scheme(ini):
    ini("""
        [broken]
        endpoint = http://127.0.0.1:1
    """)
    with pytest.raises(ValueError, match="'broken' .* has no 'scheme' key"):
        pfio.from_url("broken://x/y")


def test_base_scheme_must_be_served(ini):
    ini("""
        [first]
        scheme = second
        [second]
        scheme = mem
    """)
    with pytest.raises(ValueError, match="names scheme 'second', which no filesystem serves"):
        pfio.from_url("first://x/y")


def test_unknown_scheme_still_lists_the_known_ones(ini):
    with pytest.raises(ValueError, match="unknown URL scheme 'nothere'.*mem"):
        pfio.from_url("nothere://x")


def test_builtin_schemes_are_not_overridden(ini, tmp_path):
    ini("""
        [file]
        scheme = mem
    """)
    assert isinstance(pfio.from_url(str(tmp_path)), Local)


def test_file_is_read_once_until_reloaded(ini):
    path = ini("")
    path.write_text("[later]\nscheme = mem\n")
    with pytest.raises(ValueError, match="unknown URL scheme 'later'"):
        pfio.from_url("later://x")
    config.reload_config()
    assert isinstance(pfio.from_url("later://x"), MemoryFS)


def test_invalid_ini_file(ini):
    with pytest.raises(ValueError, match="cannot read pfio config"):
        ini("no section header\n")


def test_pfio2_example_file_format(ini):
    ini("""
        [foobar]
        scheme = file

        [baz]
        scheme = s3
        endpoint = https://s3.example.com
        aws_access_key_id=hoge
        aws_secret_access_key=$HOME
    """)
    assert config.get_custom_scheme("foobar") == {"scheme": "file"}
    assert config.get_custom_scheme("baz") == {
        "scheme": "s3", "endpoint": "https://s3.example.com",
        "aws_access_key_id": "hoge", "aws_secret_access_key": "$HOME"}
    assert config.get_custom_scheme("nosuch") is None


def test_interpolation_error_is_a_value_error(ini):
    ini("""
        [bad]
        scheme = mem
        secret = 50%off
    """)
    with pytest.raises(ValueError, match=r"section \[bad\]"):
        config.get_custom_scheme("bad")


def test_add_custom_scheme(ini, tmp_path):
    pfio.v2.config.add_custom_scheme("added", "mem", {"root": "ignored-by-uri"})
    assert pfio.v2.config.get_custom_scheme("added") == {"scheme": "mem",
                                                          "root": "ignored-by-uri"}
    pfio.v2.config.add_custom_scheme("addedlocal", "file")
    assert isinstance(pfio.v2.from_url(f"addedlocal://{tmp_path}"), Local)


def test_v2_config_is_the_same_module_api():
    assert pfio.v2.config.add_custom_scheme is config.add_custom_scheme
    assert pfio.v2.config.get_custom_scheme is config.get_custom_scheme
    assert pfio.v2.config._load_config is config.reload_config


def test_missing_file_means_no_custom_schemes(tmp_path, monkeypatch):
    monkeypatch.setenv("PFIO_CONFIG_PATH", str(tmp_path / "absent.ini"))
    config.reload_config()
    try:
        assert config.get_custom_scheme("anything") is None
        assert not os.path.exists(tmp_path / "absent.ini")
    finally:
        monkeypatch.undo()
        config.reload_config()


def test_custom_scheme_serves_s3_with_the_options_of_the_file(ini, s3_endpoint, s3_bucket,
                                                              monkeypatch):
    from pfio.fs.s3 import S3

    for name in ("S3_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID",
                 "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    ini(f"""
        [mys3]
        scheme = s3
        endpoint = {s3_endpoint}
        aws_access_key_id = pfio-test-key
        aws_secret_access_key = pfio-test-secret
        connect_timeout = 5
        max_attempts = 2
    """)
    with pfio.from_url(f"mys3://{s3_bucket}/prefix") as fs:
        assert isinstance(fs, S3)
        assert (fs.bucket, fs.endpoint, fs.connect_timeout) == (s3_bucket, s3_endpoint, 5.0)
        with fs.open("f.txt", "w") as f:
            f.write("on s3")
    with pfio.open_url(f"mys3://{s3_bucket}/prefix/f.txt") as f:
        assert f.read() == "on s3"
    plain = S3(s3_bucket, endpoint=s3_endpoint, aws_access_key_id="pfio-test-key",
               aws_secret_access_key="pfio-test-secret")
    assert plain.open("prefix/f.txt", "rb").read() == b"on s3"
