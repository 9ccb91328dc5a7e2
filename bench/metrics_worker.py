"""Runs inside the function's own venv (requirements.txt alone): warm requests with the metrics block off and on,
alternating request by request in one process, so background load falls on both alike.

`python -m bench.metrics_worker PLAN.json OUT.json SECONDS_PER_ROUTE`, with MODEL_DIR and RESULTS_CACHE set and the
function's task root first on PYTHONPATH. PLAN.json (written by bench/metrics_overhead.py) holds, per route, the
API Gateway event. Two Services share one model registry and one result store and differ only in
METRICS_ENABLED; each pair of calls swaps which goes first. Writes {route: {"off_ms": [...], "on_ms": [...],
"line_bytes": {"off": n, "on": n}, "writer_us": x}} to OUT.json (stdout carries the function's log lines).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

WARMUP_PAIRS = 10
MIN_PAIRS, MAX_PAIRS = 100, 3000
WRITER_CALLS = 2000


class LastLine(logging.Handler):
    """Keeps the last record as the function's formatter writes it: the line's size in bytes."""

    def __init__(self, formatter: logging.Formatter) -> None:
        super().__init__()
        self.setFormatter(formatter)
        self.line = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.line = self.format(record)


def services() -> dict:
    from function.cache.factory import open_result_store  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.catalog.configured_source import open_model_source  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.catalog.registry import ModelRegistry  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.config import CacheSettings, Env, ServiceSettings  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.log import configure  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.service import Service  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)

    configure("INFO")  # the handler function.app installs: one JSON line per request on stdout
    settings = {state: ServiceSettings.from_env({**os.environ, Env.METRICS_ENABLED: str(state == "on").lower()})
                for state in ("off", "on")}
    store = open_result_store(CacheSettings.from_env())
    registry = ModelRegistry(open_model_source(settings["off"]), settings["off"].task_limits())
    return {state: Service(value, store, registry) for state, value in settings.items()}


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def line_bytes(service, event: dict) -> int:
    from function.entry import handle_event  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.log import LOGGER_NAME, JsonLineFormatter  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)

    logger = logging.getLogger(LOGGER_NAME)
    capture = LastLine(JsonLineFormatter())
    logger.addHandler(capture)
    try:
        handle_event(service, event, None)
    finally:
        logger.removeHandler(capture)
    return len(capture.line.encode())


def writer_us(service, event: dict) -> float:
    """The writer alone (function.metrics.metric_fields) on this route's own log fields, in microseconds."""
    from function.entry import handle_event  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.log import LOGGER_NAME  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)
    from function.metrics import metric_fields  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)

    fields: dict = {}

    class Fields(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            fields.update(record.fields)

    logger = logging.getLogger(LOGGER_NAME)
    capture = Fields()
    logger.addHandler(capture)
    try:
        handle_event(service, event, None)
    finally:
        logger.removeHandler(capture)
    plain = {key: value for key, value in fields.items() if key != "_aws"}
    settings = service.settings.metrics
    started = time.perf_counter()
    for _ in range(WRITER_CALLS):
        metric_fields(plain, settings)
    return (time.perf_counter() - started) * 1e6 / WRITER_CALLS


def main(plan_file: str, out: str, seconds: float) -> None:
    from function.entry import handle_event  # noqa: PLC0415  (the function's modules, from the task root the worker is started with)

    plan = json.loads(Path(plan_file).read_text())
    by_state = services()
    results = {}
    for route, event in plan.items():
        calls = {state: (lambda service=service: handle_event(service, event, None))
                 for state, service in by_state.items()}
        for _ in range(WARMUP_PAIRS):
            for state, call in calls.items():
                answer = call()
                if answer["statusCode"] != 200:
                    raise RuntimeError(f"{route} ({state}) answered {answer['statusCode']}: {answer['body'][:300]}")
        samples: dict[str, list[float]] = {"off": [], "on": []}
        deadline = time.perf_counter() + seconds
        pair = 0
        while pair < MAX_PAIRS and (pair < MIN_PAIRS or time.perf_counter() < deadline):
            order = ("off", "on") if pair % 2 == 0 else ("on", "off")
            for state in order:
                samples[state].append(timed(calls[state]))
            pair += 1
        results[route] = {"off_ms": samples["off"], "on_ms": samples["on"],
                          "line_bytes": {state: line_bytes(service, event) for state, service in by_state.items()},
                          "writer_us": writer_us(by_state["on"], event)}
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
