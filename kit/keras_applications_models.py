"""Small keras.applications models, one per preprocessing family (caffe, tf, torch), built with weights=None and
fitted briefly on real photos (crops of six sample photos, one class each), and the raw-photo validation file the
served gate reads. Used by bench section 7 (bench/keras_families.py) and by
tests/functional/convert/test_convert_keras_applications.py, as kit/keras_text_models.py is."""
from __future__ import annotations

import io
import json
from base64 import b64encode
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from saved_model.recipes import photos

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


@dataclass(frozen=True)
class FamilyModel:
    family: Family
    directory: Path  # the exported SavedModel with sidecar.json and a raw-photo validation.npz
    served: list[np.ndarray]  # other crops (other sizes) than the validation file's, to send to /classify
    wanted: np.ndarray  # model.predict(<module>.preprocess_input(resized served photos))


def build_family_model(name: str, directory: Path) -> FamilyModel:
    from convert.quiet import import_tensorflow  # noqa: PLC0415  (TensorFlow only when a model is built)

    import_tensorflow()
    import keras  # noqa: PLC0415  (TensorFlow only when a model is built)

    family = FAMILIES[name]
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
    model.export(str(directory), verbose=False)
    np.savez(directory / "validation.npz", **raw_sample_arrays(validation, expected))
    sidecar = {"schema": 1, "name": f"keras_{name}", "task": "image_classification",
               "labels": list(CLASSES), "output": "probabilities",
               "preprocessing": {"type": "image", "size": [family.side, family.side],
                                 "keras_applications": family.module},
               "inputs": {"image": model.inputs[0].name}, "validation": {"samples": "validation.npz"}}
    (directory / "sidecar.json").write_text(json.dumps(sidecar))
    served, _ = crops(seed=2, per_photo=6)
    wanted = model.predict(module.preprocess_input(resized(served, family.side)), verbose=0)
    return FamilyModel(family, directory, served, wanted)


def classify_agreement(service, name: str, model: FamilyModel) -> tuple[float, list[str]]:
    """POST every served photo (PNG bytes) to /classify; the fraction whose label is model.predict's top-1."""
    from function.entry import handle_event  # noqa: PLC0415  (the function only when this benchmark runs)
    from kit.events import http_api_event  # noqa: PLC0415  (the function only when this benchmark runs)

    labels = []
    for image in model.served:
        event = http_api_event("POST", "/classify", {"model": f"keras_{name}", "image": b64encode(png(image)).decode()})
        result = handle_event(service, event, None)
        if result["statusCode"] != 200:
            raise AssertionError(result["body"])
        labels.append(json.loads(result["body"])["predictions"][0]["label"])
    wanted = [CLASSES[index] for index in model.wanted.argmax(axis=1)]
    return float(np.mean([got == want for got, want in zip(labels, wanted)])), labels
