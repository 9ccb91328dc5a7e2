"""Section 8: sentence embeddings, the function's /embed next to ONNX Runtime + tokenizers (issue 12).

Both stacks serve all-MiniLM-L6-v2 and get the same API Gateway v2 /embed events (bench/inputs.py). Cold start: a
fresh emulated Lambda environment (kit/lambda_runtime.py) to the first answer for one short sentence,
stacks interleaved after one discarded run each, as in section 1. Warm: bench/embed_worker.py calls the handler
in-process inside each stack's own venv and task root, for 1 short sentence and for a batch of 32 real sentences
of mixed length. Every answer's vectors are checked against the numpy reference (minilm_reference.py).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench import footprint, inputs, lambda_runtimes
from bench.paths import REPO_ROOT
from bench.report import SectionResult, table
from bench.stats import percentile, ratio, summarize
from kit import lambda_runtime
from kit.events import http_api_event

NUMBER = 8
TITLE = "Embeddings: /embed cold start and warm latency vs ONNX Runtime + tokenizers"
WORKER = REPO_ROOT / "bench" / "embed_worker.py"
SHORT, BATCH = "1 short sentence", "32 mixed-length sentences"
MIN_BATCH_REQUESTS = 20
WORKER_TIMEOUT_SECONDS = 900


@dataclass
class Stack:
    label: str
    configuration: lambda_runtimes.Configuration | None
    environment: dict[str, str] = field(default_factory=dict)
    not_measured: str | None = None  # why, when it could not be measured
    first_answer_ms: list[float] = field(default_factory=list)
    init_ms: list[float] = field(default_factory=list)
    peak_rss_mb: list[float] = field(default_factory=list)
    warm: dict = field(default_factory=dict)  # case -> embed_worker.py's result


def function_stack() -> Stack:
    """The function's /embed, from the image's task root. Measured once models/minilm is converted and /embed
    answers 200 with "embeddings" (see answer_vectors); until then the table says why not."""
    label = "function, LiteRT"
    configuration = lambda_runtimes.function_configuration()
    if not (configuration.task_root / "models" / inputs.EMBEDDING_MODEL / "manifest.json").is_file():
        return Stack(label, None, not_measured=f"models/{inputs.EMBEDDING_MODEL} is not converted (not among the "
                                               "Makefile's DEMO_MODELS yet)")
    # Every warm request must compute: no result cache.
    return Stack(label, configuration, environment={"RESULTS_CACHE": "off"})


def onnx_stack() -> Stack:
    configuration = lambda_runtimes.onnx_embedding_configuration()
    return Stack(configuration.label, configuration)


def events() -> dict[str, dict]:
    return {SHORT: http_api_event("POST", "/embed", inputs.embed_body([inputs.EMBED_SHORT_SENTENCE])),
            BATCH: http_api_event("POST", "/embed", inputs.embed_body(inputs.embed_batch_texts()))}


def answer_vectors(body: dict) -> np.ndarray:
    """The vectors of an /embed answer: "embeddings" as lists of floats, or as objects holding "embedding"."""
    rows = [row["embedding"] if isinstance(row, dict) else row for row in body["embeddings"]]
    return np.asarray(rows, dtype=np.float64)


def measure_cold(stack: Stack, event: dict, record: bool) -> None:
    started = time.perf_counter()
    with stack.configuration.runtime(stack.environment) as runtime:
        invocation = runtime.invoke(event)
        elapsed_ms = (time.perf_counter() - started) * 1000
        rss = runtime.runtime_peak_rss_mb()
    if invocation.status != 200:
        raise RuntimeError(f"answered {invocation.status}: {str(invocation.payload)[:200]}")
    if record:
        stack.first_answer_ms.append(elapsed_ms)
        stack.init_ms.append(invocation.init_phase_ms or 0.0)
        if rss is not None:
            stack.peak_rss_mb.append(rss)


def measure_warm(stack: Stack, cases: dict[str, dict], requests: dict[str, int],
                 warmup: dict[str, int] | None = None) -> None:
    """embed_worker.py in the stack's own venv, with the environment Lambda would give its handler."""
    configuration = stack.configuration
    plan = {"handler": configuration.handler, "events": cases, "requests": requests, "warmup": warmup or {}}
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:
        plan_file, out_file = Path(tmp) / "plan.json", Path(tmp) / "out.json"
        plan_file.write_text(json.dumps(plan))
        environment = lambda_runtime.lambda_environment(
            configuration.task_root, Path(tmp), lambda_runtime.DEFAULT_MEMORY_MB,
            lambda_runtime.DEFAULT_TIMEOUT_SECONDS, {**configuration.environment, **stack.environment},
            configuration.venv.python)
        # -P: the worker's own directory (bench/) must not shadow the task root's modules.
        subprocess.run([str(configuration.venv.python), "-P", str(WORKER), str(plan_file), str(out_file)],
                       env=environment, cwd=configuration.task_root, stdout=subprocess.DEVNULL, check=True,
                       timeout=WORKER_TIMEOUT_SECONDS)
        stack.warm = json.loads(out_file.read_text())
    failed = {case: result for case, result in stack.warm.items() if result["status"] != 200}
    if failed:
        case, result = next(iter(failed.items()))
        raise RuntimeError(f"{case}: answered {result['status']}: {json.dumps(result['body'])[:200]}")


