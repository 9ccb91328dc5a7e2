"""EXIF orientation on the raw samples: photos whose EXIF tag says to turn them (phone photos) are where the
function's `exif_orientation` setting and the user's loader can disagree. The function turns them upright by
default; `keras.utils.load_img`, `tf.io.decode_jpeg` and Pillow's `Image.open` keep the pixels as stored. When any
raw sample carries such a tag, the served gate's search for the slip that makes `expected` also tries the other
setting (convert/preprocessing_check.py)."""
from __future__ import annotations

import io

from PIL import Image

ORIENTATION_TAG = 0x0112
UPRIGHT = 1


def orientation(data: bytes) -> int:
    """The EXIF orientation of encoded image bytes (1, upright, when there is none or it cannot be read)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return int(image.getexif().get(ORIENTATION_TAG, UPRIGHT))
    except Exception:  # noqa: BLE001  (the function itself refuses unreadable images, with its own message)
        return UPRIGHT


def turned_count(items) -> int:
    """How many raw image samples carry an EXIF orientation other than upright."""
    return sum(1 for item in items if hasattr(item, "data") and orientation(item.data) not in (UPRIGHT, 0))


def exif_changes(items, declared: dict) -> list[dict]:
    """The other exif_orientation setting to try, when the raw samples carry a tag it would act on."""
    if not turned_count(items):
        return []
    return [{"exif_orientation": not declared.get("exif_orientation", True)}]
