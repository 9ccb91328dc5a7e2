"""Section 2: warm latency per route, next to the raw decode + invoke floor: the overhead our code adds.

The handler is called in-process (no HTTP, no emulator: those are not our code) inside the function's own venv
and task root, by bench/warm_worker.py, alternating with bench/raw_pipeline.py on the same input. The result
cache is off so every request computes.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import inputs, lambda_runtimes
from bench.paths import BUILD_DIR, MODELS_DIR, REPO_ROOT
from bench.report import SectionResult, table, verdict
from bench.stats import percentile
from kit.events import http_api_event
from kit.photos import cat_jpeg

NUMBER = 2
TITLE = "Warm latency per route vs raw decode + invoke"
TARGET_OVERHEAD = 0.15
SPLIT_RUNS = 40
IMAGE_MODEL = "efficientnet_lite0"
TEXT_MODEL = "sentiment"


def write_plan(path: Path, model_dir: Path) -> None:
    """Per route: the event, the model, and the raw input; routes whose demo model is not built are left out."""
    plan = {
        "/classify": {"model": IMAGE_MODEL,
                      "event": http_api_event("POST", "/classify", inputs.classify_body()),
                      "raw_input": base64.b64encode(cat_jpeg()).decode("ascii")},
        "/sentiment": {"model": TEXT_MODEL, "event": http_api_event("POST", "/sentiment", inputs.sentiment_body()),
                       "raw_input": inputs.sentiment_body()["text"]},
        "/tokenize": {"model": TEXT_MODEL, "event": http_api_event("POST", "/tokenize", inputs.tokenize_body()),
                      "raw_input": inputs.tokenize_body()["text"]},
    }
    available = {route: step for route, step in plan.items() if (model_dir / step["model"] / "manifest.json").exists()}
    path.write_text(json.dumps(available))


def measure(requests: int) -> dict:
    function = lambda_runtimes.function_configuration()
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    plan, out = BUILD_DIR / "warm-plan.json", BUILD_DIR / "warm-results.json"
    write_plan(plan, function.task_root / "models")
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        environment = {
            "PATH": f"{function.venv.python.parent}:/usr/bin:/bin",
            "PYTHONPATH": f"{function.task_root}{os.pathsep}{REPO_ROOT}",
            "MODEL_DIR": str(function.task_root / "models"),
            "RESULTS_CACHE": "off",
            "TMPDIR": tmp,
            "LANG": "C.UTF-8",
        }
        subprocess.run([str(function.venv.python), "-m", "bench.warm_worker", str(plan), str(out), str(requests)],
                       env=environment, cwd=tmp, stdout=subprocess.DEVNULL, check=True, timeout=600)
    return json.loads(out.read_text())


def stage_split(model_dir: Path) -> str:
    """The function engineer's own per-stage split of a warm /classify (bench/warm_split.py), as it prints it."""
    done = subprocess.run([sys.executable, "-m", "bench.warm_split", "--runs", str(SPLIT_RUNS),
                           "--model-dir", str(model_dir)],
                          cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=600)
    return done.stdout.strip()


def run(context) -> SectionResult:
    started = time.perf_counter()
    results = measure(context.warm_requests)
    rows = []
    overheads = {}
    profile_rows = results.get("/classify", {}).get("profile", [])
    for route, samples in results.items():
        handler, raw = samples["handler_ms"], samples["raw_ms"]
        overhead = percentile(handler, 0.5) / percentile(raw, 0.5) - 1
        overheads[route] = overhead
        rows.append([f"`POST {route}`", f"{percentile(handler, 0.5):.2f}", f"{percentile(handler, 0.99):.2f}",
                     f"{percentile(raw, 0.5):.2f}", f"{percentile(raw, 0.99):.2f}",
                     f"{percentile(handler, 0.5) - percentile(raw, 0.5):+.2f} ms", f"**{overhead:+.0%}**"])
    markdown = "\n".join([
        f"{context.warm_requests} timed requests per route after 10 untimed, in one process of the function's own "
        "venv (requirements.txt alone) and task root; handler calls (`function.app.handler(event, None)` with an "
        "API Gateway v2 event, result cache off) alternate one by one with the raw floor on the same input "
        "(bench/raw_pipeline.py: JPEG bytes -> Pillow decode, orient, RGB, bilinear resize, normalize -> LiteRT "
        "signature runner, 1 thread; text -> tokenizers -> LiteRT). Nearest-rank p50/p99 in ms. "
        "The overhead is everything the handler does beyond the floor: event parsing, base64, validation, "
        "routing, top-k, the response JSON and the structured log line.",
        "",
        table(["route", "handler p50 ms", "handler p99 ms", "raw p50 ms", "raw p99 ms", "added (p50)",
               "overhead (p50)"], rows),
    ])
    if profile_rows:
        markdown += "\n\n" + "\n".join([
            "Where a warm /classify's time goes (cProfile of 100 more handler calls in the same process, own time "
            "per request, top 10; the interpreter's Invoke and Pillow's decode/resize are the floor, the rest is "
            "ours):",
            "",
            table(["function", "own time per request"], [[f"`{name}`", f"{ms:.3f} ms"] for name, ms in profile_rows]),
        ])
    markdown += "\n\n" + "\n".join([
        f"The function's own stage timings of a warm /classify (`python -m bench.warm_split --runs {SPLIT_RUNS}`, "
        "dev venv, medians; its `own code` is the handler's total minus decode, preprocess and invoke):",
        "",
        "```",
        stage_split(MODELS_DIR),
        "```",
    ])
    classify = overheads["/classify"]
    verdicts = [verdict(classify <= TARGET_OVERHEAD,
                        f"warm /classify on EfficientNet-Lite0 adds {classify:+.0%} over decode + invoke at p50 "
                        f"(target <= {TARGET_OVERHEAD:.0%})")]
    return SectionResult(NUMBER, TITLE, markdown, verdicts, time.perf_counter() - started)
