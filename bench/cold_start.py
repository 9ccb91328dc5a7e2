"""Section 1: cold start, a fresh Lambda execution environment to the first /classify answer.

Every configuration runs under AWS's Runtime Interface Emulator + awslambdaric (kit/lambda_runtime.py),
with the same photo. Runs are interleaved (a, b, c, a, b, c, ...) so background load on this shared machine hits
every configuration alike, after one discarded run each that warms the page cache (a Lambda host's disk is warm
for a popular image too; a cold disk would only widen the gap). When (a) misses its target, `-X importtime` of
the handler module says which imports the time goes to.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import charts, inputs, lambda_runtimes, page_cache, result_table
from bench.report import SectionResult, table, verdict
from bench.stats import ratio, summarize
from kit import lambda_runtime
from kit.events import http_api_event

NUMBER = 1
TITLE = "Cold start: fresh process to the first /classify answer"
TARGET_SECONDS = 0.5
TARGET_RATIO = 15
COLD_DISK_RUNS = 3  # each TensorFlow run reads ~1 GB from disk: three show the spread


@dataclass
class Samples:
    label: str
    first_answer_ms: list[float] = field(default_factory=list)  # runtime started -> first answer received
    init_ms: list[float] = field(default_factory=list)  # the emulator's INIT REPORT: runtime start + handler import
    first_invoke_ms: list[float] = field(default_factory=list)  # REPORT Duration of the first invoke
    top1: set[str] = field(default_factory=set)
    stages: list[dict] = field(default_factory=list)  # the function's own timings_ms of the cold request


def first_answer(runtime: lambda_runtime.LambdaRuntime, event: dict,
                 peak_rss_mb: list[float] | None = None) -> tuple[float, lambda_runtime.Invocation]:
    """A fresh execution environment's first answer, on the client's clock from starting the emulator (the runtime
    process starts on that first invoke, as in Lambda). The runtime process's peak RSS after that answer is
    appended to `peak_rss_mb` when given."""
    started = time.perf_counter()
    with runtime:
        invocation = runtime.invoke(event)
        elapsed_ms = (time.perf_counter() - started) * 1000
        if peak_rss_mb is not None:
            peak_rss_mb.append(runtime.runtime_peak_rss_mb() or 0.0)
    return elapsed_ms, invocation


def measure_once(configuration: lambda_runtimes.Configuration, event: dict, samples: Samples | None,
                 environment: dict[str, str] | None = None) -> None:
    elapsed_ms, invocation = first_answer(configuration.runtime(environment), event)
    if invocation.status != 200:
        raise RuntimeError(f"{configuration.label} answered {invocation.status}: {invocation.payload}")
    if samples is not None:
        samples.first_answer_ms.append(elapsed_ms)
        samples.init_ms.append(invocation.init_phase_ms or 0.0)
        samples.first_invoke_ms.append(invocation.report.duration_ms)
        samples.top1.add(invocation.json_body()["predictions"][0]["label"])
        samples.stages += [line["timings_ms"] for line in json_lines(invocation.logs) if "timings_ms" in line]


def json_lines(lines: list[str]) -> list[dict]:
    parsed = []
    for line in lines:
        try:
            value = json.loads(line[line.index("{"):])
        except ValueError:
            continue
        if isinstance(value, dict):
            parsed.append(value)
    return parsed


def stdlib_dir(configuration: lambda_runtimes.Configuration) -> Path:
    done = subprocess.run([str(configuration.venv.python), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def measure_cold_disk(configuration: lambda_runtimes.Configuration, event: dict, samples: Samples) -> None:
    """One run whose venv, task root and standard library were evicted from the page cache just before: the
    first start on a host that has not read these files yet."""
    page_cache.evict([configuration.venv.path, configuration.task_root, stdlib_dir(configuration)])
    measure_once(configuration, event, samples)


def import_profile(configuration: lambda_runtimes.Configuration, top: int = 8) -> list[tuple[str, float]]:
    """Import time of the handler module in a fresh process of the function's venv, summed per top-level package
    (each module's own time, so nothing is counted twice)."""
    # The environment the emulator would give the handler (a LambdaRuntime's is empty until it starts).
    with tempfile.TemporaryDirectory(prefix="lambda-tmp-") as tmp:
        environment = lambda_runtime.lambda_environment(
            configuration.task_root, Path(tmp), lambda_runtime.DEFAULT_MEMORY_MB,
            lambda_runtime.DEFAULT_TIMEOUT_SECONDS, configuration.environment, configuration.venv.python)
        done = subprocess.run([str(configuration.venv.python), "-X", "importtime", "-c", "import function.app"],
                              cwd=configuration.task_root, env=environment, capture_output=True, text=True,
                              check=True)
    per_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if match:
            package = match.group(2).split(".")[0]
            per_package[package] = per_package.get(package, 0.0) + int(match.group(1)) / 1000
    return sorted(per_package.items(), key=lambda row: row[1], reverse=True)[:top]


def stage_table(samples: list[Samples]) -> str:
    """Median per stage of the function's own log line for its cold request, one column per variant."""
    stages = list(dict.fromkeys(stage for s in samples for timing in s.stages for stage in timing))
    rows = [[stage] + [f"{statistics.median(t.get(stage, 0.0) for t in s.stages):.1f}" if s.stages else "-"
                       for s in samples] for stage in stages]
    return table(["stage (ms, median)", *[s.label for s in samples]], rows)


def run(context) -> SectionResult:
    started = time.perf_counter()
    event = http_api_event("POST", "/classify", inputs.classify_body())
    configurations = [lambda_runtimes.function_configuration(), lambda_runtimes.tensorflow_configuration()]
    onnx = lambda_runtimes.onnxruntime_configuration()
    onnx_error = onnx if isinstance(onnx, str) else None
    if onnx_error is None:
        configurations.append(onnx)

    with result_table.moto_results_tables() as fresh_table:
        # (a) again as deployed: the DynamoDB result store on (a first-use boto3 import + one miss), empty each run.
        variants = [(c, c.label, None) for c in configurations]
        variants.insert(1, (configurations[0], "(a) + DynamoDB result store (moto)", fresh_table))
        samples = {label: Samples(label) for _, label, _ in variants}
        for configuration, _, store in variants:
            measure_once(configuration, event, None, store() if store else None)
        cold_disk = {c.label: Samples(c.label) for c in configurations}
        # One round = every variant once, warm cache, then (in the first rounds) every stack from a cold cache, so
        # the load on this shared machine at any moment falls on all of them alike.
        for round_number in range(context.runs):
            for configuration, label, store in variants:
                measure_once(configuration, event, samples[label], store() if store else None)
            if round_number < COLD_DISK_RUNS:
                for configuration in configurations:
                    measure_cold_disk(configuration, event, cold_disk[configuration.label])

    ours = summarize(samples[variants[0][1]].first_answer_ms)
    tensorflow = summarize(samples[configurations[1].label].first_answer_ms)
    rows = []
    for _, label, _ in variants:
        measured = samples[label]
        first = summarize(measured.first_answer_ms)
        rows.append([label, first.text("ms", 0), summarize(measured.init_ms).text("ms", 0),
                     summarize(measured.first_invoke_ms).text("ms", 0), ratio(first.median, ours.median),
                     ", ".join(sorted(measured.top1))])
    chart = charts.horizontal_bars(
        "cold_start.png", "Cold start: fresh process to the first /classify answer", "ms",
        [(label, summarize(samples[label].first_answer_ms)) for _, label, _ in variants],
        target=(TARGET_SECONDS * 1000, f"target {TARGET_SECONDS} s"))
    lines = [
        f"{context.runs} fresh execution environments per configuration, interleaved, after one discarded warm-up "
        "each; median (min-max). *First answer* is the client's clock from starting the emulator to the /classify "
        "response (the runtime process starts on the first invoke, as in Lambda); *init* is the emulator's INIT "
        "REPORT (runtime client start + handler module import); *first invoke* is the REPORT Duration of that "
        "invocation (includes init under the emulator). Same JPEG photo, EfficientNet-Lite0 in each stack, "
        "1,769 MB settings (one vCPU in Lambda; here the two cores are shared with other work).",
        "",
        table(["configuration", "first answer", "init", "first invoke (REPORT)", "vs (a)", "top-1"], rows),
        "",
        chart,
        "",
        f"TensorFlow / function: **{ratio(tensorflow.median, ours.median)}** slower to the first answer.",
    ]
    if onnx_error is None:
        onnx_ratio = ratio(summarize(samples[onnx.label].first_answer_ms).median, ours.median)
        lines.append(f"ONNX Runtime / function: **{onnx_ratio}**.")
    else:
        lines.append(f"(c) ONNX Runtime: not measured, tf2onnx did not convert the SavedModel: `{onnx_error}`")
    ours_cold_disk = summarize(cold_disk[configurations[0].label].first_answer_ms)
    lines += ["", "The same, with each stack's venv, task root and standard library evicted from the page cache "
              "(posix_fadvise DONTNEED on exactly those files) before every run: a host that has not read these "
              f"files yet. {min(context.runs, COLD_DISK_RUNS)} runs each, in the same rounds as the runs above:", "",
              table(["configuration", "first answer", "init", "vs (a)"],
                    [[label, summarize(m.first_answer_ms).text("ms", 0), summarize(m.init_ms).text("ms", 0),
                      ratio(summarize(m.first_answer_ms).median, ours_cold_disk.median)]
                     for label, m in cold_disk.items()])]
    function_samples = [samples[label] for _, label, _ in variants[:2]]
    lines += ["", "The cold request's own stage timings, from the function's log line; *total* minus the stages "
              "is mostly loading the interpreter, which the first request does:", "", stage_table(function_samples)]
    if ours.median > TARGET_SECONDS * 1000:
        lines += ["", "Where (a)'s init goes: `python -X importtime -c 'import function.app'` in the function's venv, "
                  "one run, each module's own import time summed per top-level package:", "",
                  table(["package", "import time"],
                        [[f"`{name}`", f"{ms:.0f} ms"] for name, ms in import_profile(configurations[0])])]
    verdicts = [
        verdict(ours.median <= TARGET_SECONDS * 1000,
                f"cold start (a) {ours.median / 1000:.2f} s median, "
                f"{summarize(samples[variants[1][1]].first_answer_ms).median / 1000:.2f} s with the DynamoDB store "
                f"as deployed (target <= {TARGET_SECONDS} s)"),
        verdict(tensorflow.median >= TARGET_RATIO * ours.median,
                f"(a) {ratio(tensorflow.median, ours.median)} faster than the TensorFlow baseline, "
                f"{ratio(summarize(cold_disk[configurations[1].label].first_answer_ms).median, ours_cold_disk.median)}"
                f" with the page cache evicted (target >= {TARGET_RATIO}x)"),
    ]
    return SectionResult(NUMBER, TITLE, "\n".join(lines), verdicts, time.perf_counter() - started)
