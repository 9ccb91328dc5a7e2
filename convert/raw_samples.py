"""Raw samples: inputs as a client sends them (decoded photos, image files, texts) with the answers the user's own
pipeline gives for them (`expected`: their model.predict on their own preprocessing). docs/model-format.md has the
keys and the few lines that make such a file.

They let convert check the served path end to end (convert/served_gate.py): the function's decode, colour, resize
and normalise, or its tokenizer, then the converted model. Everything loads without pickle.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from convert.errors import ConversionError
from function.tasks.image_classification import ImageInput

RAW_KEYS = ("raw_images", "raw_image_shapes", "raw_texts", "expected")
EXPECTED_OUTPUT = "expected_"  # expected_<output name>: one output's answers, for a model with several
COLUMN_PREFIX = "raw_"  # raw_<column>: a structured model's raw values, one array per column
IMAGE_CHANNELS = {1: "L", 3: "RGB"}


@dataclass
class RawSamples:
    kind: str  # "image", "text" or "columns"
    items: list  # what the function's task.predict takes: ImageInput (encoded bytes), str, or column -> value
    expected: np.ndarray  # float32, one row per item: the user's model.predict on their own preprocessing
    source: str  # where they came from, for messages
    # A model with several outputs: output name -> its expected answers (expected_<name> arrays); `expected` is then
    # the class output's (an image classifier's) or the first output's.
    expected_outputs: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.items)


def _bad(source: str, problem: str) -> ConversionError:
    return ConversionError("bad_samples", f"{source}: {problem}")


def png_bytes(pixels: np.ndarray) -> bytes:
    """A decoded image as lossless PNG: the function then decodes it exactly as it decodes an upload."""
    buffer = io.BytesIO()
    Image.fromarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels, mode=IMAGE_CHANNELS[pixels.shape[2]]).save(
        buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def split_images(source: str, flat: np.ndarray, shapes: np.ndarray) -> list[np.ndarray]:
    """raw_images (1-D uint8, every image's pixels in turn) cut back into (height, width, channels) arrays."""
    if flat.dtype != np.uint8 or flat.ndim != 1:
        raise _bad(source, f"raw_images is {flat.dtype} {flat.shape}: save every image's uint8 pixels (as decoded, "
                           "RGB) flattened and concatenated into one 1-D uint8 array")
    if (shapes.ndim != 2 or shapes.shape[1] != 3 or not np.issubdtype(shapes.dtype, np.integer)
            or len(shapes) == 0 or (shapes <= 0).any()):
        raise _bad(source, f"raw_image_shapes is {shapes.dtype} {shapes.shape}: give one (height, width, channels) "
                           "row of positive integers per image")
    bad_channels = sorted({int(c) for c in shapes[:, 2]} - set(IMAGE_CHANNELS))
    if bad_channels:
        raise _bad(source, f"raw_image_shapes has {bad_channels[0]} channels: images are RGB (3) or grey (1)")
    sizes = shapes.prod(axis=1)
    if int(sizes.sum()) != flat.size:
        raise _bad(source, f"raw_images holds {flat.size} values but raw_image_shapes describes {int(sizes.sum())}")
    ends = np.cumsum(sizes)
    return [flat[end - size:end].reshape(tuple(int(d) for d in shape))
            for end, size, shape in zip(ends, sizes, shapes)]


def stacked_images(source: str, stack: np.ndarray) -> list[np.ndarray]:
    """raw_images as np.stack gives same-size images: (N, height, width, channels), or (N, height, width) grey."""
    if stack.dtype != np.uint8:
        raise _bad(source, f"raw_images is {stack.dtype} {stack.shape}: save the photos' uint8 pixels as decoded "
                           "(np.stack of same-size images, or flattened with raw_image_shapes)")
    images = stack[..., np.newaxis] if stack.ndim == 3 else stack
    if len(images) == 0 or images.shape[3] not in IMAGE_CHANNELS or 0 in images.shape[1:3]:
        raise _bad(source, f"raw_images is uint8 {stack.shape}: give (N, height, width, channels) with 3 (RGB) or "
                           "1 (grey) channels")
    return list(images)


def _images(source: str, arrays: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The flattened form (raw_images + raw_image_shapes) or a stack of same-size images."""
    flat = arrays["raw_images"]
    if "raw_image_shapes" in arrays:
        return split_images(source, flat, arrays["raw_image_shapes"])
    if flat.ndim in (3, 4):
        return stacked_images(source, flat)
    raise _bad(source, f"raw_images is {flat.dtype} {flat.shape} without raw_image_shapes: save same-size photos "
                       "as np.stack(photos) (N, height, width, channels), or add the (height, width, channels) of "
                       "each image as raw_image_shapes")


def _expected(source: str, arrays: dict[str, np.ndarray], count: int, key: str = "expected") -> np.ndarray:
    expected = arrays.get(key)
    if expected is None:
        raise _bad(source, f"raw samples without an '{key}' array: save your model.predict outputs for them "
                           f"(on your own preprocessing) as {key}")
    if not np.issubdtype(expected.dtype, np.number) or expected.ndim < 1 or len(expected) != count:
        raise _bad(source, f"{key} is {expected.dtype} {expected.shape}: give one row of model outputs per raw "
                           f"sample ({count})")
    return expected.astype(np.float32)


def expected_outputs(source: str, arrays: dict[str, np.ndarray], count: int) -> dict[str, np.ndarray]:
    """The expected_<output name> arrays (a model with several outputs: model.predict's dict, one array each)."""
    return {key.removeprefix(EXPECTED_OUTPUT): _expected(source, arrays, count, key) for key in arrays
            if key.startswith(EXPECTED_OUTPUT)}


def raw_items(source: str, arrays: dict[str, np.ndarray], image_files: list[Path] | None = None
              ) -> tuple[str, list] | None:
    """(kind, items) of the raw samples in these arrays (and the sidecar's image files), or None when there are none."""
    given = [key for key in ("raw_images", "raw_texts") if key in arrays] + (["validation.raw_images"]
                                                                            if image_files else [])
    columns = {key[len(COLUMN_PREFIX):]: array for key, array in arrays.items()
               if key.startswith(COLUMN_PREFIX) and key not in RAW_KEYS}
    if columns and not given and not any(key.startswith("inputs_") for key in arrays):
        return "columns", column_rows(source, columns)
    if not given:
        return None
    if len(given) > 1:
        raise _bad(source, f"has {' and '.join(given)}: give one kind of raw sample per model")
    if image_files:
        return "image", [ImageInput(file.read_bytes(), f"'{file.name}'") for file in image_files]
    if "raw_images" in arrays:
        images = _images(source, arrays)
        return "image", [ImageInput(png_bytes(image), f"raw image {index}") for index, image in enumerate(images)]
    texts = arrays["raw_texts"]
    if texts.dtype.kind != "U" or texts.ndim != 1 or len(texts) == 0:
        raise _bad(source, f"raw_texts is {texts.dtype} {texts.shape}: save np.array(list_of_str), one text per "
                           "sample")
    return "text", [str(text) for text in texts]


def column_rows(source: str, columns: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """raw_<column> arrays (a structured model's raw values, convert/structured_keras.py) as one instance per row:
    column name -> that row's value, as a request's named instance gives the function."""
    counts = {len(array) for array in columns.values()}
    if len(counts) != 1 or 0 in counts:
        raise _bad(source, f"the raw_<column> arrays hold different numbers of rows ({sorted(counts)})")
    return [{name: array[row, ...] for name, array in columns.items()} for row in range(counts.pop())]


def load_raw_samples(path: Path, arrays: dict[str, np.ndarray], image_files: list[Path] | None = None,
                     main_output: str | None = None) -> RawSamples | None:
    """The raw samples of a validation file (and the sidecar's image files), or None when it has none. `expected` is
    the file's `expected`, else (a model with several outputs) `expected_<main_output>`."""
    source = path.name
    found = raw_items(source, arrays, image_files)
    if found is None:
        if "expected" in arrays or any(key.startswith(EXPECTED_OUTPUT) for key in arrays):
            raise _bad(source, "has 'expected' but no raw samples: add raw_images (+ raw_image_shapes), raw_texts, "
                               "or list image files in the sidecar's validation.raw_images")
        return None
    kind, items = found
    where = f"{source} + sidecar image files" if image_files else source
    outputs = expected_outputs(source, arrays, len(items))
    key = f"{EXPECTED_OUTPUT}{main_output}" if "expected" not in arrays and main_output in outputs else "expected"
    return RawSamples(kind, items, _expected(source, arrays, len(items), key), where, outputs)
