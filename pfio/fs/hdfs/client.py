"""Creating HDFS clients, and turning their errors into builtin exception classes.

:class:`HdfsTarget` says which cluster to talk to and how; a *client factory* turns it into a
client object with the methods of ``hdfs_native.Client`` (``get_file_info``, ``list_status``,
``read``, ``create``, ``append``, ``mkdirs``, ``rename``, ``delete``). The built-in factories
are :func:`native_client` (the ``hdfs-native`` Rust client: no JVM) and
:func:`pfio.fs.hdfs.pyarrow_client.pyarrow_client` (``pyarrow.fs.HadoopFileSystem`` over libhdfs).

The native client retries without end against a name node that does not answer, so
:func:`check_reachable` first opens a TCP connection to the name node(s) with a timeout and
fails with an error naming the address(es).
"""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .config import Address

logger = logging.getLogger(__name__)

#: seconds to wait for a TCP connection to a name node before giving up
DEFAULT_CONNECT_TIMEOUT = 10.0


@dataclass(frozen=True)
class HdfsTarget:
    """What a client factory needs to connect.

    Attributes:
        url: ``hdfs://NETLOC`` as the client takes it.
        addresses: the name node RPC addresses serving ``NETLOC``.
        config: extra Hadoop properties (override those of the configuration files).
        config_dir: the Hadoop configuration directory, if any.
        connect_timeout: seconds allowed for the reachability check.
        kerberos: ``principal``, ``keytab``, ``cache`` options for Kerberos (native client).
    """

    url: str
    addresses: tuple[Address, ...]
    config: dict[str, str] = field(default_factory=dict)
    config_dir: str | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    kerberos: dict[str, str] = field(default_factory=dict)


ClientFactory = Callable[[HdfsTarget], Any]


def check_reachable(addresses: tuple[Address, ...] | list[Address], timeout: float) -> Address:
    """Return the first address that accepts a TCP connection within ``timeout`` seconds.

    Raises:
        ConnectionError: none does; the message names every address tried and why.
    """
    failures = []
    for address in addresses:
        try:
            with socket.create_connection((address.host, address.port), timeout=timeout):
                return address
        except OSError as e:
            reason = "timed out" if isinstance(e, TimeoutError) else (e.strerror or str(e))
            failures.append(f"{address} ({reason})")
    raise ConnectionError(
        errno.ECONNREFUSED,
        f"HDFS name node unreachable within {timeout:g}s: {', '.join(failures)}",
    )


def native_client(target: HdfsTarget) -> Any:
    """An ``hdfs_native.Client`` for ``target``, once a name node answers.

    Kerberos: with ``kerberos`` options (``principal``, ``keytab``, ``cache``) or a ticket
    cache from ``kinit``, and ``hadoop.security.authentication=kerberos`` in the
    configuration, the native client authenticates through the system's GSSAPI library
    (``libgssapi_krb5``).

    Raises:
        ImportError: ``hdfs-native`` is not installed (``pip install pfio[hdfs]``).
        ConnectionError: no name node accepts a connection within the timeout.
    """
    try:
        import hdfs_native
    except ImportError as e:
        raise ImportError("the HDFS backend needs the hdfs-native package: "
                          "pip install 'pfio[hdfs]'") from e
    check_reachable(target.addresses, target.connect_timeout)
    # only the options in use, so that older hdfs-native releases without them still work
    options: dict[str, Any] = {f"kerberos_{k}": v for k, v in target.kerberos.items()}
    if target.config:
        options["config"] = dict(target.config)
    if target.config_dir:
        options["config_dir"] = target.config_dir
    logger.debug("connecting to %s (%s)", target.url, ", ".join(map(str, target.addresses)))
    with mapped_errors(target.url):
        return hdfs_native.Client(target.url, **options)


# Java exception classes of the name node, by the builtin class they mean.
_JAVA_ERRORS: tuple[tuple[str, type[OSError], int], ...] = (
    ("AccessControlException", PermissionError, errno.EACCES),
    ("AuthorizationException", PermissionError, errno.EACCES),
    ("FileAlreadyExistsException", FileExistsError, errno.EEXIST),
    ("AlreadyBeingCreatedException", FileExistsError, errno.EEXIST),
    ("ParentNotDirectoryException", NotADirectoryError, errno.ENOTDIR),
    ("PathIsNotDirectoryException", NotADirectoryError, errno.ENOTDIR),
    ("PathIsNotEmptyDirectoryException", OSError, errno.ENOTEMPTY),
    ("destination directory is not empty", OSError, errno.ENOTEMPTY),
    ("FileNotFoundException", FileNotFoundError, errno.ENOENT),
)

_BUILTIN_ERRORS: tuple[tuple[type[BaseException], type[OSError], int], ...] = (
    (FileNotFoundError, FileNotFoundError, errno.ENOENT),
    (FileExistsError, FileExistsError, errno.EEXIST),
    (IsADirectoryError, IsADirectoryError, errno.EISDIR),
    (NotADirectoryError, NotADirectoryError, errno.ENOTDIR),
    (PermissionError, PermissionError, errno.EACCES),
)


def translate(error: BaseException, where: str) -> BaseException:
    """The builtin exception that means what an HDFS client raised about ``where``.

    hdfs-native raises ``FileNotFoundError``, ``FileExistsError`` and ``IsADirectoryError``
    itself, ``NotImplementedError`` for unsupported features, and ``RuntimeError`` with the
    name node's Java exception class in the message for the rest; pyarrow raises ``OSError``
    with the Java class in the message. Unknown errors become ``OSError(EIO)``.
    """
    message = str(error)
    if isinstance(error, NotImplementedError):
        return io.UnsupportedOperation(f"{where}: {message}")
    for java, cls, code in _JAVA_ERRORS:
        if java in message:
            return cls(code, message, where)
    for raised, cls, code in _BUILTIN_ERRORS:
        if isinstance(error, raised):
            return cls(code, message, where)
    if isinstance(error, OSError) and error.errno is not None:
        return error
    return OSError(errno.EIO, message, where)


@contextlib.contextmanager
def mapped_errors(where: str) -> Iterator[None]:
    """Re-raise what an HDFS client raises inside the block as a builtin error."""
    try:
        yield
    except (RuntimeError, OSError) as e:
        translated = translate(e, where)
        if translated is e:
            raise
        raise translated from e
