"""Each usual slip in a sidecar's image preprocessing (a divisor left out, mean/std left out, RGB for BGR, bilinear
for keras.utils.load_img's nearest) is refused by the served gate, naming the field and the value that matches,
even where the top-1 label survives the slip: the scores the user sees are checked too."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from tests.support.convert_models import digits_split, seeded_keras, write_model_dir

pytestmark = pytest.mark.slow

TINT = np.array([1.0, 0.55, 0.15])  # every digit drawn in orange: a model trained on them tells RGB from BGR
SIDE, RAW_SIDE = 16, 32
IMAGENET_MEAN, IMAGENET_STD = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])


def coloured(images: np.ndarray, side: int, rng: np.random.Generator) -> np.ndarray:
    """8x8 digits (0..1) as orange-on-noise RGB uint8 photos of side x side pixels."""
    scale = side // 8
    big = np.repeat(np.repeat(images[:, :, :, 0], scale, axis=1), scale, axis=2)
    pixels = big[..., None] * TINT * 230 + rng.uniform(0, 25, size=(*big.shape, 3))
    return np.clip(pixels, 0, 255).astype(np.uint8)


def resized(photos: np.ndarray, method) -> np.ndarray:
    return np.stack([np.asarray(Image.fromarray(photo).resize((SIDE, SIDE), method), dtype=np.float32)
                     for photo in photos])


@pytest.fixture(scope="module")
def orange_digits(tmp_path_factory):
    """A small CNN trained on pixels / 255 of 16x16 orange digits; 60 held-out 32x32 photos to validate with."""
    keras = seeded_keras()
    rng = np.random.default_rng(3)
    x_train, y_train, x_test, _ = digits_split()
    train = resized(coloured(x_train, RAW_SIDE, rng), Image.Resampling.BILINEAR) / 255.0
    inputs = keras.Input((SIDE, SIDE, 3), name="photo")
    x = keras.layers.Conv2D(8, 3, activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax", name="digit")(x))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit(train, y_train, epochs=4, batch_size=64, verbose=0)
    directory = write_model_dir(tmp_path_factory.mktemp("mistakes") / "orange_digits", model, None, None)
    return directory, model, coloured(x_test[:60], RAW_SIDE, rng)


def sidecar(**preprocessing) -> dict:
    return {"schema": 1, "name": "orange_digits", "task": "image_classification",
            "labels": [str(digit) for digit in range(10)], "output": "probabilities",
            "preprocessing": {"type": "image", "color_mode": "RGB", "size": [SIDE, SIDE], **preprocessing},
            "inputs": {"image": "photo"}, "validation": {"samples": "validation.npz"}}


def convert_with(orange_digits, tmp_path, run_convert, declared: dict, their_pixels) -> tuple[int, str]:
    """The model with this sidecar and `expected` from the user's own pipeline (their_pixels of the photos)."""
    directory, model, photos = orange_digits
    work = tmp_path / "orange_digits"
    work.mkdir()
    for item in directory.iterdir():
        (work / item.name).symlink_to(item)
    np.savez(work / "validation.npz", raw_images=photos, expected=model.predict(their_pixels(photos), verbose=0))
    (work / "sidecar.json").write_text(json.dumps(sidecar(**declared)))
    code, _, err = run_convert(work, tmp_path / "out", "--quantization", "float32")
    return code, err


def bilinear_over_255(photos):
    return resized(photos, Image.Resampling.BILINEAR) / 255.0


def test_the_right_sidecar_converts_with_the_scores_checked(orange_digits, tmp_path, run_convert):
    code, err = convert_with(orange_digits, tmp_path, run_convert, {"divisor": 255}, bilinear_over_255)
    assert code == 0, err
    served = json.loads((tmp_path / "out" / "report.json").read_text())["rows"][0]["fidelity"]["served"]
    assert served["top1_agreement"] == 1.0 and served["max_score_diff"] <= served["score_bound"] == 0.01


@pytest.mark.parametrize(("declared", "their_pixels", "fix"), [
    pytest.param({}, bilinear_over_255, 'set "preprocessing.divisor": 255.0 in sidecar.json', id="divisor"),
    pytest.param({"divisor": 255}, lambda photos: (bilinear_over_255(photos) - IMAGENET_MEAN) / IMAGENET_STD,
                 'set "preprocessing.mean": [0.485, 0.456, 0.406], "preprocessing.std": [0.229, 0.224, 0.225]',
                 id="mean-std"),
    pytest.param({"divisor": 255}, lambda photos: bilinear_over_255(photos)[..., ::-1],
                 'set "preprocessing.color_mode": "BGR"', id="bgr-for-rgb"),
    pytest.param({"divisor": 255}, lambda photos: resized(photos, Image.Resampling.NEAREST) / 255.0,
                 'set "preprocessing.resize": "nearest" in sidecar.json', id="resize"),
])
def test_each_preprocessing_slip_is_refused_naming_the_field_and_the_value_that_matches(
        orange_digits, tmp_path, run_convert, declared, their_pixels, fix):
    code, err = convert_with(orange_digits, tmp_path, run_convert, declared, their_pixels)
    assert code == 2 and err.strip().endswith("[preprocessing_mismatch]"), err
    assert "is not how expected was made: on the 60 raw samples the float32 model, served," in err
    assert fix in err, err
    assert not (tmp_path / "out").exists()
