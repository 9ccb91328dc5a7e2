"""`python -m function.devserver` as a real process on 127.0.0.1 and an ephemeral port, for tests that talk HTTP to
it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def server_process(command: list[str], cwd: Path, env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """A local server started by `command` (python -m function.devserver, or lambda-tflite serve): (its base URL,
    its first line "serving on http://127.0.0.1:PORT (...)") while it runs; stopped with Ctrl-C's signal after."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The first line comes after the log lines of any model that cannot be served.
        before = []
        while (line := process.stdout.readline()) and not line.startswith("serving on http://"):
            before.append(line)
        assert line, "".join(before) + process.stderr.read()  # the server exited: its output says why
        # The request log is one JSON line per request: read on, or a full pipe would stall the server.
        threading.Thread(target=process.stdout.read, daemon=True).start()
        yield line.split()[2], line
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving(model_dir: Path, workdir: Path, **environment: str) -> Iterator[str]:
    """The server's base URL (http://127.0.0.1:PORT) while it runs; stopped with Ctrl-C's signal afterwards."""
    env = {**os.environ, "MODEL_DIR": str(model_dir), "RESULTS_CACHE": "memory", "PYTHONPATH": str(REPO),
           **environment}
    command = [sys.executable, "-m", "function.devserver", "--host", "127.0.0.1", "--port", "0"]
    with server_process(command, workdir, env) as (url, _):
        yield url
