"""Open a SavedModel and describe its `serving_default` signature: tensor specs and a content digest."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from convert.errors import ConversionError, first_line
from convert.quiet import import_tensorflow

SIGNATURE = "serving_default"
GRAPH_FILES = ("saved_model.pb", "saved_model.pbtxt")


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int | None, ...]
    dtype: str  # a numpy dtype name: float32, int32, ...

    @property
    def is_float(self) -> bool:
        return self.dtype.startswith("float")


@dataclass
class SavedModelInfo:
    path: Path
    module: Any  # the loaded SavedModel: the signature function holds only weak references to its variables
    function: Any  # the concrete `serving_default` function: runs the reference model
    inputs: dict[str, TensorInfo]
    outputs: dict[str, TensorInfo]
    digest: str


def check_saved_model_dir(path: Path) -> None:
    """Fail fast, before TensorFlow is even imported, on paths that cannot be a SavedModel."""
    if not path.exists():
        raise ConversionError("missing_directory", f"{path} does not exist: pass the directory model.export() wrote")
    if path.is_file():
        hint = (" (convert takes a .keras file as it is: python -m convert MODEL.keras OUT --sidecar SIDECAR.json)"
                if path.suffix == ".keras" else "")
        raise ConversionError("not_a_saved_model", f"{path} is a file, not a SavedModel directory{hint}")
    if not any((path / name).is_file() for name in GRAPH_FILES):
        raise ConversionError(
            "not_a_saved_model",
            f"{path} is not a SavedModel (no saved_model.pb): export the Keras model with model.export({path.name})",
        )


def saved_model_digest(path: Path) -> str:
    """sha256 over the graph file and every variables/ file in sorted order, each prefixed by its relative path."""
    digest = hashlib.sha256()
    files = [path / name for name in GRAPH_FILES if (path / name).is_file()]
    variables = path / "variables"
    if variables.is_dir():
        files += sorted((p for p in variables.rglob("*") if p.is_file()), key=lambda p: p.relative_to(path).as_posix())
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _tensor_info(name: str, spec) -> TensorInfo:
    return TensorInfo(name=name, shape=tuple(spec.shape.as_list()), dtype=np.dtype(spec.dtype.as_numpy_dtype).name)


def load_saved_model(path: Path) -> SavedModelInfo:
    check_saved_model_dir(path)
    tf = import_tensorflow()  # 6-9 s: only once the path looks right

    try:
        loaded = tf.saved_model.load(str(path))
    except Exception as error:  # noqa: BLE001  (any load failure means the directory is not a usable SavedModel)
        raise ConversionError("not_a_saved_model",
                              f"{path} could not be loaded as a SavedModel: {first_line(error)}") from None
    signatures = list(loaded.signatures.keys())
    if SIGNATURE not in signatures:
        found = ", ".join(signatures) or "none"
        raise ConversionError(
            "no_serving_signature",
            f"{path} has no '{SIGNATURE}' signature (found: {found}): export the Keras model with model.export(DIR)",
        )
    function = loaded.signatures[SIGNATURE]
    args, kwargs = function.structured_input_signature
    if args:
        raise ConversionError("unmappable_inputs", f"{path}: the '{SIGNATURE}' signature takes positional inputs: "
                              "export with model.export(DIR), which names every input")
    inputs = {name: _tensor_info(name, spec) for name, spec in sorted(kwargs.items())}
    outputs = {name: _tensor_info(name, spec) for name, spec in sorted(function.structured_outputs.items())}
    return SavedModelInfo(path=path, module=loaded, function=function, inputs=inputs, outputs=outputs,
                          digest=saved_model_digest(path))

