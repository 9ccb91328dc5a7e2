"""Image preprocessing in the sidecar, and the image input it must fit: float (N, height, width, channels)."""
from __future__ import annotations

from convert import keras_applications
from convert.saved_model_inspect import TensorInfo
from convert.sidecar_fields import check_keys, choice, mapping, numbers, refuse, require, show
from convert.tasks.base import describe, mismatch, shape_text
from function.preprocessing.color_modes import CHANNELS

KEYS = ("type", "color_mode", "size", "resize", "divisor", "mean", "std", "exif_orientation", "keras_applications")
RESIZE_METHODS = ("bilinear", "nearest")  # function/preprocessing/image.py RESAMPLING


def parse_image_preprocessing(value, task: str) -> dict:
    """Checked and normalised: resize, mean and std filled in, mean/std one number per channel."""
    data = mapping(value, "preprocessing")
    check_keys(data, KEYS, "preprocessing", "of \"preprocessing\" for an image model")
    kind = require(data, "type", "preprocessing")
    if kind != "image":
        raise refuse("preprocessing.type", f"is {show(kind)}, which does not fit task \"{task}\"", "write \"image\"")
    preset = None
    if "keras_applications" in data:
        preset = choice(data["keras_applications"], "preprocessing.keras_applications",
                        list(keras_applications.PRESETS))
        for key in keras_applications.FIELDS:
            if key in data:
                raise refuse(f"preprocessing.{key}", f"is given with \"keras_applications\": \"{preset}\", which "
                             f"sets it ({keras_applications.PRESETS[preset]} preprocessing)", "remove one of them")
        data = {**data, **keras_applications.preset_fields(preset)}
    color_mode = choice(require(data, "color_mode", "preprocessing"), "preprocessing.color_mode", list(CHANNELS))
    size = require(data, "size", "preprocessing")
    if not isinstance(size, list) or len(size) != 2 or not all(
            isinstance(side, int) and not isinstance(side, bool) and side > 0 for side in size):
        raise refuse("preprocessing.size", f"is {show(size)}", "give [height, width] in pixels, two positive whole "
                     "numbers")
    height, width = size
    resize = choice(data.get("resize", "bilinear"), "preprocessing.resize", RESIZE_METHODS)
    channels = CHANNELS[color_mode]
    what = f"one per {color_mode} channel, or one for all"
    divisor = data.get("divisor", 1.0)
    if isinstance(divisor, bool) or not isinstance(divisor, (int, float)) or divisor <= 0:
        raise refuse("preprocessing.divisor", f"is {show(divisor)}", "give a positive number (each pixel is divided "
                     "by it before mean and std are applied)")
    mean = numbers(data.get("mean", [0.0]), "preprocessing.mean", (1, channels), what)
    std = numbers(data.get("std", [1.0]), "preprocessing.std", (1, channels), what, positive=True)
    normalised = {"type": "image", "color_mode": color_mode, "size": [height, width], "resize": resize,
                  "divisor": float(divisor), "mean": mean * (channels // len(mean)),
                  "std": std * (channels // len(std))}
    if "exif_orientation" in data:  # absent: true, the function's default
        if not isinstance(data["exif_orientation"], bool):
            raise refuse("preprocessing.exif_orientation", f"is {show(data['exif_orientation'])}", "write true (turn "
                         "photos upright by their EXIF tag, as ImageOps.exif_transpose does) or false (pixels as "
                         "stored, as keras.utils.load_img, tf.io.decode_jpeg and Image.open give them)")
        normalised["exif_orientation"] = data["exif_orientation"]
    if preset is not None:
        normalised["keras_applications"] = preset  # for the check against Keras; not written to the manifest
    return normalised


def check_image_input(preprocessing: dict, tensor: TensorInfo, task: str) -> None:
    """What the function will feed (the sidecar's size and colour mode) must be what the model takes."""
    if len(tensor.shape) != 4:
        raise mismatch("task", f"is \"{task}\" but input {describe(tensor)} is not an image "
                       "(N, height, width, channels)", "use \"task\": \"tensor\" for a model over feature vectors")
    if not tensor.is_float:
        raise mismatch("inputs.image", f"names {describe(tensor)}, but the function feeds images as float32 pixels",
                       "export the model with a float image input, or use \"task\": \"tensor\"")
    height, width = preprocessing["size"]
    model_height, model_width, channels = tensor.shape[1:]
    if (model_height or height, model_width or width) != (height, width):
        want = [model_height or height, model_width or width]
        raise mismatch("preprocessing.size", f"is [{height}, {width}] but input '{tensor.name}' takes "
                       f"{want[0]}x{want[1]} images {shape_text(tensor.shape)}", f"write \"size\": {want}")
    color_mode = preprocessing["color_mode"]
    if channels is not None and channels != CHANNELS[color_mode]:
        modes = [mode for mode, count in CHANNELS.items() if count == channels]
        fix = (f"write \"color_mode\": \"{modes[0]}\"" if modes
               else f"the function feeds {_modes()} images; use \"task\": \"tensor\"")
        raise mismatch("preprocessing.color_mode", f"is \"{color_mode}\" ({CHANNELS[color_mode]} channel"
                       f"{'s' if CHANNELS[color_mode] > 1 else ''}) but input '{tensor.name}' takes {channels} "
                       f"{shape_text(tensor.shape)}", fix)


def _modes() -> str:
    """The modes as a message names them: RGB (3 channels) or L (1 channel)."""
    return " or ".join(f"{mode} ({count} channel{'s' if count > 1 else ''})" for mode, count in CHANNELS.items())
