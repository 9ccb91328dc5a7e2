"""Section 9: a soak. 10,000 mixed requests on one warm local server process; does anything grow?

`python -m function.devserver` with the SQLite result cache and INFO logs (one JSON line per request, read and
checked here), driven by CLIENTS keep-alive connections through the seeded mix of bench/soak_mix.py: computed
answers and cache hits on every route, client errors, and HTTP the server refuses itself. After a warm-up (every
model loaded, the memory LRU full), the server's RSS, open file descriptors, threads and the SQLite WAL are read
from /proc and the file system every SAMPLE_EVERY requests. Bounded: TIME_LIMIT_SECONDS at most, then it stops
and says how far it got. Alone: `.venv/bin/python -m bench.soak [--requests N] [--warmup N]` prints the section.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.paths import BUILD_DIR, MODELS_DIR
from bench.report import SectionResult, table, verdict
from bench.soak_mix import Mix, SoakRequest
from bench.stats import percentile
from kit.local_server import LocalServer

NUMBER = 9
TITLE = "Soak: 10,000 mixed requests on one warm local server"
REQUESTS = 10_000
WARMUP_REQUESTS = 3_000  # ~1,200 new inputs, more than the LRU's 1,024 entries: it is full before measuring starts
CLIENTS = 4
SAMPLE_EVERY = 1_000
TIME_LIMIT_SECONDS = 900
TARGET_GROWTH_MB = 5.0
MAX_BODY_BYTES = 200_000  # small, so the soak's over-the-limit bodies stay cheap to send
SOAK_DIR = BUILD_DIR / "soak"


@dataclass
class Sample:
    requests: int
    seconds: float
    rss_mb: float
    open_fds: int
    threads: int
    wal_kb: float
    db_kb: float


@dataclass
class Tally:
    statuses: Counter = field(default_factory=Counter)  # (kind, status) -> count
    unexpected: Counter = field(default_factory=Counter)  # (kind, expected, got) -> count
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)  # kind -> milliseconds
    handled: int = 0  # requests that reached the handler (each must log one line)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: SoakRequest, status: int, milliseconds: float) -> None:
        with self.lock:
            self.statuses[(request.kind, status)] += 1
            if status != request.expected_status:
                self.unexpected[(request.kind, request.expected_status, status)] += 1
            self.latencies_ms.setdefault(request.kind, []).append(milliseconds)
            self.handled += request.reaches_handler


class LogReader:
    """Reads the server's stdout to its end: one JSON object per line, or it counts as broken."""

    def __init__(self, stream) -> None:
        self.lines = 0
        self.broken: list[str] = []
        self.by_message: Counter = Counter()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines += 1
            try:
                self.by_message[json.loads(line)["message"]] += 1
            except (ValueError, KeyError, TypeError):
                self.broken.append(line[:200])

    def join(self) -> None:
        self._thread.join(timeout=30)


def _proc_status(pid: int, field_name: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"^{field_name}:\s+(\d+)", status, re.MULTILINE).group(1))


def take_sample(server: LocalServer, database: Path, requests: int, started: float) -> Sample:
    wal = database.with_name(database.name + "-wal")
    return Sample(
        requests=requests,
        seconds=time.perf_counter() - started,
        rss_mb=_proc_status(server.pid, "VmRSS") / 1024,
        open_fds=len(list(Path(f"/proc/{server.pid}/fd").iterdir())),
        threads=_proc_status(server.pid, "Threads"),
        wal_kb=wal.stat().st_size / 1024 if wal.exists() else 0.0,
        db_kb=database.stat().st_size / 1024 if database.exists() else 0.0,
    )


