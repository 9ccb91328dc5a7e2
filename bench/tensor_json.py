"""What one 224x224x3 float32 tensor (150,528 numbers) costs to read from a request, step by step.

`python -m bench.tensor_json [--runs 15] [--model-dir models]`: JSON bodies as clients write them (TF Serving row
format, Open Inference flat data; floats from numpy's tolist(), 17 significant digits, or the shortest float32
decimals), then each way of turning the parsed lists into a float32 array, then the whole codec parse
(function/protocols/) as the routes run it, and Triton's binary tensor data, which skips JSON numbers altogether.
Prints one markdown table: median ms of `--runs` runs each, the cases interleaved run by run.
"""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path

import numpy as np

from function.log import Timings
from function.model.manifest import load_manifest
from function.protocols import open_inference, tfserving
from function.protocols.tensor_values import to_array
from function.config import TaskLimits
from function.tasks.tensor import TensorTask

REPO = Path(__file__).resolve().parent.parent
MODEL = "efficientnet_lite0"
SHAPE = (224, 224, 3)


def image() -> np.ndarray:
    """A preprocessed-looking image: float32 values in [-1, 1), as EfficientNet-Lite0 takes them."""
    return np.random.default_rng(0).uniform(-1, 1, SHAPE).astype(np.float32)


def shortest(array: np.ndarray) -> list:
    """The same float32 values written with their shortest decimals (what a float32-aware client sends)."""
    return np.asarray([float(text) for text in array.ravel().astype(str)]).reshape(array.shape).tolist()


def checked_walk(nested: list) -> np.ndarray:
    """The obvious validator: every element's type checked in Python, then one conversion."""
    for value in itertools.chain.from_iterable(itertools.chain.from_iterable(nested[0])):
        if type(value) not in (float, int):
            raise ValueError(value)
    return np.asarray(nested, dtype=np.float32)


def checked_flatten(nested: list) -> np.ndarray:
    """Flatten level by level, checking every level is lists of one length and every leaf a number, then fromiter:
    what a correct fromiter needs."""
    shape, level = [], [nested]
    probe = nested
    while isinstance(probe, list):
        shape.append(len(probe))
        probe = probe[0] if probe else None
    for size in shape:
        if set(map(type, level)) != {list} or set(map(len, level)) != {size}:
            raise ValueError("ragged")
        level = list(itertools.chain.from_iterable(level))
    if not set(map(type, level)) <= {float, int}:
        raise ValueError("not numbers")
    return np.fromiter(level, np.float64, count=len(level)).reshape(shape).astype(np.float32)


def cases(task: TensorTask) -> dict[str, tuple[str, object]]:
    """name -> (what the size column shows, a zero-argument call)."""
    spec = task.inputs[0]
    pixels = image()
    long_body = json.dumps({"instances": [pixels.tolist()]}).encode()
    short_body = json.dumps({"instances": [shortest(pixels)]}).encode()
    v2_body = json.dumps({"inputs": [{"name": spec.name, "shape": [1, *SHAPE], "datatype": "FP32",
                                      "data": pixels.ravel().tolist()}]}).encode()
    v2_header = json.dumps({"inputs": [{"name": spec.name, "shape": [1, *SHAPE], "datatype": "FP32",
                                        "parameters": {"binary_data_size": pixels.nbytes}}]}).encode()
    binary_body = v2_header + pixels.tobytes()
    nested = json.loads(long_body)["instances"]

    def kb(body: bytes) -> str:
        return f"{len(body) / 1024:,.0f} KB"

    def tf_parse(body: bytes):
        return lambda: tfserving.parse_predict(json.loads(body), task, 16, tfserving.EncodedImages(16, Timings()))

    return {
        "json.loads, TF Serving row body, tolist() floats (17 digits)": (kb(long_body), lambda: json.loads(long_body)),
        "json.loads, TF Serving row body, shortest float32 decimals": (kb(short_body), lambda: json.loads(short_body)),
        "json.loads, Open Inference body, flat data (17 digits)": (kb(v2_body), lambda: json.loads(v2_body)),
        "lists -> array: np.asarray(lists, float32), unchecked (takes \"1.5\", null)": (
            "", lambda: np.asarray(nested, dtype=np.float32)),
        "lists -> array: a Python type check per element, then np.asarray": ("", lambda: checked_walk(nested)),
        "lists -> array: np.fromiter over the flattened lists, unchecked (takes \"1.5\", null, ragged lists)": (
            "", lambda: np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(nested[0])),
                                    np.float32, count=150_528)),
        "lists -> array: flattened with every level and leaf checked, then np.fromiter": (
            "", lambda: checked_flatten(nested)),
        "lists -> array: np.asarray (kind found in C) + astype, as served": (
            "", lambda: to_array(nested, spec, "'instances'")),
        "whole TF Serving parse (json.loads + checks + array), 17 digits": (kb(long_body), tf_parse(long_body)),
        "whole TF Serving parse, shortest float32 decimals": (kb(short_body), tf_parse(short_body)),
        "whole Open Inference parse, binary tensor data": (kb(binary_body), lambda: open_inference.parse_infer(
            json.loads(open_inference.split_body(binary_body, str(len(v2_header)))[0]),
            binary_body[len(v2_header):], task, 16)),
    }


def measure(calls: dict[str, tuple[str, object]], runs: int) -> dict[str, float]:
    timings: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(runs):
        for name, (_, call) in calls.items():
            started = time.perf_counter()
            call()
            timings[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in timings.items()}


def table(runs: int, model_dir: Path) -> str:
    task = TensorTask(load_manifest(model_dir / MODEL), TaskLimits())
    calls = cases(task)
    medians = measure(calls, runs)
    lines = ["| step | body | median ms |", "|---|---:|---:|"]
    lines += [f"| {name} | {calls[name][0]} | {ms:.1f} |" for name, ms in medians.items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--model-dir", type=Path, default=REPO / "models")
    args = parser.parse_args()
    print(table(args.runs, args.model_dir))


if __name__ == "__main__":
    main()
