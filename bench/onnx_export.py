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
    stamp = hashlib.sha256((saved_model / "saved_model.pb").read_bytes()).hexdigest() + f" opset {OPSET}"
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
    shutil.copy(saved_model / "sidecar.json", out / "sidecar.json")
    (out / ".stamp").write_text(stamp)
    return OnnxExport(out, None)


def _error_line(stderr: str) -> str:
    """The exception line of a traceback, else the last non-empty line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line.split(":", 1)[0]]
    return (errors or lines or [""])[-1][:300]
