"""Section 17: every route against its floor and its peers, cold and warm, interleaved in one run (issue 25).

Per route, on the same event: the function (its image task root), the floor (bench/baselines/floor_handler.py:
the event JSON -> decode/tokenize -> LiteRT -> answer JSON, the libraries alone, in the same Lambda venv), ONNX
Runtime on the same model converted to ONNX (bench/baselines/onnx_route_handler.py, the floor's preprocessing),
and on the embedding routes sentence-transformers on PyTorch (the seed-era stack, its own venv). Each round runs
every route's stacks in turn (the order flips every round; one discarded round first):

- cold: a fresh emulated Lambda environment to the first answer (bench/cold_start.first_answer), and the runtime
  process's peak RSS;
- warm: the function and its floor alternate call by call in one fresh process of the Lambda venv
  (bench/revision_worker.py, RESULTS_CACHE=off), the floor calling the function's own interpreter: one copy of the
  weights, as a Lambda holds (two copies taking turns evict each other's from the CPU's caches, which doubled
  minilm's latency for both and hid the function's own cost in noise); each peer gets a fresh process of its own venv
  (bench/embed_worker.py). A round's p50 is one sample; cells are the medians over the rounds.

`python -m bench.floors_peers [--rounds N]` runs it alone and prints it.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from bench import embed_modes, embeddings, inputs, lambda_runtimes, rss_stages
from bench.cold_start import first_answer
from bench.compare_revisions import WarmWorker
from bench.paths import BUILD_DIR
from bench.report import SectionResult
from bench.stats import percentile
from kit.events import http_api_event

NUMBER = 17
TITLE = "Floors and peers: every route against the libraries alone, ONNX Runtime and sentence-transformers"
COLD_TARGET = 1.10  # the function's cold start over its floor's
WARM_TARGET = 0.05  # the function's warm p50 over its floor's
TINY_MODEL_MS = 0.1  # absolute warm overhead on the tabular model
MIN_ROUNDS = 7
BATCH = "/embed, 32 mixed-length sentences"  # warm only
BATCH_REQUESTS, BATCH_WARMUP = 3, 2  # per round: a 32-sentence call takes ~1 s
MODE_ROUNDS = 5  # fresh processes per minilm mode (bench/embed_modes.py)
FUNCTION, FLOOR, ONNX, TORCH = "function", "floor", "ONNX Runtime", "sentence-transformers"
# The function's embedding routes again, in a process of their own like each peer's: the figure held against them.
ALONE = "function, alone"


@dataclass(frozen=True)
class Route:
    name: str
    model: str
    event: dict

    @property
    def embeds(self) -> bool:
        return self.model == inputs.EMBEDDING_MODEL


# Every stack starts with the BLAS setting the function gives itself (function/app.py: no idle OpenBLAS worker
# spinning beside the import), so that a ratio to the floor or a peer is the function's own work, not that setting.
EVERY_STACK = {"OPENBLAS_NUM_THREADS": "1"}


def routes() -> list[Route]:
    short = inputs.EMBED_SHORT_SENTENCE
    event = partial(http_api_event, "POST")
    return [
        Route("/classify", "efficientnet_lite0", event("/classify", inputs.classify_body("efficientnet_lite0"))),
        Route("/sentiment", "sentiment", event("/sentiment", {**inputs.sentiment_body(), "model": "sentiment"})),
        Route("/embed", "minilm", event("/embed", inputs.embed_body([short]))),
        Route("/v1/embeddings", "minilm", event("/v1/embeddings", {"input": short, "model": "minilm"})),
        Route("tabular :predict", "tabular", event("/v1/models/tabular:predict", {"instances": [inputs.TABULAR_ROW]})),
        Route("tabular v2 infer", "tabular", event("/v2/models/tabular/infer", inputs.tabular_v2_body())),
    ]


def batch_route() -> Route:
    return Route(BATCH, "minilm", http_api_event("POST", "/embed", inputs.embed_body(inputs.embed_batch_texts())))


@dataclass
class Samples:
    cold_ms: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (route, stack) -> per run
    rss_mb: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    warm_p50: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # per round
    paired_ms: dict[str, list[float]] = field(default_factory=dict)  # route -> per round median(function - floor)
    answers: dict[tuple[str, str], dict] = field(default_factory=dict)  # the batch route's bodies, per stack
    not_measured: dict[str, str] = field(default_factory=dict)  # stack@model -> why


def stacks_of(route: Route, not_measured: dict[str, str]) -> dict[str, lambda_runtimes.Configuration]:
    """The configurations a route runs on, leaving out a peer that could not be built (and saying why)."""
    stacks = {FUNCTION: lambda_runtimes.function_configuration(),
              FLOOR: lambda_runtimes.floor_configuration(route.model)}
    peers = [(ONNX, lambda: lambda_runtimes.onnx_route_configuration(route.model))]
    if route.embeds:
        peers.append((TORCH, lambda_runtimes.sentence_transformers_configuration))
    for label, build in peers:
        key = f"{label}@{route.model}"
        if key in not_measured:
            continue
        try:
            built = build()
        except Exception as error:  # noqa: BLE001  (a peer that cannot install is a result to report)
            built = f"{type(error).__name__}: {str(error)[:200]}"
        if isinstance(built, str):
            not_measured[key] = built
        else:
            stacks[label] = built
    return stacks


def cold_round(route: Route, stacks: dict, samples: Samples, order: list[str], record: bool) -> None:
    for label in order:
        rss: list[float] = []
        runtime = stacks[label].runtime(EVERY_STACK)
        try:
            elapsed_ms, invocation = first_answer(runtime, route.event, rss)
        except OSError as error:  # the emulator's 502 when the handler's init failed: say whose, and why
            raise RuntimeError(f"{label} {route.name}: {error}\n{runtime.output()[-2000:]}") from error
        if invocation.status != 200:
            raise RuntimeError(f"{label} {route.name} answered {invocation.status}: {str(invocation.payload)[:300]}")
        if record:
            samples.cold_ms.setdefault((route.name, label), []).append(elapsed_ms)
            samples.rss_mb.setdefault((route.name, label), []).append(rss[0])


def warm_plan(all_routes: list[Route], requests: int) -> dict[str, dict]:
    plan = {}
    for route in all_routes:
        batch = route.name == BATCH
        plan[route.name] = {"model": route.model, "event": route.event,
                            "floor": {"kind": "event", "shared_engine": True},
                            "requests": BATCH_REQUESTS if batch else requests, **(
                                {"warmup": BATCH_WARMUP, "keep_answer": True} if batch else {})}
    return plan


def warm_function_round(plan: dict, samples: Samples, record: bool, tmp: Path) -> None:
    """The function and its floor, call by call, in one fresh process of the Lambda venv."""
    function = lambda_runtimes.function_configuration()
    plan_file = tmp / "plan.json"
    plan_file.write_text(json.dumps(plan))
    worker = WarmWorker(function.task_root, function.venv.python, plan_file, tmp / "worker.log")
    try:
        for route, step in plan.items():
            timed = worker.batch(route, step["requests"])
            if record:
                samples.warm_p50.setdefault((route, FUNCTION), []).append(percentile(timed["handler_ms"], 0.5))
                samples.warm_p50.setdefault((route, FLOOR), []).append(percentile(timed["floor_ms"], 0.5))
                samples.paired_ms.setdefault(route, []).append(
                    statistics.median(h - f for h, f in zip(timed["handler_ms"], timed["floor_ms"])))
        for route, kept in worker.ready["answers"].items():
            samples.answers[(route, FUNCTION)], samples.answers[(route, FLOOR)] = kept["handler"], kept["floor"]
    finally:
        worker.close()


def warm_peer_round(label: str, configuration, peer_routes: list[Route], plan: dict, samples: Samples,
                    record: bool) -> None:
    """One peer's routes on one model, in one fresh process of its own venv."""
    stack = embeddings.Stack(label, configuration, environment={
        **EVERY_STACK, **({"RESULTS_CACHE": "off"} if label == ALONE else {})})
    embeddings.measure_warm(stack, {r.name: r.event for r in peer_routes},
                            {r.name: plan[r.name]["requests"] for r in peer_routes},
                            warmup={r.name: plan[r.name].get("warmup", 5) for r in peer_routes})
    for route in peer_routes:
        if record:
            samples.warm_p50.setdefault((route.name, label), []).append(percentile(stack.warm[route.name]["ms"], 0.5))
        if route.name == BATCH:
            samples.answers[(route.name, label)] = stack.warm[route.name]["body"]


