"""The `tabular` demo SavedModel: a tensor sidecar per the contract, samples that fit its signature, reference outputs
that are the SavedModel's own, and the accuracy it claims.

Uses saved_model/tabular when `make models` has built it, else builds it into a temporary directory (~1-2 min).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from saved_model.recipes import tabular

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tabular_dir(tmp_path_factory) -> Path:
    directory = REPO / "saved_model" / "tabular"
    if (directory / tabular.REFERENCE_FILE).is_file():
        return directory
    directory = tmp_path_factory.mktemp("tabular") / "tabular"
    tabular.build(directory)
    return directory


@pytest.fixture(scope="module")
def signature(tabular_dir):
    import tensorflow as tf  # noqa: PLC0415

    return tf.saved_model.load(str(tabular_dir)).signatures["serving_default"]


def test_sidecar_is_a_tensor_sidecar(tabular_dir):
    sidecar = json.loads((tabular_dir / "sidecar.json").read_text())
    assert sidecar["schema"] == 1 and sidecar["task"] == "tensor" and sidecar["name"] == "tabular"
    assert sidecar["inputs"] == ["vitals", "sex", "serum"] and sidecar["outputs"] == ["progression", "risk"]
    assert not {"labels", "output", "preprocessing"} & set(sidecar)
    assert (tabular_dir / sidecar["validation"]["samples"]).is_file()


def test_samples_fit_the_signature_and_the_reference_is_its_own_output(tabular_dir, signature):
    import tensorflow as tf  # noqa: PLC0415

    _, specs = signature.structured_input_signature
    samples = np.load(tabular_dir / "validation.npz")
    inputs = {}
    for name, spec in specs.items():
        array = samples[f"inputs_{name}"]
        assert array.dtype == spec.dtype.as_numpy_dtype and list(array.shape[1:]) == spec.shape.as_list()[1:]
        inputs[name] = array
    assert sorted(signature.structured_outputs) == ["progression", "risk"]
    reference = np.load(tabular_dir / tabular.REFERENCE_FILE)
    computed = signature(**{name: tf.constant(value) for name, value in inputs.items()})
    for name, tensor in computed.items():
        np.testing.assert_array_equal(reference[f"outputs_{name}"], tensor.numpy())


def test_the_claimed_accuracy_and_that_it_beats_least_squares(tabular_dir):
    metrics = json.loads((tabular_dir / "sidecar.json").read_text())["metrics"]
    _, test, _, test_target, edges = tabular.load_split()
    reference = np.load(tabular_dir / tabular.REFERENCE_FILE)
    mae = float(np.mean(np.abs(reference["outputs_progression"][:, 0] - test_target)))
    accuracy = float(np.mean(reference["outputs_risk"].argmax(axis=1) == tabular.risk_level(test_target, edges)))
    assert mae == pytest.approx(metrics["test_mae"], abs=0.01)
    assert accuracy == pytest.approx(metrics["risk_accuracy"], abs=1e-3)
    assert mae < metrics["least_squares_test_mae"] and accuracy > 1 / 3
