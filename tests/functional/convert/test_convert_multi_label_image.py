"""A multi-label image classifier (three sigmoid units over sklearn digits): /classify lists exactly the labels
Keras's sigmoids put at or above the threshold, and the sidecar's multi_label is checked like every other field."""
from __future__ import annotations

import io
import json
from base64 import b64encode

import numpy as np
import pytest
from PIL import Image

from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from tests.support.convert_models import digits_split, image_sidecar, seeded_keras, write_model_dir
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

LABELS = ["even", "above_four", "round"]  # round: 0, 6, 8, 9 (digits with a closed loop)
HELD_OUT = 60


def targets(digits: np.ndarray) -> np.ndarray:
    return np.stack([digits % 2 == 0, digits > 4, np.isin(digits, (0, 6, 8, 9))], axis=1).astype(np.float32)


def multi_label_sidecar(**changes) -> dict:
    return {**image_sidecar("digit_tags"), "labels": LABELS, "multi_label": True,
            "validation": {"samples": "validation.npz"}, **changes}


@pytest.fixture(scope="session")
def multi_label_digits(models_root):
    keras = seeded_keras()
    x_train, y_train, x_test, _ = digits_split()
    pixels = keras.Input(shape=(8, 8, 1), name="pixels")
    hidden = keras.layers.Dense(32, activation="relu", name="hidden")(keras.layers.Flatten(name="flatten")(pixels))
    model = keras.Model(pixels, keras.layers.Dense(3, activation="sigmoid", name="tags")(hidden))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
    model.fit(x_train, targets(y_train), epochs=10, batch_size=64, verbose=0)
    directory = write_model_dir(models_root / "digit_tags", model, multi_label_sidecar(),
                                {"inputs_image": x_test[:HELD_OUT]})
    return directory, model, x_test[:HELD_OUT]


def png(image: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(np.round(image[:, :, 0] * 16).astype(np.uint8), "L").save(buffer, "PNG")
    return b64encode(buffer.getvalue()).decode()


def test_served_label_sets_are_keras_thresholded_sigmoids(multi_label_digits, tmp_path, run_convert):
    directory, model, images = multi_label_digits
    code, _, err = run_convert(directory, tmp_path / "models" / "digit_tags", "--quantization", "float32")
    assert code == 0, err
    service = make_service(ModelRegistry(tmp_path / "models"))
    sigmoids = model.predict(images, verbose=0)
    for threshold in (0.5, 0.8):
        served = []
        for start in range(0, HELD_OUT, 15):
            body = {"model": "digit_tags", "images": [png(image) for image in images[start:start + 15]],
                    "threshold": threshold}
            result = handle_event(service, http_api_event("POST", "/classify", body), None)
            assert result["statusCode"] == 200, result["body"]
            served += [{entry["label"] for entry in p["labels"]} for p in json.loads(result["body"])["predictions"]]
        assert served == [{label for label, score in zip(LABELS, row) if score >= threshold} for row in sigmoids]
    assert len({frozenset(labels) for labels in served}) >= 3


@pytest.mark.parametrize(("changes", "code", "named"), [
    ({"multi_label": "yes"}, "bad_sidecar", "\"multi_label\" is \"yes\""),
    ({"labels": LABELS[:2]}, "sidecar_mismatch", "\"labels\" has 2 labels but output"),
])
def test_multi_label_sidecar_refusals(changes, code, named, multi_label_digits, tmp_path, run_convert):
    import shutil

    directory = tmp_path / "copy"
    shutil.copytree(multi_label_digits[0], directory)
    (directory / "sidecar.json").write_text(json.dumps(multi_label_sidecar(**changes)))
    status, _, err = run_convert(directory, tmp_path / "out")
    assert status == 2 and err.strip().endswith(f"[{code}]") and named in err, err


def test_multi_label_on_a_tensor_model_is_refused(tensor_saved_model, tmp_path, run_convert):
    import shutil

    directory = tmp_path / "tensor"
    shutil.copytree(tensor_saved_model, directory)
    sidecar = json.loads((directory / "sidecar.json").read_text())
    (directory / "sidecar.json").write_text(json.dumps({**sidecar, "multi_label": True}))
    status, _, err = run_convert(directory, tmp_path / "out")
    assert status == 2 and err.strip().endswith("[bad_sidecar]")
    assert "\"multi_label\" does not apply to task \"tensor\"" in err