def measure(rounds: int, requests: int) -> tuple[list[Route], Samples]:
    all_routes = routes()
    served = [r for r in all_routes if (lambda_runtimes.MODELS_DIR / r.model / "manifest.json").is_file()]
    samples = Samples()
    stacks = {route.name: stacks_of(route, samples.not_measured) for route in served}
    warm_routes = [*served, batch_route()] if any(r.embeds for r in served) else served
    stacks[BATCH] = stacks.get("/embed", {})
    plan = warm_plan(warm_routes, requests)
    with tempfile.TemporaryDirectory(prefix="bench-floors-") as tmp:
        for round_number in range(rounds + 1):  # round 0 warms the page cache and bytecode, and is discarded
            record = round_number > 0
            for route in served:
                order = list(stacks[route.name])
                cold_round(route, stacks[route.name], samples, order[::-1] if round_number % 2 else order, record)
            warm_function_round(plan, samples, record, Path(tmp))
            peers: dict[tuple[str, str], list[Route]] = {}
            for route in warm_routes:
                for label in stacks[route.name]:
                    if label not in (FUNCTION, FLOOR):
                        peers.setdefault((label, route.model), []).append(route)
                if route.embeds:
                    peers.setdefault((ALONE, route.model), []).append(route)
            for (label, model), peer_routes in peers.items():
                configuration = stacks[peer_routes[0].name][FUNCTION if label == ALONE else label]
                warm_peer_round(label, configuration, peer_routes, plan, samples, record)
            print(f"==> [{time.strftime('%T')}] floors and peers: round {round_number}/{rounds} done", flush=True)
    return warm_routes, samples


