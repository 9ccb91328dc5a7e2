"""Reads manifest.json (schema 2, docs/model-format.md): everything the function knows about a model."""
from __future__ import annotations

import json
from pathlib import Path

from function.model.identity import serving_version
from function.records import named_tuple

SUPPORTED_SCHEMA = 2
MANIFEST_FILE = "manifest.json"


class ManifestError(ValueError):
    """A model directory whose manifest.json cannot be served; the message says why."""


@named_tuple
class TensorSpec:
    name: str
    shape: tuple[int, ...]  # batch first; -1 for a dynamic dimension
    dtype: str
    scale: float | None  # None for float tensors
    zero_point: int | None
    role: str = ""  # what the task calls it: image, input_ids, scores, embedding...; a tensor model's own name
    # Input bounds `convert` found in the model (docs/model-format.md, "Input bounds"): the largest size of each
    # dimension (-1 for the batch), and the values an id input may take (the rows of the table it indexes).
    max_shape: tuple[int, ...] | None = None
    value_range: tuple[int, int] | None = None

    @classmethod
    def from_json(cls, data: dict) -> "TensorSpec":
        quantization = data.get("quantization")
        spec = cls(
            name=str(data["name"]),
            role=str(data.get("role") or data["name"]),
            shape=tuple(int(x) for x in data["shape"]),
            dtype=str(data["dtype"]),
            scale=float(quantization["scale"]) if quantization else None,
            zero_point=int(quantization["zero_point"]) if quantization else None,
            max_shape=_ints(data["max_shape"], "max_shape") if data.get("max_shape") is not None else None,
            value_range=_ints(data["value_range"], "value_range") if data.get("value_range") is not None else None,
        )
        if spec.max_shape is not None and (len(spec.max_shape) != len(spec.shape) or any(
                fixed >= 0 and bound != fixed or fixed < 0 and bound < 1  # the batch (first) is MAX_TENSOR_BATCH's
                for fixed, bound in zip(spec.shape[1:], spec.max_shape[1:]))):
            raise ValueError(f"input {spec.name!r}: max_shape {list(spec.max_shape)} does not fit shape "
                             f"{list(spec.shape)}")
        if spec.value_range is not None and (len(spec.value_range) != 2 or spec.value_range[0] > spec.value_range[1]):
            raise ValueError(f"input {spec.name!r}: value_range {list(spec.value_range)} is not [lowest, highest]")
        return spec

    @property
    def served_dtype(self) -> str:
        """The dtype clients send and receive, as the tensor protocols advertise it: the tensor's own (a float16
        tensor is FP16), but integer-quantized tensors are fed and read as float32 through their scale."""
        return "float32" if self.scale is not None else self.dtype

    def as_json(self) -> dict:
        bounds = {"max_shape": list(self.max_shape)} if self.max_shape is not None else {}
        if self.value_range is not None:
            bounds["value_range"] = list(self.value_range)
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, **bounds}


def _ints(value: object, field: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        raise ValueError(f"{field} must be a list of integers, not {value!r}")
    return tuple(value)


@named_tuple
class Manifest:
    directory: Path
    name: str
    task: str
    version: str  # the serving version: every cache key and `model_version` answer carries it
    labels: tuple[str, ...]
    output: str | None  # probabilities | logits, for classifiers
    preprocessing: dict
    model_file: Path
    files: dict[str, str]  # file name -> sha256
    quantization: str
    signature: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    multi_label: bool = False  # classifiers: each label scored on its own (sigmoid units), not one of them
    created_at: str = ""  # when `convert` wrote it (ISO 8601, UTC), as the manifest says; "" when it says nothing

    def input(self, role: str) -> TensorSpec | None:
        return next((spec for spec in self.inputs if spec.role == role), None)

    def output_spec(self, role: str) -> TensorSpec | None:
        return next((spec for spec in self.outputs if spec.role == role), None)

    def file(self, key: str, default: str) -> Path:
        """A file the preprocessing names (e.g. the tokenizer), inside the model directory."""
        return self.directory / str(self.preprocessing.get(key, default))

    def _client_inputs(self) -> list[dict]:
        """What clients send: the model's tensors, or a structured model's raw columns (its preprocessing's)."""
        if self.preprocessing.get("type") == "columns":
            return [{"name": column.get("name"), "shape": column.get("shape"), "dtype": column.get("dtype")}
                    for column in self.preprocessing.get("columns") or []]
        return [spec.as_json() for spec in self.inputs]

    def summary(self) -> dict:
        """What GET /models tells about this model."""
        return {
            "name": self.name,
            "task": self.task,
            "version": self.version,
            "quantization": self.quantization,
            "inputs": self._client_inputs(),
            "outputs": [spec.as_json() for spec in self.outputs],
            "labels": len(self.labels),
        }


def _file_name(name: object, path: Path) -> str:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        raise ManifestError(f"{path}: {name!r} is not a file name inside the model directory")
    return name


def load_manifest(directory: Path) -> Manifest:
    """Parse and check one manifest; a missing file or field raises ManifestError saying which."""
    directory = Path(directory)
    path = directory / MANIFEST_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ManifestError(f"{path}: {type(exc).__name__}: {exc}") from exc
    return parse_manifest(data, directory, path)


def parse_manifest(data: object, directory: Path, where: object) -> Manifest:
    """A manifest already read (from a file, or from a published model index) for the model directory
    `directory`; `where` names its origin in error messages."""
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: not a JSON object")
    if data.get("schema") != SUPPORTED_SCHEMA:
        raise ManifestError(f"{where}: schema {data.get('schema')!r}; this function reads schema {SUPPORTED_SCHEMA}: "
                            "convert the model again with this version's `python -m convert`")
    try:
        files = {_file_name(name, where): str(digest) for name, digest in dict(data["files"]).items()}
        model_file = _file_name(data["model_file"], where)
        if model_file not in files:
            raise ManifestError(f"{where}: model_file {model_file!r} is not listed in files")
        manifest = Manifest(
            directory=Path(directory),
            name=str(data["name"]),
            task=str(data["task"]),
            version=serving_version(data),
            labels=tuple(str(label) for label in data.get("labels") or ()),
            output=data.get("output"),
            preprocessing=dict(data.get("preprocessing") or {}),
            model_file=Path(directory) / model_file,
            files=files,
            quantization=str(data.get("quantization", "unknown")),
            signature=str(data.get("signature", "serving_default")),
            inputs=tuple(TensorSpec.from_json(spec) for spec in data["inputs"]),
            outputs=tuple(TensorSpec.from_json(spec) for spec in data["outputs"]),
            multi_label=data.get("multi_label", False),
            created_at=str(data.get("created_at") or ""),
        )
    except ManifestError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError, RecursionError) as exc:  # Infinity in a shape, ...
        raise ManifestError(f"{where}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(manifest.multi_label, bool):
        raise ManifestError(f"{where}: multi_label must be true or false, not {manifest.multi_label!r}")
    if not manifest.name:
        raise ManifestError(f"{where}: the model has no name")
    if not manifest.outputs:
        raise ManifestError(f"{where}: no outputs")
    return manifest
