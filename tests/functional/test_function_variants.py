"""The same photo in any format, mode, orientation or transport gives the same answer."""
from __future__ import annotations

import pytest
from PIL import Image

from tests.support.function_fixtures import call, demo_models, make_service, registry, service  # noqa: F401
from kit.photos import CAT_LABELS, b64, encode, photo


@pytest.fixture(scope="module")
def cat() -> Image.Image:
    return photo("chelsea")


def _top1(service, data: bytes) -> str:
    status, body = call(service, "POST", "/classify", {"image": b64(data), "top_k": 1})
    assert status == 200, body
    return body["predictions"][0]["label"]


def _rgba(image: Image.Image) -> Image.Image:
    rgba = image.convert("RGBA")
    rgba.putalpha(255)
    return rgba


def _exif_rotated(image: Image.Image, fmt: str) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to display": the stored pixels lie on their side
    return encode(image.transpose(Image.Transpose.ROTATE_90), fmt, exif=exif.tobytes())


VARIANTS = {
    "jpeg": lambda im: encode(im, "JPEG", quality=92),
    "png": lambda im: encode(im, "PNG"),
    "webp": lambda im: encode(im, "WEBP", quality=90),
    "webp lossless": lambda im: encode(im, "WEBP", lossless=True),
    "gif": lambda im: encode(im, "GIF"),
    "bmp": lambda im: encode(im, "BMP"),
    "tiff": lambda im: encode(im, "TIFF"),
    "tiff lzw": lambda im: encode(im, "TIFF", compression="tiff_lzw"),
    "rgba png": lambda im: encode(_rgba(im), "PNG"),
    "palette png": lambda im: encode(im.convert("P", palette=Image.Palette.ADAPTIVE, colors=256), "PNG"),
    "cmyk jpeg": lambda im: encode(im.convert("CMYK"), "JPEG", quality=92),
    "cmyk tiff": lambda im: encode(im.convert("CMYK"), "TIFF"),
    "exif-rotated jpeg": lambda im: _exif_rotated(im, "JPEG"),
    "exif-rotated png": lambda im: _exif_rotated(im, "PNG"),
    "exif-rotated webp": lambda im: _exif_rotated(im, "WEBP"),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_gives_the_same_top1(service, cat, variant):
    reference = _top1(service, encode(cat, "PNG"))
    assert reference in CAT_LABELS
    assert _top1(service, VARIANTS[variant](cat)) == reference


@pytest.mark.parametrize("mode", ["L", "I;16"])
def test_grayscale_variants_still_see_a_cat(service, cat, mode):
    gray = cat.convert("L")
    if mode == "I;16":
        gray = Image.fromarray((__import__("numpy").asarray(gray).astype("uint16") * 257))
    assert _top1(service, encode(gray, "PNG")) in CAT_LABELS


def test_raw_body_base64_json_and_data_url_give_identical_answers(registry):  # noqa: F811
    jpeg = encode(photo("chelsea"), "JPEG", quality=90)
    answers = []
    for body, content_type, binary in [
        (jpeg, "image/jpeg", True),
        ({"image": b64(jpeg)}, "application/json", False),
        ({"image": "data:image/jpeg;base64," + b64(jpeg)}, "application/json", False),
        ({"images": [b64(jpeg)]}, "application/json", False),
    ]:
        fresh = make_service(registry)  # an empty cache: every answer is computed
        status, answer = call(fresh, "POST", "/classify", body, content_type, binary)
        assert status == 200 and answer["predictions"][0]["cached"] is False
        answers.append(answer)
    assert all(answer == answers[0] for answer in answers)


def test_batch_answers_in_input_order_and_equals_single_requests(registry):  # noqa: F811
    names = ["chelsea", "coffee", "astronaut", "rocket", "chelsea"]
    images = [encode(photo(name), "JPEG", quality=90) for name in names]
    status, batch = call(make_service(registry), "POST", "/classify", {"images": [b64(i) for i in images]})
    assert status == 200 and len(batch["predictions"]) == len(names)
    for data, prediction in zip(images, batch["predictions"]):
        _, single = call(make_service(registry), "POST", "/classify", {"image": b64(data)})
        assert single["predictions"][0]["label"] == prediction["label"]
        assert single["predictions"][0]["score"] == pytest.approx(prediction["score"], abs=1e-4)
    assert batch["predictions"][0] == batch["predictions"][4]
    assert len({p["label"] for p in batch["predictions"][:4]}) == 4