def run(context) -> SectionResult:
    return measured_section(max(MIN_ROUNDS, context.runs), context.warm_requests)


def measured_section(rounds: int, warm_requests: int) -> SectionResult:
    from bench import floors_peers_report  # noqa: PLC0415

    started = time.perf_counter()
    requests = max(10, warm_requests // rounds)
    warm_routes, samples = measure(rounds, requests)
    stages = rss_stages.measure()
    modes = embed_modes.measure(MODE_ROUNDS)
    markdown, verdicts = floors_peers_report.render(warm_routes, samples, rounds, requests, stages, modes)
    (BUILD_DIR / "floors-peers.json").write_text(json.dumps(
        {name: {" | ".join(key) if isinstance(key, tuple) else key: value
                for key, value in getattr(samples, name).items()}
         for name in ("cold_ms", "rss_mb", "warm_p50", "paired_ms")}, indent=1))
    return SectionResult(NUMBER, TITLE, markdown, verdicts, time.perf_counter() - started)


if __name__ == "__main__":
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m bench.floors_peers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS, help=f"measured rounds (default {MIN_ROUNDS})")
    parser.add_argument("--warm-requests", type=int, default=200, help="per route, spread over the rounds")
    args = parser.parse_args()
    section = measured_section(args.rounds, args.warm_requests)
    print("\n".join(["", *section.verdicts, "", section.markdown]))