def reference_vectors(texts: list[str]) -> np.ndarray:
    """The numpy reference's vector of each text, run alone (no padding)."""
    from saved_model.recipes import minilm, minilm_encoder  # noqa: PLC0415  (TensorFlow-free, dev venv)
    from saved_model.recipes.minilm_reference import MiniLMReference  # noqa: PLC0415

    reference, tokenizer = MiniLMReference(), minilm.make_tokenizer()
    return np.concatenate([reference.embed(*minilm_encoder.encode(tokenizer, [text])) for text in texts])


def cosines(vectors: np.ndarray, expected: np.ndarray) -> np.ndarray:
    from saved_model.recipes.minilm_reference import cosine  # noqa: PLC0415

    return cosine(vectors, expected)


def min_cosine(vectors: np.ndarray, expected: np.ndarray) -> float:
    return float(cosines(vectors, expected).min())


def latency(samples: list[float]) -> str:
    return f"{percentile(samples, 0.5):.1f} / {percentile(samples, 0.99):.1f}"


def run(context) -> SectionResult:
    started = time.perf_counter()
    stacks = [function_stack(), onnx_stack()]
    cases = events()
    measured = [s for s in stacks if s.not_measured is None]

    def attempt(stack: Stack, step) -> None:
        try:
            step()
        except (RuntimeError, subprocess.SubprocessError) as error:
            stack.not_measured = str(error)
            measured.remove(stack)

    for stack in list(measured):  # one discarded run each: page cache, bytecode
        attempt(stack, lambda s=stack: measure_cold(s, cases[SHORT], record=False))
    for _ in range(context.runs):
        for stack in list(measured):
            attempt(stack, lambda s=stack: measure_cold(s, cases[SHORT], record=True))
    requests = {SHORT: context.warm_requests, BATCH: max(MIN_BATCH_REQUESTS, context.warm_requests // 5)}
    for stack in list(measured):
        attempt(stack, lambda s=stack: measure_warm(s, cases, requests))

    texts = [inputs.EMBED_SHORT_SENTENCE, *inputs.embed_batch_texts()]
    expected = reference_vectors(texts)
    baseline = next((s for s in measured if s.configuration.key == "onnxruntime-tokenizers"), None)
    rows = []
    for stack in stacks:
        if stack not in measured:
            rows.append([stack.label, f"not measured: {stack.not_measured}", "", "", "", "", "", ""])
            continue
        cold = summarize(stack.first_answer_ms)
        vectors = np.concatenate([answer_vectors(stack.warm[SHORT]["body"]), answer_vectors(stack.warm[BATCH]["body"])])
        versus = "" if baseline is None or stack is baseline else \
            f" ({ratio(cold.median, summarize(baseline.first_answer_ms).median)} of ONNX)"
        installed = footprint.tree_bytes(stack.configuration.venv.site_packages()) / footprint.MB
        rows.append([stack.label, cold.text("ms", 0) + versus, summarize(stack.init_ms).text("ms", 0),
                     summarize(stack.peak_rss_mb).text("MB", 0) if stack.peak_rss_mb else "-",
                     latency(stack.warm[SHORT]["ms"]), latency(stack.warm[BATCH]["ms"]),
                     f"{min_cosine(vectors, expected):.8f}", f"{installed:.0f} MB"])
    lengths = [len(t.split()) for t in inputs.embed_batch_texts()]
    markdown = "\n".join([
        f"all-MiniLM-L6-v2 in both stacks. *Cold*: {context.runs} fresh emulated Lambda environments per stack "
        "(interleaved, after one discarded run each), client clock from starting the emulator to the answer for "
        f"one short sentence (\"{inputs.EMBED_SHORT_SENTENCE}\"); *init* is the emulator's INIT REPORT; peak RSS is "
        f"the runtime process's VmHWM after that answer. *Warm*: {requests[SHORT]} / {requests[BATCH]} timed "
        "handler calls after 5 untimed, in-process in each stack's own venv and task root, nearest-rank p50 / p99 "
        f"in ms; the batch is 32 real VADER sentences of {min(lengths)}-{max(lengths)} words (3-128 tokens), so "
        "padding to the batch's longest text matters. ONNX Runtime runs one intra-op thread, like the function's "
        "interpreter. *Cosine* is the smallest cosine of any of the 33 answered vectors to the float64 numpy "
        "reference of the original weights, each text run alone. *Installed*: the bytes under the stack's venv's "
        "site-packages (the function's venv serves every demo model).",
        "",
        table(["stack", "cold: first answer", "init", "peak RSS", f"warm {SHORT} p50 / p99 ms",
               f"warm {BATCH} p50 / p99 ms", "cosine to reference (min)", "installed"], rows),
    ])
    return SectionResult(NUMBER, TITLE, markdown, [], time.perf_counter() - started)


if __name__ == "__main__":
    # `python -m bench.embeddings [--runs N] [--warm-requests N]`: this section alone, printed; BENCHMARKS.md and the
    # stored results are left as they are.
    import argparse  # noqa: PLC0415

    from bench.__main__ import BenchContext  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m bench.embeddings", description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm-requests", type=int, default=200)
    args = parser.parse_args()
    print(run(BenchContext(runs=args.runs, warm_requests=args.warm_requests, load_seconds=0)).markdown)
