"""S3: an embedded S3 server (moto) on loopback stands in for a bucket here.

With a real bucket, skip the server: credentials come from boto3's usual chain and the endpoint
from the ``endpoint=`` option, ``S3_ENDPOINT`` or ``AWS_ENDPOINT_URL``.
"""

import os

import pfio
from pfio.testing.s3server import MotoServer

with MotoServer() as server:
    os.environ.update(AWS_ACCESS_KEY_ID="example", AWS_SECRET_ACCESS_KEY="example",
                      AWS_DEFAULT_REGION="us-east-1")
    with pfio.from_url("s3://example-bucket/prefix", endpoint=server.endpoint,
                       create_bucket=True) as fs:
        with fs.open("model.bin", "wb") as f:  # one PUT (multipart above mpu_chunksize)
            f.write(b"\x00" * 1024)
        with fs.open("model.bin", "rb") as f:  # one ranged GET for a small object
            print(len(f.read()))  # 1024
        print(list(fs.list()))  # ['model.bin']
        try:
            with fs.open("half.bin", "wb") as f:
                f.write(b"partial")
                raise RuntimeError("crash while writing")
        except RuntimeError:
            pass
        print(fs.exists("half.bin"))  # False: nothing partial is published
