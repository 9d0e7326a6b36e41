"""The seeking helpers' former module path: they live in :mod:`pfio.fs.positional`."""

from .positional import NegativeSeekError, SeekableReader, seek_position

__all__ = ["NegativeSeekError", "SeekableReader", "seek_position"]
