"""CheckpointManager and PfioWriter abort the multipart uploads a killed save left under
their directory when they start (older than stale_upload_age), and leave younger ones."""

import os

import boto3
import pytest
import torch
import torch.distributed.checkpoint as dcp

from pfio.integrations.torch.checkpoints import CheckpointManager
from pfio.integrations.torch.dcp import PfioWriter
from pfio.integrations.torch.stale_uploads import STALE_UPLOAD_AGE


@pytest.fixture
def client(s3_env):
    return boto3.session.Session().client("s3", endpoint_url=os.environ["S3_ENDPOINT"])


def _orphan(client, bucket, key):
    upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    client.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=b"x")


def _left(client, bucket):
    return sorted(u["Key"] for u in client.list_multipart_uploads(Bucket=bucket)
                  .get("Uploads", []))


def test_the_default_age_is_a_day():
    assert STALE_UPLOAD_AGE == 86400


def test_a_manager_aborts_stale_uploads_under_its_directory(client, s3_bucket):
    _orphan(client, s3_bucket, "run/ckpt/ckpt-000000001.pt")
    _orphan(client, s3_bucket, "other/ckpt-000000001.pt")
    manager = CheckpointManager(f"s3://{s3_bucket}/run/ckpt", stale_upload_age=0)
    manager.save({"step": 2}, 2)
    assert _left(client, s3_bucket) == ["other/ckpt-000000001.pt"]
    assert manager.load_latest() == {"step": 2}


def test_a_manager_leaves_younger_uploads(client, s3_bucket):
    _orphan(client, s3_bucket, "run/ckpt/ckpt-000000001.pt")
    # (moto dates every upload 2010-11-10: younger than a century)
    CheckpointManager(f"s3://{s3_bucket}/run/ckpt", stale_upload_age=100 * 365 * 86400
                      ).save({"step": 2}, 2)
    assert _left(client, s3_bucket) == ["run/ckpt/ckpt-000000001.pt"]


def test_none_disables_the_cleanup(client, s3_bucket):
    _orphan(client, s3_bucket, "run/ckpt/ckpt-000000001.pt")
    CheckpointManager(f"s3://{s3_bucket}/run/ckpt", stale_upload_age=None).save({"s": 2}, 2)
    assert _left(client, s3_bucket) == ["run/ckpt/ckpt-000000001.pt"]


def test_a_dcp_writer_aborts_stale_uploads_under_its_checkpoint(client, s3_bucket):
    _orphan(client, s3_bucket, "run/step-1/__0_0.distcp")
    _orphan(client, s3_bucket, "run/step-10/__0_0.distcp")
    writer = PfioWriter(f"s3://{s3_bucket}/run/step-1", stale_upload_age=0)
    dcp.save({"w": torch.ones(3)}, storage_writer=writer, no_dist=True)
    assert _left(client, s3_bucket) == ["run/step-10/__0_0.distcp"]
