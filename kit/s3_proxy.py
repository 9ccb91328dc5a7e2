"""A proxy on 127.0.0.1 in front of a real S3 (moto's server) that plays the S3 faults moto cannot cause itself.
`proxy.mode` is one of:

- "up": each HTTP request goes to S3 and its answer comes back, except the requests `slow_down` names, which get
  S3's own throttling error (503 SlowDown) instead: a transient failure the client may retry, and those `deny`
  names, which get 403 AccessDenied: a refusal for good, as a bucket policy or a missing grant gives;
- "down": S3 is gone: every connection, open or new, is closed at once (the client sees it dropped or reset);
- "hung": S3 accepts connections and never answers: what the client sends is read and thrown away;
- "trickle": S3 answers, its headers at once and its body one byte every TRICKLE_SECONDS: each read gets a byte
  well within any per-read timeout, so only a deadline for the whole call ends it.

`with S3Proxy(aws.endpoint) as proxy:` point a client at `proxy.url`, then `proxy.mode = "hung"` or
`proxy.slow_down("GET", "/bucket/key", times=1)`; `proxy.refused` lists the requests answered with an error.
The faults are real TCP, so the function's own client meets them as it would meet a broken network. Bounded:
stopping the proxy closes every socket and joins every thread.
"""
from __future__ import annotations

import http.client
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

MODES = ("up", "down", "hung", "trickle")
TRICKLE_SECONDS = 0.1
TRICKLE_LIMIT_SECONDS = 10.0  # a trickled answer is cut (the connection closed) after this long, whatever it was
SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")
ACCESS_DENIED = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
                 b"<Message>Access Denied</Message></Error>")
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}
UPSTREAM_TIMEOUT_SECONDS = 30


class S3Proxy:
    def __init__(self, upstream_url: str) -> None:
        self.upstream = urlsplit(upstream_url)
        self.refused: list[tuple[str, str]] = []
        self._mode = "up"
        self._rules: dict[tuple[str, str], list[tuple[int, bytes]]] = {}  # the error answers still to give
        self._stopping = False
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._server.daemon_threads = False
        self._server.block_on_close = True  # server_close joins every connection's thread
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        assert mode in MODES, mode
        with self._lock:
            self._mode = mode
            if mode not in ("up", "trickle"):  # connections already open break too: a kept-alive one must not escape
                self._shut_open()

    def slow_down(self, method: str, path: str, times: int = 1) -> None:
        """Answer the next `times` requests of `method` on `path` ("/bucket/key", unencoded) with 503 SlowDown."""
        with self._lock:
            self._rules.setdefault((method, path), []).extend([(503, SLOW_DOWN)] * times)

    def deny(self, method: str, path: str, times: int = 1) -> None:
        """Answer the next `times` requests of `method` on `path` with 403 AccessDenied."""
        with self._lock:
            self._rules.setdefault((method, path), []).extend([(403, ACCESS_DENIED)] * times)

    def _take(self, method: str, path: str) -> tuple[int, bytes] | None:
        with self._lock:
            left = self._rules.get((method, path))
            if not left:
                return None
            self.refused.append((method, path))
            return left.pop(0)

    def _admit(self, connection: socket.socket) -> bool:
        with self._lock:
            if self._stopping or self._mode == "down":
                return False
            self._open.add(connection)
            return True

    def _release(self, connection: socket.socket) -> None:
        with self._lock:
            self._open.discard(connection)

    def _shut_open(self) -> None:
        for connection in self._open:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> "S3Proxy":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()  # no new connection from here on
        with self._lock:
            self._stopping = True
            self._shut_open()
        self._server.server_close()
        self._thread.join()


class _Handler(BaseHTTPRequestHandler):
    """One client connection: its requests in turn, as the proxy's mode says when each arrives."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet: one line per request otherwise
        pass

    def handle(self) -> None:
        proxy: S3Proxy = self.server.proxy
        if not proxy._admit(self.connection):  # down: reset at once, unanswered (no FIN first: a drop, not an end)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        try:
            super().handle()
        except OSError:
            pass  # a fault or the stop shut the connection under a request
        finally:
            proxy._release(self.connection)

    def _request(self) -> None:
        proxy: S3Proxy = self.server.proxy
        if proxy.mode not in ("up", "trickle"):
            self.close_connection = True
            if proxy.mode == "hung":
                while self.connection.recv(65536):
                    pass  # read everything, answer nothing, until the client gives up or the proxy stops
            return
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        error = proxy._take(self.command, unquote(urlsplit(self.path).path))
        if error:
            self._answer(error[0], [("content-type", "application/xml")], error[1])
            return
        upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port,
                                              timeout=UPSTREAM_TIMEOUT_SECONDS)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            status, answer_headers, answer = response.status, response.getheaders(), response.read()
        finally:
            upstream.close()
        if proxy.mode not in ("up", "trickle"):  # the fault came while S3 answered: the answer is lost with it
            self.close_connection = True
            return
        self._answer(status, answer_headers, answer, trickle=proxy.mode == "trickle")

    def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes, trickle: bool = False) -> None:
        bodiless = self.command == "HEAD" or status in (204, 304)  # their content-length is S3's, kept as is
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in HOP_BY_HOP and (bodiless or name.lower() != "content-length"):
                self.send_header(name, value)
        if not bodiless:
            self.send_header("content-length", str(len(body)))
        self.end_headers()
        if bodiless:
            return
        if not trickle:
            self.wfile.write(body)
            return
        self.wfile.flush()
        proxy: S3Proxy = self.server.proxy
        ends = time.monotonic() + TRICKLE_LIMIT_SECONDS
        for byte in body:  # until the client gives up (the write fails), the proxy stops or the limit comes
            if proxy._stopping or proxy.mode != "trickle" or time.monotonic() > ends:
                self.close_connection = True
                return
            time.sleep(TRICKLE_SECONDS)
            self.wfile.write(bytes([byte]))
            self.wfile.flush()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _request
