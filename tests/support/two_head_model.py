"""A Keras model with two heads, written as the Keras functional API guide writes multi-output models: shared layers,
then a softmax digit and a linear "ink" (the photo's mean brightness), trained briefly on sklearn's digits (8x8 grey
photos), saved as a `.keras` file and converted by the real convert (float16).

Training and converting cost seconds each, so both happen once per session, whichever test module asks first
(`two_heads`, `converted_two_heads`): the convert tests check the conversion, the door tests serve its output.
"""
from __future__ import annotations

import contextlib
import io
from base64 import b64encode
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from tests.support.convert_models import seeded_keras

MODE = "float16"  # a quantized mode: the bounds are the gate's for it, not float32's near-equality
LABELS = [str(digit) for digit in range(10)]
TRAIN, VALIDATION, HELD_OUT = 1200, 100, 60
NAME = "digits_ink"


def digit_photos():
    """sklearn's digits as the 8x8 grey uint8 photos a client sends (0..16 scaled to 0..255), and their digits."""
    from sklearn.datasets import load_digits  # noqa: PLC0415

    digits = load_digits()
    photos = np.clip(np.round(digits.images * 16), 0, 255).astype(np.uint8)[..., np.newaxis]
    return photos, digits.target


def png_bytes(photo: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(photo[:, :, 0], "L").save(buffer, "PNG")
    return buffer.getvalue()


def png(photo: np.ndarray) -> str:
    """The photo as a PNG in base64, as a JSON body carries it."""
    return b64encode(png_bytes(photo)).decode()


@dataclass(frozen=True)
class TwoHeads:
    model: object  # the trained Keras model
    folder: Path  # digits_ink.keras, validation.npz (raw_images, expected_digit, expected_ink), labels.txt
    held_out: np.ndarray  # photos neither trained nor validated on


@dataclass(frozen=True)
class Converted:
    models: Path  # a model directory root holding NAME, as the function serves it
    code: int  # convert's exit code, its stdout and its stderr
    out: str
    err: str


_built: dict[str, object] = {}


def two_heads(tmp_path_factory) -> TwoHeads:
    """The trained model and its folder, built on the session's first call."""
    if "model" not in _built:
        _built["model"] = _train(tmp_path_factory.mktemp("two_heads"))
    return _built["model"]


def converted_two_heads(tmp_path_factory) -> Converted:
    """The model converted by `python -m convert` (its main, in this process: TensorFlow is imported once),
    on the session's first call."""
    if "converted" not in _built:
        from convert.__main__ import main  # noqa: PLC0415

        folder = two_heads(tmp_path_factory).folder
        models = tmp_path_factory.mktemp("two_heads_models")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(folder / f"{NAME}.keras"), str(models / NAME), "--quantization", MODE])
        _built["converted"] = Converted(models, code, out.getvalue(), err.getvalue())
    return _built["converted"]


def _train(folder: Path) -> TwoHeads:
    keras = seeded_keras()
    layers = keras.layers
    photos, digits = digit_photos()
    pixels = photos.astype(np.float32)
    ink = pixels.mean(axis=(1, 2, 3)) / 255.0 * 10  # the photo's brightness, on a 0..10 scale

    image_input = keras.Input(shape=(8, 8, 1), name="image")
    x = layers.Rescaling(1.0 / 255)(image_input)
    x = layers.Conv2D(16, 3, activation="relu")(x)
    x = layers.Flatten()(x)
    x = layers.Dense(32, activation="relu")(x)
    digit_pred = layers.Dense(10, activation="softmax", name="digit")(x)
    ink_pred = layers.Dense(1, name="ink")(x)
    model = keras.Model(inputs=image_input, outputs=[digit_pred, ink_pred])
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss={"digit": keras.losses.SparseCategoricalCrossentropy(), "ink": keras.losses.MeanSquaredError()},
                  loss_weights={"digit": 1.0, "ink": 0.2})
    model.fit(pixels[:TRAIN], {"digit": digits[:TRAIN], "ink": ink[:TRAIN]}, epochs=6, batch_size=64, verbose=0)

    model.save(folder / f"{NAME}.keras")
    validation = photos[TRAIN:TRAIN + VALIDATION]
    digit_expected, ink_expected = model.predict(validation.astype(np.float32), verbose=0)
    np.savez(folder / "validation.npz", raw_images=validation, expected_digit=digit_expected,
             expected_ink=ink_expected)
    (folder / "labels.txt").write_text("\n".join(LABELS) + "\n")
    return TwoHeads(model, folder, photos[-HELD_OUT:])
