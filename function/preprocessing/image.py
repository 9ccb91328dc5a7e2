"""Image bytes -> the model's float32 NHWC batch, as the manifest's `preprocessing` says.

Decode with Pillow (JPEG, PNG, WebP, GIF first frame, BMP, TIFF), refuse oversized headers before any pixel is
decoded, apply EXIF orientation (unless `exif_orientation` is false: pixels as stored, as `keras.utils.load_img`,
`tf.io.decode_jpeg` and Pillow's `Image.open` give them), bring every mode to RGB or L, resize (bilinear, or
nearest as `keras.utils.load_img` does by default), reverse the channels for BGR, then pixel / divisor, minus
mean, over std, each step in float32 in that order: exactly the arithmetic of Keras's `preprocess_input` "caffe"
(BGR, minus mean), "tf" (/ 127.5, - 1) and "torch" (/ 255, - mean, / std) modes.
Transparency is composited on WHITE: product shots and logos on transparent backgrounds are meant to be seen on a
page, and Pillow's plain convert would turn transparent pixels into whatever colour they happen to store.
"""
from __future__ import annotations

import io
import warnings

import numpy as np
from PIL import Image, ImageOps

from function.errors import refuse
from function.preprocessing.color_modes import CHANNELS

OPENERS = ("JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF")  # Pillow's JPEG opener also yields MPO (phone JPEGs)
SUPPORTED_FORMATS = {*OPENERS, "MPO"}
DRAFT_MARGIN = 2
RESAMPLING = {"bilinear": Image.Resampling.BILINEAR, "nearest": Image.Resampling.NEAREST}
HIGH_BIT_MODES = {"I", "I;16", "I;16L", "I;16B", "I;16N", "F"}
# What decoding an image and bringing it to 8 bits costs per pixel, by Pillow's mode: its own storage plus the
# largest copy our conversion makes of it (a palette to RGB, 16-bit grey read out as an array). The pixel cap alone
# let a 77 KB 16-bit PNG take 1 GB: the cap is on these bytes too.
DECODE_BYTES_PER_PIXEL = {"1": 2, "L": 1, "P": 5, "LA": 2, "La": 2, "PA": 6, "RGB": 4, "RGBX": 4, "RGBA": 4,
                          "RGBa": 4, "CMYK": 4, "YCbCr": 4, "LAB": 4, "HSV": 4, "I;16": 4, "I;16L": 4, "I;16B": 4,
                          "I;16N": 4, "I": 8, "F": 8}
UNKNOWN_MODE_BYTES = 8
MAX_DECODE_BYTES = 200_000_000  # a 40 MP RGB photo is 160 MB; within ~300 MB for the whole process
# Past this many pixels an image is box-reduced (by whole factors, both sides kept >= DRAFT_MARGIN x the model's
# input) right after decoding, before any conversion copies it: what libjpeg's draft does for JPEG, for every format.
SHRINK_ABOVE_PIXELS = 4_000_000
STRIP_ROWS = 64  # a high-bit image is converted this many output rows at a time: no full-size float copy
# Set once, not per call (catch_warnings is not thread-safe): decode() refuses such images itself, with a 413.
warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)


