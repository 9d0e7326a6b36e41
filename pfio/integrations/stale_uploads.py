"""``pfio.integrations.stale_uploads``, kept for the code and the pickles that name it: the
module moved to :mod:`pfio.integrations.torch.stale_uploads`, and this one re-exports the same
objects."""

from .torch.stale_uploads import STALE_UPLOAD_AGE, abort_stale_uploads

__all__ = ["STALE_UPLOAD_AGE", "abort_stale_uploads"]
