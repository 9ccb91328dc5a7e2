"""keras.io's "Image classification from scratch" model (augmentation layers, Rescaling and BatchNormalization
inside, one sigmoid unit), built as the tutorial writes it, small, and trained briefly on sklearn's digits 0 and 1 as
RGB photos: from its `.keras` file and from a SavedModel exported in inference mode it answers held-out photos as
`model.predict` does; the plain `model.export()` of it (traced in training mode) is refused saying how to export."""
from __future__ import annotations

import io
import json
import re
from base64 import b64encode
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from convert.fidelity.classification import SCORE_BOUNDS
from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from tests.support.convert_models import seeded_keras
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

SIDE = 32
LABELS = ["zero", "one"]
MODE = "float32"


def digit_photos():
    """sklearn's 0s and 1s as 32x32 RGB uint8 photos (a tint and noise), their labels, shuffled."""
    from sklearn.datasets import load_digits

    digits = load_digits(n_class=2)
    rng = np.random.default_rng(3)
    big = np.kron(digits.images / 16.0, np.ones((SIDE // 8, SIDE // 8)))
    photos = big[..., None] * np.array([230.0, 140.0, 40.0]) + rng.uniform(0, 25, size=(*big.shape, 3))
    order = rng.permutation(len(photos))
    return np.clip(photos, 0, 255).astype(np.uint8)[order], digits.target.astype(np.float32)[order]


def make_model(keras, input_shape, num_classes):
    """The tutorial's model, its block sizes made small."""
    layers = keras.layers
    data_augmentation_layers = [layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)]

    def data_augmentation(images):
        for layer in data_augmentation_layers:
            images = layer(images)
        return images

    inputs = keras.Input(shape=input_shape)
    x = data_augmentation(inputs)
    x = layers.Rescaling(1.0 / 255)(x)
    x = layers.Conv2D(8, 3, strides=2, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    previous_block_activation = x  # Set aside residual
    for size in [16, 32]:
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)
        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
        residual = layers.Conv2D(size, 1, strides=2, padding="same")(previous_block_activation)  # Project residual
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual
    x = layers.SeparableConv2D(48, 3, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    if num_classes == 2:
        activation = "sigmoid"
        units = 1
    else:
        activation = "softmax"
        units = num_classes
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(units, activation=activation)(x)
    return keras.Model(inputs, outputs)


@pytest.fixture(scope="module")
def tutorial_model():
    """The model trained a few epochs on 260 photos; 50 validation photos and 50 held out."""
    keras = seeded_keras()
    photos, labels = digit_photos()
    model = make_model(keras, input_shape=(SIDE, SIDE, 3), num_classes=2)
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(photos[:260].astype(np.float32), labels[:260], epochs=15, batch_size=16, verbose=0)
    return keras, model, photos[260:310], photos[310:360]


def docs_export_lines() -> str:
    """docs/model-format.md's python block that exports a model in inference mode."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "model-format.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    return next(block for block in blocks if "ExportArchive" in block)


def beside(folder, model, validation) -> None:
    (folder / "labels.txt").write_text("\n".join(LABELS) + "\n")
    np.savez(folder / "validation.npz", raw_images=validation,
             expected=model.predict(validation.astype(np.float32), verbose=0))


def png(photo: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(photo).save(buffer, "PNG")
    return b64encode(buffer.getvalue()).decode()


@pytest.mark.parametrize("source", ["keras_file", "saved_model"])
def test_the_tutorial_model_converts_and_answers_held_out_photos_as_predict(source, tutorial_model, tmp_path,
                                                                           run_convert, monkeypatch):
    keras, model, validation, held_out = tutorial_model
    if source == "keras_file":
        folder = tmp_path / "from_scratch"
        folder.mkdir()
        path = folder / "from_scratch.keras"
        model.save(path)
    else:
        monkeypatch.chdir(tmp_path)
        exec(docs_export_lines(), {"keras": keras, "model": model})  # noqa: S102  (the docs' lines, as written)
        folder = path = tmp_path / "saved_model" / "my_model"
    beside(folder, model, validation)

    code, out, err = run_convert(path, tmp_path / "models" / "served", "--quantization", MODE, "--name", "from_scratch")
    assert code == 0, err
    registry = ModelRegistry(tmp_path / "models")
    assert not registry.unservable, registry.unservable
    manifest = json.loads((tmp_path / "models" / "served" / "manifest.json").read_text())
    assert manifest["task"] == "image_classification" and manifest["labels"] == LABELS
    service = make_service(registry)
    wanted = model.predict(held_out.astype(np.float32), verbose=0)[:, 0]
    assert 0.2 < float(np.mean(wanted > 0.5)) < 0.8  # the model tells 0s from 1s: both answers occur
    for photo, probability in zip(held_out, wanted):
        event = http_api_event("POST", "/classify", {"model": "from_scratch", "image": png(photo), "top_k": 2})
        result = handle_event(service, event, None)
        assert result["statusCode"] == 200, result["body"]
        prediction = json.loads(result["body"])["predictions"][0]
        assert prediction["label"] == LABELS[int(probability > 0.5)]
        served = {entry["label"]: entry["score"] for entry in prediction["top_k"]}
        assert abs(served["one"] - float(probability)) <= SCORE_BOUNDS[MODE]


def test_a_saved_model_exported_in_training_mode_is_refused_saying_how_to_export(tutorial_model, tmp_path,
                                                                                run_convert):
    keras, model, validation, _ = tutorial_model
    folder = tmp_path / "from_scratch"
    model.export(str(folder), verbose=False)  # traced with training=True: augmentation runs, batch statistics
    beside(folder, model, validation)
    code, _, err = run_convert(folder, tmp_path / "models" / "served")
    assert code == 2, err
    line = err.strip()
    assert line.endswith("[training_mode_export]") and "\n" not in line
    assert "was exported in training mode: its serving signature draws random numbers (" in line
    assert "lambda x: model(x, training=False)" in line and "archive.write_out(DIR)" in line
    assert not (tmp_path / "models" / "served").exists()
