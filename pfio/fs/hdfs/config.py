"""Reading the Hadoop client configuration: which name node serves ``hdfs://NETLOC/...``.

Hadoop clients find their cluster in ``$HADOOP_CONF_DIR`` (or ``$HADOOP_HOME/etc/hadoop``):
``core-site.xml`` names the default filesystem (``fs.defaultFS``) and ``hdfs-site.xml`` the
name services (``dfs.nameservices``), the name nodes of each (``dfs.ha.namenodes.NS``) and
their RPC addresses (``dfs.namenode.rpc-address.NS.NN``). This module parses those files with
:mod:`xml.etree.ElementTree` and answers two questions: which netloc an ``hdfs://`` URL
without one means, and which ``host:port`` addresses serve a netloc.
"""

from __future__ import annotations

import getpass
import logging
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

logger = logging.getLogger(__name__)

#: the files read, in order (later files override earlier ones)
CONFIG_FILES = ("core-site.xml", "hdfs-site.xml")

#: the name node RPC port when an address names none
DEFAULT_NAMENODE_PORT = 8020


@dataclass(frozen=True)
class Address:
    """A name node RPC address."""

    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def config_dir(explicit: str | None = None) -> str | None:
    """The Hadoop configuration directory: ``explicit``, ``$HADOOP_CONF_DIR``, or
    ``$HADOOP_HOME/etc/hadoop``; None when none is set."""
    if explicit:
        return explicit
    if os.environ.get("HADOOP_CONF_DIR"):
        return os.environ["HADOOP_CONF_DIR"]
    if os.environ.get("HADOOP_HOME"):
        return os.path.join(os.environ["HADOOP_HOME"], "etc", "hadoop")
    return None


def parse_config_file(path: str) -> dict[str, str]:
    """The ``<property><name>..</name><value>..</value></property>`` pairs of one file.

    Raises:
        ValueError: the file is not well-formed XML (the message names the file).
    """
    try:
        tree = ET.parse(path)
    except ET.ParseError as e:
        raise ValueError(f"malformed Hadoop configuration file {path}: {e}") from None
    properties: dict[str, str] = {}
    for prop in tree.getroot().iter("property"):
        name = (prop.findtext("name") or "").strip()
        if name:
            properties[name] = (prop.findtext("value") or "").strip()
    return properties


def load_config(directory: str | None = None) -> dict[str, str]:
    """The merged properties of the configuration files in ``directory`` (see
    :func:`config_dir`); empty when there is no directory. Missing files are skipped."""
    directory = config_dir(directory)
    merged: dict[str, str] = {}
    if directory is None:
        return merged
    for name in CONFIG_FILES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            merged.update(parse_config_file(path))
    logger.debug("Hadoop configuration from %s: %d properties", directory, len(merged))
    return merged


def _split_list(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def nameservices(config: dict[str, str]) -> list[str]:
    """The name services of ``dfs.nameservices``, in order."""
    return _split_list(config.get("dfs.nameservices"))


def default_netloc(config: dict[str, str]) -> str:
    """The netloc that ``hdfs:///path`` means: that of an ``hdfs://`` ``fs.defaultFS``, else
    the first name service.

    Raises:
        ValueError: the configuration names neither.
    """
    default_fs = config.get("fs.defaultFS") or config.get("fs.default.name") or ""
    scheme, sep, rest = default_fs.partition("://")
    if sep and scheme.lower() == "hdfs" and rest.split("/", 1)[0]:
        return rest.split("/", 1)[0]
    services = nameservices(config)
    if services:
        return services[0]
    raise ValueError(
        "an hdfs:// URL without a name service needs a Hadoop configuration naming one "
        "(fs.defaultFS in core-site.xml or dfs.nameservices in hdfs-site.xml under "
        "$HADOOP_CONF_DIR); or write hdfs://NAMESERVICE/path or hdfs://HOST:PORT/path"
    )


def parse_address(text: str, default_port: int = DEFAULT_NAMENODE_PORT) -> Address:
    """``host``, ``host:port`` or ``[v6]:port`` as an :class:`Address`.

    Raises:
        ValueError: the port is not a number.
    """
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.lstrip(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    if port and not port.isdigit():
        raise ValueError(f"invalid name node address {text!r}: port {port!r} is not a number")
    return Address(host, int(port) if port else default_port)


def namenode_addresses(config: dict[str, str], netloc: str) -> list[Address]:
    """The RPC addresses of the name nodes that serve ``netloc``.

    A netloc that is a configured name service (listed in ``dfs.nameservices`` or with a
    ``dfs.ha.namenodes.NETLOC`` key) gives the addresses of its name nodes; any other netloc
    is itself a ``host[:port]`` address.

    Raises:
        ValueError: a configured name service has no RPC address.
    """
    ha_nodes = _split_list(config.get(f"dfs.ha.namenodes.{netloc}"))
    if ha_nodes:
        addresses = []
        for node in ha_nodes:
            value = config.get(f"dfs.namenode.rpc-address.{netloc}.{node}")
            if value:
                addresses.append(parse_address(value))
        if not addresses:
            raise ValueError(f"name service {netloc!r} has no dfs.namenode.rpc-address."
                             f"{netloc}.* in the Hadoop configuration")
        return addresses
    if netloc in nameservices(config):
        value = (config.get(f"dfs.namenode.rpc-address.{netloc}")
                 or config.get("dfs.namenode.rpc-address"))
        if not value:
            raise ValueError(f"name service {netloc!r} has no dfs.namenode.rpc-address "
                             "in the Hadoop configuration")
        return [parse_address(value)]
    return [parse_address(netloc)]


def hdfs_user(explicit: str | None = None, kerberos_principal: str | None = None) -> str:
    """The HDFS user name: ``explicit``, ``$HADOOP_USER_NAME``, the short name of the Kerberos
    principal (``alice/host@REALM`` -> ``alice``), or the login name."""
    if explicit:
        return explicit
    if os.environ.get("HADOOP_USER_NAME"):
        return os.environ["HADOOP_USER_NAME"]
    if kerberos_principal:
        return kerberos_principal.split("@", 1)[0].split("/", 1)[0]
    return getpass.getuser()


def home_directory(config: dict[str, str], user: str) -> str:
    """The user's home directory: ``dfs.user.home.dir.prefix`` (default ``/user``) + name."""
    prefix = config.get("dfs.user.home.dir.prefix") or "/user"
    return f"{prefix.rstrip('/')}/{user}"
