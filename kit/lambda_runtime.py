"""Run the function the way Lambda runs it: AWS's Runtime Interface Emulator + the real awslambdaric, on the host.

The Python that runs the function is a venv holding requirements.txt ALONE (plus the runtime client the Lambda base
image ships), made by tools/prepare-lambda-runtime.sh before pytest; the task root is laid out by the Dockerfile's
own COPY steps. Used by tests/e2e and by the cold-start benchmark:

    task_root = lay_out_task_root(tmp_path / "task")
    with LambdaRuntime(task_root, environment={"RESULTS_CACHE": "memory"}) as runtime:
        first = runtime.invoke(event)          # cold: first.report.init_duration_ms is set
        first.payload, first.wall_ms, first.init_phase_ms, runtime.runtime_peak_rss_mb()

The emulator starts the Python runtime process only on the first invoke, so a fresh LambdaRuntime's first
`wall_ms` is a whole cold start as a client sees it (process start, imports, init, handler); `init_phase_ms` is the
init part. The REPORT line's own `Init Duration` is set on a cold start, but the emulator counts only the runtime's
bootstrap in it, and its `Duration` includes the init: use `init_phase_ms` and `wall_ms` for measurements.
"""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from kit.dockerfile import copy_build_context, handler_command, image_environment
from kit.ports import free_port

REPO_ROOT = Path(__file__).resolve().parents[1]
RUNTIME_DIR = REPO_ROOT / "build" / "lambda-runtime"
RUNTIME_PYTHON = RUNTIME_DIR / "venv" / "bin" / "python"
INVOKE_PATH = "/2015-03-31/functions/function/invocations"
# What serverless.yml deploys by default (1,769 MB is one full vCPU).
DEFAULT_MEMORY_MB = 1769
DEFAULT_TIMEOUT_SECONDS = 15
# How long the emulator may take to listen, or to print its REPORT line after answering.
EMULATOR_WAIT_SECONDS = 10.0

REPORT_LINE = re.compile(r"^REPORT RequestId: (?P<request_id>\S+)(?P<fields>.*)$")
REPORT_FIELD = re.compile(r"(?P<name>[A-Za-z ]+): (?P<value>[\d.]+) (?:ms|MB)")
# The emulator's own log of the init phase; its REPORT "Init Duration" only counts the runtime's bootstrap.
INIT_REPORT_LINE = re.compile(r"\(rapid\) INIT REPORT\(durationMs: (?P<ms>[\d.]+)\)")
# Never through a proxy: the emulator listens on loopback only.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class RuntimeNotPrepared(RuntimeError):
    """build/lambda-runtime is missing: run tools/prepare-lambda-runtime.sh (it needs the package registries)."""


def emulator_binary() -> Path:
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine().lower()]
    return RUNTIME_DIR / f"aws-lambda-rie-{arch}"


def ensure_prepared(python: Path = RUNTIME_PYTHON) -> None:
    missing = [str(p) for p in (python, emulator_binary()) if not p.exists()]
    if missing:
        raise RuntimeNotPrepared(f"missing {', '.join(missing)}: run `bash tools/prepare-lambda-runtime.sh` first")


def lay_out_task_root(task_root: Path) -> Path:
    """A stand-in for /var/task: the Dockerfile's COPY steps, then its bytecode compilation of function/."""
    ensure_prepared()
    task_root.mkdir(parents=True, exist_ok=True)
    copy_build_context(task_root)
    # The image's `RUN python -m compileall`, by the runtime's own Python so the bytecode is the one it loads.
    subprocess.run([str(RUNTIME_PYTHON), "-m", "compileall", "-q", str(task_root / "function")], check=True)
    return task_root


