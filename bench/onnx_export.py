"""Converts the demo SavedModel to ONNX with tf2onnx for baseline (c); a failure is a result to report, not a crash.

The output directory holds model.onnx + the SavedModel's sidecar.json, the shape bench/baselines/onnx_handler.py
loads. It is reused while the SavedModel's saved_model.pb is unchanged.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.paths import BUILD_DIR

OPSET = 17
CONVERT_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class OnnxExport:
    directory: Path | None
    error: str | None  # the converter's last meaningful line when it failed


def export(saved_model: Path) -> OnnxExport:
    out = BUILD_DIR / "onnx" / saved_model.name
    stamp = hashlib.sha256((saved_model / "saved_model.pb").read_bytes()).hexdigest() + f" opset {OPSET} erf"
    if (out / ".stamp").exists() and (out / ".stamp").read_text() == stamp:
        return OnnxExport(out, None)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    command = [sys.executable, "-m", "tf2onnx.convert", "--saved-model", str(saved_model),
               "--signature_def", "serving_default", "--opset", str(OPSET), "--output", str(out / "model.onnx")]
    print(f"==> converting {saved_model.name} to ONNX with tf2onnx", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CONVERT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return OnnxExport(None, f"tf2onnx did not finish within {CONVERT_TIMEOUT_SECONDS} s")
    if done.returncode != 0 or not (out / "model.onnx").exists():
        return OnnxExport(None, _error_line(done.stderr) or f"tf2onnx exited with {done.returncode}")
    _replace_erfc(out / "model.onnx")
    shutil.copy(saved_model / "sidecar.json", out / "sidecar.json")
    (out / ".stamp").write_text(stamp)
    return OnnxExport(out, None)


def _replace_erfc(model_file: Path) -> None:
    """tf2onnx 1.17 emits TF's Erfc (Keras' exact GELU) as an ONNX op that does not exist: 1 - Erf(x) is the same."""
    import onnx  # noqa: PLC0415
    from onnx import helper, numpy_helper  # noqa: PLC0415

    model = onnx.load(str(model_file))
    graph = model.graph
    if not any(node.op_type == "Erfc" for node in graph.node):
        return
    import numpy as np  # noqa: PLC0415

    graph.initializer.append(numpy_helper.from_array(np.array(1.0, np.float32), "erfc_one"))
    nodes = []
    for node in graph.node:
        if node.op_type != "Erfc":
            nodes.append(node)
            continue
        erf = f"{node.name}_erf"
        nodes += [helper.make_node("Erf", list(node.input), [erf], name=erf),
                  helper.make_node("Sub", ["erfc_one", erf], list(node.output), name=node.name)]
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.save(model, str(model_file))


def _error_line(stderr: str) -> str:
    """The exception line of a traceback, else the last non-empty line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line.split(":", 1)[0]]
    return (errors or lines or [""])[-1][:300]
