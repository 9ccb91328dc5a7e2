"""Validation/representative samples: checked against the serving signature, or generated to fit it."""
from __future__ import annotations

import numpy as np
import pytest

from convert.errors import ConversionError
from convert.samples import OPEN_SEQUENCE_LENGTH, generate_samples, load_samples
from convert.saved_model_inspect import TensorInfo

IMAGE = {"pixels": TensorInfo("pixels", (None, 4, 4, 3), "float32")}
TEXT = {"ids": TensorInfo("ids", (None, None), "int32"), "mask": TensorInfo("mask", (None, None), "int32")}


def test_loads_inputs_by_role_casts_to_the_signature_dtype_and_limits(tmp_path):
    np.savez(tmp_path / "v.npz", inputs_image=np.ones((5, 4, 4, 3), np.float64), labels=np.arange(5))
    samples = load_samples(tmp_path / "v.npz", {"image": "pixels"}, IMAGE, limit=3)
    assert samples.inputs["pixels"].dtype == np.float32 and samples.count == 3
    assert samples.labels.tolist() == [0, 1, 2] and samples.source == "v.npz"
    assert samples.one(1)["pixels"].shape == (1, 4, 4, 3)


def test_integral_floats_become_token_ids_but_fractions_do_not(tmp_path):
    np.savez(tmp_path / "ok.npz", inputs_input_ids=np.array([[1.0, 2.0]]))
    assert load_samples(tmp_path / "ok.npz", {"input_ids": "ids"}, TEXT).inputs["ids"].dtype == np.int32
    np.savez(tmp_path / "bad.npz", inputs_input_ids=np.array([[1.5, 2.0]]))
    with pytest.raises(ConversionError, match="expects whole int32 values"):
        load_samples(tmp_path / "bad.npz", {"input_ids": "ids"}, TEXT)


@pytest.mark.parametrize(("arrays", "message"), [
    ({"images": np.ones((2, 4, 4, 3))}, "no 'inputs_image' array (found: images)"),
    ({"inputs_image": np.ones((2, 4, 4))}, "has shape (2, 4, 4), the signature input 'pixels' expects (N, 4, 4, 3)"),
    ({"inputs_image": np.ones((0, 4, 4, 3))}, "same, non-zero number of samples"),
    ({"inputs_image": np.ones((2, 4, 4, 3)), "labels": np.array([0.5, 1.0])}, "1-D array of integer class ids"),
    ({"inputs_image": np.ones((2, 4, 4, 3)), "labels": np.array([0, 1, 2])}, "one entry per sample"),
])
def test_mismatches_name_the_file_and_the_problem(tmp_path, arrays, message):
    np.savez(tmp_path / "v.npz", **arrays)
    with pytest.raises(ConversionError) as raised:
        load_samples(tmp_path / "v.npz", {"image": "pixels"}, IMAGE)
    assert raised.value.code == "bad_samples" and message in raised.value.message
    assert raised.value.message.startswith("v.npz: ")


def test_unreadable_or_missing_file(tmp_path):
    (tmp_path / "v.npz").write_text("not a zip")
    with pytest.raises(ConversionError, match="not a readable .npz file"):
        load_samples(tmp_path / "v.npz", {"image": "pixels"}, IMAGE)
    with pytest.raises(ConversionError, match="does not exist"):
        load_samples(tmp_path / "absent.npz", {"image": "pixels"}, IMAGE)


def test_generated_samples_fit_the_signature():
    image = generate_samples({"image": "pixels"}, IMAGE, count=5)
    assert image.inputs["pixels"].shape == (5, 4, 4, 3) and image.inputs["pixels"].dtype == np.float32
    assert 0 <= image.inputs["pixels"].min() and image.inputs["pixels"].max() < 1 and image.labels is None
    text = generate_samples({"input_ids": "ids", "attention_mask": "mask"}, TEXT, count=3)
    assert text.inputs["ids"].shape == (3, OPEN_SEQUENCE_LENGTH) and text.inputs["ids"].dtype == np.int32
    assert text.inputs["ids"].min() >= 1 and (text.inputs["mask"] == 1).all()
    assert text.source == "generated"


def test_generated_samples_are_reproducible():
    first = generate_samples({"image": "pixels"}, IMAGE, count=2)
    second = generate_samples({"image": "pixels"}, IMAGE, count=2)
    assert np.array_equal(first.inputs["pixels"], second.inputs["pixels"])


def test_string_inputs_cannot_be_generated_and_say_why():
    with pytest.raises(ConversionError, match="tokenize outside the model, feed int32 ids") as raised:
        generate_samples({"input_ids": "text"}, {"text": TensorInfo("text", (None, 1), "object")})
    assert raised.value.code == "needs_flex"


def test_tensor_inputs_are_keyed_by_their_own_name_and_bools_stay_bools(tmp_path):
    specs = {"a": TensorInfo("a", (None, 2), "float32"), "flags": TensorInfo("flags", (None, 3), "bool")}
    roles = {"a": "a", "flags": "flags"}  # the tensor task: each input's role is its name
    np.savez(tmp_path / "v.npz", inputs_a=np.ones((4, 2)), inputs_flags=np.array([[1, 0, 1]] * 4))
    samples = load_samples(tmp_path / "v.npz", roles, specs)
    assert samples.inputs["flags"].dtype == np.bool_ and samples.inputs["a"].dtype == np.float32
    np.savez(tmp_path / "bad.npz", inputs_a=np.ones((4, 2)), inputs_flags=np.full((4, 3), 2))
    with pytest.raises(ConversionError, match="inputs_flags holds int64 values, the model expects whole bool values"):
        load_samples(tmp_path / "bad.npz", roles, specs)
