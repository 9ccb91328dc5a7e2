"""Section 16: what the first invoke of each model pays beyond a warm one, and what the SnapStart warm-up moves.

Per model, in a fresh process of the Lambda runtime's Python (the pruned venv): the runner's creation (importing
LiteRT, allocating the tensors at the model's saved shapes, which is when XNNPACK packs the weights), its first call
(sizing the graph for the call's shapes, first touches of the arena) and the median of warm calls, with the zero
inputs ModelRunner.warm_up sends. A big model, or a container's only one, is created at init; the others in their
first request. With SnapStart the before-snapshot hook makes the first call too (function/snapstart.py), so a
restored copy's first request pays the warm figure. ai_edge_litert 2.3's Interpreter takes no XNNPACK weight-cache
file (only its CompiledModel API's CpuOptions does, docs/deploy.md says why the function does not use it yet).
"""
from __future__ import annotations

import json
import subprocess

from bench.report import SectionResult, table
from kit.lambda_runtime import REPO_ROOT, RUNTIME_PYTHON

NUMBER = 16
TITLE = "First invoke after a cold start, per model"
MODELS = ("digits", "efficientnet_lite0", "minilm", "sentiment", "tabular")
RUNS = 3

WORKER = """
import json, statistics, sys, time
import numpy as np
from function.model.manifest import load_manifest
from function.model.runner import ModelRunner
manifest = load_manifest(__import__("pathlib").Path(sys.argv[1]))
t0 = time.perf_counter(); runner = ModelRunner(manifest); t1 = time.perf_counter()
runner.warm_up(); t2 = time.perf_counter()
warm = []
for _ in range(20):
    s = time.perf_counter(); runner.warm_up(); warm.append(time.perf_counter() - s)
print(json.dumps({"create": (t1 - t0) * 1e3, "first": (t2 - t1) * 1e3, "warm": statistics.median(warm) * 1e3}))
"""


def measure(model: str) -> dict:
    runs = []
    for _ in range(RUNS):
        done = subprocess.run([str(RUNTIME_PYTHON), "-c", WORKER, str(REPO_ROOT / "models" / model)],
                              cwd=REPO_ROOT, env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: sorted(run[key] for run in runs)[len(runs) // 2] for key in runs[0]}


def run(context=None) -> SectionResult:
    rows = []
    for model in MODELS:
        m = measure(model)
        rows.append([model, f"{m['create']:.1f}", f"{m['first']:.1f}", f"{m['warm']:.2f}",
                     f"{m['first'] - m['warm']:.1f}", f"{m['create'] + m['first']:.1f}", f"{m['warm']:.2f}"])
    markdown = (__doc__.split("\n\n", 1)[1].strip() + "\n\nMedian of {RUNS} fresh processes, ms. *Before*: a cold "
                "container's first request pays creation + first call (a model created at init: the first call); "
                "*after* (SnapStart, the warm-up in the before-snapshot hook): the warm call.\n\n"
                ).replace("{RUNS}", str(RUNS)) + table(
        ["model", "runner created (weights packed)", "first call", "warm call", "first call beyond warm",
         "first request, before", "first request, after"], rows)
    return SectionResult(NUMBER, TITLE, markdown)


if __name__ == "__main__":
    print(run().markdown)
