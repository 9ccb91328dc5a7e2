"""A `tensor` SavedModel converted by hand into a directory the function serves, for the tests and the bench,
while `python -m convert` on this branch converts classifiers only.

The TFLite converter (float32, or float16 weights), then a schema-2 manifest written from the LiteRT model's own
serving_default signature: every input and output by name, shape (batch first, -1 for dynamic dimensions) and
dtype, in the order the sidecar lists them. Fidelity: per output, the largest absolute and relative error against
the SavedModel's own outputs on the validation inputs (saved_model/recipes/tabular.py writes those).

`python -m tests.support.tensor_model SAVED_MODEL_DIR OUT_DIR [--quantization float32|float16]`
"""
from __future__ import annotations

import argparse
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

MODEL_FILE = "model.tflite"
REFERENCE_FILE = "reference_outputs.npz"
QUANTIZATIONS = ("float32", "float16")


def convert_to_tflite(saved_model_dir: Path, quantization: str) -> bytes:
    from convert.quiet import import_tensorflow  # noqa: PLC0415  (6-9 s: only when a conversion runs)

    tf = import_tensorflow()
    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved_model_dir), signature_keys=["serving_default"])
    if quantization == "float16":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.target_spec.supported_types = [tf.float16]
    return converter.convert()


def _tensor(name: str, detail: dict) -> dict:
    shape = [int(d) for d in detail["shape_signature"]]
    scales = detail["quantization_parameters"]["scales"]
    quantization = None
    if len(scales):
        quantization = {"scale": float(scales[0]),
                        "zero_point": int(detail["quantization_parameters"]["zero_points"][0])}
    return {"name": name, "role": name, "shape": [1, *shape[1:]], "dtype": np.dtype(detail["dtype"]).name,
            "quantization": quantization}


def _ordered(details: dict, order: list[str] | None) -> list[dict]:
    names = order or sorted(details)
    if sorted(names) != sorted(details):
        raise ValueError(f"the sidecar lists {names}, the signature has {sorted(details)}")
    return [_tensor(name, details[name]) for name in names]


def fidelity(runner, saved_model_dir: Path) -> dict | None:
    """Per output: the largest absolute and relative error of LiteRT against the SavedModel's own outputs."""
    reference_file = saved_model_dir / REFERENCE_FILE
    if not reference_file.is_file():
        return None
    samples = np.load(saved_model_dir / "validation.npz")
    inputs = {key.removeprefix("inputs_"): samples[key] for key in samples.files if key.startswith("inputs_")}
    reference = np.load(reference_file)
    got = runner(**inputs)
    errors = {}
    for key in reference.files:
        name = key.removeprefix("outputs_")
        want, have = reference[key].astype(np.float64), np.asarray(got[name], np.float64)
        absolute = np.abs(have - want)
        errors[name] = {"max_abs_error": float(absolute.max()),
                        "max_rel_error": float((absolute / np.maximum(np.abs(want), 1e-6)).max())}
    return {"samples": int(len(next(iter(inputs.values())))), "outputs": errors}


def write_model_dir(saved_model_dir: Path, out_dir: Path, quantization: str = "float32") -> Path:
    from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415

    saved_model_dir, out_dir = Path(saved_model_dir), Path(out_dir)
    sidecar = json.loads((saved_model_dir / "sidecar.json").read_text(encoding="utf-8"))
    if sidecar.get("task") != "tensor":
        raise ValueError(f"{saved_model_dir} is a {sidecar.get('task')} model; this helper converts tensor models")
    content = convert_to_tflite(saved_model_dir, quantization)
    runner = Interpreter(model_content=content).get_signature_runner("serving_default")
    manifest = {
        "schema": 2,
        "name": sidecar["name"],
        "task": "tensor",
        "labels": None,
        "output": None,
        "preprocessing": None,
        "model_file": MODEL_FILE,
        "files": {MODEL_FILE: hashlib.sha256(content).hexdigest()},
        "quantization": quantization,
        "signature": "serving_default",
        "inputs": _ordered(runner.get_input_details(), sidecar.get("inputs")),
        "outputs": _ordered(runner.get_output_details(), sidecar.get("outputs")),
        "source": {"converted_by": "tests/support/tensor_model.py"},
        "fidelity": fidelity(runner, saved_model_dir),
        "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MODEL_FILE).write_bytes(content)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return out_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saved_model_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--quantization", choices=QUANTIZATIONS, default="float32")
    args = parser.parse_args()
    out = write_model_dir(args.saved_model_dir, args.out_dir, args.quantization)
    print(json.dumps(json.loads((out / "manifest.json").read_text())["fidelity"], indent=2))


if __name__ == "__main__":
    main()
