"""Section 4: peak RSS of each configuration once it has served every model it holds.

Peak RSS is the kernel's high-water mark (VmHWM in /proc/<pid>/status) of the Python runtime process under the
emulator, read after the last answer: the figure Lambda's "Max Memory Used" tracks. The function is asked once
per demo model (so every interpreter is loaded) and once per text route; the baselines serve EfficientNet-Lite0
only, so their figure is a lower bound for "all demo models".
"""

from __future__ import annotations

import json
import time

from bench import charts, inputs, lambda_runtimes, result_table
from bench.paths import MODELS_DIR
from bench.report import SectionResult, table, verdict
from bench.stats import ratio, summarize
from kit.events import http_api_event

NUMBER = 4
TITLE = "Peak memory (RSS) with all demo models loaded"
TARGET_MB = 150
MAX_RUNS = 3  # RSS barely moves between runs; fresh processes are the expensive part


def function_events() -> list[tuple[str, dict]]:
    """One request per demo model in models/ (on its task's route), then /tokenize."""
    events = []
    for manifest_file in sorted(MODELS_DIR.glob("*/manifest.json")):
        manifest = json.loads(manifest_file.read_text())
        name = manifest["name"]
        if manifest["task"] == "image_classification":
            events.append((name, http_api_event("POST", "/classify", inputs.classify_body(name))))
        elif manifest["task"] == "text_classification":
            events.append((name, http_api_event("POST", "/sentiment", {**inputs.sentiment_body(), "model": name})))
        elif manifest["task"] == "text_embedding":
            events.append((name, http_api_event("POST", "/embed", {**inputs.sentiment_body(), "model": name})))
        else:  # a tensor model: one Open Inference Protocol request
            events.append((name, http_api_event("POST", f"/v2/models/{name}/infer", tensor_body(manifest))))
    events.append(("/tokenize", http_api_event("POST", "/tokenize", inputs.tokenize_body())))
    return events


def tensor_body(manifest: dict) -> dict:
    """One row of zeros for every input of a tensor model, as Open Inference Protocol JSON."""
    datatypes = {"float32": "FP32", "int32": "INT32", "int64": "INT64", "float16": "FP32", "int8": "FP32",
                 "uint8": "FP32", "bool": "BOOL"}
    tensors = []
    for spec in manifest["inputs"]:
        shape = [1, *[max(dim, 1) for dim in spec["shape"][1:]]]
        count = 1
        for dim in shape:
            count *= dim
        tensors.append({"name": spec["name"], "shape": shape, "datatype": datatypes[spec["dtype"]],
                        "data": [0] * count})
    return {"inputs": tensors}


def peak_rss(configuration, events, environment=None) -> float:
    with configuration.runtime(environment) as runtime:
        for name, event in events:
            invocation = runtime.invoke(event)
            if invocation.status != 200:
                raise RuntimeError(f"{configuration.label}, {name}: status {invocation.status}: {invocation.payload}")
        return runtime.runtime_peak_rss_mb()


def run(context) -> SectionResult:
    started = time.perf_counter()
    runs = min(context.runs, MAX_RUNS)
    function = lambda_runtimes.function_configuration()
    all_models = function_events()
    classify_only = [("efficientnet_lite0", http_api_event("POST", "/classify", inputs.classify_body()))]
    variants = [(function, "(a) function, LiteRT: every demo model + /tokenize", all_models, None),
                (function, "(a) as deployed, DynamoDB result store on (moto)", all_models, "dynamodb"),
                (lambda_runtimes.tensorflow_configuration(), "(b) TensorFlow baseline: EfficientNet-Lite0",
                 classify_only, None)]
    onnx = lambda_runtimes.onnxruntime_configuration()
    if not isinstance(onnx, str):
        variants.append((onnx, "(c) ONNX Runtime baseline: EfficientNet-Lite0", classify_only, None))

    peaks: dict[str, list[float]] = {label: [] for _, label, _, _ in variants}
    with result_table.moto_results_tables() as fresh_table:
        for _ in range(runs):
            for configuration, label, events, store in variants:
                environment = fresh_table() if store == "dynamodb" else None
                peaks[label].append(peak_rss(configuration, events, environment))

    ours = summarize(peaks[variants[0][1]]).median
    deployed = summarize(peaks[variants[1][1]]).median
    rows = [[label, summarize(values).text("MB", 0), ratio(summarize(values).median, ours)]
            for label, values in peaks.items()]
    chart = charts.horizontal_bars("peak_rss.png", "Peak RSS after serving", "MB",
                                   [(label, summarize(values)) for label, values in peaks.items()],
                                   target=(TARGET_MB, f"target {TARGET_MB} MB"))
    models = ", ".join(name for name, _ in all_models)
    markdown = "\n".join([
        f"{runs} fresh emulated Lambda environments per row, interleaved; median (min-max) of the runtime process's "
        f"VmHWM after its last answer. (a) was asked, in order: {models}.",
        "",
        table(["configuration", "peak RSS", "vs (a)"], rows),
        "",
        chart,
    ])
    verdicts = [verdict(max(ours, deployed) <= TARGET_MB,
                        f"peak RSS with all demo models {ours:.0f} MB, {deployed:.0f} MB with the DynamoDB store "
                        f"(target <= {TARGET_MB} MB)")]
    return SectionResult(NUMBER, TITLE, markdown, verdicts, time.perf_counter() - started)
