"""A real TCP endpoint on 127.0.0.1 that reads each HTTP request and then misbehaves as scripted: trickles its
answer one byte at a time, answers 200 with the wrong JSON or an HTML page, resets the connection, or says nothing.

Bounded: every behaviour ends when the test stops the endpoint (or after HOLD_LIMIT_SECONDS at most), and
stopping joins every connection thread, so no test leaves a thread or a socket behind.
"""
from __future__ import annotations

import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable

HOLD_LIMIT_SECONDS = 20.0  # the longest any behaviour keeps a connection, whatever the client does
MAX_REQUEST_BYTES = 1 << 20

# (connection, stop event) -> keep the connection for the next request? It owns the connection until it returns;
# the endpoint closes it unless the behaviour returned True.
Behaviour = Callable[[socket.socket, threading.Event], bool | None]


def http_response(status: int, body: bytes, content_type: str = "application/x-amz-json-1.0") -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode("ascii") + body


def answer(status: int, body: bytes, content_type: str = "application/x-amz-json-1.0") -> Behaviour:
    def behave(connection: socket.socket, stop: threading.Event) -> bool:
        connection.sendall(http_response(status, body, content_type))
        return True
    return behave


def trickle(data: bytes, every_seconds: float = 0.25) -> Behaviour:
    """Send `data` one byte every `every_seconds`: a per-read timeout restarts with each byte."""
    def behave(connection: socket.socket, stop: threading.Event) -> None:
        ends = time.monotonic() + HOLD_LIMIT_SECONDS
        for byte in data:
            if stop.wait(every_seconds) or time.monotonic() > ends:
                return
            try:
                connection.sendall(bytes([byte]))
            except OSError:  # the client gave up: what a deadline is for
                return
    return behave


def hold(prefix: bytes = b"") -> Behaviour:
    """Send `prefix` (maybe nothing), then keep the connection open and silent."""
    def behave(connection: socket.socket, stop: threading.Event) -> None:
        if prefix:
            connection.sendall(prefix)
        stop.wait(HOLD_LIMIT_SECONDS)
    return behave


def reset(prefix: bytes = b"") -> Behaviour:
    """Send `prefix` (maybe nothing), then drop the connection with a TCP RST (SO_LINGER 0)."""
    def behave(connection: socket.socket, stop: threading.Event) -> None:
        if prefix:
            connection.sendall(prefix)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return behave


def after(seconds: float, then: Behaviour) -> Behaviour:
    def behave(connection: socket.socket, stop: threading.Event) -> bool | None:
        return None if stop.wait(seconds) else then(connection, stop)
    return behave


def _read_request(connection: socket.socket) -> bytes | None:
    """One request's head and body (Content-Length framed, as the DynamoDB client sends); None at EOF."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk or len(data) > MAX_REQUEST_BYTES:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head


class FaultyEndpoint:
    """`with FaultyEndpoint(first, second, ...) as endpoint:` the nth request gets the nth behaviour (the last
    one repeats); `endpoint.url` to point a client at, `endpoint.requests` counts requests read."""

    def __init__(self, *script: Behaviour) -> None:
        self.script = list(script)
        self.requests = 0
        self.connections = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        endpoint = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                connection: socket.socket = self.request
                connection.settimeout(HOLD_LIMIT_SECONDS)
                with endpoint._lock:
                    endpoint.connections += 1
                    endpoint._open.add(connection)
                try:
                    while not endpoint._stop.is_set() and _read_request(connection) is not None:
                        with endpoint._lock:
                            behaviour = endpoint.script[min(endpoint.requests, len(endpoint.script) - 1)]
                            endpoint.requests += 1
                        if not behaviour(connection, endpoint._stop):
                            return
                except OSError:
                    pass  # the client hung up or was reset: nothing to answer
                finally:
                    with endpoint._lock:
                        endpoint._open.discard(connection)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = False
        self._server.block_on_close = True  # server_close() joins every connection thread
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> "FaultyEndpoint":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        with self._lock:  # a thread blocked reading a kept-alive connection wakes up at once
            for connection in self._open:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
