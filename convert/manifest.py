"""manifest.json: everything the function needs to serve model.tflite, exactly as docs/model-format.md defines it."""
from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

from convert.fidelity import FidelityResult
from convert.litert_model import LiteRTModel
from convert.saved_model_inspect import SIGNATURE
from convert.sidecar import Sidecar

MODEL_FILE = "model.tflite"
MANIFEST_FILE = "manifest.json"


def build_manifest(*, name: str, sidecar: Sidecar | None, output_kind: str, roles: dict[str, str], content: bytes,
                   model: LiteRTModel, mode: str, saved_model_digest: str, converter: str,
                   fidelity: FidelityResult) -> dict:
    """Without a sidecar the model's task, labels and preprocessing are unknown: they are written as null."""
    role_of_input = {input_name: role for role, input_name in roles.items()}
    preprocessing = None
    if sidecar is not None:
        preprocessing = dict(sidecar.preprocessing)
        if sidecar.tokenizer is not None:
            preprocessing["tokenizer"] = sidecar.tokenizer.name
    return {
        "schema": 1,
        "name": name,
        "task": sidecar.task if sidecar else None,
        "labels": sidecar.labels if sidecar else None,
        "output": output_kind,
        "preprocessing": preprocessing,
        "model_file": MODEL_FILE,
        "model_sha256": hashlib.sha256(content).hexdigest(),
        "quantization": mode,
        "signature": SIGNATURE,
        "inputs": [{"role": role_of_input[tensor.name], **tensor.as_manifest()} for tensor in model.inputs.values()],
        "outputs": [tensor.as_manifest() for tensor in model.outputs.values()],
        "source": {"saved_model_sha256": saved_model_digest, "converter": converter},
        "fidelity": fidelity.as_manifest(),
        "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def write_model_files(directory: Path, content: bytes, manifest: dict, sidecar: Sidecar | None) -> None:
    """model.tflite, manifest.json and, for text models, the tokenizer the function must load beside it."""
    (directory / MODEL_FILE).write_bytes(content)
    if sidecar is not None and sidecar.tokenizer is not None:
        shutil.copyfile(sidecar.tokenizer, directory / sidecar.tokenizer.name)
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
