"""A loopback proxy that adds the ``ETag`` header Ceph 16 leaves out of the answer to
CompleteMultipartUpload (s3torchconnector 1.5's CRT client needs it), and counts the
requests it relays (``bench_checkpoints``)."""

from __future__ import annotations

import collections
import http.client
import http.server
import json
import re
import subprocess
import sys
import threading
from urllib.parse import urlsplit


class ETagProxy:
    """A loopback HTTP/1.1 proxy to ``upstream`` that adds an ``ETag`` header to the answer
    of CompleteMultipartUpload (from its XML body). The ``Host`` header is relayed as sent:
    the signature covers it. ``counts`` holds the requests relayed (per method) since the
    last request of ``/-/reset``; the proxy answers that one and ``/-/counts`` itself (with
    the counts as JSON). A client that drops a connection is no error."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        host, port = parts.hostname, parts.port
        counts: collections.Counter[str] = collections.Counter()
        lock = threading.Lock()
        self.counts = counts

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _relay(self) -> None:
                if self.path in ("/-/reset", "/-/counts"):
                    with lock:
                        answer = json.dumps(dict(counts)).encode()
                        if self.path == "/-/reset":
                            counts.clear()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    return
                with lock:
                    counts[self.command] += 1
                if not hasattr(self, "up"):
                    self.up = http.client.HTTPConnection(host, port, timeout=120)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("expect", "connection")}
                self.up.putrequest(self.command, self.path, skip_host=True,
                                   skip_accept_encoding=True)
                for k, v in headers.items():
                    self.up.putheader(k, v)
                self.up.endheaders(body)
                answer = self.up.getresponse()
                data = answer.read()
                self.send_response_only(answer.status, answer.reason)
                names = set()
                for k, v in answer.getheaders():
                    if k.lower() in ("transfer-encoding", "content-length", "connection"):
                        continue
                    names.add(k.lower())
                    self.send_header(k, v)
                if self.command == "POST" and "uploadId=" in self.path and \
                        "etag" not in names:
                    found = re.search(rb"<ETag>(.*?)</ETag>", data)
                    if found:
                        self.send_header("ETag", found.group(1).decode().replace("&quot;",
                                                                                 '"'))
                # (a HEAD's answer tells the object's length, and has no body)
                length = answer.getheader("Content-Length") if self.command == "HEAD" \
                    else None
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: object, client_address: object) -> None:
                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ETagProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class ETagProxyProcess:
    """An :class:`ETagProxy` in a process of its own: its CPU time and its hold on the GIL
    are not the measured client's (the proxy stands in for a fix of the gateway, it is no
    part of any client)."""

    def __init__(self, upstream: str) -> None:
        self._upstream = upstream
        self.endpoint = ""
        self.pid = 0

    def __enter__(self) -> ETagProxyProcess:
        self._process = subprocess.Popen([sys.executable, __file__, self._upstream],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True)
        assert self._process.stdout is not None
        self.endpoint = self._process.stdout.readline().strip()
        if not self.endpoint:
            self._process.wait()
            raise RuntimeError(f"the proxy to {self._upstream} did not start")
        self.pid = self._process.pid
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()  # the proxy stops at the end of its input
        self._process.wait(timeout=30)


if __name__ == "__main__":
    with ETagProxy(sys.argv[1]) as proxy:
        print(proxy.endpoint, flush=True)
        sys.stdin.read()
