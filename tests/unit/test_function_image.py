"""Image decoding: formats, modes, EXIF orientation, transparency, and the limits that protect the container."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from function.errors import ServingError
from function.http_errors import status_of
from convert.tasks.image import CHANNELS as convert_channels
from function.preprocessing.color_modes import CHANNELS
from function.preprocessing.image import ImagePreprocessor
from kit.photos import encode, photo

RGB_224 = {"type": "image", "color_mode": "RGB", "size": [224, 224], "resize": "bilinear",
           "mean": [127.0, 127.0, 127.0], "std": [128.0, 128.0, 128.0]}
GRAY_8 = {"type": "image", "color_mode": "L", "size": [8, 8], "resize": "bilinear", "mean": [0.0], "std": [255.0]}
MAX_PIXELS = 40_000_000


@pytest.fixture()
def rgb() -> ImagePreprocessor:
    return ImagePreprocessor(RGB_224, MAX_PIXELS)


def _error(call) -> ServingError:
    with pytest.raises(ServingError) as caught:
        call()
    return caught.value


def test_transparent_pixels_become_white(rgb):
    image = Image.new("RGBA", (10, 10), (255, 0, 0, 0))
    image.putpixel((0, 0), (0, 0, 255, 255))
    decoded = rgb.decode(encode(image, "PNG"))
    assert decoded.mode == "RGB"
    assert decoded.getpixel((5, 5)) == (255, 255, 255)
    assert decoded.getpixel((0, 0)) == (0, 0, 255)


def test_palette_gif_transparency_becomes_white(rgb):
    image = Image.new("P", (10, 10), 1)
    image.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    data = encode(image, "GIF", transparency=1)
    assert rgb.decode(data).getpixel((3, 3)) == (255, 255, 255)


def test_gray_with_alpha_composites_on_white(rgb):
    assert rgb.decode(encode(Image.new("LA", (4, 4), (0, 0)), "PNG")).getpixel((1, 1)) == (255, 255, 255)


def test_animated_gif_uses_the_first_frame(rgb):
    frames = [Image.new("RGB", (16, 16), color) for color in ((255, 0, 0), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=100)
    red, green, blue = rgb.decode(buffer.getvalue()).getpixel((8, 8))
    assert red > 200 and blue < 50


def test_cmyk_jpeg_gives_the_same_colours():
    picture = photo("coffee").resize((128, 85))
    decoder = ImagePreprocessor({**RGB_224, "size": [85, 128]}, MAX_PIXELS)
    from_cmyk = np.asarray(decoder.decode(encode(picture.convert("CMYK"), "JPEG", quality=95)), dtype=np.float32)
    from_rgb = np.asarray(decoder.decode(encode(picture, "JPEG", quality=95)), dtype=np.float32)
    assert np.abs(from_cmyk - from_rgb).mean() < 8.0


def test_sixteen_bit_grayscale_is_scaled_not_clipped(rgb):
    values = np.array([[0, 257 * 64, 32768, 65535]], dtype=np.uint16)
    image = Image.fromarray(values)
    assert image.mode.startswith("I;16")
    decoded = rgb.decode(encode(image, "PNG"))
    assert [decoded.getpixel((x, 0))[0] for x in range(4)] == [0, 64, 128, 255]


def test_grayscale_photo_feeds_an_rgb_model(rgb):
    decoded = rgb.decode(encode(photo("chelsea").convert("L"), "PNG"))
    red, green, blue = decoded.split()
    assert decoded.mode == "RGB" and red.tobytes() == green.tobytes() == blue.tobytes()


def test_rgb_photo_feeds_a_grayscale_model():
    gray = ImagePreprocessor(GRAY_8, MAX_PIXELS)
    array = gray.to_array(gray.decode(encode(photo("chelsea"), "PNG")))
    assert array.shape == (8, 8, 1) and array.dtype == np.float32
    assert 0.0 <= array.min() and array.max() <= 1.0


@pytest.mark.parametrize("orientation,stored_as", [
    (3, Image.Transpose.ROTATE_180),
    (6, Image.Transpose.ROTATE_90),  # camera held upright: stored sideways, displayed rotated back
    (8, Image.Transpose.ROTATE_270),
    (2, Image.Transpose.FLIP_LEFT_RIGHT),
])
def test_exif_orientation_is_applied(rgb, orientation, stored_as):
    upright = photo("chelsea").resize((60, 40))
    exif = Image.Exif()
    exif[0x0112] = orientation
    data = encode(upright.transpose(stored_as), "PNG", exif=exif.tobytes())
    decoded = rgb.decode(data)
    assert decoded.size == upright.size
    assert decoded.tobytes() == upright.tobytes()


@pytest.mark.parametrize("orientation,stored_as", [(6, Image.Transpose.ROTATE_90), (3, Image.Transpose.ROTATE_180)])
def test_exif_orientation_false_keeps_the_pixels_as_stored(orientation, stored_as):
    """What keras.utils.load_img, tf.io.decode_jpeg and Image.open give: the tag is not applied."""
    as_stored = ImagePreprocessor({**RGB_224, "exif_orientation": False}, MAX_PIXELS)
    stored = photo("chelsea").resize((60, 40)).transpose(stored_as)
    exif = Image.Exif()
    exif[0x0112] = orientation
    decoded = as_stored.decode(encode(stored, "PNG", exif=exif.tobytes()))
    assert decoded.size == stored.size and decoded.tobytes() == stored.tobytes()


def test_normalization_follows_the_manifest(rgb):
    array = rgb.to_array(Image.new("RGB", (300, 200), (127, 255, 0)))
    assert array.shape == (224, 224, 3)
    np.testing.assert_allclose(array[0, 0], [0.0, 128 / 128, -127 / 128])


def test_bgr_reverses_the_channels_and_divisor_divides_before_mean_and_std():
    image = Image.new("RGB", (4, 4), (10, 20, 30))
    caffe = ImagePreprocessor({"color_mode": "BGR", "size": [4, 4], "mean": [1.0, 2.0, 3.0], "std": [1.0, 1.0, 2.0]},
                              MAX_PIXELS).to_array(image)
    assert caffe.flags.c_contiguous and caffe[0, 0].tolist() == [29.0, 18.0, 3.5]  # B-1, G-2, (R-3)/2
    tf_mode = ImagePreprocessor({"color_mode": "RGB", "size": [4, 4], "divisor": 127.5, "mean": [1.0] * 3},
                                MAX_PIXELS).to_array(image)
    # Keras's "tf" arithmetic in float32: x / 127.5 - 1, which is not always (x - 127.5) / 127.5 to the last bit.
    expected = np.float32(10.0) / np.float32(127.5) - np.float32(1.0)
    assert tf_mode.dtype == np.float32 and tf_mode[0, 0, 0] == expected


def test_big_jpeg_is_decoded_at_reduced_scale(rgb):
    big = photo("astronaut").resize((2048, 2048))
    decoded = rgb.decode(encode(big, "JPEG"))
    assert 224 <= min(decoded.size) and max(decoded.size) < 2048


def test_image_over_the_pixel_cap_is_413_from_its_header():
    small_cap = ImagePreprocessor(RGB_224, max_pixels=1000)
    error = _error(lambda: small_cap.decode(encode(Image.new("RGB", (40, 40)), "PNG"), "images[1]"))
    assert (status_of(error), error.code) == (413, "image_too_large")
    assert "images[1]" in error.message and "40x40" in error.message


def _png_claiming(width: int, height: int) -> bytes:
    """A real 1x1 PNG whose header (with a valid CRC) claims another size: a decompression bomb's header."""
    data = bytearray(encode(Image.new("L", (1, 1)), "PNG"))
    ihdr = 8 + 8  # signature, then length + "IHDR"
    data[ihdr:ihdr + 8] = struct.pack(">II", width, height)
    data[ihdr + 13:ihdr + 17] = struct.pack(">I", zlib.crc32(bytes(data[ihdr - 4:ihdr + 13])))
    return bytes(data)


