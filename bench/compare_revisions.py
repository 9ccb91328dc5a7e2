"""`python -m bench.compare_revisions BASE [HEAD]`: two revisions of the function side by side, in one run.

HEAD defaults to the working tree. Each revision gets its own task root, laid out from its own Dockerfile and
.dockerignore (bench/revision_checkout.py), and runs in the same Lambda venv (build/lambda-runtime) on the same
converted models/ and the same inputs. Each is driven only through `function.app.handler` and environment
variables, so it works whatever the module layout of either revision. In every round, each revision in turn (the
order flips every round, and a first round is discarded) measures:

- cold start: a fresh execution environment under the Lambda Runtime Interface Emulator to the first answer, one
  per route (the result cache as the image runs it with no table: SQLite in the environment's fresh /tmp);
- `import function.app` in a fresh process of the same environment: its wall time, and the modules it imports;
- warm: a batch of handler calls per route in a fresh process per revision and round (RESULTS_CACHE=off, so every
  request computes), alternating call by call with the same input through the libraries alone (the floor, as
  section 2 of BENCHMARKS.md defines it) where the bench has one.

Prints one markdown table (what | BASE | HEAD | HEAD/BASE) and writes it, with the raw samples, under build/bench/.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import inputs, venvs
from bench.inputs import TABULAR_DTYPES, TABULAR_ROW
from bench.cold_start import first_answer
from bench.paths import BUILD_DIR, MODELS_DIR, REPO_ROOT
from bench.revision_checkout import Revision, checked_out, commit_of, lay_out_task_root, pinned_requirements
from bench.revision_table import Metric, render
from bench.stats import percentile
from kit import lambda_runtime
from kit.events import http_api_event
from kit.photos import cat_jpeg

SCRATCH = BUILD_DIR / "compare"
HANDLER = "function.app.handler"
WORKER_TIMEOUT_SECONDS = 300
# In a fresh process: how long `import function.app` takes, and what it brings in.
IMPORT_PROBE = """import json, sys, time
before = set(sys.modules)
started = time.perf_counter()
import function.app
elapsed = (time.perf_counter() - started) * 1000
added = set(sys.modules) - before
print(json.dumps({"ms": elapsed, "modules": len(added),
                  "function_modules": sum(1 for m in added if m == "function" or m.startswith("function."))}))"""


def routes() -> dict[str, dict]:
    """Per route: its model, its API Gateway v2 event, and the floor's input; only routes whose model is built."""
    photo = base64.b64encode(cat_jpeg()).decode("ascii")
    tabular_path = "/v1/models/tabular:predict"
    plan = {
        "/classify": {"model": "efficientnet_lite0",
                      "event": http_api_event("POST", "/classify", inputs.classify_body("efficientnet_lite0")),
                      "floor": {"kind": "image", "input": photo}},
        "/sentiment": {"model": "sentiment",
                       "event": http_api_event("POST", "/sentiment", {**inputs.sentiment_body(), "model": "sentiment"}),
                       "floor": {"kind": "text", "input": inputs.sentiment_body()["text"]}},
        "/embed": {"model": inputs.EMBEDDING_MODEL,
                   "event": http_api_event("POST", "/embed", inputs.embed_body([inputs.EMBED_SHORT_SENTENCE])),
                   "floor": None},
        "tabular :predict": {"model": "tabular",
                             "event": http_api_event("POST", tabular_path, {"instances": [TABULAR_ROW]}),
                             "floor": {"kind": "tensor", "dtypes": TABULAR_DTYPES,
                                       "input": {name: [value] for name, value in TABULAR_ROW.items()}}},
    }
    return {route: step for route, step in plan.items() if (MODELS_DIR / step["model"] / "manifest.json").is_file()}


class WarmWorker:
    """bench/revision_worker.py in one revision's task root: handler + floor batches on request."""

    def __init__(self, task_root: Path, python: Path, plan_file: Path, log: Path):
        self.log = log
        environment = _lambda_environment(task_root, plan_file.parent, {
            "PYTHONPATH": f"{task_root}{os.pathsep}{REPO_ROOT}", "RESULTS_CACHE": "off"}, python)
        self.process = subprocess.Popen([str(python), "-m", "bench.revision_worker", str(plan_file)], cwd=task_root,
                                        env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=log.open("w"), text=True)
        self.ready = self._answer()  # {"ready": true, "answers": {...}} once every route answered 200

    def batch(self, route: str, requests: int) -> dict:
        self.process.stdin.write(json.dumps({"route": route, "requests": requests}) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=WORKER_TIMEOUT_SECONDS)
            raise RuntimeError(f"the warm worker stopped ({self.process.returncode}):\n{self.log.read_text()[-3000:]}")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=WORKER_TIMEOUT_SECONDS)


