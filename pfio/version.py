"""pfio's version (``pfio.version.__version__``, also ``pfio.__version__``)."""

__version__ = "3.0.0.dev0"
