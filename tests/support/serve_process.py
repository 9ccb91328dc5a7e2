"""`python -m function.devserver` as a real process on 127.0.0.1 and an ephemeral port, for tests that talk HTTP to
it."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kit.local_server import LocalServer, devserver_command

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def server_process(command: list[str], cwd: Path, env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """A local server started by `command` (python -m function.devserver, or lambda-tflite serve): (its base URL,
    its first line "serving on http://127.0.0.1:PORT (...)") while it runs; stopped with Ctrl-C's signal after."""
    with LocalServer(env, command=command, cwd=cwd) as server:
        server.discard_output()  # the request log is one JSON line per request: a full pipe would stall the server
        yield server.url, server.first_line


@contextmanager
def serving(model_dir: Path, workdir: Path, **environment: str) -> Iterator[str]:
    """The server's base URL (http://127.0.0.1:PORT) while it runs; stopped with Ctrl-C's signal afterwards."""
    env = {**os.environ, "MODEL_DIR": str(model_dir), "RESULTS_CACHE": "memory", "PYTHONPATH": str(REPO),
           **environment}
    with server_process(devserver_command(), workdir, env) as (url, _):
        yield url