def send(connection: http.client.HTTPConnection, host: str, port: int, request: SoakRequest) -> int:
    """The status the server answered (0 if it answered nothing)."""
    if request.raw:  # framing the client library would never write: a raw socket, read to the server's close
        with socket.create_connection((host, port), timeout=30) as raw:
            raw.sendall(request.raw)
            received = b""
            while chunk := raw.recv(65536):
                received += chunk
        statuses = re.findall(rb"^HTTP/1\.1 (\d{3}) ", received, re.MULTILINE)
        return int(statuses[0]) if len(statuses) == 1 else 0  # two answers: the body ran as a request
    headers = {"Content-Type": request.content_type} if request.content_type else {}
    try:
        connection.request(request.method, request.path, body=request.body or None, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        connection.close()  # reopened by the next request
        return 0


def drive(server: LocalServer, mix: Mix, first_index: int, count: int, tally: Tally, deadline: float,
          on_done=None) -> int:
    """Send `count` requests of the mix over CLIENTS connections; returns how many were sent before `deadline`."""
    host, port = server.url.removeprefix("http://").split(":")
    schedule = mix.schedule(count)
    next_index = iter(range(count))
    index_lock = threading.Lock()
    sent = Counter()

    def client() -> None:
        connection = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            while time.monotonic() < deadline:
                with index_lock:
                    position = next(next_index, None)
                if position is None:
                    return
                request = mix.request(first_index + position, schedule[position])
                started = time.perf_counter()
                status = send(connection, host, int(port), request)
                tally.add(request, status, (time.perf_counter() - started) * 1000)
                with index_lock:
                    sent["done"] += 1
                    done = sent["done"]
                if on_done:
                    on_done(done)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent["done"]


def soak(requests: int = REQUESTS, warmup: int = WARMUP_REQUESTS) -> tuple[list[Sample], Tally, LogReader, dict]:
    shutil.rmtree(SOAK_DIR, ignore_errors=True)
    SOAK_DIR.mkdir(parents=True)
    database = SOAK_DIR / "results.sqlite3"
    environment = {**os.environ, "MODEL_DIR": str(MODELS_DIR), "RESULTS_CACHE": "sqlite",
                   "RESULTS_SQLITE_PATH": str(database), "LOG_LEVEL": "INFO", "MAX_BODY_BYTES": str(MAX_BODY_BYTES)}
    mix = Mix(MAX_BODY_BYTES)
    tally = Tally()
    samples: list[Sample] = []
    deadline = time.monotonic() + TIME_LIMIT_SECONDS
    with LocalServer(environment) as server:
        logs = LogReader(server.stdout)
        warmup_tally = Tally()
        drive(server, mix, 0, warmup, warmup_tally, deadline)
        started = time.perf_counter()
        samples.append(take_sample(server, database, 0, started))
        sample_lock = threading.Lock()

        def maybe_sample(done: int) -> None:
            if done % SAMPLE_EVERY == 0:
                with sample_lock:
                    samples.append(take_sample(server, database, done, started))

        sent = drive(server, mix, warmup, requests, tally, deadline, maybe_sample)
        if samples[-1].requests != sent:
            samples.append(take_sample(server, database, sent, started))
        peak_rss_mb = server.peak_rss_mb()
    logs.join()  # the server has exited: its stdout is at its end
    run = {"sent": sent, "warmup": warmup, "asked": requests, "seconds": samples[-1].seconds,
           "peak_rss_mb": peak_rss_mb, "timed_out": sent < requests,
           "handled": warmup_tally.handled + tally.handled}
    return samples, tally, logs, run


def render(samples: list[Sample], tally: Tally, logs: LogReader, run: dict) -> tuple[str, list[str]]:
    first, last = samples[0], samples[-1]
    growth = last.rss_mb - first.rss_mb
    highest = max(sample.rss_mb for sample in samples)
    server_errors = sum(count for (kind, status), count in tally.statuses.items() if status >= 500)
    unanswered = sum(count for (kind, status), count in tally.statuses.items() if status == 0)
    latencies = [ms for per_kind in tally.latencies_ms.values() for ms in per_kind]
    summary = table(["figure", "value"], [
        ["requests after warm-up (asked)", f"{run['sent']:,} ({run['asked']:,}), after {run['warmup']:,} warm-up"],
        ["time, throughput", f"{run['seconds']:.0f} s, {run['sent'] / run['seconds']:.0f} requests/s over "
                             f"{CLIENTS} keep-alive connections"],
        ["latency p50 / p99 / max", f"{percentile(latencies, 0.5):.1f} / {percentile(latencies, 0.99):.1f} / "
                                    f"{max(latencies):.0f} ms"],
        ["**RSS growth after warm-up**", f"**{growth:+.1f} MB** ({first.rss_mb:.1f} -> {last.rss_mb:.1f} MB, "
                                         f"highest sample {highest:.1f} MB, peak VmHWM {run['peak_rss_mb']:.1f} MB)"],
        ["open file descriptors", f"{first.open_fds} -> {last.open_fds} (max {max(s.open_fds for s in samples)})"],
        ["threads", f"{first.threads} -> {last.threads} (max {max(s.threads for s in samples)})"],
        ["SQLite WAL", f"{first.wal_kb:,.0f} -> {last.wal_kb:,.0f} KB (max {max(s.wal_kb for s in samples):,.0f}); "
                       f"database {last.db_kb:,.0f} KB"],
        ["answers >= 500 / unanswered / other than expected",
         f"{server_errors} / {unanswered} / {sum(tally.unexpected.values())}"],
        ["log lines, warm-up included",
         f"{logs.lines:,} for {run['handled']:,} requests that reached the handler; {len(logs.broken)} not one "
         "JSON object; by message: "
         + ", ".join(f"{message} {count:,}" for message, count in logs.by_message.most_common())],
    ])
    mix_rows = []
    for (kind, status), count in sorted(tally.statuses.items()):
        times = tally.latencies_ms[kind]
        mix_rows.append([kind, str(status), f"{count:,}", f"{percentile(times, 0.5):.1f}",
                         f"{percentile(times, 0.99):.1f}", f"{max(times):.0f}"])
    sample_rows = [[f"{s.requests:,}", f"{s.seconds:.0f}", f"{s.rss_mb:.1f}", str(s.open_fds), str(s.threads),
                    f"{s.wal_kb:,.0f}", f"{s.db_kb:,.0f}"] for s in samples]
    markdown = "\n".join([
        f"One `python -m function.devserver` process (SQLite result cache, INFO logs read and parsed line by line, "
        f"`MAX_BODY_BYTES={MAX_BODY_BYTES}`), {CLIENTS} keep-alive client threads, the seeded mix of "
        "bench/soak_mix.py. Figures are read from /proc/<pid> (VmRSS, fd/, Threads) and the file system after "
        f"{run['warmup']:,} warm-up requests, then every {SAMPLE_EVERY:,}. `python -m bench.soak` runs it alone."
        + (f" **Stopped by its {TIME_LIMIT_SECONDS} s time limit.**" if run["timed_out"] else ""),
        "",
        summary,
        "",
        "Samples (requests after warm-up):",
        "",
        table(["requests", "s", "RSS MB", "open fds", "threads", "WAL KB", "database KB"], sample_rows),
        "",
        "The mix as answered, with each kind's latency as the client saw it:",
        "",
        table(["kind", "status", "requests", "p50 ms", "p99 ms", "max ms"], mix_rows),
    ])
    if tally.unexpected:
        markdown += "\n\nUnexpected answers: " + ", ".join(
            f"{kind}: expected {expected}, got {got} x{count}"
            for (kind, expected, got), count in tally.unexpected.items())
    one_line_each = logs.lines == run["handled"] and not logs.broken
    verdicts = [verdict(growth < TARGET_GROWTH_MB and not server_errors and one_line_each,
                        f"soak (issue 11): RSS {growth:+.1f} MB over {run['sent']:,} requests after warm-up "
                        f"(target < {TARGET_GROWTH_MB:g} MB), {server_errors} answers >= 500, "
                        f"{logs.lines:,} log lines for {run['handled']:,} handled requests, "
                        f"{len(logs.broken)} broken")]
    return markdown, verdicts


def run(context=None) -> SectionResult:
    started = time.perf_counter()
    markdown, verdicts = render(*soak())
    return SectionResult(NUMBER, TITLE, markdown, verdicts, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=REQUESTS, help=f"after warm-up (default {REQUESTS:,})")
    parser.add_argument("--warmup", type=int, default=WARMUP_REQUESTS, help=f"default {WARMUP_REQUESTS:,}")
    args = parser.parse_args(argv)
    markdown, verdicts = render(*soak(args.requests, args.warmup))
    print(markdown)
    print()
    print("\n".join(f"- {line}" for line in verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