def _lambda_environment(task_root: Path, tmp: Path, extra: dict[str, str], python: Path) -> dict[str, str]:
    """The emulated Lambda's environment, on the shared models/."""
    return lambda_runtime.lambda_environment(
        task_root, tmp, lambda_runtime.DEFAULT_MEMORY_MB, lambda_runtime.DEFAULT_TIMEOUT_SECONDS,
        {"MODEL_DIR": str(MODELS_DIR.resolve()), **extra}, python)


@dataclass
class Side:
    """One revision under test, and everything measured of it, in round order."""

    revision: Revision
    task_root: Path
    cold_ms: dict[str, list[float]] = field(default_factory=dict)
    init_ms: list[float] = field(default_factory=list)
    answers: dict[str, set[str]] = field(default_factory=dict)
    import_ms: list[float] = field(default_factory=list)
    modules: list[float] = field(default_factory=list)
    function_modules: list[float] = field(default_factory=list)
    warm_p50: dict[str, list[float]] = field(default_factory=dict)
    overhead_ms: dict[str, list[float]] = field(default_factory=dict)


def cold_start(side: Side, route: str, event: dict, python: Path, record: bool) -> None:
    runtime = lambda_runtime.LambdaRuntime(side.task_root, HANDLER, {"MODEL_DIR": str(MODELS_DIR.resolve())},
                                           python=python)
    elapsed_ms, invocation = first_answer(runtime, event)
    if invocation.status != 200:
        raise RuntimeError(f"{side.revision.label} {route} answered {invocation.status}: {invocation.payload}")
    if record:
        side.cold_ms.setdefault(route, []).append(elapsed_ms)
        side.init_ms.append(invocation.init_phase_ms or 0.0)
        side.answers.setdefault(route, set()).add(invocation.payload["body"])


def import_once(side: Side, python: Path, record: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="lambda-tmp-") as tmp:
        done = subprocess.run([str(python), "-c", IMPORT_PROBE], cwd=side.task_root, capture_output=True, text=True,
                              env=_lambda_environment(side.task_root, Path(tmp), {}, python), check=True)
    if record:
        probe = json.loads(done.stdout.strip().splitlines()[-1])
        side.import_ms.append(probe["ms"])
        side.modules.append(probe["modules"])
        side.function_modules.append(probe["function_modules"])


def warm_batch(side: Side, worker: WarmWorker, route: str, requests: int, record: bool) -> None:
    timed = worker.batch(route, requests)
    if record:
        handler_p50 = percentile(timed["handler_ms"], 0.5)
        side.warm_p50.setdefault(route, []).append(handler_p50)
        if timed["floor_ms"]:  # each call against the floor call right after it: the paired difference is steadier
            differences = [h - f for h, f in zip(timed["handler_ms"], timed["floor_ms"])]
            side.overhead_ms.setdefault(route, []).append(statistics.median(differences))


def measure(sides: list[Side], plan: dict[str, dict], rounds: int, warm_requests: int, python: Path) -> None:
    plan_file = SCRATCH / "plan.json"
    plan_file.write_text(json.dumps(plan))
    per_batch = max(1, math.ceil(warm_requests / rounds))
    for round_number in range(rounds + 1):  # round 0 warms the page cache and is discarded
        record = round_number > 0
        order = sides[::-1] if round_number % 2 else sides
        for route, step in plan.items():
            for side in order:
                cold_start(side, route, step["event"], python, record)
        for side in order:
            import_once(side, python, record)
        # Fresh warm processes every round: one process's luck (memory layout, which core) is not a revision's.
        workers: list[WarmWorker] = []
        try:
            for side in order:
                workers.append(WarmWorker(side.task_root, python, plan_file, side.task_root.with_suffix(".log")))
            for route in plan:
                for side, worker in zip(order, workers):
                    warm_batch(side, worker, route, per_batch, record)
        finally:
            for worker in workers:
                worker.close()
        print(f"==> [{time.strftime('%T')}] round {round_number}/{rounds} done", file=sys.stderr, flush=True)


def metrics(base: Side, head: Side, plan: dict[str, dict]) -> list[Metric]:
    rows = [
        Metric("`function*` modules imported by `import function.app`", base.function_modules, head.function_modules,
               unit=""),
        Metric("all modules imported by `import function.app`", base.modules, head.modules, unit=""),
        Metric("wall time of `import function.app` (fresh process)", base.import_ms, head.import_ms),
    ]
    rows += [Metric(f"cold start to the first answer, {route}", base.cold_ms[route], head.cold_ms[route], digits=0)
             for route in plan]
    rows.append(Metric("cold init phase (emulator INIT REPORT), every route", base.init_ms, head.init_ms, digits=0))
    rows += [Metric(f"warm handler p50, {route}", base.warm_p50[route], head.warm_p50[route], digits=2)
             for route in plan]
    rows += [Metric(f"warm overhead over the floor, {route}", base.overhead_ms[route],
                    head.overhead_ms[route], digits=2, difference=True) for route in plan if route in base.overhead_ms]
    base_files, base_lines = base.revision.python_lines()
    head_files, head_lines = head.revision.python_lines()
    rows += [Metric("lines of function/ (*.py)", [base_lines], [head_lines], unit=""),
             Metric("Python files in function/", [base_files], [head_files], unit="")]
    return rows


