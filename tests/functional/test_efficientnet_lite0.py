"""The efficientnet_lite0 demo SavedModel is faithful to the original network: on real photos shipped in
scikit-image, scikit-learn and matplotlib, TensorFlow running the exported SavedModel ranks the expected
ImageNet class in its top 5. Also checks the sidecar and sample files against docs/model-format.md."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from saved_model.recipes import efficientnet_lite0, photos

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "saved_model" / "efficientnet_lite0"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """The directory `make models` built, else a fresh build from the recipe (~30 s)."""
    if (BUILT / "saved_model.pb").is_file() and (BUILT / "sidecar.json").is_file():
        return BUILT
    out = tmp_path_factory.mktemp("efficientnet_lite0") / "efficientnet_lite0"
    efficientnet_lite0.build(out)
    return out


@pytest.fixture(scope="module")
def sidecar(model_dir) -> dict:
    return json.loads((model_dir / "sidecar.json").read_text())


@pytest.fixture(scope="module")
def serving(model_dir):
    import tensorflow as tf  # noqa: PLC0415  (only this module needs TensorFlow)

    return tf.saved_model.load(str(model_dir)).signatures["serving_default"]


@pytest.fixture(scope="module")
def photo_probabilities(serving, sidecar) -> np.ndarray:
    """One row of class probabilities per photo, preprocessed afresh from the image files."""
    import tensorflow as tf  # noqa: PLC0415

    outputs = serving(**{sidecar["inputs"]["image"]: tf.constant(photos.model_inputs())})
    (probabilities,) = outputs.values()
    return probabilities.numpy()


@pytest.mark.parametrize("index", range(len(photos.PHOTOS)), ids=[p.name for p in photos.PHOTOS])
def test_expected_class_is_in_the_top_5(index, photo_probabilities, sidecar):
    photo = photos.PHOTOS[index]
    row = photo_probabilities[index]
    top5 = [int(i) for i in np.argsort(row)[::-1][:5]]
    names = [f"{sidecar['labels'][i]} ({row[i]:.2f})" for i in top5]
    assert photo.expected & set(top5), f"{photo.name} ({photo.subject}): top 5 was {names}"


def test_the_cat_and_the_coffee_are_confident_top_1_answers(photo_probabilities, sidecar):
    by_name = {p.name: (p, row) for p, row in zip(photos.PHOTOS, photo_probabilities)}
    for name in ("chelsea", "coffee"):
        photo, row = by_name[name]
        assert int(np.argmax(row)) in photo.expected, f"{name}: top-1 {sidecar['labels'][int(np.argmax(row))]}"
        assert sum(row[i] for i in photo.expected) > 0.8


def test_outputs_are_probabilities_as_the_sidecar_says(photo_probabilities, sidecar):
    assert sidecar["output"] == "probabilities"
    assert photo_probabilities.shape == (len(photos.PHOTOS), 1000)
    assert (photo_probabilities >= 0).all()
    np.testing.assert_allclose(photo_probabilities.sum(axis=1), 1.0, atol=1e-4)


def test_sidecar_follows_the_contract(sidecar, serving):
    assert sidecar["schema"] == 1 and sidecar["name"] == "efficientnet_lite0"
    assert sidecar["task"] == "image_classification"
    labels = sidecar["labels"]
    assert len(labels) == 1000 and len(set(labels)) == 1000
    assert (labels[0], labels[281], labels[967], labels[652]) == ("tench", "tabby", "espresso", "military uniform")
    assert sidecar["preprocessing"] == {"type": "image", "color_mode": "RGB", "size": [224, 224],
                                        "resize": "bilinear", "mean": [127.0] * 3, "std": [128.0] * 3}
    _, signature_inputs = serving.structured_input_signature
    assert list(signature_inputs) == [sidecar["inputs"]["image"]]
    spec = signature_inputs[sidecar["inputs"]["image"]]
    assert tuple(spec.shape) == (None, 224, 224, 3) and spec.dtype.name == "float32"
    assert sidecar["validation"] == {"samples": "validation.npz", "representative": "representative.npz"}


def test_validation_samples_are_the_preprocessed_photos(model_dir):
    with np.load(model_dir / "validation.npz") as samples:
        assert sorted(samples.files) == ["inputs_image"]  # no labels: the photos have several right answers
        np.testing.assert_array_equal(samples["inputs_image"], photos.model_inputs())


def test_representative_inputs_are_many_real_preprocessed_crops(model_dir):
    with np.load(model_dir / "representative.npz") as samples:
        inputs = samples["inputs_image"]
    assert inputs.dtype == np.float32 and inputs.shape[1:] == (224, 224, 3)
    assert 100 <= len(inputs) <= 200
    assert inputs.min() >= -127 / 128 and inputs.max() <= 128 / 128
    assert len({hash(x.tobytes()) for x in inputs}) == len(inputs)  # crops differ, not one photo repeated


def test_resize_stretches_with_pillow_bilinear_as_the_contract_says():
    image = photos.PHOTOS[0].open()
    expected = (np.asarray(image.resize((224, 224), photos.Image.Resampling.BILINEAR), np.float32) - 127) / 128
    np.testing.assert_array_equal(photos.to_model_input(image), expected)