@dataclass(frozen=True)
class Report:
    """The emulator's REPORT line for one invocation."""

    request_id: str
    duration_ms: float
    billed_duration_ms: float
    memory_size_mb: int
    init_duration_ms: float | None  # only on the invocation that started the runtime (a cold start)

    @classmethod
    def parse(cls, line: str) -> "Report":
        match = REPORT_LINE.match(line.strip())
        if not match:
            raise ValueError(f"not a REPORT line: {line!r}")
        fields = {m.group("name").strip(): float(m.group("value"))
                  for m in REPORT_FIELD.finditer(match.group("fields"))}
        return cls(
            request_id=match.group("request_id"),
            duration_ms=fields["Duration"],
            billed_duration_ms=fields["Billed Duration"],
            memory_size_mb=int(fields["Memory Size"]),
            init_duration_ms=fields.get("Init Duration"),
        )


@dataclass(frozen=True)
class Invocation:
    payload: object  # what the handler returned, JSON-decoded
    report: Report
    wall_ms: float  # event POSTed -> answer received, as a client of the emulator sees it
    init_phase_ms: float | None  # the emulator's INIT REPORT: runtime start + handler module import, cold only
    logs: list[str] = field(default_factory=list)  # lines the function wrote during this invocation

    @property
    def status(self) -> int:
        return self.payload["statusCode"]

    def json_body(self) -> object:
        """The API Gateway response body, decoded from JSON."""
        return json.loads(self.payload["body"])


def lambda_environment(
    task_root: Path, tmp: Path, memory_mb: int, timeout_s: int, extra: dict[str, str], python: Path = RUNTIME_PYTHON
) -> dict[str, str]:
    """Only what Lambda's environment holds (never the developer's: no PATH to .venv, no HOME, no PYTHON* of ours)."""
    environment = {
        "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TZ": ":UTC",
        "TMPDIR": str(tmp),
        "PYTHONPATH": str(task_root),
        # The task root is read-only in Lambda: nothing compiled at run time survives to the next cold start.
        "PYTHONDONTWRITEBYTECODE": "1",
        "LAMBDA_TASK_ROOT": str(task_root),
        "AWS_EXECUTION_ENV": f"AWS_Lambda_python{runtime_python_version(python)}",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "lambda-tflite-serving-local-api",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "AWS_LAMBDA_FUNCTION_TIMEOUT": str(timeout_s),
    }
    environment.update(image_environment(str(task_root)))
    environment.update(extra)
    return environment


def runtime_python_version(python: Path = RUNTIME_PYTHON) -> str:
    """`3.12` for the prepared venv: what AWS_EXECUTION_ENV names."""
    config = (python.parent.parent / "pyvenv.cfg").read_text()
    version = re.search(r"^version(?:_info)?\s*=\s*(\d+\.\d+)", config, re.MULTILINE)
    return version.group(1) if version else "3"


