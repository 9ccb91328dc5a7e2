"""Phone-style photos whose EXIF tag says to turn them, under both loaders a Keras user has: `keras.utils.load_img`
(pixels as stored) and Pillow's `ImageOps.exif_transpose` (upright). The sidecar's `exif_orientation` that is not
the user's loader is refused naming the value that matches; the right one converts and the function answers
held-out tagged photos as `model.predict` on the user's own loading does."""
from __future__ import annotations

import io
import json
from base64 import b64encode

import numpy as np
import pytest
from PIL import Image, ImageOps

from convert.fidelity.classification import SCORE_BOUNDS
from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from tests.support.convert_models import digits_split, seeded_keras
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

DIGITS = [str(digit) for digit in range(10)]
MODE = "float32"
# EXIF orientation -> how the camera stored an upright picture (the tag says how to undo it).
STORED = {3: Image.Transpose.ROTATE_180, 6: Image.Transpose.ROTATE_90, 8: Image.Transpose.ROTATE_270}


def upright_photos(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    big = np.kron(images[:, :, :, 0], np.ones((2, 2)))
    return np.clip(big[..., None] * np.array([60.0, 200.0, 220.0]) + rng.uniform(0, 25, (*big.shape, 3)),
                   0, 255).astype(np.uint8)


def tagged_jpeg(photo: np.ndarray, tag: int) -> bytes:
    """The photo as a camera writes it: pixels stored turned, an EXIF orientation tag saying how to turn them back."""
    exif = Image.Exif()
    exif[0x0112] = tag
    buffer = io.BytesIO()
    Image.fromarray(photo).transpose(STORED[tag]).save(buffer, "JPEG", quality=95, exif=exif.tobytes())
    return buffer.getvalue()


def load_img(path, keras) -> np.ndarray:
    return keras.utils.img_to_array(keras.utils.load_img(path))


def exif_transposed(path, keras) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(ImageOps.exif_transpose(image).convert("RGB"), dtype=np.float32)


LOADERS = {"load_img": (load_img, False), "exif_transpose": (exif_transposed, True)}


@pytest.fixture(scope="module")
def digits_model():
    keras = seeded_keras()
    rng = np.random.default_rng(4)
    x_train, y_train, x_test, _ = digits_split()
    inputs = keras.Input((16, 16, 3), name="photo")
    x = keras.layers.Rescaling(1 / 255)(inputs)
    x = keras.layers.Flatten()(keras.layers.MaxPooling2D()(keras.layers.Conv2D(8, 3, activation="relu")(x)))
    model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(x))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit(upright_photos(x_train, rng).astype(np.float32), y_train, epochs=4, batch_size=64, verbose=0)
    return keras, model, upright_photos(x_test[:40], rng), upright_photos(x_test[40:80], rng)


def photo_set(folder, photos: np.ndarray) -> list:
    """The photos as tagged JPEG files, orientations 6, 8 and 3 in turn."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, photo in enumerate(photos):
        path = folder / f"{index:02d}.jpg"
        path.write_bytes(tagged_jpeg(photo, (6, 8, 3)[index % 3]))
        paths.append(path)
    return paths


def model_folder(tmp_path, keras, model, validation, loader, exif_orientation: bool):
    """model.keras, a sidecar declaring exif_orientation, and validation photos (tagged files) with expected made by
    the user's loader."""
    folder = tmp_path / "digits"
    paths = photo_set(folder / "photos", validation)
    model.save(folder / "model.keras")
    expected = model.predict(np.stack([loader(path, keras) for path in paths]), verbose=0)
    np.savez(folder / "validation.npz", expected=expected)
    sidecar = {"labels": DIGITS, "preprocessing": {"type": "image", "color_mode": "RGB", "size": [16, 16],
                                                  "exif_orientation": exif_orientation},
               "validation": {"samples": "validation.npz",
                              "raw_images": [str(path.relative_to(folder)) for path in paths]}}
    (folder / "sidecar.json").write_text(json.dumps(sidecar))
    return folder


@pytest.mark.parametrize("loader_name", list(LOADERS))
def test_the_wrong_exif_setting_is_refused_and_the_right_one_answers_as_predict(loader_name, digits_model, tmp_path,
                                                                                run_convert):
    keras, model, validation, held_out = digits_model
    loader, applies_exif = LOADERS[loader_name]
    wrong = model_folder(tmp_path / "wrong", keras, model, validation, loader, not applies_exif)
    code, _, err = run_convert(wrong / "model.keras", tmp_path / "models" / "digits", "--quantization", MODE,
                               "--sidecar", wrong / "sidecar.json")
    assert code == 2, err
    assert err.strip().endswith("[preprocessing_mismatch]")
    assert f"your model's answers match it with \"preprocessing.exif_orientation\": {json.dumps(applies_exif)}" in err

    right = model_folder(tmp_path / "right", keras, model, validation, loader, applies_exif)
    code, _, err = run_convert(right / "model.keras", tmp_path / "models" / "digits", "--quantization", MODE,
                               "--sidecar", right / "sidecar.json")
    assert code == 0, err
    manifest = json.loads((tmp_path / "models" / "digits" / "manifest.json").read_text())
    assert manifest["preprocessing"]["exif_orientation"] is applies_exif
    registry = ModelRegistry(tmp_path / "models")
    assert not registry.unservable, registry.unservable
    service = make_service(registry)
    paths = photo_set(tmp_path / "held_out", held_out)
    wanted = model.predict(np.stack([loader(path, keras) for path in paths]), verbose=0)
    turned = sum(int(np.argmax(row)) != int(np.argmax(other)) for row, other in zip(
        wanted, model.predict(held_out.astype(np.float32), verbose=0)))
    assert loader_name == "exif_transpose" or turned >= 10  # turning the photos changes many answers
    for path, scores in zip(paths, wanted):
        event = http_api_event("POST", "/classify", {"model": "model", "top_k": 10,
                                                     "image": b64encode(path.read_bytes()).decode()})
        result = handle_event(service, event, None)
        assert result["statusCode"] == 200, result["body"]
        prediction = json.loads(result["body"])["predictions"][0]
        assert prediction["label"] == DIGITS[int(np.argmax(scores))]
        served = {entry["label"]: entry["score"] for entry in prediction["top_k"]}
        assert max(abs(served[name] - float(score)) for name, score in zip(DIGITS, scores)) <= SCORE_BOUNDS[MODE]
