"""tensorboardX's ``SummaryWriter`` on a pfio URL after ``pfio.patch_all()``: its event
writer opens the file with ``open`` and calls ``os.fsync(f.fileno())`` on every flush, which
a spooled write serves. (``s3://`` is not this path: tensorboardX writes it with its own
boto3 client, which reads ``S3_ENDPOINT`` as pfio does.)"""

import struct

import pytest

import pfio
from pfio.patches import patch_all

tensorboardX = pytest.importorskip("tensorboardX")


def _records(data):
    records, offset = [], 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        records.append(data[offset + 12:offset + 12 + length])
        offset += 12 + length + 4
    return records


def test_summary_writer_flushes_with_fsync_and_publishes_on_close(request):
    url = f"mem://tbx-{request.node.name}/run"
    patch_all()
    writer = tensorboardX.SummaryWriter(url)
    writer.add_scalar("loss", 1.0, 0)
    writer.flush()  # os.fsync(f.fileno()) of the event file
    writer.add_scalar("loss", 0.5, 1)
    writer.close()
    fs = pfio.from_url(url)
    [name] = fs.list()
    assert name.startswith("events.out.tfevents.")
    with fs.open(name, "rb") as f:
        records = _records(f.read())
    assert len(records) == 3  # the file version, then two scalars
    assert all(b"loss" in record for record in records[1:])
