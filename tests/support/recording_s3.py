"""A scripted S3 stand-in for faults moto cannot cause (a body cut short, a server error) and for reading exactly what
a client sent: a real HTTP/1.1 server on 127.0.0.1."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RecordingS3:
    """A real HTTP/1.1 server on 127.0.0.1: records each request, answers with the next scripted
    (status, headers, body[, truncate]); truncating sends a Content-Length larger than the body, then hangs up
    (`truncate=True` does it for every answer)."""

    def __init__(self, *answers: tuple[int, dict, bytes], truncate: bool = False) -> None:
        self.answers = list(answers)
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                server.requests.append({"method": self.command, "target": self.path, "headers": dict(self.headers),
                                        "body": self.rfile.read(length)})
                status, headers, body, *cut = server.answers.pop(0) if server.answers else (500, {}, b"")
                cut_short = cut[0] if cut else truncate
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body) * (2 if cut_short else 1)))
                self.end_headers()
                self.wfile.write(body)
                if cut_short:
                    self.close_connection = True

            do_GET = do_PUT = _answer

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "RecordingS3":
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()
