import pathlib

import pytest

from pfio._uri import URI, container_kind, parse_uri, split_container_path


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("s3://bucket/key/a.jpg", URI("s3", "bucket", "/key/a.jpg")),
        ("S3://bucket", URI("s3", "bucket", "")),
        ("hdfs://ns1/user/x", URI("hdfs", "ns1", "/user/x")),
        ("mem://store/", URI("mem", "store", "/")),
        ("file:///abs/path", URI("file", "", "/abs/path")),
        ("file://localhost/abs/path", URI("file", "", "/abs/path")),
        ("file:/abs/path", URI("file", "", "/abs/path")),
        ("relative/dir", URI("file", "", "relative/dir")),
        ("/abs/dir", URI("file", "", "/abs/dir")),
        ("dir/odd://name", URI("file", "", "dir/odd://name")),
    ],
)
def test_parse_uri(url, expected):
    assert parse_uri(url) == expected


def test_key_keeps_query_and_fragment_characters():
    assert parse_uri("s3://b/a?b#c").path == "/a?b#c"


def test_path_objects_are_local_paths(tmp_path):
    assert parse_uri(pathlib.Path(tmp_path)) == URI("file", "", str(tmp_path))


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "empty"),
        ("://bucket/key", "scheme before '://' is empty"),
        ("1s3://bucket", "must start with a letter"),
        ("s_3://bucket", "must start with a letter"),
        ("file://remotehost/x", "host 'remotehost'"),
        ("s3://b/a\x00b", "NUL"),
        ("file:", "no path"),
    ],
)
def test_malformed_urls_say_what_is_wrong(url, message):
    with pytest.raises(ValueError, match=message):
        parse_uri(url)


def test_non_string_url_is_a_type_error():
    with pytest.raises(TypeError, match="int"):
        parse_uri(42)


def test_str_round_trips():
    assert str(parse_uri("s3://bucket/key")) == "s3://bucket/key"
    assert str(parse_uri("data/x")) == "data/x"


@pytest.mark.parametrize(
    ("name", "kind"),
    [("a.zip", "zip"), ("A.ZIP", "zip"), ("a.tar", "tar"), ("a.tar.gz", "tar"), ("a.tgz", "tar"),
     (".zip", None), ("a.zipx", None), ("a", None)],
)
def test_container_kind(name, kind):
    assert container_kind(name) == kind


def test_split_container_path_nested():
    assert split_container_path("/d/outer.zip/sub/inner.tar/x/y.jpg") == (
        "/d", [("outer.zip", "zip"), ("sub/inner.tar", "tar")], "x/y.jpg")


def test_split_container_path_without_container():
    assert split_container_path("/d/x.jpg") == ("/d/x.jpg", [], "")


def test_split_container_at_top():
    assert split_container_path("/a.zip") == ("/", [("a.zip", "zip")], "")
