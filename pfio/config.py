"""Custom URL schemes named in an INI file, as PFIO 2.x reads them.

The file is ``$PFIO_CONFIG_PATH`` when that variable is set, else ``$XDG_CONFIG_HOME/pfio.ini``,
else ``~/.config/pfio.ini``. Each section names a scheme; its ``scheme`` key names the
filesystem that serves it and the other keys are options for that filesystem::

    [mys3]
    scheme = s3
    endpoint = http://127.0.0.1:9000
    aws_access_key_id = minio
    aws_secret_access_key = minio123
    connect_timeout = 30

With this file ``pfio.from_url("mys3://bucket/prefix")`` is ``S3`` on that endpoint with
those credentials. Options given to ``from_url`` win over those of the file. Values are
strings in the file (with :mod:`configparser`'s ``%(name)s`` interpolation, as PFIO 2.x
read them: write ``%%`` for a literal ``%``); they are converted to ``bool``, ``int`` or
``float`` where the filesystem's constructor says (by its defaults or annotations) it takes
one.

The file is read once, on the first URL whose scheme no filesystem serves; call
:func:`reload_config` after changing it or the environment.
"""

from __future__ import annotations

import configparser
import inspect
import os
import re
import threading
from collections.abc import Callable
from typing import Any

from ._uri import URI

_lock = threading.Lock()
_config: configparser.ConfigParser | None = None

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def config_path() -> str:
    """The INI file that custom schemes are read from (it need not exist)."""
    path = os.environ.get("PFIO_CONFIG_PATH")
    if path:
        return path
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "pfio.ini")


def reload_config() -> None:
    """Read the INI file again (after the file or ``PFIO_CONFIG_PATH`` changed).

    Schemes added with :func:`add_custom_scheme` are forgotten.

    Raises:
        ValueError: the file is not valid INI.
    """
    global _config
    parser = configparser.ConfigParser()
    path = config_path()
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error as e:
        raise ValueError(f"cannot read pfio config {path}: {e}") from None
    with _lock:
        _config = parser


def _parser() -> configparser.ConfigParser:
    if _config is None:
        reload_config()
    assert _config is not None
    return _config


def add_custom_scheme(name: str, scheme: str, data: dict[str, str] | None = None) -> None:
    """Serve ``name://`` URLs with the filesystem of ``scheme`` and the options ``data``, as a
    section of the INI file would (for this process only; nothing is written)."""
    section = {key: str(value) for key, value in (data or {}).items()}
    section["scheme"] = scheme
    parser = _parser()
    with _lock:
        parser[name.lower()] = section


def get_custom_scheme(name: str) -> dict[str, str] | None:
    """The section of custom scheme ``name`` (``scheme`` and the options, as strings), or None
    when there is no such section."""
    parser = _parser()
    with _lock:
        for section in parser.sections():
            if section.lower() == name.lower():
                try:
                    return dict(parser[section])
                except configparser.Error as e:
                    raise ValueError(f"section [{section}] of {config_path()}: {e}") from None
    return None


def custom_factory(
    name: str, lookup: Callable[[str], Callable[..., Any] | None]
) -> Callable[..., Any] | None:
    """A filesystem factory for custom scheme ``name``, or None when the file names no such
    scheme. :func:`pfio.registry.resolve` calls it for schemes that nothing else serves,
    with ``lookup`` finding the factory of the base scheme (built-in, registered or entry
    point: custom schemes do not chain).

    Raises:
        ValueError: the section has no ``scheme`` key, names a scheme that no filesystem
            serves, or has an option of the wrong type.
    """
    section = get_custom_scheme(name)
    if section is None:
        return None
    base = section.pop("scheme", "").strip().lower()
    if not base:
        raise ValueError(f"custom scheme {name!r} in {config_path()} has no 'scheme' key")
    target = lookup(base)
    if target is None:
        raise ValueError(
            f"custom scheme {name!r} in {config_path()} names scheme {base!r}, "
            "which no filesystem serves"
        )
    defaults = _typed_options(name, section, target)

    def factory(uri: URI, **options: Any) -> Any:
        return target(URI(base, uri.netloc, uri.path), **{**defaults, **options})

    factory.__doc__ = f"The {base!r} filesystem with the options of [{name}] in {config_path()}."
    return factory


def _typed_options(name: str, section: dict[str, str],
                   target: Callable[..., Any]) -> dict[str, Any]:
    parameters = _parameters(target)
    typed: dict[str, Any] = {}
    for key, raw in section.items():
        kind = _kind(parameters.get(key))
        try:
            typed[key] = _convert(raw, kind)
        except ValueError:
            raise ValueError(
                f"custom scheme {name!r} in {config_path()}: option {key}={raw!r} "
                f"is not a {kind.__name__}"
            ) from None
    return typed


def _parameters(target: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """The keyword parameters of the constructor behind ``target`` (a ``from_uri`` method of
    an FS class, or any factory)."""
    owner = getattr(target, "__self__", None)
    # the class's own __init__ as it is stored (a plain function), as ``owner.__init__`` reads it
    function = inspect.getattr_static(owner, "__init__") if isinstance(owner, type) else target
    try:
        return dict(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return {}


def _kind(parameter: inspect.Parameter | None) -> type:
    if parameter is None:
        return str
    default = parameter.default
    if isinstance(default, (bool, int, float)):
        return type(default)
    annotation = parameter.annotation
    if annotation is inspect.Parameter.empty:
        return str
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    words = set(re.findall(r"\w+", text))
    for kind in (str, bool, float, int):
        if kind.__name__ in words:
            return kind
    return str


def _convert(raw: str, kind: type) -> Any:
    value = raw.strip()
    if kind is bool:
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise ValueError(value)
    if kind in (int, float):
        return kind(value)
    return raw


__all__ = [
    "add_custom_scheme",
    "config_path",
    "custom_factory",
    "get_custom_scheme",
    "reload_config",
]