def notes(base: Side, head: Side, plan: dict[str, dict], rounds: int, per_route: int, loads: list[str]) -> list[str]:
    same = [route for route in plan if base.answers[route] == head.answers[route] and len(base.answers[route]) == 1]
    lines = [
        f"`python -m bench.compare_revisions`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, load average {loads[0]} at the start and {loads[1]} at the end. {rounds} rounds "
        "after one discarded, each revision in turn, the order flipped every round. Cells: median (min-max, n) over "
        "the rounds; HEAD/BASE is the median of the per-round ratios (a burst of load falls on both sides of one "
        "round) and their interquartile range (how much the machine's noise moves one comparison), then the "
        "medians' ratio and difference. Cold: a fresh emulated Lambda "
        f"environment per sample. Warm: each round's p50 of {per_route // rounds or 1} handler calls per route "
        f"({per_route} per route in all), RESULTS_CACHE=off; the floor is the same input through the libraries "
        "alone (bench/raw_pipeline.py), called alternately with the handler; the overhead is the median of the "
        "differences, each handler call minus the floor call right after it.",
        "",
        "Same models/ and inputs for both; the same Lambda venv "
        f"({lambda_runtime.runtime_python_version(venvs.LITERT_VENV / 'bin' / 'python')}"
        f", this checkout's requirements.txt). Cold answers byte-identical between the revisions on: "
        f"{', '.join(same) or 'none'}"
        + (f"; differing on: {', '.join(r for r in plan if r not in same)}." if len(same) < len(plan) else "."),
    ]
    if pinned_requirements(base.revision) != pinned_requirements(head.revision):
        lines.append("")
        lines.append("**requirements.txt pins differ between the revisions**: both ran on this checkout's venv, so a "
                     "dependency change is not in these figures.")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare_revisions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", help="the revision to compare against (a commit, branch or tag)")
    parser.add_argument("head", nargs="?", help="the revision measured against it (default: the working tree)")
    parser.add_argument("--rounds", type=int, default=15, help="measured rounds (default 15, after one discarded)")
    parser.add_argument("--warm-requests", type=int, default=300,
                        help="timed warm requests per route and revision, spread over the rounds (default 300)")
    args = parser.parse_args(argv)
    for spec in filter(None, (args.base, args.head)):
        if commit_of(spec) is None:
            parser.error(f"{spec!r} names no commit of this repository")
    plan = routes()
    if not plan:
        parser.error(f"no converted demo model under {MODELS_DIR.relative_to(REPO_ROOT)}/: run `make models` first")
    python = venvs.litert_venv().python
    SCRATCH.mkdir(parents=True, exist_ok=True)
    loads = [" ".join(f"{x:.2f}" for x in os.getloadavg())]
    with checked_out(args.base, SCRATCH, "base") as base_revision, \
            checked_out(args.head, SCRATCH, "head") as head_revision:
        sides = [Side(revision, lay_out_task_root(revision, SCRATCH / f"task-{role}", python))
                 for role, revision in (("base", base_revision), ("head", head_revision))]
        print(f"==> [{time.strftime('%T')}] {base_revision.label} vs {head_revision.label}: {', '.join(plan)}, "
              f"{args.rounds} rounds", file=sys.stderr, flush=True)
        measure(sides, plan, args.rounds, args.warm_requests, python)
        loads.append(" ".join(f"{x:.2f}" for x in os.getloadavg()))
        base, head = sides
        per_route = max(1, math.ceil(args.warm_requests / args.rounds)) * args.rounds
        document = "\n".join([f"# {base.revision.label} vs {head.revision.label}", "",
                              *notes(base, head, plan, args.rounds, per_route, loads), "",
                              render(metrics(base, head, plan), base.revision.label, head.revision.label), ""])
        samples = {side.revision.label: {name: value for name, value in vars(side).items()
                                         if name not in {"revision", "task_root", "answers"}} for side in sides}
    name = f"compare-{_slug(args.base)}-{_slug(args.head or 'worktree')}"
    (BUILD_DIR / f"{name}.md").write_text(document.replace(f"{REPO_ROOT}/", ""))
    (BUILD_DIR / f"{name}.json").write_text(json.dumps(samples, indent=1))
    print(document)
    print(f"==> wrote {(BUILD_DIR / name).relative_to(REPO_ROOT)}.md and .json", file=sys.stderr)
    return 0


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)


if __name__ == "__main__":
    sys.exit(main())
