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


# -- signing headers, as botocore's debug log prints them, and the logging filter ----------

SIGNED_REQUEST = (
    "Sending http request: <AWSPreparedRequest method=GET, url=http://127.0.0.1:9/b/k, "
    "headers={'Range': b'bytes=0-9', 'X-Amz-Security-Token': b'TOKEN123abc', "
    "'X-Amz-Date': b'20260101T000000Z', 'Authorization': b'AWS4-HMAC-SHA256 "
    "Credential=KEYID123/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;range, "
    "Signature=5a1e0fd2c3'}>")


def test_signing_headers_of_a_request_are_removed():
    out = redact(SIGNED_REQUEST)
    for secret in ("TOKEN123abc", "KEYID123", "5a1e0fd2c3"):
        assert secret not in out
    assert "'X-Amz-Date': b'20260101T000000Z'" in out and "'Range': b'bytes=0-9'" in out


def test_canonical_request_lines_are_redacted():
    out = redact("GET\n/b/k\n\nhost:127.0.0.1\nx-amz-security-token:TOKEN123abc\nx-amz-date:1")
    assert "TOKEN123abc" not in out
    assert out.endswith("x-amz-security-token:<redacted>\nx-amz-date:1")


@pytest.mark.parametrize("param", ["X-Amz-Signature", "X-Amz-Credential",
                                   "X-Amz-Security-Token", "Signature", "sig"])
def test_presigned_parameters_without_a_scheme_are_removed(param):
    """urllib3 logs a request line: the path and query string, no scheme."""
    out = redact(f'"GET /b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&{param}=SECRETvalue HTTP/1.1" 200')
    assert "SECRETvalue" not in out and "X-Amz-Algorithm=AWS4-HMAC-SHA256" in out


def test_words_near_secret_names_stay():
    text = "s3://bucket/token: not found; design=v2"
    assert redact(text) == text


def _emit(record_args, exc_info=None):
    import io
    import logging

    from pfio.trace.redact import RedactingFilter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("test.redact.botocore")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        logger.warning(*record_args, exc_info=exc_info)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_logging_filter_redacts_messages_with_arguments():
    out = _emit(("Sending http request: %s", SIGNED_REQUEST.split(": ", 1)[1]))
    assert "TOKEN123abc" not in out and "KEYID123" not in out and "5a1e0fd2c3" not in out
    assert "Sending http request" in out and REDACTED in out


def test_logging_filter_redacts_tracebacks():
    try:
        raise OSError("could not GET https://h/b/k?X-Amz-Signature=SIGabc123")
    except OSError as e:
        out = _emit(("request failed",), exc_info=e)
    assert "SIGabc123" not in out
    assert "Traceback" in out and "OSError: could not GET https://h/b/k?" in out
