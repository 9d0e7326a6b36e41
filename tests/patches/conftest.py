import pytest

import pfio
from pfio.patches import unpatch_all


@pytest.fixture(autouse=True)
def _no_patches_left():
    yield
    unpatch_all()


@pytest.fixture
def mem(request):
    """A fresh mem:// URL prefix and its filesystem."""
    url = f"mem://patches-{request.node.name}"
    return url, pfio.from_url(url)
