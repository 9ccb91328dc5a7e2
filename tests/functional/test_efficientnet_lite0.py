"""The efficientnet_lite0 demo SavedModel is faithful to the original network: on real photos shipped in
scikit-image, scikit-learn and matplotlib, TensorFlow running the exported SavedModel ranks the expected
ImageNet class in its top 5. Also checks the sidecar and sample files against docs/model-format.md."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

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


def test_validation_samples_start_with_the_preprocessed_photos_then_many_other_real_images(model_dir):
    with np.load(model_dir / "validation.npz") as samples:
        # no labels: the photos have several right answers; the raw photos and the model's answers for them
        assert sorted(samples.files) == ["expected", "inputs_image", "raw_image_shapes", "raw_images"]
        inputs = samples["inputs_image"]
        shapes, expected = samples["raw_image_shapes"], samples["expected"]
        first = samples["raw_images"][:int(np.prod(shapes[0]))].reshape(shapes[0])
    assert len(shapes) == len(expected) == len(inputs) and expected.shape[1] == 1000
    np.testing.assert_array_equal(photos.to_model_input(Image.fromarray(first)), inputs[0])
    labelled = len(photos.PHOTOS)
    np.testing.assert_array_equal(inputs[:labelled], photos.model_inputs())
    assert len(inputs) >= 100  # agreement thresholds like 99% mean nothing on seven images
    assert len({hash(x.tobytes()) for x in inputs}) == len(inputs)
    with np.load(model_dir / "representative.npz") as calibration:
        calibrated = {hash(x.tobytes()) for x in calibration["inputs_image"]}
    assert not calibrated & {hash(x.tobytes()) for x in inputs[labelled:]}  # crops differ from calibration's


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


# An independent NCHW forward pass written from the original PyTorch module's semantics (weights used in
# their PyTorch layout, TF-"same" padding with the odd pixel at the bottom/right), to catch a wrong transpose,
# padding or epsilon in the Keras rebuild that a top-5 check would let through.
STRIDE_2_BLOCKS = {1, 3, 5, 11}


def pad_same(x: np.ndarray, kernel: int, stride: int) -> np.ndarray:
    padding = []
    for size in x.shape[2:]:
        total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
        padding.append((total // 2, total - total // 2))
    return np.pad(x, ((0, 0), (0, 0), *padding))


def conv(x: np.ndarray, weight: np.ndarray, stride: int = 1, depthwise: bool = False) -> np.ndarray:
    kernel = weight.shape[-1]
    x = pad_same(x, kernel, stride)
    out_h, out_w = (x.shape[2] - kernel) // stride + 1, (x.shape[3] - kernel) // stride + 1
    out = 0.0
    for i in range(kernel):
        for j in range(kernel):
            patch = x[:, :, i : i + stride * out_h : stride, j : j + stride * out_w : stride]
            if depthwise:
                out = out + patch * weight[:, 0, i, j][None, :, None, None]
            else:
                out = out + np.einsum("nchw,oc->nohw", patch, weight[:, :, i, j], optimize=True)
    return out


def batch_norm(x: np.ndarray, state: dict, prefix: str) -> np.ndarray:
    scale = state[prefix + ".weight"] / np.sqrt(state[prefix + ".running_var"] + 1e-3)
    shift = state[prefix + ".bias"] - state[prefix + ".running_mean"] * scale
    return x * scale[None, :, None, None] + shift[None, :, None, None]


def relu6(x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0.0, 6.0)


def reference_logits(state: dict, nhwc: np.ndarray) -> np.ndarray:
    x = nhwc.transpose(0, 3, 1, 2).astype(np.float64)
    x = relu6(batch_norm(conv(x, state["_conv_stem.weight"], stride=2), state, "_bn0"))
    block = 0
    while f"_blocks.{block}._depthwise_conv.weight" in state:
        p = f"_blocks.{block}."
        inputs = x
        if p + "_expand_conv.weight" in state:
            x = relu6(batch_norm(conv(x, state[p + "_expand_conv.weight"]), state, p + "_bn0"))
        stride = 2 if block in STRIDE_2_BLOCKS else 1
        x = relu6(batch_norm(conv(x, state[p + "_depthwise_conv.weight"], stride, depthwise=True), state, p + "_bn1"))
        x = batch_norm(conv(x, state[p + "_project_conv.weight"]), state, p + "_bn2")
        if stride == 1 and x.shape == inputs.shape:
            x = x + inputs
        block += 1
    x = relu6(batch_norm(conv(x, state["_conv_head.weight"]), state, "_bn1"))
    return x.mean(axis=(2, 3)) @ state["_fc.weight"].T.astype(np.float64) + state["_fc.bias"]


def test_savedmodel_matches_an_independent_forward_pass_of_the_original(photo_probabilities):
    from saved_model.recipes.torch_checkpoint import load_checkpoint  # noqa: PLC0415

    state = load_checkpoint(efficientnet_lite0.package_file(efficientnet_lite0.WEIGHTS_DISTRIBUTION,
                                                            efficientnet_lite0.WEIGHTS_FILE))
    picked = [0, 1]  # chelsea, coffee: two photos keep the numpy pass to a few seconds
    logits = reference_logits(state, photos.model_inputs([photos.PHOTOS[i] for i in picked]))
    expected = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(photo_probabilities[picked], expected, atol=2e-5)
