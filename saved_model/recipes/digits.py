"""`digits`: a small CNN on scikit-learn's 8x8 handwritten digits, quick to build, for fast tests.

sklearn stores pixels as 0..16 (white ink on black). The model is trained on the values an 8-bit grayscale PNG
of such a digit decodes to (x * 255 / 16), divided by 255, so the contract's preprocessing (color_mode "L",
size [8, 8], mean 0, std 255) feeds a real image exactly what training saw.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from saved_model.recipes.common import SEED, raw_image_arrays, seed_everything, stage, write_saved_model

NAME = "digits"
LABELS = [str(d) for d in range(10)]
SIDE = 8
TEST_FRACTION = 0.25
EPOCHS = 40
INPUT_NAME = "image"


def pixels_as_png_values(images_0_to_16: np.ndarray) -> np.ndarray:
    """sklearn's 0..16 intensities as the uint8 values an 8-bit grayscale PNG of the digit holds."""
    return np.round(images_0_to_16 * 255.0 / 16.0).astype(np.uint8)


def load_split(seed: int = SEED):
    """(x_train, y_train, x_test, y_test): float32 NHWC in the contract's preprocessed scale (0..1), int labels.
    x * 255 is each digit as an 8-bit grey image (its raw sample)."""
    from sklearn.datasets import load_digits  # noqa: PLC0415
    from sklearn.model_selection import train_test_split  # noqa: PLC0415

    digits = load_digits()
    x = pixels_as_png_values(digits.images).astype(np.float32) / 255.0
    x = x.reshape(-1, SIDE, SIDE, 1)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=TEST_FRACTION, random_state=seed, stratify=y
    )
    return x_train, y_train, x_test, y_test


def make_model():
    import keras  # noqa: PLC0415

    inputs = keras.Input(shape=(SIDE, SIDE, 1), name=INPUT_NAME)
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="conv1")(inputs)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="conv2")(x)
    x = keras.layers.MaxPooling2D(2, name="pool")(x)
    x = keras.layers.Flatten(name="flatten")(x)
    x = keras.layers.Dropout(0.3, name="dropout")(x)
    x = keras.layers.Dense(64, activation="relu", name="hidden")(x)
    outputs = keras.layers.Dense(len(LABELS), activation="softmax", name="probabilities")(x)
    model = keras.Model(inputs, outputs, name=NAME)
    model.compile(optimizer=keras.optimizers.Adam(2e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def sidecar(test_accuracy: float) -> dict:
    return {
        "schema": 1,
        "name": NAME,
        "task": "image_classification",
        "labels": LABELS,
        "output": "probabilities",
        "preprocessing": {
            "type": "image",
            "color_mode": "L",
            "size": [SIDE, SIDE],
            "resize": "bilinear",
            "mean": [0.0],
            "std": [255.0],
        },
        "inputs": {"image": INPUT_NAME},
        "metrics": {"test_accuracy": round(test_accuracy, 4)},
    }


def build(out_dir: Path) -> None:
    stage(f"{NAME}: loading scikit-learn digits")
    seed_everything()
    x_train, y_train, x_test, y_test = load_split()
    stage(f"{NAME}: training a small CNN on {len(x_train)} images ({EPOCHS} epochs)")
    model = make_model()
    model.fit(x_train, y_train, epochs=EPOCHS, batch_size=64, verbose=0, shuffle=True)
    probabilities = model.predict(x_test, verbose=0)
    accuracy = float(np.mean(probabilities.argmax(axis=1) == y_test))
    stage(f"{NAME}: test accuracy {accuracy:.4f} on {len(x_test)} held-out images")
    write_saved_model(
        model,
        out_dir,
        sidecar(accuracy),
        # The raw samples: each test digit as the 8-bit grey image a client would send, and the model's answers.
        validation={"inputs_image": x_test.astype(np.float32), "labels": y_test.astype(np.int64),
                    **raw_image_arrays(list(np.round(x_test * 255.0).astype(np.uint8))),
                    "expected": probabilities.astype(np.float32)},
        representative={"inputs_image": x_train[:200].astype(np.float32)},
    )
