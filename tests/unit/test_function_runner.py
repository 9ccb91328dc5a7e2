"""The LiteRT runner: int8 arithmetic from the manifest, and batches that equal one-by-one runs."""
from __future__ import annotations

import numpy as np
import pytest

from function.model.manifest import TensorSpec, load_manifest
from function.model.outputs import probabilities, ranked
from function.model.runner import ModelRunner, dequantize, quantize
from tests.support.function_fixtures import demo_models  # noqa: F401

INT8 = TensorSpec(name="x", shape=(1, 4), dtype="int8", scale=0.5, zero_point=-3)
UINT8 = TensorSpec(name="x", shape=(1, 4), dtype="uint8", scale=0.1, zero_point=10)


def test_quantize_rounds_shifts_and_clips():
    values = np.array([0.0, 1.0, 1000.0, -1000.0], dtype=np.float32)
    assert quantize(values, INT8).tolist() == [-3, -1, 127, -128]
    assert quantize(values, UINT8).tolist() == [10, 20, 255, 0]


def test_dequantize_inverts_quantize_within_half_a_step():
    values = np.linspace(-10, 10, 41, dtype=np.float32)
    np.testing.assert_allclose(dequantize(quantize(values, INT8), INT8), values, atol=0.25 + 1e-6)


def test_float_tensors_pass_through():
    spec = TensorSpec(name="x", shape=(1,), dtype="float32", scale=None, zero_point=None)
    values = np.array([0.25], dtype=np.float64)
    assert quantize(values, spec).dtype == np.float32
    assert dequantize(values, spec).tolist() == [0.25]


@pytest.mark.parametrize("name", ["digits", "efficientnet_lite0"])
def test_a_batch_equals_single_runs_in_order(demo_models, name):  # noqa: F811
    manifest = load_manifest(demo_models / name)
    runner = ModelRunner(manifest)
    shape = manifest.input("image").shape[1:]
    batch = np.random.default_rng(0).uniform(-1, 1, (3, *shape)).astype(np.float32)
    together = runner.run({"image": batch})["scores"]
    one_by_one = np.concatenate([runner.run({"image": batch[i:i + 1]})["scores"] for i in range(3)])
    assert together.shape == (3, len(manifest.labels))
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_ranked_is_best_first_and_stable():
    probs = np.array([0.1, 0.4, 0.4, 0.1])
    assert [item["label"] for item in ranked(probs, ("a", "b", "c", "d"), 3)] == ["b", "c", "a"]


def test_one_unit_output_is_binary(demo_models):  # noqa: F811
    manifest = load_manifest(demo_models / "sentiment")
    probs = probabilities(np.array([[0.8], [0.1]]), manifest.output)
    if manifest.output == "probabilities":
        np.testing.assert_allclose(probs, [[0.2, 0.8], [0.9, 0.1]])
    assert probs.shape == (2, 2) and np.allclose(probs.sum(axis=1), 1.0)
