"""A Keras model file loaded as its user loads it: a legacy `.h5` file converts like a `.keras` one, and a model with
a Lambda layer is refused naming --unsafe-deserialization, then converts with it; each answers held-out photos as
`model.predict` does."""
from __future__ import annotations

import io
import json
from base64 import b64encode

import numpy as np
import pytest
from PIL import Image

from convert.fidelity.classification import SCORE_BOUNDS
from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from tests.support.convert_models import digits_split, seeded_keras
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

DIGITS = [str(digit) for digit in range(10)]
MODE = "float32"


def photos(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """8x8 digits (0..1) as 16x16 RGB uint8 photos on noise."""
    big = np.kron(images[:, :, :, 0], np.ones((2, 2)))
    return np.clip(big[..., None] * np.array([220.0, 200.0, 60.0]) + rng.uniform(0, 25, (*big.shape, 3)),
                   0, 255).astype(np.uint8)


def saved_digits(folder, suffix: str, with_lambda: bool):
    """A small digits CNN (Rescaling inside, optionally a Lambda layer) saved as model<suffix>, labels.txt and raw
    validation photos + expected beside it; the model and held-out photos."""
    keras = seeded_keras()
    rng = np.random.default_rng(2)
    x_train, y_train, x_test, _ = digits_split()
    inputs = keras.Input((16, 16, 3), name="photo")
    x = keras.layers.Rescaling(1 / 255)(inputs)
    if with_lambda:
        x = keras.layers.Lambda(lambda t: t * 2.0 - 1.0, name="centre")(x)
    x = keras.layers.Flatten()(keras.layers.MaxPooling2D()(keras.layers.Conv2D(8, 3, activation="relu")(x)))
    model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(x))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit(photos(x_train, rng).astype(np.float32), y_train, epochs=3, batch_size=64, verbose=0)
    folder.mkdir()
    model.save(folder / f"model{suffix}")
    (folder / "labels.txt").write_text("\n".join(DIGITS) + "\n")
    validation = photos(x_test[:80], rng)
    np.savez(folder / "validation.npz", raw_images=validation,
             expected=model.predict(validation.astype(np.float32), verbose=0))
    return model, photos(x_test[80:140], rng)


def answers_as_predict(model_root, model, held_out) -> None:
    registry = ModelRegistry(model_root)
    assert not registry.unservable, registry.unservable
    service = make_service(registry)
    for photo, scores in zip(held_out, model.predict(held_out.astype(np.float32), verbose=0)):
        buffer = io.BytesIO()
        Image.fromarray(photo).save(buffer, "PNG")
        event = http_api_event("POST", "/classify", {"model": "model", "image": b64encode(buffer.getvalue()).decode(),
                                                     "top_k": 10})
        result = handle_event(service, event, None)
        assert result["statusCode"] == 200, result["body"]
        prediction = json.loads(result["body"])["predictions"][0]
        assert prediction["label"] == DIGITS[int(np.argmax(scores))]
        served = {entry["label"]: entry["score"] for entry in prediction["top_k"]}
        assert max(abs(served[name] - float(score)) for name, score in zip(DIGITS, scores)) <= SCORE_BOUNDS[MODE]


def test_a_legacy_h5_file_converts_and_answers_as_predict(tmp_path, run_convert):
    model, held_out = saved_digits(tmp_path / "h5", ".h5", with_lambda=False)
    code, out, err = run_convert(tmp_path / "h5" / "model.h5", tmp_path / "models" / "model", "--quantization", MODE)
    assert code == 0, err
    assert json.loads((tmp_path / "models" / "model" / "manifest.json").read_text())["labels"] == DIGITS
    answers_as_predict(tmp_path / "models", model, held_out)


def test_a_lambda_layer_is_refused_naming_the_flag_and_converts_with_it(tmp_path, run_convert):
    model, held_out = saved_digits(tmp_path / "lambda", ".keras", with_lambda=True)
    source = tmp_path / "lambda" / "model.keras"
    code, _, err = run_convert(source, tmp_path / "models" / "model", "--quantization", MODE)
    assert code == 2
    line = err.strip()
    assert line.endswith("[unsafe_lambda]") and "\n" not in line and "safe_mode=False)" in line
    assert "model.keras has a Lambda layer whose function is Python code" in line
    assert "pass --unsafe-deserialization" in line
    code, _, err = run_convert(source, tmp_path / "models" / "model", "--quantization", MODE,
                               "--unsafe-deserialization")
    assert code == 0, err
    answers_as_predict(tmp_path / "models", model, held_out)


def test_the_loading_flags_are_refused_for_a_saved_model(tmp_path, run_convert, image_saved_model):
    code, _, err = run_convert(image_saved_model, tmp_path / "out", "--unsafe-deserialization")
    assert code == 2 and err.strip().endswith("[bad_custom_objects]")
    assert "--unsafe-deserialization is for .keras and .h5 files" in err
