"""Runs inside the function's own venv (requirements.txt alone): times warm handler calls against the raw floor.

`python -m bench.warm_worker PLAN.json OUT.json REQUESTS`, with MODEL_DIR set and the function's task root first on
PYTHONPATH. PLAN.json (written by bench/warm_latency.py) holds, per route, the API Gateway event and the raw
input. Handler and raw calls alternate request by request, so background load on the machine falls on both alike.
Writes {route: {"handler_ms": [...], "raw_ms": [...]}} to OUT.json (stdout carries the function's log lines).
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

from bench.raw_pipeline import RawModel

WARMUP_REQUESTS = 10
PROFILED_REQUESTS = 100
PROFILE_ROWS = 10


def _short_path(file: str) -> str:
    """A profile entry's file without this machine's prefix: package-relative, task-root-relative or stdlib."""
    import function  # noqa: PLC0415  (the function from the task root the worker is started with)

    task_root = str(Path(function.__file__).resolve().parent.parent) + "/"
    if file == "~":  # built-ins
        return ""
    if "site-packages/" in file:
        return file.split("site-packages/")[-1]
    if file.startswith(task_root):
        return file[len(task_root):]
    return "stdlib " + file.rsplit("/lib/python", 1)[-1].split("/", 1)[-1]


def profile(handler, event: dict) -> list[tuple[str, float]]:
    """cProfile of warm handler calls: the functions with the most own time, in ms per request."""
    import cProfile  # noqa: PLC0415  (only when profiling)
    import pstats  # noqa: PLC0415  (only when profiling)

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(PROFILED_REQUESTS):
        handler(event, None)
    profiler.disable()
    rows = []
    for (file, line, name), (_, _, own, _, _) in pstats.Stats(profiler).stats.items():
        where = _short_path(file)
        rows.append((f"{where}:{line}({name})" if where else name, own * 1000 / PROFILED_REQUESTS))
    return sorted(rows, key=lambda row: row[1], reverse=True)[:PROFILE_ROWS]


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def raw_call(route: str, step: dict, model_dir: Path):
    """The raw floor for one route of the plan, on the same input the handler gets."""
    model = RawModel(model_dir / step["model"])
    if route == "/classify":
        photo = base64.b64decode(step["raw_input"])
        return lambda: model.classify_image(photo)
    if route == "/sentiment":
        return lambda: model.classify_text(step["raw_input"])
    return lambda: model.tokenize(step["raw_input"])


def main(plan_file: str, out: str, requests: int) -> None:
    from function.app import handler  # noqa: PLC0415  (the function from the task root the worker is started with; the Lambda entry point, exactly as awslambdaric imports it)

    plan = json.loads(Path(plan_file).read_text())
    results = {}
    for route, step in plan.items():
        raw = raw_call(route, step, Path(os.environ["MODEL_DIR"]))
        event = step["event"]
        for _ in range(WARMUP_REQUESTS):
            answer = handler(event, None)
            if answer["statusCode"] != 200:
                raise RuntimeError(f"{route} answered {answer['statusCode']}: {answer['body'][:300]}")
            raw()
        handler_ms, raw_ms = [], []
        for _ in range(requests):
            handler_ms.append(timed(lambda: handler(event, None)))
            raw_ms.append(timed(raw))
        results[route] = {"handler_ms": handler_ms, "raw_ms": raw_ms}
        if route == "/classify":
            results[route]["profile"] = profile(handler, event)
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
