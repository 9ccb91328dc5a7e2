"""An HTTP proxy on 127.0.0.1 in front of moto's S3 that answers chosen requests with S3's own throttling error
(503 SlowDown) and passes every other request through unchanged: a transient S3 failure, which moto cannot cause.

`with S3FaultProxy(aws.endpoint) as proxy: proxy.slow_down("GET", "/bucket/key", times=1)`, then point the client
at `proxy.url`. `proxy.refused` lists the requests it answered with the error.
"""
from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}


class S3FaultProxy:
    def __init__(self, upstream: str):
        self.upstream = urlsplit(upstream)
        self.refused: list[tuple[str, str]] = []
        self._rules: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet: one line per request otherwise
                pass

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if proxy._take(self.command, unquote(urlsplit(self.path).path)):
                    self._answer(503, {"content-type": "application/xml"}, SLOW_DOWN)
                    return
                connection = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=30)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    self._answer(response.status, dict(response.getheaders()), response.read())
                finally:
                    connection.close()

            def _answer(self, status: int, headers: dict, body: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    if name.lower() not in HOP_BY_HOP | {"content-length"}:
                        self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def slow_down(self, method: str, path: str, times: int = 1) -> None:
        """Answer the next `times` requests of `method` on `path` ("/bucket/key", unencoded) with 503 SlowDown."""
        with self._lock:
            self._rules[(method, path)] = self._rules.get((method, path), 0) + times

    def _take(self, method: str, path: str) -> bool:
        with self._lock:
            left = self._rules.get((method, path), 0)
            if left:
                self._rules[(method, path)] = left - 1
                self.refused.append((method, path))
            return bool(left)

    def __enter__(self) -> "S3FaultProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
