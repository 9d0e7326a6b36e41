import subprocess
import sys
import textwrap

import pytest

import pfio
from pfio.fs.memory import MemoryFS


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, uri, **options):
        self.calls.append((uri, options))
        return MemoryFS("registry-test", uri.path)


@pytest.fixture
def scheme():
    name = "pfiotest"
    yield name
    pfio.unregister_filesystem(name)


def test_registered_factory_serves_its_scheme(scheme):
    factory = _Recorder()
    pfio.register_filesystem(scheme, factory)
    fs = pfio.from_url(f"{scheme}://host/dir", answer=42)
    assert isinstance(fs, MemoryFS)
    assert factory.calls == [(pfio.URI(scheme, "host", "/dir"), {"answer": 42})]


def test_registration_is_case_insensitive(scheme):
    pfio.register_filesystem(scheme.upper(), _Recorder())
    assert scheme in pfio.known_schemes()


def test_registering_twice_needs_override(scheme):
    pfio.register_filesystem(scheme, _Recorder())
    with pytest.raises(ValueError, match="already registered"):
        pfio.register_filesystem(scheme, _Recorder())
    pfio.register_filesystem(scheme, _Recorder(), override=True)


def test_builtin_schemes_are_protected():
    with pytest.raises(ValueError, match="already registered"):
        pfio.register_filesystem("s3", _Recorder())


def test_invalid_scheme_name_is_rejected():
    with pytest.raises(ValueError, match="invalid scheme"):
        pfio.register_filesystem("bad scheme", _Recorder())


def test_unknown_scheme_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown URL scheme 'nosuch'.*file, .*mem, .*s3"):
        pfio.from_url("nosuch://x/y")


def test_import_path_factories_load_lazily(scheme):
    pfio.register_filesystem(scheme, "pfio.fs.memory:MemoryFS")
    assert isinstance(pfio.from_url(f"{scheme}://x/y"), MemoryFS)


PLUGIN = '''
from pfio.fs.memory import MemoryFS


class DummyFS(MemoryFS):
    """A third-party filesystem found through the pfio.filesystems entry-point group."""

    scheme = "dummy"

    @classmethod
    def from_uri(cls, uri, **options):
        return cls("dummy-" + uri.netloc, uri.path)
'''


def test_entry_point_of_an_installed_distribution_adds_a_scheme(tmp_path):
    (tmp_path / "dummy_pfio_plugin").mkdir()
    (tmp_path / "dummy_pfio_plugin" / "__init__.py").write_text(PLUGIN)
    dist = tmp_path / "dummy_pfio_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: dummy-pfio-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[pfio.filesystems]\ndummy = dummy_pfio_plugin:DummyFS\n")
    script = textwrap.dedent("""
        import pfio
        fs = pfio.from_url("dummy://box/data")
        with fs.open("x.txt", "w") as f:
            f.write("plugged in")
        known = "dummy" in pfio.known_schemes()
        print(type(fs).__name__, fs.name, fs.open("x.txt", "r").read(), known)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(tmp_path)}).stdout
    assert out.split() == ["DummyFS", "dummy-box", "plugged", "in", "True"]


# -- containers ------------------------------------------------------------------------------

class _OneFileArchive(MemoryFS):
    """A toy container: the archive file's bytes as the single member ``content``."""

    def __init__(self, fs, path, mode="r"):
        super().__init__(f"toy-archive-{id(self)}")
        with fs.open(path, "rb") as f, self.open("content", "wb") as out:
            out.write(f.read())


@pytest.fixture
def toy_container():
    pfio.register_container("toy", _OneFileArchive, suffixes=(".toy",))
    yield "toy"
    pfio.unregister_container("toy")


def test_a_registered_container_is_opened_by_its_suffix(toy_container):
    store = MemoryFS("registry-containers")
    with store.open("a.toy", "wb") as f:
        f.write(b"inside")
    with pfio.open_url("mem://registry-containers/a.toy/content", "rb") as f:
        assert f.read() == b"inside"
    assert isinstance(pfio.from_url("mem://registry-containers/a.toy"), _OneFileArchive)


def test_an_unregistered_container_suffix_is_a_plain_name(toy_container):
    pfio.unregister_container(toy_container)
    from pfio._uri import container_kind

    assert container_kind("a.toy") is None and container_kind("a.zip") == "zip"


def test_a_container_kind_registers_once(toy_container):
    with pytest.raises(ValueError, match="already registered"):
        pfio.register_container("toy", _OneFileArchive)


def test_builtin_containers_are_registry_entries():
    from pfio.containers.tar import Tar
    from pfio.containers.zip import Zip
    from pfio.registry import container_factory

    assert container_factory("zip") is Zip and container_factory("tar") is Tar
    with pytest.raises(ValueError, match="unknown container kind 'rar'"):
        container_factory("rar")
