"""What the conversion tests build their tiny models from: seeded Keras, sklearn's digits split, the digits image
sidecar, and a SavedModel directory written the way users must export (`model.export()` + sidecar + samples)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

SEED = 7


def seeded_keras():
    """Keras after TensorFlow's quiet import, its random seed set: the same tiny model every session."""
    from convert.quiet import import_tensorflow

    import_tensorflow()
    import keras

    keras.utils.set_random_seed(SEED)
    return keras


def write_model_dir(directory: Path, model, sidecar: dict | None, validation: dict | None,
                    representative: dict | None = None) -> Path:
    model.export(str(directory), verbose=False)
    if validation is not None:
        np.savez(directory / "validation.npz", **validation)
    if representative is not None:
        np.savez(directory / "representative.npz", **representative)
    if sidecar is not None:
        (directory / "sidecar.json").write_text(json.dumps(sidecar, indent=2))
    return directory


def digits_split():
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    y = digits.target.astype(np.int64)
    return x[:1500], y[:1500], x[1500:], y[1500:]


def image_sidecar(name: str, input_name: str = "pixels") -> dict:
    return {
        "schema": 1, "name": name, "task": "image_classification", "labels": [str(d) for d in range(10)],
        "output": "probabilities",
        "preprocessing": {"type": "image", "color_mode": "L", "size": [8, 8], "resize": "bilinear",
                          "mean": [0.0], "std": [16.0]},
        "inputs": {"image": input_name},
        "validation": {"samples": "validation.npz", "representative": "representative.npz"},
    }
