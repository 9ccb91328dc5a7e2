"""The contract between the stages, checked end to end: what convert writes, the function's own loader and
runner read and serve with the SavedModel's answers (docs/model-format.md)."""
from __future__ import annotations

import numpy as np
import pytest

from function.models.manifest import load_manifest
from function.models.runner import ModelRunner

pytestmark = pytest.mark.slow


def saved_model_top1(saved_model_dir, inputs: dict) -> np.ndarray:
    import tensorflow as tf

    function = tf.saved_model.load(str(saved_model_dir)).signatures["serving_default"]
    (output,) = function(**{name: tf.constant(array) for name, array in inputs.items()}).values()
    return np.asarray(output).argmax(axis=1)


@pytest.mark.parametrize("mode", ["dynamic", "int8"])
def test_function_serves_the_converted_image_model(mode, image_saved_model, tmp_path, run_convert):
    assert run_convert(image_saved_model, tmp_path / "m", "--quantization", mode)[0] == 0
    manifest = load_manifest(tmp_path / "m")
    assert manifest.task == "image_classification" and manifest.input("image").name == "pixels"
    images = np.load(image_saved_model / "validation.npz")["inputs_image"][:64]
    probabilities = ModelRunner(manifest).run({"image": images})
    agreement = np.mean(probabilities.argmax(axis=1) == saved_model_top1(image_saved_model, {"pixels": images}))
    assert agreement >= 0.95


def test_function_serves_the_converted_int8_text_model(text_saved_model, tmp_path, run_convert):
    assert run_convert(text_saved_model, tmp_path / "t", "--quantization", "int8")[0] == 0
    manifest = load_manifest(tmp_path / "t")
    assert manifest.preprocessing["tokenizer"] == "tokenizer.json"
    samples = np.load(text_saved_model / "validation.npz")
    ids, mask = samples["inputs_input_ids"], samples["inputs_attention_mask"]
    probabilities = ModelRunner(manifest).run({"input_ids": ids, "attention_mask": mask})
    expected = saved_model_top1(text_saved_model, {"input_ids": ids, "attention_mask": mask})
    assert np.mean(probabilities.argmax(axis=1) == expected) >= 0.95
