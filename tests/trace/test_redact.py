import pytest

from pfio.trace.redact import REDACTED, redact, redact_args


@pytest.mark.parametrize("text, secret", [
    ("s3://AKIAIOSFODNN7EXAMPLE:topsecret@bucket/key", "topsecret"),
    ("https://user:pw123@host/path", "pw123"),
    ("https://h/b/k?X-Amz-Signature=abcdef&X-Amz-Credential=xyz", "abcdef"),
    ("key id AKIAIOSFODNN7EXAMPLE in a message", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key=verysecret", "verysecret"),
    ("session token=tok42 expired", "tok42"),
])
def test_secrets_are_removed(text, secret):
    out = redact(text)
    assert secret not in out
    assert REDACTED in out


def test_the_rest_of_a_url_stays():
    assert redact("s3://u:p@bucket/dir/key.bin") == f"s3://{REDACTED}@bucket/dir/key.bin"
    assert redact("https://h/b/k?sig=1") == f"https://h/b/k?{REDACTED}"


@pytest.mark.parametrize("text", ["mem://store/a/b", "/tmp/x?y", "", "file.txt"])
def test_plain_names_are_unchanged(text):
    assert redact(text) == text


def test_only_string_arguments_are_redacted():
    assert redact_args({"url": "s3://a:b@c/d", "bytes": 3}) == {
        "url": f"s3://{REDACTED}@c/d", "bytes": 3}
