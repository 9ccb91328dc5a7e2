"""The manifest alone is enough to serve the model: with only manifest.json and the files it lists, LiteRT and the
function's own quantize/dequantize reproduce the SavedModel's answers for every task (docs/model-format.md)."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from function.model.manifest import TensorSpec
from function.model.runner import dequantize, quantize

pytestmark = pytest.mark.slow


def saved_model_outputs(saved_model_dir, inputs: dict) -> dict[str, np.ndarray]:
    import tensorflow as tf

    function = tf.saved_model.load(str(saved_model_dir)).signatures["serving_default"]
    return {name: np.asarray(value) for name, value in
            function(**{name: tf.constant(array) for name, array in inputs.items()}).items()}


def served_outputs(model_dir, samples) -> tuple[dict, dict[str, np.ndarray]]:
    """What a server that knows nothing but manifest.json answers: inputs_<role> in, outputs by role."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    for file, digest in manifest["files"].items():
        assert hashlib.sha256((model_dir / file).read_bytes()).hexdigest() == digest
    runner = Interpreter(model_path=str(model_dir / manifest["model_file"])).get_signature_runner(
        manifest["signature"])
    inputs = {spec["name"]: quantize(samples[f"inputs_{spec['role']}"], TensorSpec.from_json(spec))
              for spec in manifest["inputs"]}
    raw = runner(**inputs)
    return manifest, {spec["role"]: dequantize(raw[spec["name"]], TensorSpec.from_json(spec))
                      for spec in manifest["outputs"]}


@pytest.mark.parametrize(("fixture", "mode"), [
    ("image_saved_model", "int8"), ("text_saved_model", "int8"),
    ("embedding_saved_model", "float16"), ("tensor_saved_model", "float16"),
])
def test_manifest_roles_and_quantization_reproduce_the_saved_model(fixture, mode, request, tmp_path, run_convert):
    saved_model = request.getfixturevalue(fixture)
    code, _, err = run_convert(saved_model, tmp_path / "m", "--quantization", mode)
    assert code == 0, err
    samples = dict(np.load(saved_model / "validation.npz"))
    manifest, served = served_outputs(tmp_path / "m", {key: value[:40] for key, value in samples.items()})
    expected = saved_model_outputs(saved_model, {spec["name"]: samples[f"inputs_{spec['role']}"][:40]
                                                 for spec in manifest["inputs"]})
    for spec in manifest["outputs"]:
        want, got = expected[spec["name"]], served[spec["role"]]
        if manifest["task"].endswith("classification"):
            assert np.mean(got.argmax(axis=1) == want.argmax(axis=1)) >= 0.95
        else:
            scale = np.abs(want).max()
            assert np.abs(got - want).max() <= 0.01 * scale, spec["name"]
    if manifest["task"] == "tensor":  # every signature output is served
        assert {spec["name"] for spec in manifest["outputs"]} == set(expected)