@pytest.mark.parametrize("width,height", [(8000, 8000), (100_000, 100_000)])
def test_decompression_bomb_header_is_413(rgb, width, height):
    error = _error(lambda: rgb.decode(_png_claiming(width, height)))
    assert (status_of(error), error.code) == (413, "image_too_large")


def test_gif_bomb_header_is_413(rgb):
    data = bytearray(encode(Image.new("P", (1, 1)), "GIF"))
    data[6:10] = struct.pack("<HH", 60000, 60000)
    error = _error(lambda: rgb.decode(bytes(data)))
    assert (status_of(error), error.code) == (413, "image_too_large")


@pytest.mark.parametrize("data", [
    b"hello, I am text",
    b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n",
    b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n",  # Pillow could read it, but would run Ghostscript
    encode(Image.new("RGB", (16, 16)), "ICO"),  # a real image in a format we do not serve
    encode(Image.new("RGB", (16, 16)), "PPM"),
    b"",
])
def test_non_images_are_415(rgb, data):
    error = _error(lambda: rgb.decode(data))
    assert (status_of(error), error.code) == (415, "unsupported_image")


def test_truncated_jpeg_is_415(rgb):
    data = encode(photo("chelsea"), "JPEG")
    error = _error(lambda: rgb.decode(data[: len(data) // 3]))
    assert (status_of(error), error.code) == (415, "unsupported_image")


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF"])
def test_every_supported_format_decodes(rgb, fmt):
    decoded = rgb.decode(encode(photo("chelsea").resize((90, 60)), fmt))
    assert (decoded.mode, decoded.size) == ("RGB", (90, 60))


@pytest.mark.parametrize("size", [(4000, 3000), (2048, 2048), (600, 512)])
def test_reduced_scale_jpeg_decode_stays_close_to_a_full_decode(rgb, size):
    # Big JPEGs decode at 1/2..1/8 scale for speed; the model must still see (almost) what a full decode gives.
    data = encode(photo("chelsea").resize(size, Image.Resampling.LANCZOS), "JPEG", quality=92)
    full = Image.open(io.BytesIO(data)).convert("RGB")
    reference = (np.asarray(full.resize((224, 224), Image.Resampling.BILINEAR), np.float32) - 127.0) / 128.0
    served = rgb.to_array(rgb.decode(data))
    grey_levels = np.abs(served - reference) * 128.0
    assert grey_levels.mean() < 0.5
    assert grey_levels.max() <= 8.0


@pytest.mark.parametrize("mode", sorted(CHANNELS))
def test_every_colour_mode_feeds_the_channels_it_declares(mode):
    """function/preprocessing/color_modes.py is the one table: the function decodes to it, convert checks with it."""
    preprocessor = ImagePreprocessor({"color_mode": mode, "size": [4, 6]}, MAX_PIXELS)
    pixels = preprocessor.to_array(preprocessor.decode(encode(Image.new("RGBA", (9, 7), (10, 20, 30, 255)), "PNG")))
    assert pixels.shape[-3:] == (4, 6, CHANNELS[mode])
    assert convert_channels is CHANNELS