class ImagePreprocessor:
    def __init__(self, preprocessing: dict, max_pixels: int):
        color_mode = preprocessing.get("color_mode", "RGB")
        if color_mode not in CHANNELS:
            raise ValueError(f"color_mode must be {' or '.join(CHANNELS)}, not {color_mode!r}")
        self.color_mode = "L" if color_mode == "L" else "RGB"  # what Pillow decodes to
        self.reverse_channels = color_mode == "BGR"
        height, width = preprocessing["size"]
        self.size = (int(width), int(height))  # Pillow wants (width, height)
        resize = preprocessing.get("resize", "bilinear")
        if resize not in RESAMPLING:
            raise ValueError(f"resize must be {' or '.join(RESAMPLING)}, not {resize!r}")
        self.resample = RESAMPLING[resize]
        channels = CHANNELS[color_mode]
        self.divisor = np.float32(preprocessing.get("divisor", 1.0))
        self.mean = np.asarray(preprocessing.get("mean", [0.0] * channels), dtype=np.float32)
        self.std = np.asarray(preprocessing.get("std", [1.0] * channels), dtype=np.float32)
        self.exif_orientation = preprocessing.get("exif_orientation", True) is not False
        self.max_pixels = max_pixels
        # Pillow's own guard raises at twice its limit; below that, our exact check in decode() refuses first.
        Image.MAX_IMAGE_PIXELS = max(Image.MAX_IMAGE_PIXELS or 0, max_pixels)

    def decode(self, data: bytes, where: str = "the image") -> Image.Image:
        """Bytes -> an upright image in the model's colour mode, not yet resized. Raises PayloadTooLarge or
        UnsupportedMedia."""
        try:
            # formats=: never let Pillow try parsers we do not serve (EPS would even run Ghostscript).
            image = Image.open(io.BytesIO(data), formats=OPENERS)
        except Image.DecompressionBombError as exc:
            raise refuse("image_too_large", f"{where} has more than {self.max_pixels} pixels.") from exc
        except Exception as exc:  # noqa: BLE001  (any failure to read client bytes is the client's 415)
            raise refuse("unsupported_image", f"{where} is not a JPEG, PNG, WebP, GIF, BMP or TIFF "
                          "image.") from exc
        if image.format not in SUPPORTED_FORMATS:
            raise refuse("unsupported_image", f"{where} is a {image.format} image; send JPEG, PNG, "
                          "WebP, GIF, BMP or TIFF.")
        width, height = image.size
        if width * height > self.max_pixels:
            raise refuse("image_too_large", f"{where} is {width}x{height} pixels; the limit is "
                         f"{self.max_pixels} pixels.")
        try:
            if image.format in ("JPEG", "MPO"):
                # Let libjpeg decode at 1/2..1/8 scale only while both sides stay >= DRAFT_MARGIN x the model's
                # input. Measured: a 12 MP photo decodes 10x faster, and after the area-aware bilinear resize
                # the input is within 1-5 grey levels (mean 0.1-0.3) of a full decode; at 1x it was up to 45.
                model_width, model_height = self.size
                image.draft(self.color_mode, (model_width * DRAFT_MARGIN, model_height * DRAFT_MARGIN))
        except Exception as exc:  # noqa: BLE001  (a header Pillow cannot scale)
            raise refuse("unsupported_image", f"{where} could not be decoded: the file is truncated "
                          "or corrupt.") from exc
        width, height = image.size
        cost = width * height * DECODE_BYTES_PER_PIXEL.get(image.mode, UNKNOWN_MODE_BYTES)
        if cost > MAX_DECODE_BYTES:
            raise refuse("image_too_large", f"{where} is {width}x{height} pixels of mode {image.mode}: decoding "
                         f"it takes {cost // 1_000_000} MB; the limit is {MAX_DECODE_BYTES // 1_000_000} MB (fewer "
                         "pixels, or 8 bits per channel).")
        try:
            image.load()
            image = self._shrunk(image)
            if self.exif_orientation:
                image = _upright(image)
            return _to_mode(image, self.color_mode)
        except Exception as exc:  # noqa: BLE001  (truncated or corrupt pixel data)
            raise refuse("unsupported_image", f"{where} could not be decoded: the file is truncated "
                          "or corrupt.") from exc

    def _shrunk(self, image: Image.Image) -> Image.Image:
        """A large image box-reduced by whole factors, each side kept >= DRAFT_MARGIN x the model's larger side
        (whatever the EXIF orientation turns it into); 16-bit and float images come back as L, reduced or not."""
        width, height = image.size
        factors = (1, 1)
        if width * height > SHRINK_ABOVE_PIXELS:
            side = DRAFT_MARGIN * max(self.size)
            factors = (max(width // side, 1), max(height // side, 1))
        if image.mode in HIGH_BIT_MODES:
            return _eight_bit(image, factors)
        if factors == (1, 1):
            return image
        if image.mode in ("P", "PA", "1") or "transparency" in image.info:
            # Indexes and bits cannot be averaged, their colours can; a transparent colour becomes alpha first.
            image = image.convert("RGBA" if image.mode == "PA" or "transparency" in image.info else
                                  "L" if image.mode == "1" else "RGB")
        return _reduced(image, factors)

    def to_array(self, image: Image.Image) -> np.ndarray:
        """One decoded image -> (height, width, channels) float32, resized and normalized."""
        resized = image.resize(self.size, self.resample)
        pixels = np.array(resized, dtype=np.float32)  # a writable copy: normalized in place, no temporaries
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        if self.reverse_channels:
            pixels = np.ascontiguousarray(pixels[:, :, ::-1])
        if self.divisor != 1:  # x / 127.5 is not x * (1 / 127.5) in float32: divide, as Keras does
            pixels /= self.divisor
        pixels -= self.mean
        pixels /= self.std
        return pixels


def _reduced(image: Image.Image, factors: tuple[int, int]) -> Image.Image:
    """image.reduce(factors), STRIP_ROWS output rows at a time: Pillow's reduce (and resize) of an image with alpha
    makes a premultiplied copy of the whole image first (160 MB more for 40 MP); of a strip, a strip's worth."""
    fx, fy = factors
    columns, rows = image.size[0] // fx, image.size[1] // fy
    out = Image.new(image.mode, (columns, rows))
    for top in range(0, rows, STRIP_ROWS):
        bottom = min(top + STRIP_ROWS, rows)
        out.paste(image.crop((0, top * fy, columns * fx, bottom * fy)).reduce(factors), (0, top))
    return out


def _upright(image: Image.Image) -> Image.Image:
    try:
        return ImageOps.exif_transpose(image)
    except Exception:  # noqa: BLE001  (broken EXIF: the pixels are still fine, keep them as stored)
        return image


def _to_mode(image: Image.Image, color_mode: str) -> Image.Image:
    mode = image.mode
    if "transparency" in image.info or mode in ("PA", "LA", "RGBA", "La", "RGBa"):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, rgba).convert("RGB")
    # CMYK, YCbCr, LAB, HSV, P, 1, L, RGB: Pillow's conversions are right for these.
    return image if image.mode == color_mode else image.convert(color_mode)


def _eight_bit(image: Image.Image, factors: tuple[int, int]) -> Image.Image:
    """16-bit and 32-bit grayscale -> L by scaling their range, where convert("L") would clip everything >255; each
    (x, y) `factors` block averaged into one pixel. Read out once (no float copy of the whole image): converted
    STRIP_ROWS output rows at a time."""
    values = np.asarray(image)
    if values.ndim != 2:  # a mode numpy reads otherwise: Pillow's own 32-bit copy first
        values = np.asarray(image.convert("I"))
    if image.mode == "F":
        top = 1.0 if values.size and values.max() <= 1.0 else 255.0
    else:
        top = 65535.0 if values.size and values.max() > 255 else 255.0
    fx, fy = factors
    rows, columns = values.shape[0] // fy, values.shape[1] // fx
    out = np.empty((rows, columns), dtype=np.uint8)
    for start in range(0, rows, STRIP_ROWS):
        end = min(start + STRIP_ROWS, rows)
        block = values[start * fy:end * fy, :columns * fx].astype(np.float64)
        if factors != (1, 1):
            block = block.reshape(end - start, fy, columns, fx).mean(axis=(1, 3))
        out[start:end] = np.clip(block / top * 255.0 + 0.5, 0, 255).astype(np.uint8)
    return Image.fromarray(out, mode="L")
