"""Section 10: warm TF Serving :predict and Open Inference /infer over the raw interpreter call, for the tabular
model and for EfficientNet-Lite0 given a 224x224x3 float tensor, and what reading such a tensor from JSON costs.

The handler runs in-process inside the function's own venv and task root (bench/tensor_worker.py), result cache
off, alternating request by request with the model's LiteRT signature runner called on the same inputs as typed
arrays, both from models/ (`make models`).
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

import numpy as np

from bench import lambda_runtimes
from bench.paths import BUILD_DIR, MODELS_DIR, REPO_ROOT, SAVED_MODEL_DIR
from bench.report import SectionResult, table
from bench.stats import percentile
from kit.events import http_api_event

NUMBER = 10
TITLE = "Tensor protocols: warm :predict over the raw interpreter call"
IMAGE_MODEL = "efficientnet_lite0"
TABULAR = "tabular"
JSON_IMAGE_REQUESTS = 30  # each reads ~2-3 MB of JSON: enough for a stable median
JSON_RUNS = 15


def tensor_model_dir() -> Path:
    """The converted demo models: EfficientNet-Lite0 and tabular among them (`make models`)."""
    return MODELS_DIR


def _event(path: str, body: bytes, content_type: str, headers: dict | None = None) -> dict:
    event = http_api_event("POST", path, {})
    event["headers"] = {**event["headers"], "content-type": content_type, **(headers or {})}
    binary = content_type != "application/json"
    event["body"] = base64.b64encode(body).decode("ascii") if binary else body.decode("utf-8")
    event["isBase64Encoded"] = binary
    return event


def _shortest(array: np.ndarray) -> list:
    return np.asarray([float(text) for text in array.ravel().astype(str)]).reshape(array.shape).tolist()


def write_plan(plan_file: Path, arrays_dir: Path, requests: int) -> dict[str, int]:
    """Per case: the event, the model, the request count, and the same inputs as typed arrays (an .npz).
    Returns each case's HTTP body size (before API Gateway's base64 of a binary body)."""
    samples = np.load(SAVED_MODEL_DIR / TABULAR / "validation.npz")
    tabular = {key.removeprefix("inputs_"): samples[key] for key in samples.files}
    image = np.random.default_rng(0).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)

    def rows(count: int) -> list[dict]:
        return [{name: values[i].tolist() for name, values in tabular.items()} for i in range(count)]

    v2_tabular = {"inputs": [{"name": name, "shape": [1, *values.shape[1:]],
                              "datatype": "INT32" if values.dtype == np.int32 else "FP32",
                              "data": values[:1].ravel().tolist()} for name, values in tabular.items()]}
    v2_header = json.dumps({"inputs": [{"name": "image", "shape": list(image.shape), "datatype": "FP32",
                                        "parameters": {"binary_data_size": image.nbytes}}]}).encode()
    cases = {
        "tabular, `:predict` row format, 1 instance": (
            TABULAR, "/v1/models/tabular:predict", {"instances": rows(1)}, {k: v[:1] for k, v in tabular.items()},
            requests),
        "tabular, `:predict` row format, 64 instances": (
            TABULAR, "/v1/models/tabular:predict", {"instances": rows(64)}, {k: v[:64] for k, v in tabular.items()},
            requests),
        "tabular, `/v2 infer` JSON, 1 instance": (
            TABULAR, "/v2/models/tabular/infer", v2_tabular, {k: v[:1] for k, v in tabular.items()}, requests),
        "EfficientNet-Lite0, `:predict` row format, 150,528 floats as numpy's tolist() writes them": (
            IMAGE_MODEL, "/v1/models/efficientnet_lite0:predict", {"instances": image.tolist()}, {"image": image},
            JSON_IMAGE_REQUESTS),
        "EfficientNet-Lite0, `:predict` row format, shortest float32 decimals": (
            IMAGE_MODEL, "/v1/models/efficientnet_lite0:predict", {"instances": _shortest(image)}, {"image": image},
            JSON_IMAGE_REQUESTS),
    }
    plan, sizes = {}, {}
    for index, (case, (model, path, body, arrays, count)) in enumerate(cases.items()):
        npz = arrays_dir / f"case{index}.npz"
        np.savez(npz, **arrays)
        text = json.dumps(body).encode()
        plan[case] = {"model": model, "event": _event(path, text, "application/json"), "inputs": str(npz),
                      "requests": count}
        sizes[case] = len(text)
    npz = arrays_dir / "binary.npz"
    np.savez(npz, image=image)
    case = "EfficientNet-Lite0, `/v2 infer` binary tensor data"
    plan[case] = {"model": IMAGE_MODEL, "inputs": str(npz), "requests": requests,
                  "event": _event("/v2/models/efficientnet_lite0/infer", v2_header + image.tobytes(),
                                  "application/octet-stream", {"inference-header-content-length": str(len(v2_header))})}
    sizes[case] = len(v2_header) + image.nbytes
    plan_file.write_text(json.dumps(plan))
    return sizes


def measure(requests: int) -> tuple[dict, dict[str, int]]:
    function = lambda_runtimes.function_configuration()
    model_dir = tensor_model_dir()
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    out = BUILD_DIR / "tensor-results.json"
    with tempfile.TemporaryDirectory(prefix="bench-tensor-") as tmp:
        plan_file = Path(tmp) / "plan.json"
        sizes = write_plan(plan_file, Path(tmp), requests)
        environment = {
            "PATH": f"{function.venv.python.parent}:/usr/bin:/bin",
            "PYTHONPATH": f"{function.task_root}{os.pathsep}{REPO_ROOT}",
            "MODEL_DIR": str(model_dir),
            "RESULTS_CACHE": "off",
            "TMPDIR": tmp,
            "LANG": "C.UTF-8",
        }
        subprocess.run([str(function.venv.python), "-m", "bench.tensor_worker", str(plan_file), str(out)],
                       env=environment, cwd=tmp, stdout=subprocess.DEVNULL, check=True, timeout=1800)
    return json.loads(out.read_text()), sizes


def json_costs(model_dir: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "bench.tensor_json", "--runs", str(JSON_RUNS),
                           "--model-dir", str(model_dir)],
                          cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=1200)
    return done.stdout.strip()


def run(context) -> SectionResult:
    started = time.perf_counter()
    results, sizes = measure(context.warm_requests)
    rows = []
    for case, samples in results.items():
        handler, raw, parse = samples["handler_ms"], samples["raw_ms"], samples["parse_ms"]
        added = percentile(handler, 0.5) - percentile(raw, 0.5)
        rows.append([case, f"{sizes[case] / 1024:,.1f} KB", str(len(handler)), f"{percentile(handler, 0.5):.2f}",
                     f"{percentile(handler, 0.99):.2f}", f"{percentile(raw, 0.5):.3f}", f"{added:+.2f} ms",
                     f"**{percentile(handler, 0.5) / percentile(raw, 0.5) - 1:+.0%}**",
                     f"{percentile(parse, 0.5):.2f}"])
    markdown = "\n".join([
        "Handler calls (`function.app.handler(event, None)`, API Gateway v2 events, result cache off) alternate one "
        "by one with the raw interpreter call on the same inputs, already typed arrays (the model's LiteRT "
        "signature runner, 1 thread), in one process of the function's own venv and task root, after 5 untimed "
        "calls. Nearest-rank p50/p99 in ms. The overhead is everything beyond invoking the model: event, JSON "
        "text to typed arrays (*parse*, the handler's own stage timing), validation, cache keys, batching, the "
        "response JSON and the log line. `tabular` is served as float32 (docs/tensor-models.md).",
        "",
        table(["case", "HTTP body", "requests", "handler p50 ms", "handler p99 ms", "raw p50 ms", "added (p50)",
               "overhead (p50)", "parse p50 ms"], rows),
        "",
        f"Reading one 224x224x3 float32 tensor, step by step (`python -m bench.tensor_json --runs {JSON_RUNS}`, "
        "dev venv, median ms; the JSON text is the cost, the conversion to an array a fraction of it, and Triton's "
        "binary tensor data skips both):",
        "",
        json_costs(MODELS_DIR),
    ])
    return SectionResult(NUMBER, TITLE, markdown, [], time.perf_counter() - started)
