"""Raw samples in a validation file (decoded photos, texts) and their expected answers: read without pickle, each
mistake refused with the key it concerns; and int8 calibration inputs on another scale than validation refused."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from convert.errors import ConversionError
from convert.npz_reader import read_arrays
from convert.raw_samples import load_raw_samples
from convert.samples import RANGE_FACTOR, Samples, check_value_ranges

RNG = np.random.default_rng(0)
PHOTOS = [RNG.integers(0, 256, size=shape, dtype=np.uint8) for shape in ((5, 7, 3), (9, 4, 3), (6, 6, 1))]


def flat(images):
    return {"raw_images": np.concatenate([image.ravel() for image in images]),
            "raw_image_shapes": np.array([image.shape for image in images])}


def load(tmp_path, image_files=None, **arrays):
    np.savez(tmp_path / "v.npz", **arrays)
    return load_raw_samples(tmp_path / "v.npz", read_arrays(tmp_path / "v.npz"), image_files)


def test_images_of_any_size_come_back_as_lossless_images_with_their_expected_rows(tmp_path):
    raw = load(tmp_path, **flat(PHOTOS), expected=np.eye(3, dtype=np.float64))
    assert raw.kind == "image" and raw.count == 3 and raw.expected.dtype == np.float32
    for item, original in zip(raw.items, PHOTOS):
        decoded = np.asarray(Image.open(io.BytesIO(item.data)))
        assert np.array_equal(decoded.reshape(original.shape), original)  # PNG: every pixel as given


@pytest.mark.parametrize("stack", [RNG.integers(0, 256, (4, 6, 5, 3), dtype=np.uint8),
                                   RNG.integers(0, 256, (4, 6, 5), dtype=np.uint8)], ids=["rgb", "grey"])
def test_a_stack_of_same_size_images_is_taken_as_np_stack_gives_it(tmp_path, stack):
    raw = load(tmp_path, raw_images=stack, expected=np.eye(4))
    assert raw.kind == "image" and raw.count == 4
    for item, original in zip(raw.items, stack):
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(item.data))), original)


def test_texts_and_image_files(tmp_path):
    raw = load(tmp_path, raw_texts=np.array(["a fine day", "so bad"]), expected=np.array([[0.9], [0.1]]))
    assert raw.kind == "text" and raw.items == ["a fine day", "so bad"]
    Image.fromarray(PHOTOS[0]).save(tmp_path / "one.jpg")
    raw = load(tmp_path, [tmp_path / "one.jpg"], expected=np.array([[0.3, 0.7]]))
    assert raw.kind == "image" and raw.items[0].data == (tmp_path / "one.jpg").read_bytes()


def test_no_raw_samples_is_none(tmp_path):
    assert load(tmp_path, inputs_image=np.zeros((2, 4, 4, 3))) is None


@pytest.mark.parametrize(("arrays", "message"), [
    ({"expected": np.ones((2, 3))}, "has 'expected' but no raw samples"),
    ({**flat(PHOTOS)}, "raw samples without an 'expected' array"),
    ({**flat(PHOTOS), "expected": np.ones((2, 3))}, "expected is float64 (2, 3): give one row of model outputs per "
                                                     "raw sample (3)"),
    ({"raw_images": flat(PHOTOS)["raw_images"], "expected": np.ones((3, 1))},
     "raw_images is uint8 (249,) without raw_image_shapes: save same-size photos as np.stack(photos)"),
    ({"raw_images": np.zeros((2, 4, 4, 2), np.uint8), "expected": np.ones((2, 1))},
     "raw_images is uint8 (2, 4, 4, 2): give (N, height, width, channels) with 3 (RGB) or 1 (grey) channels"),
    ({"raw_images": np.zeros((2, 4, 4, 3), np.float32), "expected": np.ones((2, 1))},
     "raw_images is float32 (2, 4, 4, 3): save the photos' uint8 pixels"),
    ({**flat(PHOTOS), "raw_image_shapes": np.array([[5, 7, 3], [9, 4, 3]]), "expected": np.ones((2, 1))},
     "raw_images holds 249 values but raw_image_shapes describes 213"),
    ({"raw_images": flat(PHOTOS)["raw_images"].astype(np.float32), "raw_image_shapes": flat(PHOTOS)[
        "raw_image_shapes"], "expected": np.ones((3, 1))}, "raw_images is float32 (249,): save every image's uint8"),
    ({"raw_images": np.zeros(8, np.uint8), "raw_image_shapes": np.array([[2, 2, 2]]), "expected": np.ones((1, 1))},
     "raw_image_shapes has 2 channels: images are RGB (3) or grey (1)"),
    ({"raw_images": np.zeros(8, np.uint8), "raw_image_shapes": np.array([8]), "expected": np.ones((1, 1))},
     "raw_image_shapes is int64 (1,): give one (height, width, channels) row"),
    ({"raw_texts": np.array([1, 2]), "expected": np.ones((2, 1))}, "raw_texts is int64 (2,): save "
                                                                    "np.array(list_of_str)"),
    ({**flat(PHOTOS), "raw_texts": np.array(["a", "b", "c"]), "expected": np.ones((3, 1))},
     "has raw_images and raw_texts: give one kind of raw sample per model"),
])
def test_each_mistake_names_its_key(tmp_path, arrays, message):
    with pytest.raises(ConversionError) as raised:
        load(tmp_path, **arrays)
    assert raised.value.code == "bad_samples" and message in raised.value.message, raised.value.message
    assert raised.value.message.startswith("v.npz: ")


def test_an_object_array_is_refused_without_unpickling_it(tmp_path):
    images = np.empty(2, dtype=object)
    images[0], images[1] = PHOTOS[0], PHOTOS[1]
    np.savez(tmp_path / "v.npz", raw_images=images, expected=np.ones((2, 1)))
    with pytest.raises(ConversionError) as raised:
        read_arrays(tmp_path / "v.npz")
    assert raised.value.code == "bad_samples"
    assert "raw_images is an object array, which would need pickle" in raised.value.message


def samples(array) -> Samples:
    return Samples(inputs={"image": np.asarray(array, np.float32)}, labels=None, source="s.npz")


def test_calibration_on_another_scale_than_validation_is_refused_with_both_ranges():
    validation = samples(RNG.uniform(-1, 1, (8, 4, 4, 3)))
    check_value_ranges(samples(RNG.uniform(-0.9, 0.95, (8, 4, 4, 3))), validation, ["image"])
    with pytest.raises(ConversionError) as raised:
        check_value_ranges(samples(RNG.integers(0, 256, (8, 4, 4, 3))), validation, ["image"])
    assert raised.value.code == "representative_range"
    assert "input 'image' spans [0, 255]" in raised.value.message and "int8 would calibrate" in raised.value.message
    narrow = samples(RNG.uniform(0, 2 / (RANGE_FACTOR + 0.5), (8, 4, 4, 3)))
    with pytest.raises(ConversionError, match="representative_range|apart"):
        check_value_ranges(narrow, validation, ["image"])
