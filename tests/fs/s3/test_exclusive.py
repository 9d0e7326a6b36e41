"""``open(name, "xb")`` on S3 is exclusive where the server has conditional writes
(``If-None-Match: *``): of several writers racing to create one name with a PUT, one
succeeds and the others get ``FileExistsError`` (moto and Ceph have conditional PUTs); a
multipart upload sends the condition with its completion (AWS honours it, moto and Ceph 16
ignore it: there a HEAD before completing is the check, racy)."""

from __future__ import annotations

import os
import threading

import pytest

from pfio.fs.s3 import S3

MIB = 1 << 20


@pytest.fixture(params=["moto", "ceph"])
def fs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> S3:
    from tests.conftest import new_bucket, use_s3_server

    server = request.getfixturevalue(f"{request.param}_server")
    use_s3_server(monkeypatch, server)
    return S3(new_bucket(server), endpoint=server.endpoint, mpu_chunksize=5 * MIB)


def test_one_of_racing_exclusive_writers_creates_the_file(fs: S3) -> None:
    size = 100
    writers = 4
    files = [fs.open("x", "xb") for _ in range(writers)]  # all opened before any closes
    payloads = [os.urandom(size) for _ in range(writers)]
    for f, payload in zip(files, payloads, strict=True):
        f.write(payload)
    outcomes: list[str] = []
    barrier = threading.Barrier(writers)

    def close(f) -> None:  # noqa: ANN001
        barrier.wait()
        try:
            f.close()
            outcomes.append("created")
        except FileExistsError:
            outcomes.append("exists")

    threads = [threading.Thread(target=close, args=(f,)) for f in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["created"] + ["exists"] * (writers - 1)
    with fs.open("x", "rb") as f:
        assert f.read() in payloads


@pytest.mark.parametrize("size", [100, 6 * MIB], ids=["put", "multipart"])
def test_an_exclusive_write_over_an_object_made_meanwhile_fails(fs: S3, size: int) -> None:
    f = fs.open("x", "xb")
    f.write(os.urandom(size))
    with fs.open("x", "wb") as other:
        other.write(b"first")
    with pytest.raises(FileExistsError):
        f.close()
    with fs.open("x", "rb") as g:
        assert g.read() == b"first"


def test_an_exclusive_multipart_upload_sends_its_condition_with_the_completion(
        fs: S3) -> None:
    completions: list[str | None] = []
    fs.connection.add_request_hook(
        lambda method, path, headers: completions.append(headers.get("if-none-match"))
        if method == "POST" and path.endswith("/y") and "content-type" in headers else None)
    with fs.open("y", "xb") as f:
        f.write(os.urandom(6 * MIB))
    assert completions[-1:] == ["*"]
