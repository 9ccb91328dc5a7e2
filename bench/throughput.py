"""Section 6: throughput of the local server on one core under a bounded concurrent load from wrk.

The server (`python -m function.devserver`) is pinned to core 0 with taskset and wrk to core 1, so the load tool never
takes the server's CPU. Every request computes (RESULTS_CACHE=off) except in the one row that shows cache hits.
Each wrk run is bounded by duration and a 10 s request timeout; the server is stopped by PID afterwards.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass

from bench import inputs
from bench.paths import BUILD_DIR, MODELS_DIR, REPO_ROOT
from bench.report import SectionResult, table
from kit.local_server import LocalServer

NUMBER = 6
TITLE = "Throughput: local server on one core under wrk"
CONCURRENCY = (4, 16)
SERVER_CPU = "0"
LOAD_CPU = "1"
LUA_SCRIPT = REPO_ROOT / "bench" / "wrk_post.lua"
KEEP_ALIVE_PROBES = 20
STALL_MS = 20  # far above any route's own cost on /health, far below the 40 ms delayed-ACK timer


@dataclass(frozen=True)
class LoadResult:
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    socket_errors: str  # wrk's "connect/read/write/timeout" counts, "0" when it reported none


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(output: str) -> LoadResult:
    def latency(percent: str) -> float:
        match = re.search(rf"^\s+{percent}%\s+([\d.]+)(us|ms|s|m)\s*$", output, re.MULTILINE)
        return _ms(*match.groups())

    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = "0"
    if errors and any(int(n) for n in errors.groups()):
        socket_errors = ", ".join(f"{kind} {n}" for kind, n in zip(("connect", "read", "write", "timeout"),
                                                                   errors.groups()) if int(n))
    return LoadResult(
        requests_per_second=float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        p50_ms=latency("50"),
        p99_ms=latency("99"),
        requests=int(re.search(r"(\d+) requests in", output).group(1)),
        non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=socket_errors,
    )


def load(url: str, body_file, connections: int, seconds: int) -> LoadResult:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency",
               "-s", str(LUA_SCRIPT), url]
    if shutil.which("taskset") and (os.cpu_count() or 1) > 1:  # on one core, wrk shares it with the server
        command = ["taskset", "-c", LOAD_CPU, *command]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=seconds + 30,
                          env={"WRK_BODY_FILE": str(body_file), "PATH": "/usr/local/bin:/usr/bin:/bin"})
    return parse_wrk(done.stdout)


def keep_alive_latency_ms(url: str, requests: int = KEEP_ALIVE_PROBES) -> float:
    """Median of sequential GET /health on one keep-alive connection: the server's per-response floor."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    samples = []
    try:
        for _ in range(requests):
            started = time.perf_counter()
            connection.request("GET", "/health")
            connection.getresponse().read()
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        connection.close()
    return statistics.median(samples)


def body_file(route: str):
    path = BUILD_DIR / "bodies" / f"{route.strip('/')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(inputs.ROUTE_BODIES[route]()))
    return path


def run(context) -> SectionResult:
    started = time.perf_counter()
    if shutil.which("wrk") is None:
        raise RuntimeError("wrk is not installed (bench/setup.sh installs the Debian package when root)")
    rows = []
    plan = [(route, connections, "off") for route in inputs.ROUTE_BODIES for connections in CONCURRENCY]
    plan.append(("/classify", CONCURRENCY[-1], "memory"))
    peaks = {}
    floor_ms = None
    for cache in ("off", "memory"):
        environment = {**os.environ, "MODEL_DIR": str(MODELS_DIR), "LOG_LEVEL": "WARNING", "RESULTS_CACHE": cache}
        with LocalServer(environment, cpus=SERVER_CPU) as server:
            if floor_ms is None:
                floor_ms = keep_alive_latency_ms(server.url)
            for route, connections, _ in [step for step in plan if step[2] == cache]:
                body = body_file(route)
                load(server.url + route, body, connections, 1)  # warm-up: loads the model, fills the cache
                result = load(server.url + route, body, connections, context.load_seconds)
                label = "off (every request computes)" if cache == "off" else "memory LRU (every request a hit)"
                rows.append([f"`POST {route}`", str(connections), label, f"**{result.requests_per_second:.1f}**",
                             f"{result.p50_ms:.1f}", f"{result.p99_ms:.1f}", str(result.requests),
                             str(result.non_2xx), result.socket_errors])
            peaks[cache] = server.peak_rss_mb()
    markdown = "\n".join([
        f"wrk 4.1 (Debian), one thread, {context.load_seconds} s per row after a 1 s warm-up, POSTing the same "
        "body each time (bench/wrk_post.lua); the server pinned to one core (`taskset -c 0`), wrk to the other. "
        "Requests/s over the whole run; p50/p99 from wrk's latency distribution; socket errors as wrk counts them "
        "(a read error is a connection the server closed without an answer). "
        "Inputs: the cat JPEG (base64 JSON) for /classify, a review sentence for /sentiment and /tokenize.",
        "",
        table(["route", "connections", "result cache", "requests/s", "p50 ms", "p99 ms", "requests", "non-2xx",
               "socket errors"], rows),
        "",
        f"Server peak RSS (VmHWM) after its runs: {peaks['off']:.0f} MB with the cache off, "
        f"{peaks['memory']:.0f} MB with the memory cache.",
        "",
        f"Per-response floor: {KEEP_ALIVE_PROBES} sequential `GET /health` on one keep-alive connection (Python's "
        f"http.client), median **{floor_ms:.1f} ms**.",
    ])
    if floor_ms > STALL_MS:
        markdown += (" A route that computes nothing should answer in well under a millisecond: a ~40 ms floor is "
                     "the signature of Nagle's algorithm meeting the client's delayed ACK (the response leaves in "
                     "two small writes, headers then body, without TCP_NODELAY), so under keep-alive load every "
                     "figure above carries it.")
    return SectionResult(NUMBER, TITLE, markdown, [], time.perf_counter() - started)
