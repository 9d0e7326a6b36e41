"""The end-to-end demo: train a small CNN on images in a zip on S3, through pfio.

``make demo`` or ``python -m pfio demo [--url s3://bucket/prefix] [--epochs 3] [--workers 4]``:
an embedded S3 server (moto) on loopback unless ``--url`` names a real bucket, a procedurally
drawn dataset packed into a zip on S3 with ``pfio pack``, a DataLoader (4 workers, at most one
per CPU core) over ``PfioImageDataset`` with the cache on and ``pfio.patch_all()`` active,
checkpoints on S3 with ``CheckpointManager`` that hold the loader's place in the epoch, one
simulated crash and a resume from the latest checkpoint, progress lines on standard error, and
the time the training loop waited for data in each epoch. See :mod:`pfio.demo.run`.
"""
