"""Real photos that ship inside installed packages (scikit-image, scikit-learn, matplotlib), each with the
ImageNet class ids that count as a correct answer, and the contract's image preprocessing for them.

Files are located through importlib.metadata, so nothing is imported from those packages and no path of
this machine is named. Only photos whose expected ImageNet class is unambiguous are listed.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from function.config import DEFAULT_MAX_IMAGE_PIXELS
from function.preprocessing.image import ImagePreprocessor
from saved_model.recipes.common import package_file

# The contract's preprocessing for EfficientNet-Lite (docs/model-format.md): RGB, bilinear, (x - 127) / 128.
SIZE = (224, 224)  # [height, width]
MEAN = 127.0
STD = 128.0
PREPROCESSING = {"type": "image", "color_mode": "RGB", "size": list(SIZE), "resize": "bilinear",
                 "mean": [MEAN] * 3, "std": [STD] * 3}
_PREPROCESSOR = ImagePreprocessor(PREPROCESSING, DEFAULT_MAX_IMAGE_PIXELS)


@dataclass(frozen=True)
class Photo:
    name: str
    distribution: str  # the PyPI distribution that ships the file
    file: str  # path inside that distribution's installed files
    expected: frozenset[int]  # ImageNet class ids that count as correct
    subject: str

    @property
    def path(self) -> Path:
        return package_file(self.distribution, self.file)

    def open(self) -> Image.Image:
        """Decoded the way the function decodes an upload: EXIF-oriented, RGB."""
        with Image.open(self.path) as image:
            return ImageOps.exif_transpose(image).convert("RGB")


PHOTOS = (
    Photo("chelsea", "scikit-image", "skimage/data/chelsea.png", frozenset({281, 282, 283, 284, 285}),
          "a tabby cat (the domestic cat classes)"),
    Photo("coffee", "scikit-image", "skimage/data/coffee.png", frozenset({967, 968, 504}),
          "a cup of coffee (espresso, cup, coffee mug)"),
    Photo("rocket", "scikit-image", "skimage/data/rocket.jpg", frozenset({657, 744, 812}),
          "a rocket on its launch pad (missile, projectile, space shuttle)"),
    Photo("motorcycle", "scikit-image", "skimage/data/motorcycle_left.png", frozenset({665, 670}),
          "a motorbike in a studio (ImageNet's motorbikes: moped, motor scooter)"),
    Photo("camera", "scikit-image", "skimage/data/camera.png", frozenset({872, 759}),
          "a photographer behind a camera on a tripod, greyscale (tripod, reflex camera)"),
    Photo("grace_hopper", "matplotlib", "matplotlib/mpl-data/sample_data/grace_hopper.jpg", frozenset({652}),
          "Grace Hopper in navy uniform (military uniform)"),
    Photo("china", "scikit-learn", "sklearn/datasets/images/china.jpg", frozenset({698, 663, 832}),
          "a Chinese temple among trees (palace, monastery, stupa)"),
)


# Real photos with no single right ImageNet class: they only widen the set the fidelity gate compares the
# converted model on (agreement needs no labels), so 99% agreement rests on more than seven pictures.
AGREEMENT_PHOTOS = (
    Photo("astronaut", "scikit-image", "skimage/data/astronaut.png", frozenset(), "an astronaut portrait"),
    Photo("motorcycle_right", "scikit-image", "skimage/data/motorcycle_right.png", frozenset(), "a motorbike"),
    Photo("retina", "scikit-image", "skimage/data/retina.jpg", frozenset(), "a retina scan"),
    Photo("hubble", "scikit-image", "skimage/data/hubble_deep_field.jpg", frozenset(), "galaxies"),
    Photo("coins", "scikit-image", "skimage/data/coins.png", frozenset(), "old coins, greyscale"),
    Photo("brick", "scikit-image", "skimage/data/brick.png", frozenset(), "a brick wall texture"),
    Photo("gravel", "scikit-image", "skimage/data/gravel.png", frozenset(), "a gravel texture"),
    Photo("flower", "scikit-learn", "sklearn/datasets/images/flower.jpg", frozenset(), "a dahlia"),
)


def to_model_input(image: Image.Image) -> np.ndarray:
    """Exactly what the function feeds the model for this image: its own resize + normalize, not a copy of it."""
    return _PREPROCESSOR.to_array(image.convert("RGB"))


def model_inputs(photos=PHOTOS) -> np.ndarray:
    """The preprocessed photos as one float32 NHWC batch."""
    return np.stack([to_model_input(photo.open()) for photo in photos])
