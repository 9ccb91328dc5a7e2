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


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def raw_calls(plan: dict, model_dir: Path) -> dict:
    image_model = RawModel(model_dir / plan["/classify"]["model"])
    text_model = RawModel(model_dir / plan["/sentiment"]["model"])
    photo = base64.b64decode(plan["/classify"]["raw_input"])
    sentence, words = plan["/sentiment"]["raw_input"], plan["/tokenize"]["raw_input"]
    return {
        "/classify": lambda: image_model.classify_image(photo),
        "/sentiment": lambda: text_model.classify_text(sentence),
        "/tokenize": lambda: text_model.tokenize(words),
    }


def main(plan_file: str, out: str, requests: int) -> None:
    from function.app import handler  # the Lambda entry point, exactly as awslambdaric imports it

    plan = json.loads(Path(plan_file).read_text())
    raws = raw_calls(plan, Path(os.environ["MODEL_DIR"]))
    results = {}
    for route, raw in raws.items():
        event = plan[route]["event"]
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
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
