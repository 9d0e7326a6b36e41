"""Integrations of pfio with data-loading and training frameworks.

Each submodule is imported on its own and may need its framework installed
(``pfio.integrations.torch`` needs PyTorch); importing this package imports none of them.
``pfio.integrations.idx`` (IDX/MNIST files) needs only NumPy.
"""
