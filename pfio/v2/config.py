"""``pfio.v2.config``: the custom URL schemes of the INI file (see :mod:`pfio.config`)."""

from ..config import (
    add_custom_scheme,
    config_path,
    get_custom_scheme,
    reload_config,
)

#: PFIO 2.x's name of :func:`reload_config`, kept for tests written against it
_load_config = reload_config

__all__ = ["add_custom_scheme", "config_path", "get_custom_scheme", "reload_config"]
