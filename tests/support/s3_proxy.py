"""A TCP proxy on 127.0.0.1 in front of a real S3 (moto's server), whose network a test can break at will:

- "up": bytes pass both ways;
- "down": S3 is gone: every connection, open or new, is closed at once (the client sees it dropped or reset);
- "hung": S3 accepts connections and never answers: what the client sends is read and thrown away.

The fault is real TCP, so the function's own client meets it as it would meet a broken network. Bounded: stopping
the proxy closes every socket and joins every thread.
"""
from __future__ import annotations

import socket
import socketserver
import threading
from urllib.parse import urlsplit

MODES = ("up", "down", "hung")


class S3Proxy:
    """`with S3Proxy(upstream_url) as proxy:` point a client at `proxy.url`, then `proxy.mode = "hung"`."""

    def __init__(self, upstream_url: str) -> None:
        parts = urlsplit(upstream_url)
        self.upstream = (parts.hostname, parts.port)
        self._mode = "up"
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = False
        self._server.block_on_close = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        assert mode in MODES, mode
        self._mode = mode
        if mode != "up":  # connections already open break too: a kept-alive one must not escape the fault
            self._close_all()

    def _serve(self, client: socket.socket) -> None:
        if self._mode == "down":
            client.close()
            return
        upstream = None if self._mode == "hung" else socket.create_connection(self.upstream, timeout=5)
        with self._lock:
            self._open.update(s for s in (client, upstream) if s is not None)
        try:
            if upstream is None:
                while not self._stop.is_set() and client.recv(65536):
                    pass  # hung: read everything, answer nothing
                return
            back = threading.Thread(target=self._pump, args=(upstream, client), daemon=True)
            back.start()
            self._pump(client, upstream)
            back.join(10)
        finally:
            with self._lock:
                for sock in (client, upstream):
                    if sock is not None:
                        self._open.discard(sock)
                        sock.close()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                if self._mode != "up":
                    return
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _close_all(self) -> None:
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def __enter__(self) -> "S3Proxy":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._close_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
