"""Runs inside the Lambda venv for one revision's task root: warm handler calls on request, timed beside their floor.

`python -m bench.revision_worker PLAN.json`, with that revision's task root first on PYTHONPATH (so `function` is
the revision's) and MODEL_DIR set. Only `function.app.handler` is imported from the function: the one entry point
every revision keeps, whatever its module layout. PLAN.json (bench/compare_revisions.py) holds, per route, the
API Gateway event and the floor's input. The driver then sends one JSON line per batch on stdin,
{"route": ..., "requests": N}, and reads one line back, {"handler_ms": [...], "floor_ms": [...]}: handler and floor
calls alternate request by request. A step may set "warmup" (untimed calls before the first batch, default 10) and
"keep_answer" (the ready line then carries that route's last handler and floor answer bodies, for a floor of kind
"event"). The function's own log lines go to /dev/null, so stdout carries only answers.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

from bench.stdout_aside import stdout_aside

WARMUP_REQUESTS = 10


def _floor(step: dict, model_dir: Path):
    """The same input through the libraries alone (bench/raw_pipeline.py, or the bare signature runner)."""
    floor = step.get("floor")
    if floor is None:
        return None
    import numpy as np  # noqa: PLC0415  (only a step with a floor needs it)

    from bench.raw_pipeline import RawModel  # noqa: PLC0415  (only a step with a floor needs it)

    model = RawModel(model_dir / step["model"], _shared_runner(step["model"]) if floor.get("shared_engine") else None)
    if floor["kind"] == "event":  # the whole floor: the same event in, its answer JSON out
        from bench.baselines.route_answers import answer  # noqa: PLC0415  (only an event floor needs it)

        return lambda: answer(model, step["event"])
    if floor["kind"] == "image":
        photo = base64.b64decode(floor["input"])
        return lambda: model.classify_image(photo)
    if floor["kind"] == "text":
        return lambda: model.classify_text(floor["input"])
    arrays = {name: np.asarray(values, dtype=floor["dtypes"][name]) for name, values in floor["input"].items()}
    return lambda: model.invoke(arrays)


def _shared_runner(model: str):
    """The function's own signature runner of `model`: a floor that calls it shares the function's interpreter, so
    the two take turns on one copy of the weights, as a Lambda holds one (two copies evict each other's from the
    CPU's caches, which doubled minilm's latency for both). Only the current layout has it (section 17)."""
    from function.app import SERVICE  # noqa: PLC0415  (the revision's own modules, from the task root the worker is started with)

    return SERVICE.registry.task(model).runner()._signature  # noqa: SLF001  (the engine itself, nothing around it)


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main(plan_file: str) -> None:
    answers = stdout_aside()
    from function.app import handler  # noqa: PLC0415  (the revision's own modules, from the task root the worker is started with; the Lambda entry point, exactly as awslambdaric imports it)

    plan = json.loads(Path(plan_file).read_text())
    model_dir = Path(os.environ["MODEL_DIR"])
    floors = {route: _floor(step, model_dir) for route, step in plan.items()}
    kept = {}
    for route, step in plan.items():
        for _ in range(step.get("warmup", WARMUP_REQUESTS)):
            answer = handler(step["event"], None)
            if answer["statusCode"] != 200:
                raise RuntimeError(f"{route} answered {answer['statusCode']}: {answer['body'][:300]}")
            floor_answer = floors[route]() if floors[route] else None
        if step.get("keep_answer"):  # the last warm-up's bodies, for the driver to check the answers
            kept[route] = {"handler": json.loads(answer["body"]), "floor": json.loads(floor_answer["body"])}
    answers.write(json.dumps({"ready": True, "answers": kept}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        event, floor = plan[request["route"]]["event"], floors[request["route"]]
        handler_ms, floor_ms = [], []
        for _ in range(request["requests"]):
            handler_ms.append(_timed(lambda: handler(event, None)))
            if floor:
                floor_ms.append(_timed(floor))
        answers.write(json.dumps({"handler_ms": handler_ms, "floor_ms": floor_ms}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
