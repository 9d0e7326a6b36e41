"""Fixtures of the patch tests: no patch (nor the cache switch) outlives a test, spooled
reads use a private object cache, and ``remote`` runs a test on ``mem://`` and on S3 (a moto
server over real HTTP)."""

import os
import secrets
import shutil
import site
from pathlib import Path

import pytest

import pfio
from pfio.cache.object_cache import ObjectCache, set_default_object_cache
from pfio.patches import locate, unpatch_all

from ..conftest import new_bucket, use_s3_server


@pytest.fixture(autouse=True)
def _no_patches_left():
    yield
    unpatch_all()
    locate.set_cache(False)


@pytest.fixture(autouse=True)
def object_cache(tmp_path, monkeypatch):
    """The object cache of the patches, under ``tmp_path``: this process's default one, and
    through ``XDG_CACHE_HOME`` the default one of child processes (nothing in ~/.cache)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = ObjectCache(str(tmp_path / "xdg" / "pfio" / "objects"), validate="ttl")
    set_default_object_cache(cache)
    yield cache
    set_default_object_cache(None)


@pytest.fixture(params=["mem", "s3", "ceph"])
def remote(request, monkeypatch):
    """A fresh remote directory: its URL prefix and its filesystem, on ``mem://`` and on a
    prefix of a new bucket of the moto server and of Ceph's RADOS Gateway where one runs
    (credentials and endpoint in the environment)."""
    if request.param == "s3":
        request.getfixturevalue("s3_env")
        url = f"s3://{request.getfixturevalue('s3_bucket')}/patches"
    elif request.param == "ceph":
        server = request.getfixturevalue("ceph_server")
        use_s3_server(monkeypatch, server)
        url = f"s3://{new_bucket(server)}/patches"
    else:
        url = f"mem://patches-{request.node.originalname}-{secrets.token_hex(4)}"
    fs = pfio.from_url(url)
    yield url, fs
    fs.close()


#: the startup hook in the source tree (setup.py installs it at the top of site-packages)
HOOK_SOURCE = Path(pfio.__file__).resolve().parent.parent / "pfio-patches.pth"


def hook_installed() -> bool:
    """True when this interpreter's site-packages holds pfio's startup hook."""
    return any((Path(d) / HOOK_SOURCE.name).is_file() for d in site.getsitepackages())


@pytest.fixture(scope="session")
def startup_hook_path(tmp_path_factory):
    """``PYTHONPATH`` entries that make Python processes run pfio's startup hook: none when
    it is installed; else a ``sitecustomize`` that reads a copy of the hook from the source
    tree as a site directory would (the test venv may hold an older pfio install)."""
    if hook_installed():
        return []
    root = tmp_path_factory.mktemp("startup-hook")
    (root / "site").mkdir()
    shutil.copy(HOOK_SOURCE, root / "site" / HOOK_SOURCE.name)
    (root / "sitecustomize.py").write_text(
        f"import site\nsite.addsitedir({str(root / 'site')!r})\n")
    return [str(root)]


def worker_env(s3_server, cache_home: Path, pythonpath: list[str]) -> dict[str, str]:
    """The environment of a script run in a fresh process against ``s3_server``: its
    credentials and endpoint, an object cache under ``cache_home``, no inherited patches,
    and ``pythonpath`` ahead of the current ``PYTHONPATH``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PFIO_PATCHES", "AWS_ENDPOINT_URL", "AWS_PROFILE")}
    env.update(s3_server.credentials, S3_ENDPOINT=s3_server.endpoint,
               XDG_CACHE_HOME=str(cache_home),
               PYTHONPATH=os.pathsep.join(filter(None, [*pythonpath,
                                                        os.environ.get("PYTHONPATH")])))
    return env
