"""Parsing of the Hadoop client configuration (core-site.xml, hdfs-site.xml)."""

from __future__ import annotations

import pytest

from pfio.fs.hdfs import config as hadoop_config
from pfio.fs.hdfs.config import Address

CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://prod</value></property>
  <property><name>hadoop.security.authentication</name><value>simple</value></property>
</configuration>
"""

HDFS_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>dfs.nameservices</name><value>prod, backup</value></property>
  <property><name>dfs.ha.namenodes.prod</name><value>nn1,nn2</value></property>
  <property>
    <name>dfs.namenode.rpc-address.prod.nn1</name><value>nn1.example:8020</value>
  </property>
  <property>
    <name>dfs.namenode.rpc-address.prod.nn2</name><value>nn2.example:9000</value>
  </property>
  <property><name>dfs.namenode.rpc-address.backup</name><value>bk.example</value></property>
</configuration>
"""


def write_conf(directory, core: str | None = CORE_SITE, hdfs: str | None = HDFS_SITE) -> str:
    if core is not None:
        (directory / "core-site.xml").write_text(core)
    if hdfs is not None:
        (directory / "hdfs-site.xml").write_text(hdfs)
    return str(directory)


@pytest.fixture
def no_hadoop_env(monkeypatch):
    for name in ("HADOOP_CONF_DIR", "HADOOP_HOME", "HADOOP_USER_NAME"):
        monkeypatch.delenv(name, raising=False)


def test_load_merges_both_files(tmp_path):
    config = hadoop_config.load_config(write_conf(tmp_path))
    assert config["fs.defaultFS"] == "hdfs://prod"
    assert config["dfs.ha.namenodes.prod"] == "nn1,nn2"


def test_load_from_hadoop_conf_dir(tmp_path, no_hadoop_env, monkeypatch):
    monkeypatch.setenv("HADOOP_CONF_DIR", write_conf(tmp_path))
    assert hadoop_config.load_config()["fs.defaultFS"] == "hdfs://prod"


def test_load_from_hadoop_home(tmp_path, no_hadoop_env, monkeypatch):
    conf = tmp_path / "etc" / "hadoop"
    conf.mkdir(parents=True)
    write_conf(conf)
    monkeypatch.setenv("HADOOP_HOME", str(tmp_path))
    assert hadoop_config.config_dir() == str(conf)
    assert "dfs.nameservices" in hadoop_config.load_config()


def test_no_configuration_is_empty(no_hadoop_env):
    assert hadoop_config.load_config() == {}


def test_missing_file_is_skipped(tmp_path):
    config = hadoop_config.load_config(write_conf(tmp_path, hdfs=None))
    assert config == {"fs.defaultFS": "hdfs://prod", "hadoop.security.authentication": "simple"}


def test_malformed_xml_names_the_file(tmp_path):
    write_conf(tmp_path, core="<configuration><property>")
    with pytest.raises(ValueError, match="core-site.xml"):
        hadoop_config.load_config(str(tmp_path))


def test_default_netloc_from_default_fs():
    assert hadoop_config.default_netloc({"fs.defaultFS": "hdfs://prod:8020/"}) == "prod:8020"


def test_default_netloc_from_first_nameservice():
    config = {"fs.defaultFS": "file:///", "dfs.nameservices": "a,b"}
    assert hadoop_config.default_netloc(config) == "a"


def test_default_netloc_missing():
    with pytest.raises(ValueError, match="HADOOP_CONF_DIR"):
        hadoop_config.default_netloc({})


def test_ha_nameservice_addresses(tmp_path):
    config = hadoop_config.load_config(write_conf(tmp_path))
    assert hadoop_config.namenode_addresses(config, "prod") == [
        Address("nn1.example", 8020), Address("nn2.example", 9000)]


def test_single_namenode_nameservice_gets_default_port(tmp_path):
    config = hadoop_config.load_config(write_conf(tmp_path))
    assert hadoop_config.namenode_addresses(config, "backup") == [Address("bk.example", 8020)]


def test_nameservice_without_address():
    with pytest.raises(ValueError, match="lonely"):
        hadoop_config.namenode_addresses({"dfs.nameservices": "lonely"}, "lonely")


def test_ha_nameservice_without_addresses():
    with pytest.raises(ValueError, match="ns"):
        hadoop_config.namenode_addresses({"dfs.ha.namenodes.ns": "nn1"}, "ns")


def test_netloc_that_is_an_address():
    assert hadoop_config.namenode_addresses({}, "host:9000") == [Address("host", 9000)]


@pytest.mark.parametrize("text, expected", [
    ("h", Address("h", 8020)),
    ("h:1", Address("h", 1)),
    ("[::1]:9000", Address("::1", 9000)),
    ("[::1]", Address("::1", 8020)),
])
def test_parse_address(text, expected):
    assert hadoop_config.parse_address(text) == expected


def test_parse_address_bad_port():
    with pytest.raises(ValueError, match="port"):
        hadoop_config.parse_address("host:http")


def test_address_str_brackets_ipv6():
    assert str(Address("::1", 9000)) == "[::1]:9000"


def test_user_explicit_wins(monkeypatch):
    monkeypatch.setenv("HADOOP_USER_NAME", "env")
    assert hadoop_config.hdfs_user("alice") == "alice"


def test_user_from_environment(monkeypatch):
    monkeypatch.setenv("HADOOP_USER_NAME", "env")
    assert hadoop_config.hdfs_user(None, "bob@REALM") == "env"


def test_user_from_kerberos_principal(no_hadoop_env):
    assert hadoop_config.hdfs_user(None, "bob/host.example@REALM") == "bob"


def test_user_from_login(no_hadoop_env, monkeypatch):
    monkeypatch.setattr(hadoop_config.getpass, "getuser", lambda: "login")
    assert hadoop_config.hdfs_user() == "login"


def test_home_directory_default_prefix():
    assert hadoop_config.home_directory({}, "alice") == "/user/alice"


def test_home_directory_configured_prefix():
    config = {"dfs.user.home.dir.prefix": "/home/"}
    assert hadoop_config.home_directory(config, "alice") == "/home/alice"
