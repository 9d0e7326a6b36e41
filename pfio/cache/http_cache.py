"""Caches kept by an HTTP server: each entry is ``PUT`` to and ``GET`` from its own URL.

* :class:`HTTPConnector` talks to the server (one keep-alive connection per thread and
  process, an optional bearer token read from a file);
* :class:`HTTPCache` is an index cache (slot ``i`` -> bytes) whose slots live on the server,
  at ``url + str(i)``;
* :class:`~pfio.cache.http_cached_fs.HTTPCachedFS` reads a filesystem's files through one.

A cache never breaks the program that uses it: when the server is down or answers with an
error, a ``get`` is a miss and a ``put`` returns False (both log a warning).
"""

from __future__ import annotations

import http.client
import logging
import os
import pickle
import threading
import time
import urllib.parse
from typing import Any

from ..trace import hook
from ..trace.ppe import Profilable
from ..trace.redact import redact
from .base import SharedCache, check_index, check_length, report

logger = logging.getLogger(__name__)


class _Token:
    """A bearer token read from a file, read again when the file changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._value = ""

    def header(self) -> dict[str, str]:
        st = os.stat(self.path)
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            with open(self.path, encoding="utf-8") as f:
                self._value = f.read().strip()
            self._stamp = stamp
        return {"Authorization": f"Bearer {self._value}"}


def _request_tag(method: str, *args: Any, **kwargs: Any) -> str:
    return f"{method.lower()}:request"


class HTTPConnector(Profilable):
    """``PUT`` and ``GET`` of byte strings at ``url + suffix``.

    Args:
        url: the prefix of every entry's URL (``http://host[:port]/path/``); a URL without a
            scheme is taken as ``http://``.
        bearer_token_path: a file holding a bearer token sent with every request (read
            again when the file changes, so a refreshed token is picked up).
        timeout: seconds to wait for the server.
        trace: accepted for PFIO 2.x code; requests are reported to :mod:`pfio.trace`
            whenever it is enabled.

    Log lines, errors and the repr show ``url`` without credentials (a ``user:password@``
    in it is not sent either).

    Raises:
        ValueError: ``url`` is not an ``http://`` URL with a host.
    """

    # what ``trace=True`` records (PFIO 2.x's names; see pfio.trace.ppe)
    _ppe_prefix = "pfio.cache.http.conn"
    _ppe_operations = {"put": "put", "get": "get", "_request": _request_tag}

    def __init__(self, url: str, bearer_token_path: str | None = None, timeout: int = 3,
                 trace: bool = False) -> None:
        if "://" not in url:
            url = "http://" + url
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError("HTTPConnector needs an http:// URL with a host, not "
                             f"{redact(url)!r}")
        self.url = url
        self._shown = redact(url)
        self.host = parsed.hostname
        self.port = parsed.port
        self.path = parsed.path or "/"
        self.timeout = timeout
        self.trace = trace
        self.bearer_token_path = bearer_token_path
        self._token = _Token(bearer_token_path) if bearer_token_path else None
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"HTTPConnector({self._shown!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_local"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _request(self, method: str, suffix: str, body: bytes | None = None
                 ) -> tuple[int, bytes] | None:
        """``(status, body)`` of one request (retried once on a dropped keep-alive
        connection), or None when the server cannot be reached."""
        headers = self._token.header() if self._token else {}
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, self.path + suffix, body=body, headers=headers)
                response = conn.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    logger.warning("HTTP cache %s %s%s failed: %s", method, self._shown,
                                   suffix, redact(repr(exc)))
        return None

    def put(self, suffix: str, data: bytes) -> bool:
        """Store ``data`` at ``url + suffix``; False (with a logged warning) when the server
        does not take it."""
        result = self._request("PUT", suffix, bytes(data))
        if result is None:
            return False
        if not 200 <= result[0] < 300:
            logger.warning("HTTP cache PUT %s%s: status %d", self._shown, suffix, result[0])
            return False
        return True

    def get(self, suffix: str) -> bytes | None:
        """The bytes at ``url + suffix``, or None when the server has none (404) or fails."""
        start = time.perf_counter() if hook.ENABLED else 0.0
        result = self._request("GET", suffix)
        data = None
        if result is not None:
            status, body = result
            if status == 200:
                data = body
            elif status != 404:
                logger.warning("HTTP cache GET %s%s: status %d", self._shown, suffix, status)
        if start:
            report("http", data is not None, len(data) if data else 0, start)
        return data


class HTTPCache(SharedCache):
    """An index cache whose slots are kept by an HTTP server, at ``url + str(i)``.

    Any number of processes and threads may share it. The server sees only the URL, so
    ``url`` must be unique to the dataset (and its version): two datasets under one URL
    read each other's slots.

    Args:
        length: the number of slots.
        url: the prefix of the slots' URLs.
        bearer_token_path: a file holding a bearer token (see :class:`HTTPConnector`).
        do_pickle: pickle what is put and unpickle what is got.
        trace: accepted for PFIO 2.x code; see :class:`HTTPConnector`.
    """

    _ppe_prefix = "pfio.cache.http"

    def __init__(self, length: int, url: str, bearer_token_path: str | None = None,
                 do_pickle: bool = False, trace: bool = False) -> None:
        check_length(length)
        self.length = length
        self.url = url
        self.do_pickle = do_pickle
        self.trace = trace
        self.connector = HTTPConnector(url, bearer_token_path, trace=trace)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"HTTPCache({self.length}, {self.connector._shown!r})"


    def put(self, i: int, data: Any) -> bool:
        """Send ``data`` (pickled with ``do_pickle``) to the server as slot ``i``; False when
        the server does not take it.

        Raises:
            IndexError: ``i`` is out of range.
        """
        check_index(i, self.length)
        if self.do_pickle:
            data = pickle.dumps(data)
        return self.connector.put(str(i), data)

    def get(self, i: int) -> Any:
        """Slot ``i`` from the server (unpickled with ``do_pickle``), or None on a miss.

        Raises:
            IndexError: ``i`` is out of range.
        """
        check_index(i, self.length)
        data = self.connector.get(str(i))
        if self.do_pickle and data is not None:
            return pickle.loads(data)
        return data


__all__ = ["HTTPCache", "HTTPConnector"]
