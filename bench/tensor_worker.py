"""Runs inside the function's own venv: warm tensor-protocol handler calls against the raw interpreter call.

`python -m bench.tensor_worker PLAN.json OUT.json`, with MODEL_DIR set and the function's task root first on
PYTHONPATH. Per case of the plan (written by bench/tensor_latency.py): the API Gateway event, the model, the
number of timed requests and an .npz of the same inputs as typed arrays. The raw floor is the model's LiteRT
signature runner called on those arrays; handler and raw calls alternate request by request. The handler's own
`parse` stage (JSON text to typed arrays) is kept from its log line. Writes
{case: {"handler_ms": [...], "raw_ms": [...], "parse_ms": [...]}} to OUT.json.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

from bench.warm_split import StageCapture

WARMUP_REQUESTS = 5


def raw_runner(model_dir: Path, inputs_file: str):
    from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415  (the function's venv, set before the worker runs)

    manifest = json.loads((model_dir / "manifest.json").read_text())
    runner = Interpreter(model_path=str(model_dir / manifest["model_file"]), num_threads=1).get_signature_runner(
        manifest.get("signature", "serving_default"))
    inputs = dict(np.load(inputs_file))
    return lambda: runner(**inputs)


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main(plan_file: str, out: str) -> None:
    from function.app import handler  # noqa: PLC0415  (the function's venv, set before the worker runs; the Lambda entry point, exactly as awslambdaric imports it)

    logger = logging.getLogger("function")
    capture = StageCapture()
    logger.addHandler(capture)
    plan = json.loads(Path(plan_file).read_text())
    results = {}
    for case, step in plan.items():
        raw = raw_runner(Path(os.environ["MODEL_DIR"]) / step["model"], step["inputs"])
        event = step["event"]
        for _ in range(WARMUP_REQUESTS):
            answer = handler(event, None)
            if answer["statusCode"] != 200:
                raise RuntimeError(f"{case} answered {answer['statusCode']}: {answer['body'][:300]}")
            raw()
        capture.timings.clear()
        handler_ms, raw_ms = [], []
        for _ in range(step["requests"]):
            handler_ms.append(timed(lambda: handler(event, None)))
            raw_ms.append(timed(raw))
        results[case] = {"handler_ms": handler_ms, "raw_ms": raw_ms,
                         "parse_ms": [timings.get("parse", 0.0) for timings in capture.timings]}
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
