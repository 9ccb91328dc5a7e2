"""`python -m function.devserver` as a child process on 127.0.0.1, optionally pinned to CPU cores; stopped by its
PID."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.paths import MODELS_DIR, REPO_ROOT

READY_TIMEOUT_SECONDS = 60


class LocalServer:
    def __init__(self, environment: dict[str, str], cpus: str | None = None):
        self.environment = {**os.environ, "MODEL_DIR": str(MODELS_DIR), "LOG_LEVEL": "WARNING", **environment}
        self.cpus = cpus
        self.url = ""
        self._process: subprocess.Popen | None = None

    def start(self) -> "LocalServer":
        command = [sys.executable, "-m", "function.devserver", "--host", "127.0.0.1", "--port", "0"]
        if self.cpus is not None and shutil.which("taskset"):
            command = ["taskset", "-c", self.cpus, *command]
        self._process = subprocess.Popen(command, cwd=REPO_ROOT, env=self.environment, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            line = self._process.stdout.readline()
            if not line and self._process.poll() is not None:
                raise RuntimeError(f"the local server exited with {self._process.returncode} before listening")
            match = re.search(r"serving on (http://127\.0\.0\.1:\d+)", line)
            if match:
                self.url = match.group(1)
                return self
        self.stop()
        raise RuntimeError("the local server did not say it was listening")

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stdout(self):
        """The server's log lines (text), after its "serving on" line; read it or the pipe fills at INFO level."""
        return self._process.stdout

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE).group(1)) / 1024

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGINT)  # the server's own clean shutdown path
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
