"""What the function adds to a warm request over its floor, call by call in this process: the paired micro-benchmark.

`python -m bench.warm_pairs [--routes predict,infer] [--calls 2000] [--model-dir models]` (in the Lambda venv:
`PYTHONPATH=. build/lambda-runtime/venv/bin/python -m bench.warm_pairs`, any route but classify). The handler
(`function.app.handler`, RESULTS_CACHE=off, its log lines to /dev/null as Lambda's stdout would take them) and
section 17's floor (bench/baselines/route_answers.py on the function's own signature runner) alternate on the same
API Gateway event; prints each one's p50 and the median of the differences (a handler call minus the floor call
right after it), in microseconds. Section 17 measures the same pairs in fresh processes of the Lambda venv; this
one is quick enough to measure one change to the request path at a time.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench import inputs
from bench.stdout_aside import stdout_aside
from kit.events import http_api_event

REPO = Path(__file__).resolve().parent.parent
WARMUP = 50


def route_events() -> dict[str, Callable[[], tuple[str, dict]]]:
    """Section 17's routes: name -> () -> (model, API Gateway v2 event), built only when chosen (the photo needs
    scikit-image, which the Lambda venv lacks)."""
    event, short = partial(http_api_event, "POST"), inputs.EMBED_SHORT_SENTENCE
    return {
        "classify": lambda: ("efficientnet_lite0", event("/classify", inputs.classify_body("efficientnet_lite0"))),
        "sentiment": lambda: ("sentiment", event("/sentiment", {**inputs.sentiment_body(), "model": "sentiment"})),
        "embed": lambda: (inputs.EMBEDDING_MODEL, event("/embed", inputs.embed_body([short]))),
        "embeddings": lambda: (inputs.EMBEDDING_MODEL, event("/v1/embeddings", {"input": short, "model": "minilm"})),
        "predict": lambda: ("tabular", event("/v1/models/tabular:predict", {"instances": [inputs.TABULAR_ROW]})),
        "infer": lambda: ("tabular", event("/v2/models/tabular/infer", inputs.tabular_v2_body())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routes", default="sentiment,embed,embeddings,predict,infer",
                        help=f"comma-separated, of: {', '.join(route_events())}")
    parser.add_argument("--calls", type=int, default=2000, help="timed pairs per route")
    parser.add_argument("--model-dir", type=Path, default=REPO / "models")
    args = parser.parse_args()
    events = route_events()
    chosen = [name for name in args.routes.split(",") if name]
    unknown = [name for name in chosen if name not in events]
    if unknown:
        raise SystemExit(f"error: unknown route(s) {unknown}; choose from {list(events)}")
    os.environ.update(MODEL_DIR=str(args.model_dir.resolve()), RESULTS_CACHE="off")
    table = stdout_aside()
    from bench.baselines.route_answers import answer  # noqa: PLC0415  (after MODEL_DIR and RESULTS_CACHE are set)
    from bench.raw_pipeline import RawModel  # noqa: PLC0415  (after MODEL_DIR and RESULTS_CACHE are set)
    from function.app import SERVICE, handler  # noqa: PLC0415  (after MODEL_DIR and RESULTS_CACHE are set)

    clock = time.perf_counter
    table.write("| route | handler p50 us | floor p50 us | added us (paired median) |\n|---|---|---|---|\n")
    for name in chosen:
        model, event = events[name]()
        floor = RawModel(args.model_dir / model, SERVICE.registry.task(model).runner()._signature)  # noqa: SLF001
        for _ in range(WARMUP):
            if handler(event, None)["statusCode"] != 200:
                raise SystemExit(f"error: {name} answered {json.dumps(handler(event, None))[:300]}")
            answer(floor, event)
        handler_us, floor_us = [], []
        for _ in range(args.calls):
            started = clock()
            handler(event, None)
            middle = clock()
            answer(floor, event)
            handler_us.append((middle - started) * 1e6)
            floor_us.append((clock() - middle) * 1e6)
        added = statistics.median(h - f for h, f in zip(handler_us, floor_us))
        table.write(f"| {name} | {statistics.median(handler_us):.1f} | {statistics.median(floor_us):.1f} | "
                    f"{added:+.1f} |\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
