"""manifest.json (schema 2): everything the function needs to serve model.tflite, exactly as docs/model-format.md
defines it. `files` lists the sha256 of every file the function reads, so that anything that can change an answer
changes the model's serving identity."""
from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

from convert.litert_model import LiteRTModel
from convert.saved_model_inspect import SIGNATURE
from convert.sidecar import Sidecar
from convert.tasks.base import Binding

SCHEMA = 2
MODEL_FILE = "model.tflite"
MANIFEST_FILE = "manifest.json"


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _preprocessing(sidecar: Sidecar) -> dict | None:
    if sidecar.preprocessing is None:
        return None
    preprocessing = dict(sidecar.preprocessing)
    preprocessing.pop("keras_applications", None)  # its numbers are written out; the function reads only those
    if sidecar.tokenizer is not None:
        preprocessing["tokenizer"] = sidecar.tokenizer.name  # copied beside model.tflite
    return preprocessing


def build_manifest(*, name: str, sidecar: Sidecar | None, output_kind: str | None, binding: Binding, content: bytes,
                   model: LiteRTModel, mode: str, saved_model_digest: str, converter: str, fidelity: dict,
                   bounds: dict[str, dict]) -> dict:
    """Without a sidecar the task and preprocessing are unknown (null) and `output` is the gate's guess; `bounds`:
    each input's max_shape / value_range (convert/input_bounds.py)."""
    files = {MODEL_FILE: _sha256(content)}
    if sidecar is not None and sidecar.tokenizer is not None:
        files[sidecar.tokenizer.name] = _sha256(sidecar.tokenizer.read_bytes())
    classification = sidecar is None or sidecar.labels is not None
    multi_label = {"multi_label": True} if sidecar is not None and sidecar.multi_label else {}
    return {
        "schema": SCHEMA,
        "name": name,
        # Without a sidecar nothing says how to read the outputs: the function serves the model as tensors
        # (TF Serving's REST API, the Open Inference Protocol), which needs nothing more.
        "task": sidecar.task if sidecar else "tensor",
        "labels": sidecar.labels if sidecar else None,
        "output": output_kind if classification else None,
        **multi_label,
        "preprocessing": _preprocessing(sidecar) if sidecar else None,
        "model_file": MODEL_FILE,
        "files": files,
        "quantization": mode,
        "signature": SIGNATURE,
        "inputs": [_tensor(model.inputs[tensor].as_manifest(), role, bounds.get(tensor, {}))
                   for role, tensor in binding.inputs.items()],
        "outputs": [_tensor(model.outputs[tensor].as_manifest(), role) for role, tensor in binding.outputs.items()],
        "source": {"saved_model_sha256": saved_model_digest, "converter": converter},
        "fidelity": fidelity,
        "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _tensor(details: dict, role: str, bounds: dict | None = None) -> dict:
    return {"name": details["name"], "role": role, "shape": details["shape"], "dtype": details["dtype"],
            "quantization": details["quantization"], **(bounds or {})}


def write_model_files(directory: Path, content: bytes, manifest: dict, sidecar: Sidecar | None) -> None:
    """model.tflite, the tokenizer the function loads beside it (text models), and manifest.json last."""
    (directory / MODEL_FILE).write_bytes(content)
    if sidecar is not None and sidecar.tokenizer is not None:
        shutil.copyfile(sidecar.tokenizer, directory / sidecar.tokenizer.name)
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
