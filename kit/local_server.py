"""A local HTTP server of the function as a child process on 127.0.0.1 and a free port: `python -m function.devserver`
by default, or any command that prints "serving on http://HOST:PORT ..." once it listens (`lambda-tflite serve`);
optionally pinned to CPU cores; stopped with Ctrl-C's signal, by its PID."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
READY_TIMEOUT_SECONDS = 60
SERVING = re.compile(r"serving on (http://\S+)")


def devserver_command() -> list[str]:
    return [sys.executable, "-m", "function.devserver", "--host", "127.0.0.1", "--port", "0"]


class LocalServer:
    """`environment`: the server's whole environment (a test of an installed package leaves PYTHONPATH out);
    `cpus` (taskset's list, "0") pins the server to those cores."""

    def __init__(self, environment: dict[str, str], cpus: str | None = None, command: list[str] | None = None,
                 cwd: Path = REPO_ROOT):
        self.environment = environment
        self.cpus = cpus
        self.command = command or devserver_command()
        self.cwd = cwd
        self.url = ""
        self.first_line = ""  # "serving on http://127.0.0.1:PORT (...)"
        self._process: subprocess.Popen | None = None
        self._stderr = None

    def start(self) -> "LocalServer":
        command = self.command
        if self.cpus is not None and shutil.which("taskset"):
            command = ["taskset", "-c", self.cpus, *command]
        # stderr to a file: never a full pipe however long the server runs, and there to read if it fails to start.
        self._stderr = tempfile.TemporaryFile("w+")
        self._process = subprocess.Popen(command, cwd=self.cwd, env=self.environment, stdout=subprocess.PIPE,
                                         stderr=self._stderr, text=True)
        try:
            self._wait_until_serving()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_serving(self) -> None:
        before = []  # what it says first: the log lines of any model that cannot be served
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            line = self._process.stdout.readline()
            if not line and self._process.poll() is not None:
                raise RuntimeError(f"the local server exited with {self._process.returncode} before listening:\n"
                                   + "".join(before) + self._stderr_text())
            match = SERVING.match(line)
            if match:
                self.url, self.first_line = match.group(1), line
                return
            before.append(line)
        raise RuntimeError("the local server did not say it was listening:\n" + "".join(before) + self._stderr_text())

    def _stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stdout(self):
        """The server's log lines (text), after its "serving on" line; read it or the pipe fills at INFO level."""
        return self._process.stdout

    def discard_output(self) -> None:
        """Read the log lines on a thread and drop them: for a caller that only talks HTTP to the server."""
        threading.Thread(target=self._process.stdout.read, daemon=True).start()

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
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
