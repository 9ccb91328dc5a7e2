"""Reads manifest.json (schema 1, docs/model-format.md): everything the function knows about a model."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

SUPPORTED_SCHEMA = 1
TASKS = ("image_classification", "text_classification")


class ManifestError(ValueError):
    """A model directory whose manifest.json cannot be served."""


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str
    scale: float | None  # None for float tensors
    zero_point: int | None
    role: str | None = None

    @classmethod
    def from_json(cls, data: dict) -> "TensorSpec":
        quantization = data.get("quantization")
        return cls(
            name=data["name"],
            shape=tuple(int(x) for x in data["shape"]),
            dtype=data["dtype"],
            scale=float(quantization["scale"]) if quantization else None,
            zero_point=int(quantization["zero_point"]) if quantization else None,
            role=data.get("role"),
        )


@dataclass(frozen=True)
class Manifest:
    directory: Path
    name: str
    task: str
    labels: tuple[str, ...]
    output: str  # probabilities | logits
    preprocessing: dict
    model_file: Path
    model_sha256: str
    quantization: str
    signature: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]

    def input(self, role: str) -> TensorSpec | None:
        return next((spec for spec in self.inputs if spec.role == role), None)

    def summary(self) -> dict:
        """What GET /models tells about this model."""
        return {
            "name": self.name,
            "task": self.task,
            "version": self.model_sha256,
            "quantization": self.quantization,
            "input_shape": {spec.role or spec.name: list(spec.shape) for spec in self.inputs},
            "labels": len(self.labels),
        }


def load_manifest(directory: Path) -> Manifest:
    path = Path(directory) / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema") != SUPPORTED_SCHEMA:
            raise ManifestError(f"{path}: schema {data.get('schema')!r}, this function reads {SUPPORTED_SCHEMA}")
        if data["task"] not in TASKS:
            raise ManifestError(f"{path}: unknown task {data['task']!r}")
        if data.get("output", "probabilities") not in ("probabilities", "logits"):
            raise ManifestError(f"{path}: output must be probabilities or logits")
        manifest = Manifest(
            directory=Path(directory),
            name=data["name"],
            task=data["task"],
            labels=tuple(data["labels"]),
            output=data.get("output", "probabilities"),
            preprocessing=dict(data["preprocessing"]),
            model_file=Path(directory) / data["model_file"],
            model_sha256=data["model_sha256"],
            quantization=data.get("quantization", "unknown"),
            signature=data.get("signature", "serving_default"),
            inputs=tuple(TensorSpec.from_json(spec) for spec in data["inputs"]),
            outputs=tuple(TensorSpec.from_json(spec) for spec in data["outputs"]),
        )
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ManifestError(f"{path}: {type(exc).__name__}: {exc}") from exc
    needed = ("image",) if manifest.task == "image_classification" else ("input_ids",)
    for role in needed:
        if manifest.input(role) is None:
            raise ManifestError(f"{path}: a {manifest.task} model needs an input with role {role!r}")
    if not manifest.outputs:
        raise ManifestError(f"{path}: no outputs")
    return manifest
