"""``pfio.integrations.chainer_compat``, kept for the code that names it: the module moved to
:mod:`pfio.integrations.chainer.compat`, and this one re-exports the same function (importing
it now imports Chainer, as the package :mod:`pfio.integrations.chainer` does)."""

from .chainer.compat import import_chainer

__all__ = ["import_chainer"]
