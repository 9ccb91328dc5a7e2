"""The photos every test and benchmark uses: scikit-image's sample photos (a registry package, no download), encoded
as asked."""
from __future__ import annotations

import base64
import io
from functools import lru_cache

from PIL import Image

from saved_model.recipes.common import package_file

# ImageNet labels a good model may give skimage's chelsea (a tabby cat): any of the cat classes.
CAT_LABELS = frozenset({"tabby", "tabby cat", "tiger cat", "Egyptian cat", "Egyptian Mau", "Persian cat",
                        "Siamese cat", "lynx"})


def photo(name: str) -> Image.Image:
    """skimage's sample photos: chelsea (a cat), coffee, astronaut, rocket..."""
    suffix = ".jpg" if name in ("rocket", "retina") else ".png"
    with Image.open(package_file("scikit-image", f"skimage/data/{name}{suffix}")) as image:
        return image.convert("RGB")


def encode(image: Image.Image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


@lru_cache(maxsize=1)
def cat_jpeg() -> bytes:
    """The cat as a JPEG, the format a phone upload usually is (the same bytes every call: cached)."""
    return encode(photo("chelsea"), "JPEG", quality=90)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def is_cat(label: str) -> bool:
    return label.lower() in {cat.lower() for cat in CAT_LABELS}
