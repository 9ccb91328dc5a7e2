"""keras.applications models, one per preprocessing family (caffe: VGG16, tf: MobileNetV2, torch: DenseNet121), built
with weights=None and fitted briefly on real photos: with the module's preset, /classify on raw photos of other
sizes answers as model.predict(<module>.preprocess_input(resized photos)) does; with another family's preset the
served gate refuses the model and names the family that matches."""
from __future__ import annotations

import io
import json
import shutil
from base64 import b64encode
from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image

from function.models.registry import ModelRegistry
from saved_model.recipes import photos
from tests.support.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

CLASSES = ("chelsea", "coffee", "rocket", "astronaut", "china", "flower")  # each photo and its crops: one class


@dataclass(frozen=True)
class Family:
    constructor: str
    module: str
    side: int
    options: dict
    wrong_module: str  # a module of another family
    learning_rate: float  # measured: each reaches confident, varied answers on these photos in 10-12 epochs
    epochs: int


FAMILIES = {
    "caffe": Family("VGG16", "vgg16", 64, {}, "mobilenet_v2", 3e-4, 10),
    "tf": Family("MobileNetV2", "mobilenet_v2", 96, {"alpha": 0.35}, "densenet", 3e-3, 12),
    "torch": Family("DenseNet121", "densenet", 64, {}, "vgg16", 1e-3, 10),
}


def crops(seed: int, per_photo: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Seeded random crops (50-100% of each side, so every one has its own size), half of them mirrored."""
    sources = {photo.name: photo for photo in photos.PHOTOS + photos.AGREEMENT_PHOTOS}
    rng = np.random.default_rng(seed)
    images, labels = [], []
    for label, name in enumerate(CLASSES):
        image = sources[name].open()
        width, height = image.size
        for _ in range(per_photo):
            crop_w, crop_h = int(width * rng.uniform(0.5, 1.0)), int(height * rng.uniform(0.5, 1.0))
            left, top = int(rng.integers(0, width - crop_w + 1)), int(rng.integers(0, height - crop_h + 1))
            crop = image.crop((left, top, left + crop_w, top + crop_h))
            if rng.random() < 0.5:
                crop = crop.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
            images.append(np.asarray(crop))
            labels.append(label)
    return images, np.array(labels)


def resized(images: list[np.ndarray], side: int) -> np.ndarray:
    """What a user's own pipeline does before preprocess_input: PIL bilinear resize, float32 pixels 0..255."""
    return np.stack([np.asarray(Image.fromarray(image).resize((side, side), Image.Resampling.BILINEAR),
                                dtype=np.float32) for image in images])


def png(image: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "PNG")
    return buffer.getvalue()


def raw_sample_arrays(images: list[np.ndarray], expected: np.ndarray) -> dict:
    """The validation file docs/model-format.md asks for: raw photos (flattened, with their shapes) + expected."""
    return {"raw_images": np.concatenate([image.ravel() for image in images]),
            "raw_image_shapes": np.array([image.shape for image in images]), "expected": expected}


@pytest.fixture(scope="module", params=list(FAMILIES))
def family_model(request, tmp_path_factory):
    from convert.quiet import import_tensorflow

    import_tensorflow()
    import keras

    family = FAMILIES[request.param]
    module = getattr(keras.applications, family.module)
    keras.utils.set_random_seed(3)
    train, labels = crops(seed=0, per_photo=16)
    base = getattr(keras.applications, family.constructor)(
        weights=None, include_top=False, input_shape=(family.side, family.side, 3), pooling="avg", **family.options)
    outputs = keras.layers.Dense(len(CLASSES), activation="softmax", name="probabilities")(base.output)
    model = keras.Model(base.input, outputs)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            # MobileNetV2's 0.999 leaves the moving statistics near their initial values after ~70 steps, and
            # the model then answers one class for every photo.
            layer.momentum = 0.9
    model.compile(optimizer=keras.optimizers.Adam(family.learning_rate), loss="sparse_categorical_crossentropy")
    model.fit(module.preprocess_input(resized(train, family.side)), labels, epochs=family.epochs, batch_size=16,
              verbose=0)
    validation, _ = crops(seed=1, per_photo=6)
    expected = model.predict(module.preprocess_input(resized(validation, family.side)), verbose=0)
    directory = tmp_path_factory.mktemp("keras-applications") / family.module
    model.export(str(directory), verbose=False)
    np.savez(directory / "validation.npz", **raw_sample_arrays(validation, expected))
    sidecar = {"schema": 1, "name": f"keras_{request.param}", "task": "image_classification",
               "labels": list(CLASSES), "output": "probabilities",
               "preprocessing": {"type": "image", "size": [family.side, family.side],
                                 "keras_applications": family.module},
               "inputs": {"image": model.inputs[0].name}, "validation": {"samples": "validation.npz"}}
    (directory / "sidecar.json").write_text(json.dumps(sidecar))
    served, _ = crops(seed=2, per_photo=6)  # other crops, of other sizes, than the validation file's
    wanted = model.predict(module.preprocess_input(resized(served, family.side)), verbose=0)
    return request.param, family, directory, served, wanted


def test_the_preset_serves_what_keras_predicts_on_raw_photos(family_model, run_convert, tmp_path):
    name, family, saved_model, served, wanted = family_model
    assert len(set(wanted.argmax(axis=1))) >= 3  # a model whose answers vary: agreement means something
    code, out, err = run_convert(saved_model, tmp_path / "models" / name, "--quantization", "float16")
    assert code == 0, err
    assert f"equal keras.applications.{family.module}.preprocess_input on 36 raw images" in out
    assert "the served path was checked: served on 36 raw samples" in out
    manifest = json.loads((tmp_path / "models" / name / "manifest.json").read_text())
    assert manifest["fidelity"]["served"]["passed"] and manifest["fidelity"]["served"]["samples"] == 36
    registry = ModelRegistry(tmp_path / "models")
    service = make_service(registry)
    labels = []
    for image in served:
        result = service.handle_event(http_api_event("POST", "/classify", {"model": f"keras_{name}",
                                                                           "image": b64encode(png(image)).decode()}),
                                      None)
        assert result["statusCode"] == 200, result["body"]
        labels.append(json.loads(result["body"])["predictions"][0]["label"])
    agreement = np.mean([label == CLASSES[index] for label, index in zip(labels, wanted.argmax(axis=1))])
    assert len(served) == 36 and agreement >= 0.98, (labels, wanted.argmax(axis=1))


def test_another_familys_preset_is_refused_naming_the_family_that_matches(family_model, run_convert, tmp_path):
    name, family, saved_model, _, wanted = family_model
    assert len(set(wanted.argmax(axis=1))) >= 3
    wrong = tmp_path / "wrong"
    shutil.copytree(saved_model, wrong)
    sidecar = json.loads((wrong / "sidecar.json").read_text())
    sidecar["preprocessing"]["keras_applications"] = family.wrong_module
    (wrong / "sidecar.json").write_text(json.dumps(sidecar))
    code, _, err = run_convert(wrong, tmp_path / "out", "--quantization", "float16")
    assert code == 2 and err.strip().endswith("[preprocessing_mismatch]"), err
    assert f"your model's answers match {name} preprocessing" in err
    assert "\"preprocessing.keras_applications\"" in err and family.module in err.split("set ")[-1]
    assert not (tmp_path / "out").exists()
