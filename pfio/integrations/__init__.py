"""Integrations of pfio with data-loading and training frameworks, grouped by framework.

Framework-free sources (``shards``, ``tfrecord``, ``parquet``, ``objects``, ``image_items``,
``idx``, ``fsspec``) read what datasets hold; each framework or engine has one package over
them (``torch``, ``chainer``, ``tensorflow``, ``petastorm``, ``spark``, ``ray``). Each is
imported on its own and may need its framework installed (``pfio.integrations.torch`` needs
PyTorch); importing this package imports none of them. ``pfio.integrations.idx`` (IDX/MNIST
files) needs only NumPy. The modules' former paths (``torch_datasets``, ``checkpoints``,
``dcp``, ``ppe``, ...) re-export their new homes.
"""
