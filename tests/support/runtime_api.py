"""A stand-in for Lambda's Runtime API on 127.0.0.1, enough for the real runtime client (awslambdaric) to run its
whole SnapStart sequence: init (and init/error), restore/next, then invocation/next and each response.

Every copy of one snapshot polls the same address, so the server tells the copies apart by the process at the
other end of each connection (Linux: the socket's inode in /proc/net/tcp, found among the copies' open files):
each copy is handed every event of `events`, in order, under request ids of its own, and what it answers is
recorded under its pid. A copy that has had all its events waits in invocation/next, as an idle Lambda does.

    with RuntimeApiStandIn(events, processes=lambda: pids) as api:
        ... start the runtime with AWS_LAMBDA_RUNTIME_API=api.address ...
        api.wait_for_answers(copies=2)
"""
from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.sockets import peer_pid

PREFIX = "/2018-06-01/runtime"


@dataclass
class Copy:
    """One restored copy, as the Runtime API saw it."""

    pid: int
    restored: bool = False
    handed: list[str] = field(default_factory=list)  # request ids, in order
    answers: dict[str, object] = field(default_factory=dict)  # request id -> the decoded response (or error)


class RuntimeApiStandIn:
    def __init__(self, events: list[dict], processes: Callable[[], list[int]]) -> None:
        self.events = events
        self.processes = processes  # the pids that may be calling: the runtime process and its copies
        self.copies: dict[int, Copy] = {}
        self.init_errors: list[dict] = []
        self.restore_errors: list[dict] = []
        self.calls: list[tuple[int | None, str, str]] = []  # (pid, method, path), in arrival order
        self._changed = threading.Condition()
        self._closing = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "RuntimeApiStandIn":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._server.shutdown()
        self._server.server_close()

    def wait_for_answers(self, copies: int, timeout: float) -> dict[int, Copy]:
        """Until `copies` copies answered every event (or the time is up): the copies by pid."""
        def done() -> bool:
            complete = [c for c in self.copies.values() if len(c.answers) == len(self.events)]
            return len(complete) >= copies or bool(self.init_errors or self.restore_errors)
        with self._changed:
            self._changed.wait_for(done, timeout)
            return dict(self.copies)

    # -- the protocol ---------------------------------------------------------------------------------------------

    def _copy(self, pid: int | None) -> Copy:
        key = pid if pid is not None else -1
        return self.copies.setdefault(key, Copy(key))

    def _next_event(self, pid: int | None) -> tuple[str, dict] | None:
        """The copy's next event, or None once the server closes (the copy waits until then)."""
        with self._changed:
            copy = self._copy(pid)
            while len(copy.handed) >= len(self.events) and not self._closing:
                self._changed.wait()
            if self._closing:
                return None
            request_id = str(uuid.uuid4())
            event = self.events[len(copy.handed)]
            copy.handed.append(request_id)
            return request_id, event

    def _record(self, pid: int | None, request_id: str, answer: object) -> None:
        with self._changed:
            self._copy(pid).answers[request_id] = answer
            self._changed.notify_all()

    def _handler_class(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _pid(self) -> int | None:
                return peer_pid(self.client_address[1], api._server.server_address[1], api.processes())

            def _reply(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_GET(self) -> None:
                pid = self._pid()
                api.calls.append((pid, "GET", self.path))
                if self.path == f"{PREFIX}/restore/next":
                    with api._changed:
                        api._copy(pid).restored = True
                    self._reply(200)
                elif self.path == f"{PREFIX}/invocation/next":
                    handed = api._next_event(pid)
                    if handed is None:
                        self._reply(503)
                        return
                    request_id, event = handed
                    self._reply(200, json.dumps(event).encode(), {
                        "Content-Type": "application/json",
                        "Lambda-Runtime-Aws-Request-Id": request_id,
                        "Lambda-Runtime-Deadline-Ms": "9999999999999",
                        "Lambda-Runtime-Invoked-Function-Arn":
                            "arn:aws:lambda:us-east-1:123456789012:function:api:snapstart",
                        "Lambda-Runtime-Trace-Id": "Root=1-00000000-000000000000000000000000",
                    })
                else:
                    self._reply(404)

            def do_POST(self) -> None:
                pid, body = self._pid(), self._body()
                api.calls.append((pid, "POST", self.path))
                parts = self.path[len(PREFIX):].strip("/").split("/")
                if parts[:1] == ["invocation"] and len(parts) == 3 and parts[2] in ("response", "error"):
                    answer = json.loads(body) if body else None
                    api._record(pid, parts[1], answer if parts[2] == "response" else {"error": answer})
                elif parts == ["init", "error"]:
                    api.init_errors.append(json.loads(body or b"{}"))
                elif parts == ["restore", "error"]:
                    api.restore_errors.append(json.loads(body or b"{}"))
                else:
                    self._reply(404)
                    return
                with api._changed:
                    api._changed.notify_all()
                self._reply(202)

            def log_message(self, *args) -> None:
                pass

        return Handler
