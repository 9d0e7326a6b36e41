"""S3: a filesystem over a bucket, on pfio's own HTTP/1.1 client.

The package has three layers, each importing only the ones below it (ARCHITECTURE.md;
``tests/test_architecture.py`` checks it):

* the wire (no IO): :mod:`.engine` (the contract of the engines: the ``Engine`` protocol
  and a frozen result type per answer), :mod:`.settings` (``S3Settings``, options from the
  environment), :mod:`.sigv4` (signing), :mod:`.wire` (endpoints, requests, answers),
  :mod:`.http1_syntax` (an answer head's syntax and framing), :mod:`.listing`,
  :mod:`.integrity`, :mod:`.errors` (error answers as a typed hierarchy, and as builtin
  exceptions);
* the transport (bytes on sockets): :mod:`.connection` (one per bucket and process: the
  engine, threads, retries), :mod:`.botocore_client` (the botocore client, ``mock_aws``
  detection), :mod:`.http1` (one HTTP/1.1 connection: strict framing, bounded waits),
  :mod:`.http_pool` (its connections kept per host), :mod:`.http_engine` (the default),
  :mod:`.boto3_engine` (botocore, for moto's ``mock_aws`` and set-ups the http engine
  cannot serve; botocore's answers and errors converted at its edge), :mod:`.retry`;
* the IO layer: :mod:`.get` (ranged GETs that resume), :mod:`.reader` (and its
  :mod:`.faces`, the file classes ``open`` returns), :mod:`.writer`,
  :mod:`.operations` (list, remove, rename), :mod:`.filesystem` (the :class:`S3` class).
"""

from .filesystem import S3
from .retry import RetryPolicy

__all__ = ["S3", "RetryPolicy"]