class LambdaRuntime:
    """One emulated Lambda execution environment: start(), invoke(event) as often as needed, stop()."""

    def __init__(
        self,
        task_root: Path,
        handler: str | None = None,
        environment: dict[str, str] | None = None,
        memory_mb: int = DEFAULT_MEMORY_MB,
        timeout_s: int = DEFAULT_TIMEOUT_SECONDS,
        python: Path = RUNTIME_PYTHON,
        command_prefix: tuple[str, ...] = (),
    ):
        # python: the venv whose runtime client runs the handler (the benchmark's baselines bring their own).
        self.python = Path(python)
        # Run before the emulator, e.g. strace recording every file the runtime opens (kit/file_access.py).
        self.command_prefix = tuple(command_prefix)
        self.task_root = Path(task_root)
        self.handler = handler or handler_command()[0]
        self.extra_environment = dict(environment or {})
        self.memory_mb = memory_mb
        self.timeout_s = timeout_s
        self.tmp: Path | None = None
        self.environment: dict[str, str] = {}
        self.lines: list[str] = []
        self._lines_changed = threading.Condition()
        self._process: subprocess.Popen | None = None
        self._invoke_url = ""

    # -- lifecycle ------------------------------------------------------------------------------------------------

    def start(self) -> "LambdaRuntime":
        ensure_prepared(self.python)
        # Lambda's only writable place, /tmp: one per execution environment, removed by stop().
        self.tmp = Path(tempfile.mkdtemp(prefix="lambda-tmp-"))
        self.environment = lambda_environment(
            self.task_root, self.tmp, self.memory_mb, self.timeout_s, self.extra_environment, self.python)
        emulator_port, runtime_api_port = free_port(), free_port()
        command = [
            *self.command_prefix,
            str(emulator_binary()),
            # Both flags, always: the defaults bind 0.0.0.0 and an unknown flag would be taken as the command.
            "--runtime-interface-emulator-address", f"127.0.0.1:{emulator_port}",
            "--runtime-api-address", f"127.0.0.1:{runtime_api_port}",
            str(self.python), "-m", "awslambdaric", self.handler,
        ]
        self._process = subprocess.Popen(
            command, cwd=self.task_root, env=self.environment, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
        threading.Thread(target=self._collect_output, daemon=True).start()
        self._invoke_url = f"http://127.0.0.1:{emulator_port}{INVOKE_PATH}"
        self._wait_until_listening(emulator_port)
        return self

    def stop(self) -> None:
        """Stop the emulator and the runtime it started (its own process group, which start() created)."""
        try:
            if self._process is not None and self._process.poll() is None:
                self._signal_group(signal.SIGTERM)
                try:
                    self._process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    self._process.wait(timeout=5)
        finally:
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self._process.pid, signum)
        except ProcessLookupError:
            pass

    def __enter__(self) -> "LambdaRuntime":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- invocation -----------------------------------------------------------------------------------------------

    def invoke(self, event: object) -> Invocation:
        """POST one event as Lambda's Invoke API would; returns the handler's answer and the REPORT that followed it."""
        with self._lines_changed:
            first_line = len(self.lines)
        request = urllib.request.Request(
            self._invoke_url, data=json.dumps(event).encode("utf-8"), method="POST",
            headers={"Content-Type": "application/json"},
        )
        started = time.perf_counter()
        with _DIRECT.open(request, timeout=self.timeout_s + 10) as answer:
            raw = answer.read()
        wall_ms = (time.perf_counter() - started) * 1000
        report_index = self._wait_for_line(first_line, REPORT_LINE)
        with self._lines_changed:
            lines = self.lines[first_line:report_index + 1]
        init_phase = next((INIT_REPORT_LINE.search(line) for line in lines if INIT_REPORT_LINE.search(line)), None)
        return Invocation(
            payload=json.loads(raw),
            report=Report.parse(lines[-1]),
            wall_ms=wall_ms,
            init_phase_ms=float(init_phase.group("ms")) if init_phase else None,
            logs=[line for line in lines
                  if not line.startswith(("START ", "END ", "REPORT ")) and "(rapid)" not in line],
        )

    def runtime_peak_rss_mb(self) -> float | None:
        """Peak RSS of the Python runtime process (the emulator's REPORT only echoes the memory size)."""
        if self._process is None:
            return None
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                text = status.read_text()
            except OSError:
                continue
            if re.search(rf"^PPid:\s+{self._process.pid}$", text, re.MULTILINE):
                peak = re.search(r"^VmHWM:\s+(\d+) kB", text, re.MULTILINE)
                return int(peak.group(1)) / 1024 if peak else None
        return None

    # -- output ---------------------------------------------------------------------------------------------------

    def _collect_output(self) -> None:
        for raw in self._process.stdout:
            with self._lines_changed:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self._lines_changed.notify_all()
        with self._lines_changed:
            self._lines_changed.notify_all()

    def _wait_for_line(self, start: int, pattern: re.Pattern) -> int:
        deadline = time.monotonic() + EMULATOR_WAIT_SECONDS
        with self._lines_changed:
            while True:
                for index in range(start, len(self.lines)):
                    if pattern.search(self.lines[index]):
                        return index
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._process.poll() is not None:
                    raise RuntimeError(f"no line matching {pattern.pattern!r}; emulator output:\n" + self.output())
                self._lines_changed.wait(remaining)

    def _wait_until_listening(self, port: int) -> None:
        deadline = time.monotonic() + EMULATOR_WAIT_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"the emulator did not listen on 127.0.0.1:{port}; output:\n" + self.output())

    def output(self) -> str:
        with self._lines_changed:
            return "\n".join(self.lines)
